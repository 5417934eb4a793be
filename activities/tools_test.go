package activities

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/internal/tools/toolstest"
)

func (c *counting) GenerateStep(ctx context.Context, req research.GenerateRequest) (research.Step[research.Hypothesis], research.Usage, error) {
	c.calls++
	return c.Offline.GenerateStep(ctx, req)
}

// TestToolLoopSteps walks a grounded generation step by step, as the workflow does: each
// step is stored and not asked of the model again when retried; each call's result goes
// to the audit trail; the answer's references carry the library's details and the digest
// of the result they quote; and a review checks them.
func TestToolLoopSteps(t *testing.T) {
	var served toolstest.Calls
	m := &counting{}
	env, a := newActivities(t, m)
	a.Tools = toolstest.NewBox(t, map[string]*mcp.Server{"literature": toolstest.Library(&served)})
	ctx := t.Context()
	in := generateInput("generate-h-0001")
	in.Strategy = research.StrategyLiterature
	loop := Loop{Tools: []string{"literature.search", "literature.fetch"}}

	var given []ToolOutcome
	var out GenerateResult
	for step := 1; step <= 4; step++ {
		loop.Step, loop.Given = step, given
		in.Loop = loop
		calls := m.calls
		out = GenerateResult{}
		must(t, run(t, env, a.Generate, in, &out))
		var again GenerateResult
		must(t, run(t, env, a.Generate, in, &again)) // a retry of the same step
		if m.calls != calls+1 {
			t.Fatalf("step %d asked the model %d times", step, m.calls-calls)
		}
		if len(out.Calls) == 0 {
			break
		}
		rec, ok, err := a.Store.Turn(ctx, "s-1", StepID("generate-h-0001", step))
		if err != nil || !ok || rec.Said == nil || len(rec.Said.Calls) != len(out.Calls) {
			t.Fatalf("step %d's record %+v, %v, %v", step, rec, ok, err)
		}
		given = nil
		for i, c := range out.Calls {
			var res ToolCallResult
			must(t, run(t, env, a.CallTool, ToolCallInput{SessionID: "s-1", TurnID: "generate-h-0001", Step: step, Call: i}, &res))
			tr, err := a.Store.ToolRecord(ctx, "s-1", res.Source)
			if err != nil || tr.Tool != c.Name || res.IsError {
				t.Fatalf("call %s: %+v, record %+v, %v", c.Name, res, tr, err)
			}
			given = append(given, ToolOutcome{CallID: c.ID, Name: c.Name, Source: res.Source})
		}
	}
	if out.HypothesisID != "h-0001" || out.References == 0 {
		t.Fatalf("the turn's answer: %+v", out)
	}
	if served.Of("search") != 1 || served.Of("fetch") != 2 {
		t.Errorf("the server answered %d searches and %d fetches; want 1 and 2", served.Of("search"), served.Of("fetch"))
	}
	h, err := a.Store.Hypothesis(ctx, "s-1", "h-0001")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range h.References {
		if r.Source == "" || r.Title == "" || len(r.Authors) == 0 || r.Year == 0 {
			t.Errorf("reference %+v lacks the library's details", r)
		}
	}
	var rv ReviewResult
	must(t, run(t, env, a.Review, ReviewInput{Turn: Turn{SessionID: "s-1", TurnID: "review-h-0001-initial", Goal: in.Goal, Provider: "offline"}, HypothesisID: "h-0001", Type: research.ReviewInitial}, &rv))
	reviews, err := a.Store.Reviews(ctx, "s-1", "h-0001")
	if err != nil || len(reviews) != 1 || len(reviews[0].Citations) != len(h.References) || rv.Invented+rv.Unsupported != 0 {
		t.Fatalf("review %+v, stored %+v, %v", rv, reviews, err)
	}
	for _, c := range reviews[0].Citations {
		if c.Verdict != research.CitationVerified {
			t.Errorf("a genuine citation was flagged: %+v", c)
		}
	}
}

