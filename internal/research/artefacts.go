package research

import (
	"fmt"
)

// Hypothesis is one candidate answer to the research goal, as stored in the session store.
// Hypotheses are immutable: refinement and evolution add new ones that must compete.
type Hypothesis struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Statement   string   `json:"statement"`
	Rationale   string   `json:"rationale"`
	Predictions []string `json:"testable_predictions"`
	// Origin says who proposed it: "generation", "evolution" or "scientist".
	Origin string `json:"origin"`
	// Strategy is the generation strategy (see Strategies) or, for an evolved hypothesis,
	// the evolution kind (see EvolutionKinds).
	Strategy string `json:"strategy,omitempty"`
	// Parents are the hypotheses an evolved one was made from. Evolution never edits a
	// hypothesis: it adds a new one that records where it came from and must compete.
	Parents []string `json:"parents,omitempty"`
	// Goal is the (possibly refined) research goal the hypothesis was generated for.
	Goal string `json:"goal"`
	// Latent is the offline simulator's hidden true quality. Real models never set it;
	// benchmarks use it to measure how well the tournament recovers the truth.
	Latent *float64 `json:"latent_quality,omitempty"`
	// References are the sources the hypothesis relies on, each as a tool result gave it
	// (see Reference). A hypothesis made without tools has none.
	References []Reference `json:"references,omitempty"`
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
	// Assumptions is what a deep verification review decomposed the hypothesis into, each
	// checked on its own.
	Assumptions []Assumption `json:"assumptions,omitempty"`
	// Reviewer is "agent" for the reflection agent, or the scientist's id for a manual review.
	Reviewer string `json:"reviewer,omitempty"`
	// References are the sources the review itself relies on (a full review or a deep
	// verification that searched the literature).
	References []Reference `json:"references,omitempty"`
	// Citations is what checking the hypothesis' references against the session's audit
	// trail of tool results found, one check per reference.
	Citations []CitationCheck `json:"citations,omitempty"`
	// Support is what a full review or a deep verification judged of each citation: does
	// its quote support the claim it is cited for? Checking the citations merges these
	// judgements into Citations.
	Support []SupportJudgement `json:"citation_support,omitempty"`
}

// Assumption is one premise of a hypothesis and what checking it found.
type Assumption struct {
	Text string `json:"text"`
	// Verdict is "holds", "doubtful" or "fails".
	Verdict string `json:"verdict"`
	Note    string `json:"note,omitempty"`
}

// AssumptionVerdicts are the verdicts a deep verification may reach on an assumption.
var AssumptionVerdicts = []string{"holds", "doubtful", "fails"}

// Generation strategies (the co-scientist's generation agent).
const (
	StrategyLiterature  = "literature"  // literature exploration: the default first pass
	StrategyDebate      = "debate"      // simulated scientific debate among experts
	StrategyAssumptions = "assumptions" // iterative assumption identification
	StrategyFeedback    = "feedback"    // expansion from the meta-review's feedback
)

// Strategies lists the generation strategies.
var Strategies = []string{StrategyLiterature, StrategyDebate, StrategyAssumptions, StrategyFeedback}

// Evolution kinds (the co-scientist's evolution agent).
const (
	EvolveGrounding      = "grounding"      // tie the hypothesis to evidence, fill gaps
	EvolveFeasibility    = "feasibility"    // make it testable with available methods
	EvolveInspiration    = "inspiration"    // a new hypothesis inspired by top ones
	EvolveCombination    = "combination"    // combine the best parts of several
	EvolveSimplification = "simplification" // the simplest version that still explains
	EvolveOutOfBox       = "out_of_box"     // a divergent take on the same question
)

// EvolutionKinds lists the evolution kinds.
var EvolutionKinds = []string{EvolveGrounding, EvolveFeasibility, EvolveInspiration, EvolveCombination, EvolveSimplification, EvolveOutOfBox}

// Plan is the supervisor's research plan, made from the goal by one provider turn.
type Plan struct {
	Preferences []string `json:"preferences"`
	Constraints []string `json:"constraints"`
	Criteria    []string `json:"evaluation_criteria"`
	Summary     string   `json:"summary"`
}

// DebateTurn is one contribution to a multi-turn debate between two hypotheses' advocates.
type DebateTurn struct {
	Turn     int    `json:"turn"`
	Speaker  string `json:"speaker"` // "A" or "B"
	Argument string `json:"argument"`
}

// Debate is a whole match played as a debate; the last turn's judge names the winner.
type Debate struct {
	A         string       `json:"a"`
	B         string       `json:"b"`
	Turns     []DebateTurn `json:"turns"`
	Winner    string       `json:"winner,omitempty"`
	Reasoning string       `json:"reasoning,omitempty"`
}

// MetaReview is the recurring critique found across a round's reviews and matches. It is
// fed into the next round's generation and reflection prompts.
type MetaReview struct {
	Round     int      `json:"round"`
	Critiques []string `json:"critiques"` // recurring weaknesses, most frequent first
	Strengths []string `json:"strengths"`
	Feedback  string   `json:"feedback"` // one paragraph addressed to the agents
	// Delegations is work the meta-review recommends handing to subagents (at most 2, each
	// on a hypothesis of the round). The supervisor starts them only after this turn has
	// completed, so a replayed or retried turn never starts one twice.
	Delegations []Delegation `json:"delegations,omitempty"`
}

// Delegation is work the meta-review asks the supervisor to hand to a subagent.
type Delegation struct {
	Task       string `json:"task"`          // DelegateVerify or DelegateEvolve
	Hypothesis string `json:"hypothesis_id"` // the hypothesis the subagent works on
	Reason     string `json:"reason"`        // why: becomes the subagent's intention
}

// Delegation tasks.
const (
	DelegateVerify = "verify" // deep verification of a top hypothesis, on its own
	DelegateEvolve = "evolve" // an evolution line explored on its own: evolve, evolve the result, ...
)

// DelegationTasks lists the tasks a meta-review may delegate.
var DelegationTasks = []string{DelegateVerify, DelegateEvolve}

// Overview is the final research overview a scientist reads.
type Overview struct {
	Summary       string          `json:"summary"`
	Themes        []OverviewTheme `json:"themes"`
	OpenQuestions []string        `json:"open_questions"`
	Experiments   []string        `json:"suggested_experiments"`
}

// OverviewTheme is one cluster of related top hypotheses.
type OverviewTheme struct {
	Title      string   `json:"title"`
	Hypotheses []string `json:"hypotheses"`
	Note       string   `json:"note"`
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

// The review score (0 to 10) at which a verdict turns: at AcceptAt and above a hypothesis
// is accepted, at ReviseAt and above it is sent back for revision, below it is rejected.
const (
	AcceptAt = 6.5
	ReviseAt = 4
)

// VerdictOf is the verdict a review score implies.
func VerdictOf(score float64) string {
	switch {
	case score >= AcceptAt:
		return "accept"
	case score >= ReviseAt:
		return "revise"
	}
	return "reject"
}
