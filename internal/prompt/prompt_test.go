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

var hyp2 = research.Hypothesis{
	ID:          "h-9",
	Title:       "Synaptic tau release",
	Statement:   "Neurons release free tau at synapses.",
	Rationale:   "Tau release follows neuronal activity.",
	Predictions: []string{"Silencing neurons reduces extracellular tau", "Blocking synaptic vesicle release slows tau spread"},
}

var plan = &research.Plan{
	Preferences: []string{"mechanistic explanations"},
	Constraints: []string{"no human experiments"},
	Criteria:    []string{"predicts a measurable change in tau spread"},
	Summary:     "Mechanistic, testable hypotheses on tau spread.",
}

var meta = &research.MetaReview{
	Round:     2,
	Critiques: []string{"the proposed mediator has not been observed directly", "effects may be too small"},
	Strengths: []string{"falsifiable predictions"},
	Feedback:  "Propose mediators that can be imaged.",
}

// fullContext has every piece a prompt may carry.
var fullContext = research.Context{
	Plan:       plan,
	Focus:      []string{"consider microglia", "only in vivo evidence"},
	Feedback:   []string{"toward: synaptic mechanisms", "away from: exosomes"},
	MetaReview: meta,
}

// contextPieces is what a prompt made with fullContext must contain.
var contextPieces = []string{
	"Research plan: Mechanistic, testable hypotheses on tau spread.",
	"Preferences:\n- mechanistic explanations",
	"Constraints:\n- no human experiments",
	"Evaluation criteria:\n- predicts a measurable change in tau spread",
	"- consider microglia\n- only in vivo evidence", "the last one matters most",
	"- toward: synaptic mechanisms\n- away from: exosomes",
	"Recurring critique from the last round: the proposed mediator has not been observed directly; effects may be too small.",
	"Recurring strengths from the last round: falsifiable predictions.",
	"Meta-review feedback: Propose mediators that can be imaged.",
}

// noContext is what a prompt made without any context must not contain.
var noContext = []string{"Research plan", "Evaluation criteria", "refined", "feedback on the hypotheses", "Recurring critique", "Meta-review feedback"}

func containsAll(t *testing.T, prompt string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(prompt, w) {
			t.Errorf("prompt does not contain %q:\n%s", w, prompt)
		}
	}
}

func containsNone(t *testing.T, prompt string, not ...string) {
	t.Helper()
	for _, n := range not {
		if strings.Contains(prompt, n) {
			t.Errorf("prompt contains %q but should not:\n%s", n, prompt)
		}
	}
}

// TestContextInEveryPrompt: every prompt of a round carries the whole shared context when
// it is given, and none of it when it is not.
func TestContextInEveryPrompt(t *testing.T) {
	tests := []struct {
		name   string
		render func(research.Context) string
	}{
		{"generate", func(c research.Context) string {
			return Generate(research.GenerateRequest{Goal: goal, Strategy: research.StrategyLiterature, Context: c}).Prompt
		}},
		{"review", func(c research.Context) string {
			return Review(research.ReviewRequest{Goal: goal, Type: research.ReviewFull, Hypothesis: hyp, Context: c}).Prompt
		}},
		{"deep verification", func(c research.Context) string {
			return Review(research.ReviewRequest{Goal: goal, Type: research.ReviewDeepVerification, Hypothesis: hyp, Context: c}).Prompt
		}},
		{"evolve", func(c research.Context) string {
			return Evolve(research.EvolveRequest{Goal: goal, Kind: research.EvolveGrounding, Parents: []research.Hypothesis{hyp}, Context: c}).Prompt
		}},
		{"compare", func(c research.Context) string {
			return Compare(research.CompareRequest{Goal: goal, A: hyp, B: hyp2, Context: c}).Prompt
		}},
		{"debate", func(c research.Context) string {
			return Debate(research.DebateRequest{Goal: goal, A: hyp, B: hyp2, Turn: 1, Turns: 3, Context: c}).Prompt
		}},
		{"meta-review", func(c research.Context) string {
			return MetaReview(research.MetaReviewRequest{Goal: goal, Round: 2, Context: c}).Prompt
		}},
		{"overview", func(c research.Context) string {
			return Overview(research.OverviewRequest{Goal: goal, Top: []research.Hypothesis{hyp}, Context: c}).Prompt
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.render(fullContext)
			containsAll(t, p, goal)
			containsAll(t, p, contextPieces...)
			if strings.Index(p, "Research plan") > strings.Index(p, "Recurring critique") {
				t.Error("the plan should come before the meta-review")
			}
			bare := tt.render(research.Context{})
			containsAll(t, bare, goal)
			containsNone(t, bare, noContext...)
			// Only the critiques, without feedback, still say what recurs.
			only := tt.render(research.Context{MetaReview: &research.MetaReview{Round: 1, Critiques: []string{"too vague"}}})
			containsAll(t, only, "Recurring critique from the last round: too vague.")
			containsNone(t, only, "Meta-review feedback")
		})
	}
}

