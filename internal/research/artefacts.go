package research

import "fmt"

// Hypothesis is one candidate answer to the research goal, as stored in the session store.
// Hypotheses are immutable: refinement and evolution add new ones that must compete.
type Hypothesis struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Statement   string   `json:"statement"`
	Rationale   string   `json:"rationale"`
	Predictions []string `json:"testable_predictions"`
	// Origin says who proposed it: "generation", "evolution" or "scientist".
	Origin   string `json:"origin"`
	Strategy string `json:"strategy,omitempty"`
	// Goal is the (possibly refined) research goal the hypothesis was generated for.
	Goal string `json:"goal"`
	// Latent is the offline simulator's hidden true quality. Real models never set it;
	// benchmarks use it to measure how well the tournament recovers the truth.
	Latent *float64 `json:"latent_quality,omitempty"`
}

// Check reports what a hypothesis lacks; a model answer that fails it is malformed.
func (h Hypothesis) Check() error {
	switch {
	case h.Title == "":
		return fmt.Errorf("hypothesis has no title")
	case h.Statement == "":
		return fmt.Errorf("hypothesis %q has no statement", h.Title)
	case len(h.Predictions) == 0:
		return fmt.Errorf("hypothesis %q has no testable predictions", h.Title)
	}
	return nil
}

// Scores are a reviewer's marks, each from 0 to 10.
type Scores struct {
	Novelty      float64 `json:"novelty"`
	Plausibility float64 `json:"plausibility"`
	Testability  float64 `json:"testability"`
	Safety       float64 `json:"safety"`
}

// Overall is the mean of the four marks.
func (s Scores) Overall() float64 {
	return (s.Novelty + s.Plausibility + s.Testability + s.Safety) / 4
}

// Review is a reflection agent's verdict on one hypothesis.
type Review struct {
	HypothesisID string `json:"hypothesis_id"`
	Type         string `json:"type"`
	Scores       Scores `json:"scores"`
	Critique     string `json:"critique"`
	// Verdict is "accept", "revise" or "reject".
	Verdict string `json:"verdict"`
}

// Verdicts a review may reach.
var Verdicts = []string{"accept", "revise", "reject"}

// Comparison is a ranking agent's judgement of one match between two hypotheses.
type Comparison struct {
	A         string `json:"a"`
	B         string `json:"b"`
	Winner    string `json:"winner"` // A or B
	Reasoning string `json:"reasoning"`
}

// Usage counts what a provider turn cost.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	Requests         int `json:"requests"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.PromptTokens + v.PromptTokens, u.CompletionTokens + v.CompletionTokens, u.Requests + v.Requests}
}

// GenerateRequest asks a model for one new hypothesis.
type GenerateRequest struct {
	TurnID       string
	HypothesisID string
	Goal         string
	Focus        []string // the scientist's refinements, newest last
	Strategy     string
	Prompt       string // the rendered prompt; models that speak text use it
	Seed         int64
}

// ReviewRequest asks a model to review one hypothesis.
type ReviewRequest struct {
	TurnID     string
	Goal       string
	Type       string
	Hypothesis Hypothesis
	Prompt     string
	Seed       int64
}

// CompareRequest asks a model to judge a match between two hypotheses.
type CompareRequest struct {
	TurnID string
	Goal   string
	A, B   Hypothesis
	Prompt string
	Seed   int64
}