// TestFlaggedCitationCostsScore: a review of a hypothesis that cites what no tool
// returned flags it, says so in the critique, and scores it lower than the same review
// (same turn, same model stream) of the same hypothesis without that citation.
func TestFlaggedCitationCostsScore(t *testing.T) {
	env, a := newActivities(t, &simulator.Offline{})
	ctx := t.Context()
	clean := research.Hypothesis{ID: "h-0001", Title: "t", Statement: "s", Predictions: []string{"p"}, Goal: "g", Origin: "generation"}
	cites := clean
	cites.References = []research.Reference{{ID: "10.5555/cosci.invented", Quote: "a claim"}}
	must(t, a.Store.PutHypothesis(ctx, "with", cites))
	must(t, a.Store.PutHypothesis(ctx, "without", clean))
	review := func(sessionID string) ReviewResult {
		var r ReviewResult
		must(t, run(t, env, a.Review, ReviewInput{Turn: Turn{SessionID: sessionID, TurnID: "review-h-0001", Goal: "g", Provider: "offline", Seed: 1}, HypothesisID: "h-0001", Type: research.ReviewInitial}, &r))
		return r
	}
	flagged, plain := review("with"), review("without")
	if flagged.Invented != 1 || plain.Invented != 0 {
		t.Fatalf("invented citations %d and %d, want 1 and 0", flagged.Invented, plain.Invented)
	}
	if flagged.Score > plain.Score-0.5 {
		t.Errorf("score %.2f with an invented citation, %.2f without", flagged.Score, plain.Score)
	}
	rs, err := a.Store.Reviews(ctx, "with", "h-0001")
	if err != nil || !strings.Contains(rs[0].Critique, "10.5555/cosci.invented (no tool returned it)") {
		t.Errorf("critique %q, %v", rs[0].Critique, err)
	}
}

// TestCitationsWeighAsAReaderWould: each kind of flagged citation costs the review what a
// careful reader would take off: a quote altered, overstated, out of context or
// unsupported, or a source that does not bear on its claim or that the claim overstates,
// weakens; an invented or contradicted one, or one that contradicts its claim, discredits
// the hypothesis.
// TestReviewReadsTheSourcesPassage: a review that judges support is given each citation's
// check, and its prompt puts the source's passage (the whole sentence, with the hedge a
// fragment left out) beside the quote; a review that does not judge support is not.
func TestReviewReadsTheSourcesPassage(t *testing.T) {
	_, a := newActivities(t, &simulator.Offline{})
	ctx := t.Context()
	const record = `{"results": [{"id": "10.5555/cosci.hedge", "title": "Microglia and tau",
		"snippet": "Depleting microglia halved tau spread in PS19 mice. These data suggest that microglia may drive tau spread in humans."}]}`
	digest, err := a.Store.PutToolRecord(ctx, "s-1", store.ToolRecord{Tool: "literature.search", Content: record})
	must(t, err)
	h := research.Hypothesis{ID: "h-0001", Title: "t", Statement: "s", Predictions: []string{"p"}, Goal: "g", Origin: "generation",
		References: []research.Reference{{ID: "10.5555/cosci.hedge", Source: digest, Quote: "microglia may drive tau spread in humans", Claim: "Microglia drive tau spread in people."}}}
	must(t, a.Store.PutHypothesis(ctx, "s-1", h))
	for _, typ := range []string{research.ReviewFull, research.ReviewInitial} {
		turn, err := prepareReview(ctx, a, ReviewInput{Turn: Turn{SessionID: "s-1", Goal: "g"}, HypothesisID: "h-0001", Type: typ}, "review-1")
		must(t, err)
		text := prompt.Review(turn.req).Prompt
		if typ == research.ReviewInitial {
			if len(turn.req.Citations) != 0 {
				t.Errorf("an initial review was given checks: %+v", turn.req.Citations)
			}
			continue
		}
		if len(turn.req.Citations) != 1 || turn.req.Citations[0].Verdict != research.CitationOutOfContext {
			t.Fatalf("checks = %+v, want one out of context", turn.req.Citations)
		}
		if !strings.Contains(text, "These data suggest that microglia may drive tau spread in humans") || !strings.Contains(text, research.CitationOutOfContext) {
			t.Errorf("the prompt lacks the source's passage and the check's verdict:\n%s", text)
		}
	}
}

