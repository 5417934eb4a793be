package providertest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
	"github.com/cosci-dev/cosci/internal/research"
)

// How far the fake's token counts can be from a real provider's, measured on cosci's own
// prompts (doc.go quotes the result). The fake counts with o200k_base; the real count
// differs by the tokenizer (Claude's is not public) and by how the API frames what it
// carries. Neither can be measured here without the real APIs, so this measures the
// spread between two real BPE vocabularies on the same text (o200k_base against
// cl100k_base, GPT-4's), and the share of a request that framing and the schema's
// rendering could move.
func TestTokenCountSpread(t *testing.T) {
	cl100k, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	ctx := research.Context{
		Plan: &research.Plan{Preferences: []string{"mechanistic explanations", "testable in mice"}, Constraints: []string{"no human experiments"},
			Criteria: []string{"predicts a measurable change in tau spread"}, Summary: "Mechanistic, testable hypotheses on tau spread."},
		MetaReview: &research.MetaReview{Round: 2, Critiques: []string{"the proposed mediator has not been observed directly"},
			Strengths: []string{"falsifiable predictions"}, Feedback: "Propose mediators that can be imaged in vivo."},
	}
	const goal = "Why does tau pathology spread between connected brain regions?"
	prompts := map[string]string{
		"plan":       prompt.Plan(research.PlanRequest{Goal: goal}).Prompt,
		"generation": prompt.Generate(research.GenerateRequest{Goal: goal, Context: ctx}).Prompt,
		"review":     prompt.Review(research.ReviewRequest{Goal: goal, Type: research.ReviewFull, Hypothesis: hypA, Context: ctx}).Prompt,
		"comparison": prompt.Compare(research.CompareRequest{Goal: goal, A: hypA, B: hypB, Context: ctx}).Prompt,
		"debate":     prompt.Debate(research.DebateRequest{Goal: goal, A: hypA, B: hypB, Turn: 3, Turns: 3, Context: ctx}).Prompt,
		"evolution":  prompt.Evolve(research.EvolveRequest{Goal: goal, Kind: "combination", Parents: []research.Hypothesis{hypA, hypB}, Context: ctx}).Prompt,
		"meta":       prompt.MetaReview(research.MetaReviewRequest{Goal: goal, Round: 2, Context: ctx}).Prompt,
	}
	var o, c, bytes, schema int
	var lines []string
	for _, name := range []string{"plan", "generation", "review", "comparison", "debate", "evolution", "meta"} {
		text := prompts[name]
		n, _ := cl100k.Count(text)
		on := providertest.Tokens(text)
		o, c, bytes = o+on, c+n, bytes+len(text)
		lines = append(lines, fmt.Sprintf("%-10s o200k %5d  cl100k %5d (%+.1f%%)  bytes/4 %5d", name, on, n, 100*float64(n-on)/float64(on), len(text)/4))
	}
	schema = providertest.Tokens(string(compactJSON(t, prompt.HypothesisSchema)))
	t.Logf("cosci's prompts, counted three ways:\n%s\nall: o200k %d, cl100k %d (%+.1f%%), bytes/4 %d (%+.1f%%)\nthe hypothesis schema: %d tokens, %.0f%% of the generation prompt; framing of a 2-message request: 11 tokens",
		strings.Join(lines, "\n"), o, c, 100*float64(c-o)/float64(o), bytes/4, 100*float64(bytes/4-o)/float64(o), schema, 100*float64(schema)/float64(providertest.Tokens(prompts["generation"])))
	// The two vocabularies agree within a few percent on cosci's English prompts; a much
	// larger spread would mean the fake counts something other than the text.
	if d := float64(c-o) / float64(o); d < -0.05 || d > 0.15 {
		t.Errorf("cl100k counts %+.1f%% against o200k on cosci's prompts; want within -5%%..+15%%", 100*d)
	}
}
