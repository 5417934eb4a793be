package simulator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

var (
	searchTool = research.ToolSpec{Name: "lit.search", InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}`)}
	fetchTool  = research.ToolSpec{Name: "lit.fetch", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)}
	echoTool   = research.ToolSpec{Name: "everything.echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)}
)

const (
	hits    = `{"query":"q","total":2,"results":[{"id":"10.5555/a","title":"A","snippet":"Microglia carry tau."},{"id":"key-b","title":"B","snippet":"Activity releases tau."}]}`
	recordA = `{"id":"10.5555/a","title":"A","abstract":"Microglia carry tau between synapses in exosomes. Depleting them halves the spread of tau pathology in mice."}`
	recordB = `{"id":"key-b","title":"B","abstract":"Neuronal activity releases tau into the extracellular space. Silencing neurons slows the propagation of tau seeds."}`
)

// grounding walks a generation through the literature as a scientist would: search
// (and try the other tool once), fetch the best hits, then answer citing what was read.
func TestGenerateStepReadsThenCites(t *testing.T) {
	for _, rate := range []float64{0, 1} {
		o := &Offline{Fabricate: rate}
		req := research.GenerateRequest{TurnID: "t", HypothesisID: "h-0001", Goal: "Identify druggable mechanisms that slow tau protein propagation", Strategy: research.StrategyLiterature, Seed: 1,
			Tooling: research.Tooling{Tools: []research.ToolSpec{searchTool, fetchTool, echoTool}}}
		ctx := context.Background()
		st, _, err := o.GenerateStep(ctx, req)
		if err != nil || len(st.Calls) != 2 || st.Calls[0].Name != "lit.search" || st.Calls[1].Name != "everything.echo" {
			t.Fatalf("step 1: %+v, %v", st, err)
		}
		var echo map[string]string
		if json.Unmarshal(st.Calls[1].Arguments, &echo) != nil || echo["message"] == "" {
			t.Errorf("the echo call's arguments %s", st.Calls[1].Arguments)
		}
		req.Tooling.Steps = []research.ToolStep{{Calls: st.Calls, Results: []research.ToolResult{{CallID: st.Calls[0].ID, Content: hits, Source: "s1"}, {CallID: st.Calls[1].ID, Content: "Echo: tau"}}}}
		st, _, err = o.GenerateStep(ctx, req)
		if err != nil || len(st.Calls) != 2 || st.Calls[0].Name != "lit.fetch" || !strings.Contains(string(st.Calls[0].Arguments), "10.5555/a") {
			t.Fatalf("step 2: %+v, %v", st, err)
		}
		req.Tooling.Steps = append(req.Tooling.Steps, research.ToolStep{Calls: st.Calls, Results: []research.ToolResult{{CallID: st.Calls[0].ID, Content: recordA, Source: "s2"}, {CallID: st.Calls[1].ID, Content: recordB, Source: "s3"}}})
		st, _, err = o.GenerateStep(ctx, req)
		if err != nil || len(st.Calls) != 0 {
			t.Fatalf("step 3: %+v, %v", st, err)
		}
		h := st.Answer
		if len(h.References) == 0 || h.ID != "h-0001" || h.Latent == nil {
			t.Fatalf("answer %+v", h)
		}
		for _, r := range h.References {
			source := map[string]string{"10.5555/a": recordA, "key-b": recordB}[r.ID]
			genuine := source != "" && holds(source, r.Quote)
			if kind, ok := o.Planted().Hypothesis(h, r); !ok || Honest(kind) != genuine {
				t.Errorf("fabricate %g: reference %+v was planted %q (known %v) but holds in its source %v", rate, r, kind, ok, genuine)
			}
			if r.Claim == "" || !strings.Contains(h.Statement+" "+h.Rationale, r.Claim) {
				t.Errorf("fabricate %g: reference %+v: its claim is not a sentence of the hypothesis", rate, r)
			}
		}
	}
}

// A spent budget is an answer now; a review first re-reads what the hypothesis cites.
func TestStepsFinalAndReview(t *testing.T) {
	o := &Offline{}
	ctx := context.Background()
	st, _, err := o.GenerateStep(ctx, research.GenerateRequest{TurnID: "t", Goal: "g", Tooling: research.Tooling{Tools: []research.ToolSpec{searchTool}, Final: true}})
	if err != nil || len(st.Calls) != 0 || st.Answer.Title == "" {
		t.Errorf("final step: %+v, %v", st, err)
	}
	h := research.Hypothesis{ID: "h-1", Title: "Microglia carry tau", Statement: "s", Predictions: []string{"p"},
		References: []research.Reference{{ID: "10.5555/a"}, {ID: "key-b"}}}
	rv, _, err := o.ReviewStep(ctx, research.ReviewRequest{TurnID: "r", Goal: "g", Type: research.ReviewFull, Hypothesis: h, Tooling: research.Tooling{Tools: []research.ToolSpec{searchTool, fetchTool}}})
	if err != nil || len(rv.Calls) != 2 || rv.Calls[0].Name != "lit.fetch" || !strings.Contains(string(rv.Calls[1].Arguments), "key-b") {
		t.Errorf("review step 1: %+v, %v", rv, err)
	}
}

// A turn searches for a few words of its subject, as a scientist types them: without an
// evolved title's label or a shortened title's ellipsis.
func TestQuery(t *testing.T) {
	const goal = "Identify druggable mechanisms that slow tau protein propagation"
	tests := []struct{ subject, has, hasNot string }{
		{"Feasible: Stochastic switching amplifies druggable mechanisms during…", "Stochastic switching amplifies druggable", "Feasible:"},
		{"Grounded: Metabolic rewiring…", "Metabolic rewiring", "…"},
		{"microglia", "microglia", ":"},
	}
	for _, tt := range tests {
		for seed := range int64(5) {
			q := query(newRand(seed, "t"), goal, tt.subject)
			if !strings.Contains(q, tt.has) || strings.Contains(q, tt.hasNot) {
				t.Errorf("query for %q = %q; want it to hold %q and not %q", tt.subject, q, tt.has, tt.hasNot)
			}
		}
	}
}