// TestEveryKindIsDescribed: every strategy, review type and evolution kind has the texts
// its prompts are made of.
func TestEveryKindIsDescribed(t *testing.T) {
	for _, tt := range []struct {
		what  string
		kinds []string
		texts map[string]string
	}{
		{"strategy method", research.Strategies, strategyMethods},
		{"strategy name", research.Strategies, strategyNames},
		{"description of what the review checks", research.ReviewTypes, reviewChecks},
		{"evolution method", research.EvolutionKinds, evolutionMethods},
	} {
		for _, k := range tt.kinds {
			if tt.texts[k] == "" {
				t.Errorf("%s has no %s", k, tt.what)
			}
		}
	}
}

func TestSchemas(t *testing.T) {
	tests := []struct {
		name     string
		schema   json.RawMessage
		required []string
	}{
		{"plan", PlanSchema, []string{"preferences", "constraints", "evaluation_criteria", "summary"}},
		{"hypothesis", HypothesisSchema, []string{"title", "statement", "rationale", "testable_predictions"}},
		{"review", ReviewSchema, []string{"scores", "critique", "verdict"}},
		{"full review", FullReviewSchema, []string{"scores", "citation_support", "critique", "verdict"}},
		{"deep verification", DeepVerificationSchema, []string{"scores", "citation_support", "critique", "verdict", "assumptions"}},
		{"comparison", ComparisonSchema, []string{"winner", "reasoning"}},
		{"advocate", AdvocateSchema, []string{"argument"}},
		{"judgement", JudgementSchema, []string{"argument", "winner", "reasoning"}},
		{"meta-review", MetaReviewSchema, []string{"critiques", "strengths", "feedback", "delegations"}},
		{"overview", OverviewSchema, []string{"summary", "themes", "open_questions", "suggested_experiments"}},
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
			if len(s.Properties) != len(tt.required) {
				t.Errorf("%d properties, want %d (every property is required)", len(s.Properties), len(tt.required))
			}
			for _, f := range tt.required {
				if _, ok := s.Properties[f]; !ok {
					t.Errorf("required field %q has no property", f)
				}
			}
		})
	}

	// The nested scores object must require all four marks, and the verdict enums must be
	// research.Verdicts and research.AssumptionVerdicts, or the schemas and ParseReview
	// would disagree.
	for _, schema := range []json.RawMessage{ReviewSchema, DeepVerificationSchema} {
		var r struct {
			Properties struct {
				Scores struct {
					Required []string `json:"required"`
				} `json:"scores"`
				Verdict struct {
					Enum []string `json:"enum"`
				} `json:"verdict"`
				Assumptions *struct {
					Items struct {
						Properties struct {
							Verdict struct {
								Enum []string `json:"enum"`
							} `json:"verdict"`
						} `json:"properties"`
					} `json:"items"`
				} `json:"assumptions"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(schema, &r); err != nil {
			t.Fatal(err)
		}
		if want := []string{"novelty", "plausibility", "testability", "safety"}; !slices.Equal(r.Properties.Scores.Required, want) {
			t.Errorf("scores.required = %q, want %q", r.Properties.Scores.Required, want)
		}
		if !slices.Equal(r.Properties.Verdict.Enum, research.Verdicts) {
			t.Errorf("verdict enum = %q, want %q", r.Properties.Verdict.Enum, research.Verdicts)
		}
		if a := r.Properties.Assumptions; a != nil && !slices.Equal(a.Items.Properties.Verdict.Enum, research.AssumptionVerdicts) {
			t.Errorf("assumption verdict enum = %q, want %q", a.Items.Properties.Verdict.Enum, research.AssumptionVerdicts)
		}
	}
	// A delegation is a closed object whose every property is required, as strict mode
	// wants, and whose tasks are research.DelegationTasks, or schema and parser disagree.
	var mr struct {
		Properties struct {
			Delegations struct {
				Type     string `json:"type"`
				MaxItems int    `json:"maxItems"`
				Items    struct {
					Type       string                     `json:"type"`
					Properties map[string]json.RawMessage `json:"properties"`
					Required   []string                   `json:"required"`
					Closed     *bool                      `json:"additionalProperties"`
				} `json:"items"`
			} `json:"delegations"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(MetaReviewSchema, &mr); err != nil {
		t.Fatal(err)
	}
	d := mr.Properties.Delegations
	if d.Type != "array" || d.MaxItems != MaxDelegations || d.Items.Type != "object" {
		t.Errorf("delegations = %+v, want an array of at most %d objects", d, MaxDelegations)
	}
	if want := []string{"task", "hypothesis_id", "reason"}; !slices.Equal(d.Items.Required, want) || len(d.Items.Properties) != len(want) {
		t.Errorf("delegation required = %q with %d properties, want %q and no other", d.Items.Required, len(d.Items.Properties), want)
	}
	if d.Items.Closed == nil || *d.Items.Closed {
		t.Error("a delegation allows additional properties; strict mode refuses that")
	}
	var task struct {
		Enum []string `json:"enum"`
	}
	if err := json.Unmarshal(d.Items.Properties["task"], &task); err != nil || !slices.Equal(task.Enum, research.DelegationTasks) {
		t.Errorf("task enum = %q, %v; want %q", task.Enum, err, research.DelegationTasks)
	}
	if string(ReviewSchemaFor(research.ReviewDeepVerification)) != string(DeepVerificationSchema) || string(ReviewSchemaFor(research.ReviewFull)) != string(FullReviewSchema) ||
		string(ReviewSchemaFor(research.ReviewInitial)) != string(ReviewSchema) {
		t.Error("ReviewSchemaFor picks the wrong schema")
	}
}

// TestPromptsShareTheirPrefix: the prompts of a round are built to be cached. Two calls of
// one agent in a round (different hypotheses, strategies, kinds, transcripts) are the
// same in their first Prefix bytes and differ after it; every agent's prompt starts with
// the same shared prefix; and no prompt carries an answer schema, which the APIs send.
func TestPromptsShareTheirPrefix(t *testing.T) {
	c := fullContext
	transcript := []research.DebateTurn{{Turn: 1, Speaker: "A", Argument: "Exosomes are found in CSF."}}
	tests := []struct {
		agent string
		a, b  Text
	}{
		{"generation", Generate(research.GenerateRequest{Goal: goal, Strategy: research.StrategyLiterature, Context: c}),
			Generate(research.GenerateRequest{Goal: goal, Strategy: research.StrategyDebate, Context: c})},
		{"reflection", Review(research.ReviewRequest{Goal: goal, Type: research.ReviewFull, Hypothesis: hyp, Context: c}),
			Review(research.ReviewRequest{Goal: goal, Type: research.ReviewFull, Hypothesis: hyp2, Context: c})},
		{"ranking", Compare(research.CompareRequest{Goal: goal, A: hyp, B: hyp2, Context: c}),
			Compare(research.CompareRequest{Goal: goal, A: hyp2, B: hyp, Context: c})},
		{"advocate", Debate(research.DebateRequest{Goal: goal, A: hyp, B: hyp2, Turn: 1, Turns: 3, Context: c}),
			Debate(research.DebateRequest{Goal: goal, A: hyp, B: hyp2, Transcript: transcript, Turn: 2, Turns: 3, Context: c})},
		{"judge", Debate(research.DebateRequest{Goal: goal, A: hyp, B: hyp2, Transcript: transcript, Turn: 3, Turns: 3, Context: c}),
			Debate(research.DebateRequest{Goal: goal, A: hyp2, B: hyp, Transcript: transcript, Turn: 3, Turns: 3, Context: c})},
		{"evolution", Evolve(research.EvolveRequest{Goal: goal, Kind: research.EvolveGrounding, Parents: []research.Hypothesis{hyp}, Context: c}),
			Evolve(research.EvolveRequest{Goal: goal, Kind: research.EvolveCombination, Parents: []research.Hypothesis{hyp, hyp2}, Context: c})},
		{"meta-review", MetaReview(research.MetaReviewRequest{Goal: goal, Round: 3, Context: c}),
			MetaReview(research.MetaReviewRequest{Goal: goal, Round: 4, Reviews: []research.Review{{HypothesisID: "h-7", Type: "full"}}, Context: c})},
		{"overview", Overview(research.OverviewRequest{Goal: goal, Top: []research.Hypothesis{hyp}, Context: c}),
			Overview(research.OverviewRequest{Goal: goal, Top: []research.Hypothesis{hyp2}, Context: c})},
	}
	prefix := shared(goal, c)
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			if tt.a.Prefix != tt.b.Prefix || tt.a.Prefix <= len(prefix) || tt.a.Prefix >= len(tt.a.Prompt) {
				t.Fatalf("prefixes of %d and %d bytes; want the same, past the shared %d bytes and short of the prompt's %d", tt.a.Prefix, tt.b.Prefix, len(prefix), len(tt.a.Prompt))
			}
			if tt.a.Prompt[:tt.a.Prefix] != tt.b.Prompt[:tt.b.Prefix] {
				t.Errorf("the calls differ inside their prefix:\n%s\n---\n%s", tt.a.Prompt[:tt.a.Prefix], tt.b.Prompt[:tt.b.Prefix])
			}
			if tt.a.Prompt == tt.b.Prompt {
				t.Error("the two calls are the same prompt; the test compares nothing")
			}
			if !strings.HasPrefix(tt.a.Prompt, prefix) {
				t.Errorf("the prompt does not start with the round's shared prefix:\n%s", tt.a.Prompt)
			}
			containsNone(t, tt.a.Prompt, `"type":"object"`, `"properties"`, `"required"`)
		})
	}
	// The plan comes before any context: its prompt is the goal's prefix and the
	// supervisor's task, all of it shared.
	p := Plan(research.PlanRequest{Goal: goal})
	if p.Prefix != len(p.Prompt) || !strings.HasPrefix(p.Prompt, shared(goal, research.Context{})) {
		t.Errorf("plan prompt: prefix %d of %d bytes", p.Prefix, len(p.Prompt))
	}
}