func TestCitationsWeighAsAReaderWould(t *testing.T) {
	_, a := newActivities(t, &simulator.Offline{})
	ctx := t.Context()
	const record = `{"query": "microglia tau", "total": 1, "results": [{"id": "10.5555/cosci.tau.010", "title": "Microglia and tau",
		"snippet": "Microglial depletion reduced tau propagation by 40% in PS19 mice."}]}`
	digest, err := a.Store.PutToolRecord(ctx, "s-1", store.ToolRecord{Tool: "literature.search", Content: record})
	must(t, err)
	const id = "10.5555/cosci.tau.010"
	tests := []struct {
		name, source, quote, support string
		verdict, reviewVerdict       string
		plausibility                 float64
		critique                     string
	}{
		{"verified and supporting", digest, "Microglial depletion reduced tau propagation by 40%", research.SupportSupports, research.CitationVerified, "accept", 8, ""},
		{"altered", digest, "Microglial depletion lessened tau propagation by 40% in PS19 mice", "", research.CitationAltered, "revise", 6.5, id + " (its quote changes its source's words)"},
		{"overstated", digest, "Microglial depletion reduced tau propagation by 40% in all PS19 mice", "", research.CitationOverstated, "revise", 6.5, "its quote claims more than its source"},
		{"a fragment that keeps its context", digest, "depletion reduced tau propagation by 40% in PS19 mice", "", research.CitationVerified, "accept", 8, ""},
		{"overstating its claim", digest, "Microglial depletion reduced tau propagation by 40%", research.SupportOverstates, research.CitationVerified, "revise", 6.5, "the claim it is cited for says more than its source"},
		{"unsupported", digest, "Astrocytes clear extracellular tau in PS19 mice", "", research.CitationUnsupported, "revise", 6.5, "its source does not say what is quoted"},
		{"contradicted", digest, "Microglial depletion increased tau propagation by 40%", "", research.CitationContradicted, "reject", 5, "its source says otherwise"},
		{"invented", "", "Microglial depletion reduced tau propagation by 40%", "", research.CitationInvented, "reject", 5, "no tool returned it"},
		{"irrelevant to its claim", digest, "Microglial depletion reduced tau propagation by 40%", research.SupportIrrelevant, research.CitationVerified, "revise", 7, "does not bear on the claim"},
		{"contradicting its claim", digest, "Microglial depletion reduced tau propagation by 40%", research.SupportContradicts, research.CitationVerified, "reject", 5, "contradicts the claim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := research.Hypothesis{ID: "h-1", References: []research.Reference{{ID: id, Source: tt.source, Quote: tt.quote, Claim: "Microglia spread tau."}}}
			r := research.Review{Scores: research.Scores{Novelty: 8, Plausibility: 8, Testability: 8, Safety: 8}, Verdict: "accept", Critique: "Sound."}
			if tt.support != "" {
				r.Support = []research.SupportJudgement{{ID: id, Judgement: tt.support}}
			}
			must(t, a.checkCitations(ctx, "s-1", h, &r))
			if len(r.Citations) != 1 || r.Citations[0].Verdict != tt.verdict {
				t.Fatalf("citations = %+v, want one %s", r.Citations, tt.verdict)
			}
			if r.Verdict != tt.reviewVerdict || r.Scores.Plausibility != tt.plausibility {
				t.Errorf("verdict %s, plausibility %g; want %s, %g", r.Verdict, r.Scores.Plausibility, tt.reviewVerdict, tt.plausibility)
			}
			if !strings.Contains(r.Critique, tt.critique) {
				t.Errorf("critique %q lacks %q", r.Critique, tt.critique)
			}
		})
	}
}

// TestReviewChecksOnce: a review that judges support checks the hypothesis' citations
// once, for its prompt, and weighs its marks by that same check: the audit trail is not
// read again when the review is kept. The record is taken out of the trail between the
// two; a second check would find the source invented and reject the hypothesis.
func TestReviewChecksOnce(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(t.Context(), dir)
	must(t, err)
	a := &Activities{Store: st, Models: map[string]Model{"offline": &simulator.Offline{}}}
	ctx := t.Context()
	const record = `{"results": [{"id": "10.5555/cosci.once", "title": "Microglia and tau", "snippet": "Depleting microglia halved tau spread in PS19 mice."}]}`
	digest, err := a.Store.PutToolRecord(ctx, "s-1", store.ToolRecord{Tool: "literature.search", Content: record})
	must(t, err)
	h := research.Hypothesis{ID: "h-0001", Title: "t", Statement: "s", Predictions: []string{"p"}, Goal: "g", Origin: "generation",
		References: []research.Reference{{ID: "10.5555/cosci.once", Source: digest, Quote: "Depleting microglia halved tau spread in PS19 mice", Claim: "Microglia spread tau."}}}
	must(t, a.Store.PutHypothesis(ctx, "s-1", h))
	turn, err := prepareReview(ctx, a, ReviewInput{Turn: Turn{SessionID: "s-1", Goal: "g"}, HypothesisID: "h-0001", Type: research.ReviewFull}, "review-1")
	must(t, err)
	if len(turn.req.Citations) != 1 || turn.req.Citations[0].Verdict != research.CitationVerified {
		t.Fatalf("the prompt's checks = %+v, want one verified", turn.req.Citations)
	}
	removed := 0
	must(t, filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.Contains(e.Name(), digest) {
			removed++
			return os.Remove(path)
		}
		return err
	}))
	if removed == 0 {
		t.Fatal("the record was not found in the store's folder")
	}
	review := research.Review{Scores: research.Scores{Novelty: 8, Plausibility: 8, Testability: 8, Safety: 8}, Verdict: "accept", Critique: "Sound.",
		Support: []research.SupportJudgement{{ID: "10.5555/cosci.once", Judgement: research.SupportSupports}}}
	res, err := turn.keep(turn.req, review, research.Usage{})
	must(t, err)
	if res.Invented != 0 || res.Verdict != "accept" {
		t.Errorf("kept %+v: the review checked its citations again", res)
	}
}
