package simulator

import (
	"context"
	"fmt"
	"strings"
	"testing"

	cite "github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/research"
)

// labRecord is an analysis's record as activities renders it into the audit trail.
func labRecord(id, kind, effect string) research.LabResult {
	text := fmt.Sprintf("Analysis %s is %s. The test read n = 60 observations. The group sizes were 30 and 30. The %s. The p-value was 0.0123.", id, kind, effect)
	content := fmt.Sprintf(`{"id": "analysis:%s", "title": "Welch's t test of hypothesis h-1", "text": %q}`, id, text)
	return research.LabResult{Analysis: "analysis:" + id, Hypothesis: "h-1", Kind: kind, Standing: "supported",
		Title: "Welch's t test of hypothesis h-1", Text: text, Source: "src-" + id, Content: content}
}

// TestLabCitation: a generation or evolution turn given the lab's results cites one as
// analysis:<id> with its effect's sentence, which the citation check, given the record,
// verifies; the pre-registered result is cited over a newer exploratory one. The turn's
// hidden quality and its hypothesis' words are those of the same turn without results:
// only the citation differs.
func TestLabCitation(t *testing.T) {
	lab := []research.LabResult{
		labRecord("x-0001-run-1", "pre-registered", "mean difference was 1.234 (95% CI 0.5 to 1.968)"),
		labRecord("x-0001-run-2", "exploratory", "mean difference was 2.5 (95% CI 1.1 to 3.9)"),
	}
	ctx := context.Background()
	var o Offline
	parent := research.Hypothesis{ID: "h-1", Title: "Microglia carry tau", Statement: "Microglia carry tau between synapses.", Predictions: []string{"p"}, Latent: latent(0.4)}
	turns := []struct {
		name string
		turn func(research.Context) (research.Hypothesis, error)
	}{
		{"generate", func(c research.Context) (research.Hypothesis, error) {
			req := genReq("gen-lab")
			req.Context = c
			h, _, err := o.Generate(ctx, req)
			return h, err
		}},
		{"evolve", func(c research.Context) (research.Hypothesis, error) {
			h, _, err := o.Evolve(ctx, research.EvolveRequest{TurnID: "evo-lab", HypothesisID: "h-9", Goal: goal, Kind: research.EvolveGrounding, Parents: []research.Hypothesis{parent}, Context: c, Seed: 42})
			return h, err
		}},
	}
	for _, tc := range turns {
		without, err := tc.turn(research.Context{})
		if err != nil {
			t.Fatal(err)
		}
		with, err := tc.turn(research.Context{Lab: lab})
		if err != nil {
			t.Fatal(err)
		}
		if *with.Latent != *without.Latent || with.Statement != without.Statement || with.Title != without.Title || with.Rationale != without.Rationale {
			t.Errorf("%s: seeing results changed the hypothesis: latent %v -> %v, %q -> %q", tc.name, *without.Latent, *with.Latent, without.Statement, with.Statement)
		}
		if len(without.References) != 0 || len(with.References) != 1 {
			t.Fatalf("%s: references %+v without results, %+v with", tc.name, without.References, with.References)
		}
		ref := with.References[0]
		if ref.ID != "analysis:x-0001-run-1" {
			t.Errorf("%s: cites %s; want the pre-registered analysis:x-0001-run-1", tc.name, ref.ID)
		}
		results := []cite.Result{{Source: lab[0].Source, Content: lab[0].Content}, {Source: lab[1].Source, Content: lab[1].Content}}
		resolved := cite.Resolve(with.References, results, nil)
		got := cite.Check(resolved, map[string]string{lab[0].Source: lab[0].Content, lab[1].Source: lab[1].Content})[0].Check
		if got.Verdict != research.CitationVerified || !strings.Contains(ref.Quote, "1.234") {
			t.Errorf("%s: the quote %q is %s (%s); want verified", tc.name, ref.Quote, got.Verdict, got.Note)
		}
	}
	// A refused run has no number to quote: nothing is cited.
	refused := research.LabResult{Analysis: "analysis:x-0002-run-1", Kind: "pre-registered", Text: "Analysis x-0002-run-1 was refused and gave no numbers: the sandbox refused the query."}
	req := genReq("gen-refused")
	req.Context = research.Context{Lab: []research.LabResult{refused}}
	if h, _, err := o.Generate(ctx, req); err != nil || len(h.References) != 0 {
		t.Errorf("a refused run: %+v, %v; want no citation", h.References, err)
	}
	// The meta-review names the newest pre-registered standing.
	m, _, err := o.MetaReview(ctx, research.MetaReviewRequest{TurnID: "meta-lab", Goal: goal, Round: 1, Context: research.Context{Lab: lab}})
	if err != nil || !strings.Contains(m.Feedback, "analysis:x-0001-run-1 left hypothesis h-1 supported") {
		t.Errorf("meta-review feedback %q, %v", m.Feedback, err)
	}
}
