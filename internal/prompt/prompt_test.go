package prompt

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

const goal = "Why does tau pathology spread between connected brain regions?"

var hyp = research.Hypothesis{
	ID:          "h-7",
	Title:       "Tau seeding via exosomes",
	Statement:   "Exosomes carry tau seeds between neurons.",
	Rationale:   "Exosomal tau is found in CSF.",
	Predictions: []string{"Blocking exosome release slows spread"},
}

func containsAll(t *testing.T, prompt string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(prompt, w) {
			t.Errorf("prompt does not contain %q:\n%s", w, prompt)
		}
	}
}

func TestGenerate(t *testing.T) {
	tests := []struct {
		name string
		req  research.GenerateRequest
		want []string
		not  []string
	}{
		{
			name: "default strategy, no focus",
			req:  research.GenerateRequest{Goal: goal},
			want: []string{goal, "Strategy: " + DefaultStrategy, "ONE", `"testable_predictions"`},
			not:  []string{"refined", "newest focus"},
		},
		{
			name: "focus and strategy",
			req: research.GenerateRequest{
				Goal:     goal,
				Focus:    []string{"consider microglia", "only in vivo evidence"},
				Strategy: "analogy",
			},
			want: []string{goal, "- consider microglia\n- only in vivo evidence", "the last one matters most", "Strategy: analogy", "addresses the newest focus"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Generate(tt.req)
			containsAll(t, p, tt.want...)
			for _, n := range tt.not {
				if strings.Contains(p, n) {
					t.Errorf("prompt contains %q but should not:\n%s", n, p)
				}
			}
		})
	}
}

func TestReviewNamesTypeAndWhatItChecks(t *testing.T) {
	for _, typ := range research.ReviewTypes {
		t.Run(typ, func(t *testing.T) {
			checks, ok := reviewChecks[typ]
			if !ok {
				t.Fatalf("no description of what a %s review checks", typ)
			}
			p := Review(goal, typ, hyp)
			containsAll(t, p, goal, "Review type: "+typ, checks, hyp.ID, hyp.Title, hyp.Statement, hyp.Predictions[0], `"verdict"`)
		})
	}
	containsAll(t, Review(goal, "unknown", hyp), "Review type: unknown", "as a whole")
}

func TestCompare(t *testing.T) {
	b := hyp
	b.ID, b.Title, b.Statement = "h-9", "Synaptic tau release", "Neurons release free tau at synapses."
	p := Compare(goal, hyp, b)
	containsAll(t, p, goal, "Hypothesis A (h-7): Tau seeding via exosomes", "Hypothesis B (h-9): Synaptic tau release", b.Statement, `"winner" is "A" or "B"`)
	if strings.Index(p, "Hypothesis A") > strings.Index(p, "Hypothesis B") {
		t.Error("A should come before B")
	}
}

func TestSchemas(t *testing.T) {
	tests := []struct {
		name     string
		schema   json.RawMessage
		required []string
	}{
		{"hypothesis", HypothesisSchema, []string{"title", "statement", "rationale", "testable_predictions"}},
		{"review", ReviewSchema, []string{"scores", "critique", "verdict"}},
		{"comparison", ComparisonSchema, []string{"winner", "reasoning"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			}
			if err := json.Unmarshal(tt.schema, &s); err != nil {
				t.Fatalf("schema is not valid JSON: %v", err)
			}
			if s.Type != "object" {
				t.Errorf("type = %q, want object", s.Type)
			}
			if !slices.Equal(s.Required, tt.required) {
				t.Errorf("required = %q, want %q", s.Required, tt.required)
			}
			for _, f := range tt.required {
				if _, ok := s.Properties[f]; !ok {
					t.Errorf("required field %q has no property", f)
				}
			}
		})
	}

	// The nested scores object must require all four marks, and the verdict enum must be
	// research.Verdicts, or the schema and ParseReview would disagree.
	var r struct {
		Properties struct {
			Scores struct {
				Required []string `json:"required"`
			} `json:"scores"`
			Verdict struct {
				Enum []string `json:"enum"`
			} `json:"verdict"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(ReviewSchema, &r); err != nil {
		t.Fatal(err)
	}
	if want := []string{"novelty", "plausibility", "testability", "safety"}; !slices.Equal(r.Properties.Scores.Required, want) {
		t.Errorf("scores.required = %q, want %q", r.Properties.Scores.Required, want)
	}
	if !slices.Equal(r.Properties.Verdict.Enum, research.Verdicts) {
		t.Errorf("verdict enum = %q, want %q", r.Properties.Verdict.Enum, research.Verdicts)
	}
}
