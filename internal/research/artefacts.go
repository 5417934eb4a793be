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

// Reference is a source a hypothesis or a review cites. The model names only the ID and
// the Quote; the rest is filled in from the tool result that returned the ID, never from
// the model, so the bibliography holds what a library or search service said.
type Reference struct {
	// ID is the identifier a tool gave the source: a DOI where there is one (lower case,
	// without https://doi.org/), else the library's citation key.
	ID      string   `json:"id"`
	DOI     string   `json:"doi,omitempty"`
	Title   string   `json:"title,omitempty"`
	Authors []string `json:"authors,omitempty"` // "Family, Given", in order
	Year    int      `json:"year,omitempty"`
	Venue   string   `json:"venue,omitempty"` // journal, book or conference
	URL     string   `json:"url,omitempty"`
	// Quote is what the citing text takes from the source, in the source's own words;
	// reflection checks that the tool result holds it.
	Quote string `json:"quote,omitempty"`
	// Claim is the sentence of the citing text (the hypothesis or the review) that the
	// source is cited for; reviews judge whether the quote supports it.
	Claim string `json:"claim,omitempty"`
	// PMID, PMCID, ArXiv and OpenAlex are the source's other identifiers, as a literature
	// service's result gave them.
	PMID     string `json:"pmid,omitempty"`
	PMCID    string `json:"pmcid,omitempty"`
	ArXiv    string `json:"arxiv,omitempty"`
	OpenAlex string `json:"openalex,omitempty"`
	// Source is the digest of the tool result (the audit trail's record) that returned
	// the ID to the turn that cited it; "" when no tool result of that turn did.
	Source string `json:"source,omitempty"`
	// Fabricated marks a reference the offline simulator made up on purpose (an id no
	// tool returned, or a quote its source does not hold), so that benchmarks can measure
	// the citation check. Real models never set it.
	Fabricated bool `json:"fabricated,omitempty"`
	// Planted is the kind of citation the offline simulator made on purpose (one of
	// PlantedKinds), the hidden truth the citation benchmark scores the check against.
	// Real models never set it.
	Planted string `json:"planted,omitempty"`
}

// Citation verdicts: what checking a reference against the record the tool returned for
// its id found.
const (
	CitationVerified     = "verified"     // the record holds the quote (up to case, spacing, punctuation, an elision)
	CitationAltered      = "altered"      // close to a passage of the record, but not equal: a warning
	CitationContradicted = "contradicted" // a passage of the record with its negation, a number or a direction changed
	CitationUnsupported  = "unsupported"  // the record does not hold the quote, or only in pieces spliced together
	CitationInvented     = "invented"     // no tool result the citing turn read returned the id
)

// Support judgements: whether a quote that passes the check supports the claim it is
// cited for, as a deep verification or full review judged it.
const (
	SupportSupports    = "supports"
	SupportContradicts = "contradicts"
	SupportIrrelevant  = "irrelevant"
)

// SupportJudgements are the judgements a review may make of a citation.
var SupportJudgements = []string{SupportSupports, SupportContradicts, SupportIrrelevant}

// CitationCheck is one reference checked against the audit trail.
type CitationCheck struct {
	ID      string `json:"id"`
	Verdict string `json:"verdict"` // one of the Citation* verdicts
	Note    string `json:"note,omitempty"`
	// Passage is the record's passage closest to an altered or contradicted quote, so the
	// report can show the difference.
	Passage string `json:"passage,omitempty"`
	// Support is the review's judgement of whether the quote supports the claim (one of
	// SupportJudgements), for a quote that passed; "" when the review did not judge it.
	Support     string `json:"support,omitempty"`
	SupportNote string `json:"support_note,omitempty"`
}

// Flagged says whether the check found the citation dishonest or unsound: anything but
// a verified quote that no review found contradicting or irrelevant to its claim.
func (c CitationCheck) Flagged() bool {
	return c.Verdict != CitationVerified || c.Support == SupportContradicts || c.Support == SupportIrrelevant
}

