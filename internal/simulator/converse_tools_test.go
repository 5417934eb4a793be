package simulator

import (
	"context"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// TestConverseStep: a message about the literature searches for its subject, fetches the
// best hit and answers quoting and citing what it read; a call the session did not make
// is answered around, saying why; any other message, a spent budget or no search tool is
// an answer at once, without a call.
func TestConverseStep(t *testing.T) {
	// A search whose snippets are long enough to quote (at least five words).
	const hits = `{"query":"q","total":2,"results":[{"id":"10.5555/a","title":"A","snippet":"Microglia carry tau between synapses in exosomes."},{"id":"key-b","title":"B","snippet":"Neuronal activity releases tau into the extracellular space."}]}`
	refused := "this call needs the scientist's approval, which a conversation does not wait for"
	type step struct {
		call, arg string                // the call the step makes ("" for the answer)
		results   []research.ToolResult // what it gives
	}
	for _, tt := range []struct {
		name      string
		message   string
		tools     []research.ToolSpec
		final     bool
		steps     []step
		wantCited []string // the answer's references, in order
		wantText  []string // in the answer's text
		proposes  string
	}{
		{
			name: "literature: search, fetch, cite", message: "What does the literature say about microglia?", tools: []research.ToolSpec{searchTool, fetchTool},
			steps: []step{
				{call: "lit.search", arg: `"query":"microglia"`, results: []research.ToolResult{{Content: hits, Source: "s1"}}},
				{call: "lit.fetch", arg: `"id":"10.5555/a"`, results: []research.ToolResult{{Content: recordA, Source: "s2"}}},
			},
			wantCited: []string{"10.5555/a", "key-b"}, wantText: []string{"On microglia", "found 2 source(s)"},
		},
		{
			name: "the fetch is not made: the search's hits are cited", message: "Which papers support this?", tools: []research.ToolSpec{searchTool, fetchTool},
			steps: []step{
				{call: "lit.search", results: []research.ToolResult{{Content: hits, Source: "s1"}}},
				{call: "lit.fetch", results: []research.ToolResult{{Name: "lit.fetch", Content: refused, IsError: true}}},
			},
			wantCited: []string{"10.5555/a", "key-b"}, wantText: []string{"My call of lit.fetch gave no result: " + refused + "."},
		},
		{
			name: "search only", message: "Is there evidence on tau release?", tools: []research.ToolSpec{searchTool},
			steps:     []step{{call: "lit.search", arg: `"query":"tau release"`, results: []research.ToolResult{{Content: hits, Source: "s1"}}}},
			wantCited: []string{"10.5555/a", "key-b"},
		},
		{name: "a question about the session", message: "What is the best hypothesis?", tools: []research.ToolSpec{searchTool, fetchTool}, wantText: []string{"The best hypothesis is h-0001"}},
		{name: "a request", message: "Please focus on the literature on microglia.", tools: []research.ToolSpec{searchTool, fetchTool}, proposes: "refine-goal"},
		{name: "budget spent", message: "What does the literature say about microglia?", tools: []research.ToolSpec{searchTool}, final: true, wantText: []string{"nothing from the literature"}},
		{name: "no search tool", message: "What does the literature say about microglia?", tools: []research.ToolSpec{echoTool}, wantText: []string{"nothing from the literature"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := &Offline{}
			ctx := context.Background()
			req := research.ConverseRequest{TurnID: "converse-m-0001", Goal: "Identify druggable mechanisms that slow tau protein propagation", Message: tt.message, State: "active", Seed: 1,
				Top:     []research.Ranked{{Rank: 1, Hypothesis: research.Hypothesis{ID: "h-0001", Title: "Microglia carry tau"}, Elo: 1250}},
				Tooling: research.Tooling{Tools: tt.tools, Final: tt.final}}
			for i, want := range tt.steps {
				st, _, err := o.ConverseStep(ctx, req)
				if err != nil || len(st.Calls) != 1 || st.Calls[0].Name != want.call || !strings.Contains(string(st.Calls[0].Arguments), want.arg) {
					t.Fatalf("step %d: %+v, %v; want one call of %s with %s", i+1, st, err, want.call, want.arg)
				}
				for j := range want.results {
					want.results[j].CallID = st.Calls[0].ID
				}
				req.Tooling.Steps = append(req.Tooling.Steps, research.ToolStep{Calls: st.Calls, Results: want.results})
			}
			st, _, err := o.ConverseStep(ctx, req)
			if err != nil || len(st.Calls) != 0 {
				t.Fatalf("the answer's step: %+v, %v; want an answer", st, err)
			}
			ans := st.Answer
			var cited []string
			for _, r := range ans.References {
				cited = append(cited, r.ID)
				source := map[string]string{"10.5555/a": hits + recordA, "key-b": hits}[r.ID]
				if !holds(source, r.Quote) || !strings.Contains(ans.Text, r.Claim) {
					t.Errorf("reference %+v: its quote is not in what the tools returned, or its claim not in the answer %q", r, ans.Text)
				}
			}
			if strings.Join(cited, ",") != strings.Join(tt.wantCited, ",") {
				t.Errorf("cites %v; want %v (answer %q)", cited, tt.wantCited, ans.Text)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(ans.Text, w) {
					t.Errorf("answer %q; want %q in it", ans.Text, w)
				}
			}
			if got := len(ans.Proposals) > 0; got != (tt.proposes != "") || got && ans.Proposals[0].Command != tt.proposes {
				t.Errorf("proposals %+v; want %q", ans.Proposals, tt.proposes)
			}
		})
	}
}
