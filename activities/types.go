package activities

import (
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/research"
)

// Agents, as they appear in turn records, statistics and the Web UI.
const (
	AgentSupervisor = "supervisor"
	AgentGeneration = "generation"
	AgentReflection = "reflection"
	AgentRanking    = "ranking"
	AgentProximity  = "proximity"
	AgentEvolution  = "evolution"
	AgentMetaReview = "meta-review"
)

// ContextRef tells a turn which shared context to load from the store and put in its
// prompt: the plan, the latest meta-review. The scientist's steering is small and travels
// in the input itself.
type ContextRef struct {
	Plan            bool     `json:"plan,omitempty"`              // the session has a research plan in the store
	MetaReviewRound int      `json:"meta_review_round,omitempty"` // 0: none yet
	Focus           []string `json:"focus,omitempty"`             // newest last, at most a few
	Feedback        []string `json:"feedback,omitempty"`          // "toward: ..." / "away from: ...", newest last
	// Remarks are the ids of the scientist's latest messages in the conversation, newest
	// last: the prompt carries their words (prompt.Remarks), read from the store.
	Remarks []string `json:"remarks,omitempty"`
	// Lab is the session's latest results from the lab, newest last, for the generation,
	// evolution and meta-review turns: the prompt carries each one's record, read from
	// the audit trail by its Source, and a hypothesis may cite it (LabResult).
	Lab []LabResult `json:"lab,omitempty"`
}

// GenerateInput asks for one new hypothesis with a known id.
type GenerateInput struct {
	Turn
	HypothesisID string     `json:"hypothesis_id"`
	Focus        []string   `json:"focus,omitempty"`
	Strategy     string     `json:"strategy,omitempty"`
	Context      ContextRef `json:"context"`
	Loop         Loop       `json:"loop,omitzero"` // a turn that may call tools: the step to take
}

// GenerateResult is what the workflow keeps of a new hypothesis, or, at a step of a
// tool-using turn, the calls the model asked for instead.
type GenerateResult struct {
	HypothesisID string         `json:"hypothesis_id,omitempty"`
	Title        string         `json:"title,omitempty"`
	References   int            `json:"references,omitempty"` // how many sources it cites
	Calls        []PendingCall  `json:"calls,omitempty"`
	Usage        research.Usage `json:"usage"`
}

// ReviewInput asks for one review of one hypothesis.
type ReviewInput struct {
	Turn
	HypothesisID string     `json:"hypothesis_id"`
	Type         string     `json:"type"`
	Context      ContextRef `json:"context"`
	Loop         Loop       `json:"loop,omitzero"` // a turn that may call tools: the step to take
}

// ReviewResult is what the workflow keeps of a review.
type ReviewResult struct {
	HypothesisID string  `json:"hypothesis_id"`
	Type         string  `json:"type"`
	Score        float64 `json:"score"`  // overall, 0 to 10
	Safety       float64 `json:"safety"` // the safety mark, 0 to 10 (see research.SafetyFloor)
	Verdict      string  `json:"verdict"`
	// FailedAssumptions counts the assumptions a deep verification found to fail.
	FailedAssumptions int `json:"failed_assumptions,omitempty"`
	// Invented counts the hypothesis' citations of sources no tool returned; Unsupported
	// the others that cost the hypothesis something (research.CitationCheck.Penalised):
	// quotes altered, overstated, out of context, unsupported or contradicted, and
	// sources the review found overstated by, contradicting or irrelevant to their claims.
	// Their sum is what the workflow shows as flagged.
	Invented    int            `json:"invented,omitempty"`
	Unsupported int            `json:"unsupported,omitempty"`
	Calls       []PendingCall  `json:"calls,omitempty"` // at a step of a tool-using turn
	Usage       research.Usage `json:"usage"`
}

// CompareInput asks for the verdict of one match.
type CompareInput struct {
	Turn
	A       string     `json:"a"`
	B       string     `json:"b"`
	Context ContextRef `json:"context,omitzero"`
}

// CompareResult is the winner's id.
type CompareResult struct {
	Winner string         `json:"winner"`
	Usage  research.Usage `json:"usage"`
}

// PlanResult is what the workflow keeps of the research plan (the plan is in the store).
type PlanResult struct {
	Summary string         `json:"summary"` // one line, for the Web UI and the history
	Usage   research.Usage `json:"usage"`
}

// DebateInput asks for one turn of a multi-turn debate between A and B. The transcript so
// far is in the store under the debate's id; the last turn also judges.
type DebateInput struct {
	Turn
	DebateID string `json:"debate_id"`
	A        string `json:"a"`
	B        string `json:"b"`
	Number   int    `json:"number"` // 1-based
	Of       int    `json:"of"`     // the debate's length (3 to 10)
	// Context is the shared context the prompt carries (none in sessions started before
	// every prompt carried it).
	Context ContextRef `json:"context,omitzero"`
}