// SupportJudgement is a review's judgement of one citation: does its quote support the
// claim it is cited for?
type SupportJudgement struct {
	ID        string `json:"id"`
	Judgement string `json:"judgement"` // one of SupportJudgements
	Note      string `json:"note,omitempty"`
}

// Kinds of citation the offline simulator plants (Reference.Planted): honest ones, and
// the ways real models get citations wrong.
const (
	PlantedVerbatim    = "verbatim"     // honest: copied word for word
	PlantedDrift       = "drift"        // honest: case, spacing, punctuation, Unicode drift
	PlantedElided      = "elided"       // honest: a middle left out, marked "..."
	PlantedInventedID  = "invented-id"  // an id no tool returned
	PlantedNearMissID  = "near-miss-id" // an id cut short or off by a character
	PlantedOtherRecord = "other-record" // a quote from another record of the same result
	PlantedNegated     = "negated"      // a "not" added or removed
	PlantedNumber      = "number"       // a number changed
	PlantedDirection   = "direction"    // a direction word flipped (increases/decreases, ...)
	PlantedSpliced     = "spliced"      // two passages joined as one
	PlantedOwnText     = "own-text"     // the citing text's own words quoted as the source's
	PlantedIrrelevant  = "irrelevant"   // verbatim, cited for a claim it does not support
)

// PlantedHonest says whether a planted kind is an honest citation.
func PlantedHonest(kind string) bool {
	return kind == "" || kind == PlantedVerbatim || kind == PlantedDrift || kind == PlantedElided
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

// Usage counts what a provider turn cost.
type Usage struct {
	// PromptTokens counts every input token, those a provider served from its prompt cache
	// and those it wrote into it included.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	Requests         int `json:"requests"`
	// CachedTokens of the prompt were read from the provider's prompt cache (billed at a
	// fraction of the input price); CacheWriteTokens were written into it (Anthropic bills
	// them above the input price).
	CachedTokens     int `json:"cached_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// Batched counts the requests answered through the provider's batch API (billed at a
	// discount); Unpriced those whose model the worker's price table lacks, whose cost is
	// unknown and not in CostUSD.
	Batched  int `json:"batched,omitempty"`
	Unpriced int `json:"unpriced,omitempty"`
	// CostUSD is an estimate from the worker's price table; 0 when the model has no price.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		Requests:         u.Requests + v.Requests,
		CachedTokens:     u.CachedTokens + v.CachedTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		Batched:          u.Batched + v.Batched,
		Unpriced:         u.Unpriced + v.Unpriced,
		CostUSD:          u.CostUSD + v.CostUSD,
	}
}

// Tokens is prompt plus completion tokens.
func (u Usage) Tokens() int { return u.PromptTokens + u.CompletionTokens }

// CachedPercent is the share of the prompt tokens the provider's cache served, in whole
// percent (0 with no prompt tokens).
func (u Usage) CachedPercent() int { return 100 * u.CachedTokens / max(1, u.PromptTokens) }

// Context is what every agent's prompt carries besides its own task: the research plan,
// the scientist's steering and the latest meta-review.
type Context struct {
	Plan       *Plan       // nil before the plan exists
	Focus      []string    // the scientist's focus refinements, newest last
	Feedback   []string    // the scientist's feedback ("toward: ..." / "away from: ..."), newest last
	MetaReview *MetaReview // the latest meta-review, if any
}

// Cache says how a provider may cache a request's prompt. The first Prefix bytes of the
// prompt are the same in every call of its agent in the session's round (the
// co-scientist's role, the goal, the plan, the latest meta-review, the agent's
// instructions), so a provider that caches prompt prefixes serves them from its cache
// after the first call; Key names that group of calls, for a provider that routes
// requests by a key (OpenAI's prompt_cache_key). Breakpoints says whether to mark the
// prefix for a provider that caches only what it is told to (Anthropic): a turn made
// once per round (the plan, a meta-review) gains nothing from a cache write.
type Cache struct {
	Prefix      int
	Key         string
	Breakpoints bool
}

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
