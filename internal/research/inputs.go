package research

// What each agent's turn is given: the inputs of generation, reflection, the research
// plan, a debate, evolution, the meta-review, the overview and a comparison.

// GenerateRequest asks a model for one new hypothesis.
type GenerateRequest struct {
	TurnID       string
	HypothesisID string
	Goal         string
	Focus        []string // the scientist's refinements, newest last
	Strategy     string
	Context      Context
	Prompt       string // the rendered prompt; models that speak text use it
	Cache        Cache
	Seed         int64
	// Tooling is the tools the turn may call and its conversation so far; zero for a
	// turn without tools.
	Tooling Tooling
}

// ReviewRequest asks a model to review one hypothesis.
type ReviewRequest struct {
	TurnID     string
	Goal       string
	Type       string
	Hypothesis Hypothesis
	Context    Context
	Prompt     string
	Cache      Cache
	Seed       int64
	// Tooling is the tools the turn may call and its conversation so far; zero for a
	// turn without tools.
	Tooling Tooling
	// Citations are the check of each of the hypothesis' references, in order, made
	// before a review that judges their support (full, deep verification): the review
	// reads each quote beside its source's passage (CitationCheck.Passage) and verdict.
	Citations []CitationCheck
}

// PlanRequest asks for the research plan.
type PlanRequest struct {
	TurnID string
	Goal   string
	Prompt string
	Cache  Cache
	Seed   int64
}

// DebateRequest asks for the next turn of a debate, or, on the last turn, the verdict.
type DebateRequest struct {
	TurnID     string
	Goal       string
	A, B       Hypothesis
	Transcript []DebateTurn // the turns so far
	Turn       int          // 1-based
	Turns      int          // the debate's length; the last turn also judges
	Context    Context
	Prompt     string
	Cache      Cache
	Seed       int64
}

// DebateAnswer is one debate turn; on the last turn it also carries the verdict.
type DebateAnswer struct {
	Turn      DebateTurn
	Winner    string // id of A or B, only on the last turn
	Reasoning string
}

// EvolveRequest asks for a new hypothesis evolved from existing ones.
type EvolveRequest struct {
	TurnID       string
	HypothesisID string // the new hypothesis' id
	Goal         string
	Kind         string // one of EvolutionKinds
	Parents      []Hypothesis
	Context      Context
	Prompt       string
	Cache        Cache
	Seed         int64
	// Tooling is the tools the turn may call and its conversation so far; zero for a
	// turn without tools.
	Tooling Tooling
}

// MetaReviewRequest asks for the recurring critique across a round's reviews and debates.
type MetaReviewRequest struct {
	TurnID  string
	Goal    string
	Round   int
	Reviews []Review
	Debates []Debate
	Context Context
	Prompt  string
	Cache   Cache
	Seed    int64
}

// OverviewRequest asks for the final research overview.
type OverviewRequest struct {
	TurnID     string
	Goal       string
	Top        []Hypothesis // ranked, best first
	Clusters   [][]string   // ids of related hypotheses, from the proximity graph
	MetaReview *MetaReview  // the latest meta-review; Context.MetaReview when nil
	Context    Context
	Prompt     string
	Cache      Cache
	Seed       int64
}

// CompareRequest asks a model to judge a match between two hypotheses.
type CompareRequest struct {
	TurnID  string
	Goal    string
	A, B    Hypothesis
	Context Context
	Prompt  string
	Cache   Cache
	Seed    int64
}