// DebateResult carries the winner on the last turn only.
type DebateResult struct {
	Winner string         `json:"winner,omitempty"`
	Usage  research.Usage `json:"usage"`
}

// EvolveInput asks for a new hypothesis, with a known id, evolved from parents.
type EvolveInput struct {
	Turn
	HypothesisID string     `json:"hypothesis_id"`
	Kind         string     `json:"kind"` // research.EvolutionKinds
	Parents      []string   `json:"parents"`
	Context      ContextRef `json:"context"`
	Loop         Loop       `json:"loop,omitzero"` // a turn that may call tools: the step to take
}

// ProximityInput asks how similar the new hypotheses are to every other one.
type ProximityInput struct {
	SessionID string   `json:"session_id"`
	New       []string `json:"new"`
	All       []string `json:"all"` // every hypothesis still competing, New included
	// The session's provider, embedding provider and embedding model: with an
	// embedding provider (named, or the chat provider's own), hypotheses are compared by
	// their embeddings (see provider.EmbeddingProviderOf).
	Provider          string `json:"provider,omitempty"`
	EmbeddingModel    string `json:"embedding_model,omitempty"`
	EmbeddingProvider string `json:"embedding_provider,omitempty"`
}

// ProximityResult holds each new hypothesis' nearest neighbours (a bounded number, above a
// floor), so the graph stays small however large the session grows, and the measure they
// were found by, with its thresholds (none from workers before measures: lexical).
type ProximityResult struct {
	Edges     []proximity.Edge `json:"edges"`
	Measure   string           `json:"measure,omitempty"`
	Duplicate float64          `json:"duplicate,omitempty"`
	Cluster   float64          `json:"cluster,omitempty"`
	Usage     research.Usage   `json:"usage,omitzero"` // what embedding cost
}

// MetaReviewInput asks for the recurring critique of one round.
type MetaReviewInput struct {
	Turn
	Round      int        `json:"round"`
	Hypotheses []string   `json:"hypotheses"` // whose reviews to read
	Debates    []string   `json:"debates"`    // debate ids to read
	Context    ContextRef `json:"context,omitzero"`
}

// MetaReviewResult is the headline of the meta-review (the whole is in the store).
type MetaReviewResult struct {
	Round     int      `json:"round"`
	Critiques []string `json:"critiques"` // at most 3, each short
	// Delegations is the work the meta-review recommends handing to subagents (at most 2,
	// each on a hypothesis of the round), for the workflow to start once this turn is done.
	Delegations []research.Delegation `json:"delegations,omitempty"`
	Usage       research.Usage        `json:"usage"`
}

// OverviewInput asks for the final research overview.
type OverviewInput struct {
	Turn
	Top      []string   `json:"top"`      // ranked ids, best first (at most 10)
	Clusters [][]string `json:"clusters"` // related ids among them
	Context  ContextRef `json:"context"`
	// Ledger, when set instead of Clusters, is where the proximity graph is. (The activity
	// now groups Top into themes by comparing them with one another.)
	Ledger *Ledger `json:"ledger,omitempty"`
	// EmbeddingModel and EmbeddingProvider are the session's: its embeddings, if the
	// store holds them, group the themes.
	EmbeddingModel    string `json:"embedding_model,omitempty"`
	EmbeddingProvider string `json:"embedding_provider,omitempty"`
}

// OverviewResult: the overview itself is in the store.
type OverviewResult struct {
	Themes int            `json:"themes"`
	Usage  research.Usage `json:"usage"`
}

// AddHypothesisInput is a scientist's own hypothesis, stored as it was written.
type AddHypothesisInput struct {
	SessionID    string   `json:"session_id"`
	HypothesisID string   `json:"hypothesis_id"`
	Scientist    string   `json:"scientist"`
	Goal         string   `json:"goal"`
	Title        string   `json:"title"`
	Statement    string   `json:"statement"`
	Rationale    string   `json:"rationale,omitempty"`
	Predictions  []string `json:"testable_predictions"`
}

// ManualReviewInput is a scientist's review of one hypothesis.
type ManualReviewInput struct {
	SessionID    string   `json:"session_id"`
	HypothesisID string   `json:"hypothesis_id"`
	Scientist    string   `json:"scientist"`
	Index        int      `json:"index"` // the scientist's n-th review of it, so none overwrites another
	Score        *float64 `json:"score,omitempty"`
	Verdict      string   `json:"verdict,omitempty"`
	Critique     string   `json:"critique,omitempty"`
}
