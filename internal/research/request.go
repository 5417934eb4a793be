// Package research holds the domain of a co-scientist session: what a scientist asks for
// (the goal and its configuration), and the artefacts a session produces (hypotheses,
// reviews, comparisons). It has no Temporal import: a reader can learn the science here.
package research

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/lineage"
)

// Limits on what a session accepts. They exist so that a typo ("max_hypotheses": 1000000)
// is refused before anything runs instead of burning a model budget for a week.
const (
	MaxGoalLength        = 4000 // characters
	MaxScientistIDLength = 128
	MaxHypothesesLimit   = 10000
	MaxTimeLimit         = 30 * 24 * time.Hour
	MaxFocusLength       = 1000
	// MaxBudgetUSD bounds budget_usd: a typo of a few zeros is refused, not spent.
	MaxBudgetUSD         = 100000
	DefaultMaxHypotheses = 12
	DefaultProvider      = "offline"
	DefaultScientistID   = "anonymous"
	// DefaultConvergenceRounds: a top unchanged for this many rounds means the session has
	// converged; MaxConvergenceRounds bounds the setting.
	DefaultConvergenceRounds = 4
	MaxConvergenceRounds     = 1000
	// DefaultTopK is the size of the top the tournament works to get right and the
	// supervisor watches for convergence; MaxTopK bounds the setting.
	DefaultTopK = 10
	MaxTopK     = 100
	// The checkpoint interval's default and bounds.
	DefaultCheckpointInterval = 10 * time.Minute
	MinCheckpointInterval     = time.Minute
	MaxCheckpointInterval     = 24 * time.Hour
)

// Review types a session can enable (the co-scientist's reflection agent).
const (
	ReviewInitial          = "initial"
	ReviewFull             = "full"
	ReviewDeepVerification = "deep_verification"
	ReviewObservation      = "observation"
	ReviewSimulation       = "simulation"
	ReviewTournament       = "tournament"
)

// ReviewTypes lists every review type in the order a session runs them.
var ReviewTypes = []string{ReviewInitial, ReviewFull, ReviewDeepVerification, ReviewObservation, ReviewSimulation, ReviewTournament}

// Safety levels: how strictly goals and hypotheses are screened.
var SafetyLevels = []string{"relaxed", "standard", "strict"}

// Providers a session may name. The offline simulator is always available; a worker serves
// "openai" (any OpenAI-compatible server: OpenAI, Ollama, vLLM, llama.cpp, OpenRouter) and
// "anthropic" when its environment holds their credentials.
var Providers = []string{DefaultProvider, "openai", "anthropic"}

// EmbeddingProviders a session may name for the proximity agent's embeddings, apart from
// its chat provider: "openai" (OpenAI, or the server OPENAI_BASE_URL names),
// "openai-compatible" (the server COSCI_EMBEDDING_BASE_URL names: Ollama, vLLM, ...) and
// "voyage" (Voyage AI, which Anthropic recommends). None ("") is the chat provider's own
// embeddings where it has some (openai), else words.
var EmbeddingProviders = []string{"openai", "openai-compatible", "voyage"}

// Request is what a scientist submits to start a session: the workflow input.
type Request struct {
	ResearchGoal string `json:"research_goal"`
	ScientistID  string `json:"scientist_id"`
	Config       Config `json:"config"`
	// Lineage places the session in the session graph; nil for a scientist's new session.
	// A session that continues or forks another may leave the goal and config empty: it
	// takes them from the checkpoint it starts from, with whatever is set here on top.
	Lineage *lineage.Descriptor `json:"lineage,omitempty"`
}

// Config tunes one session. Zero values mean "use the default", or, for a continued or
// forked session, "the parent's", unless the zero was given (given.go): then it is a value.
type Config struct {
	MaxHypotheses int      `json:"max_hypotheses,omitempty"`
	TimeLimit     Duration `json:"time_limit,omitempty"`
	// LabReminder is how long an experiment waits for the lab's result before the session
	// reminds the people who run it, and again every as long after (0: 7 days).
	LabReminder Duration `json:"lab_reminder,omitempty"`
	ReviewTypes []string `json:"review_types,omitempty"`
	SafetyLevel string   `json:"safety_level,omitempty"`
	Provider    string   `json:"provider,omitempty"`
	Model       string   `json:"model,omitempty"`
	Seed        int64    `json:"seed,omitempty"`
	// TokenBudget caps the tokens the session's model turns may use (0: no cap). When it is
	// spent the session suspends; raise it with set-budget and resume.
	TokenBudget int `json:"token_budget,omitempty"`
	// BudgetUSD caps what the session's model calls may cost, in US dollars, as the
	// worker's price table estimates it (0: no cap). Each call starts only if what was
	// spent, what the calls in flight are expected to cost and what it is expected to cost
	// fit; otherwise the session suspends. Raise it with set-budget and resume.
	BudgetUSD float64 `json:"budget_usd,omitempty"`
	// Batch sends the calls a round makes many of at once (generation, evolution, reviews,
	// tournament matches) through the provider's batch API, for half the price and
	// answers within a day instead of seconds; off by default. A provider without a batch
	// API (the offline model, a local server) makes its calls one by one as without it.
	Batch bool `json:"batch,omitempty"`
	// ConvergenceRounds is how many rounds in a row the top hypotheses must stay the same
	// for the session to stop as converged (default 4). A large value keeps a session
	// exploring until max_hypotheses or its time limit.
	ConvergenceRounds int `json:"convergence_rounds,omitempty"`
	// CheckpointInterval is the most time between two checkpoints while turns run (default 10m):
	// besides one at the end of every round and one on request, a long round is
	// checkpointed while it runs.
	CheckpointInterval Duration `json:"checkpoint_interval,omitempty"`
	// TopK is the size of the top the tournament works to get right (default 10): its
	// matches go where the top's boundary is uncertain, and the session converges when
	// that top stays the same and its boundary stops narrowing.
	TopK int `json:"top_k,omitempty"`
	// DebateShare is the share of the tournament's boundary matches played as multi-turn
	// debates, from 0 (the default: none) to 1. A debate costs 3 to 5 model calls; in the
	// ranking benchmark (BENCHMARKS.md) it taught less than as many single comparisons.
	DebateShare float64 `json:"debate_share,omitempty"`
	// Tools are the tools the agents may call, "server.tool" or "server.*", served by the
	// MCP servers the workers connect to: generation by literature exploration, full
	// reviews and deep verifications, and evolution use them to ground what they write.
	// None (the default): the agents reason from the goal alone.
	Tools []string `json:"tools,omitempty"`
	// ToolCallsPerTurn bounds one turn's tool calls (0: DefaultToolCallsPerTurn); a turn
	// that has spent them must answer.
	ToolCallsPerTurn int `json:"tool_calls_per_turn,omitempty"`
	// ToolCallsPerSession bounds the session's tool calls (0: DefaultToolCallsPerHypothesis
	// for each of max_hypotheses); once they are spent the agents answer without tools.
	ToolCallsPerSession int `json:"tool_calls_per_session,omitempty"`
	// ApproveTools are tools whose every call waits for the scientist to approve it,
	// refuse it, or give its result themselves; the rest of the session carries on.
	ApproveTools []string `json:"approve_tools,omitempty"`
	// ApprovalTimeout is how long a call waits for that answer before it is refused
	// (0: DefaultApprovalTimeout).
	ApprovalTimeout Duration `json:"approval_timeout,omitempty"`
	// EmbeddingModel is the model the proximity agent embeds hypotheses with, when the
	// session has an embedding provider ("" its default: text-embedding-3-small on
	// openai, voyage-3.5 on voyage; an openai-compatible server needs one named);
	// without one it compares their words.
	EmbeddingModel string `json:"embedding_model,omitempty"`
	// EmbeddingProvider is where the embeddings come from, apart from the chat provider
	// (one of EmbeddingProviders): a session on anthropic or offline that names one
	// compares hypotheses by meaning instead of by words. "" is the chat provider's own
	// (openai), or none.
	EmbeddingProvider string `json:"embedding_provider,omitempty"`

	// zeros are the fields given as zero, which would otherwise read as not given
	// (given.go): over a parent's configuration they clear what the parent set.
	zeros fieldSet
}

// WithDefaults fills every unset field with its default. It never overrides a set value,
// so Validate still sees (and refuses) whatever the scientist got wrong.
func (r Request) WithDefaults() Request {
	r.ResearchGoal = strings.TrimSpace(r.ResearchGoal)
	r.ScientistID = strings.TrimSpace(r.ScientistID)
	if r.ScientistID == "" {
		r.ScientistID = DefaultScientistID
	}
	c := &r.Config
	if c.MaxHypotheses == 0 {
		c.MaxHypotheses = DefaultMaxHypotheses
	}
	if len(c.ReviewTypes) == 0 {
		c.ReviewTypes = []string{ReviewInitial}
	} else {
		c.ReviewTypes = slices.Clone(c.ReviewTypes)
	}
	if c.SafetyLevel == "" {
		c.SafetyLevel = "standard"
	}
	if c.Provider == "" {
		c.Provider = DefaultProvider
	}
	if c.CheckpointInterval == 0 {
		c.CheckpointInterval = Duration(DefaultCheckpointInterval)
	}
	if c.ConvergenceRounds == 0 {
		c.ConvergenceRounds = DefaultConvergenceRounds
	}
	if c.TopK == 0 {
		c.TopK = DefaultTopK
	}
	return r
}

// FieldError names the input field that is wrong and says what would be right.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// Validate refuses a request that cannot run, naming the first field at fault.
// Call it on WithDefaults' result.
func (r Request) Validate() error {
	if err := ValidateGoal(r.ResearchGoal); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(r.ScientistID); n > MaxScientistIDLength {
		return &FieldError{"scientist_id", fmt.Sprintf("is %d characters; at most %d", n, MaxScientistIDLength)}
	}
	if err := r.Config.Validate(); err != nil {
		return err
	}
	return ScreenGoal(r.ResearchGoal, r.Config.SafetyLevel)
}

// ValidateGoal checks a research goal, at start and on every refinement.
func ValidateGoal(goal string) error {
	goal = strings.TrimSpace(goal)
	if goal == "" {
		return &FieldError{"research_goal", "must not be empty: say what the session should investigate"}
	}
	if !utf8.ValidString(goal) {
		return &FieldError{"research_goal", "is not valid UTF-8 text"}
	}
	if n := utf8.RuneCountInString(goal); n > MaxGoalLength {
		return &FieldError{"research_goal", fmt.Sprintf("is %d characters; at most %d (put background material in the focus of a refinement instead)", n, MaxGoalLength)}
	}
	return nil
}

// Validate checks a configuration after defaults were applied.
func (c Config) Validate() error {
	switch {
	case c.MaxHypotheses < 1:
		return &FieldError{"config.max_hypotheses", fmt.Sprintf("is %d; must be at least 1", c.MaxHypotheses)}
	case c.MaxHypotheses > MaxHypothesesLimit:
		return &FieldError{"config.max_hypotheses", fmt.Sprintf("is %d; at most %d per session", c.MaxHypotheses, MaxHypothesesLimit)}
	case time.Duration(c.CheckpointInterval) < MinCheckpointInterval || time.Duration(c.CheckpointInterval) > MaxCheckpointInterval:
		return &FieldError{"config.checkpoint_interval", fmt.Sprintf("is %s; between %s and %s", c.CheckpointInterval, Duration(MinCheckpointInterval), Duration(MaxCheckpointInterval))}
	case c.LabReminder < 0:
		return &FieldError{"config.lab_reminder", fmt.Sprintf("is %s; must not be negative (0 means 7 days)", c.LabReminder)}
	case c.TimeLimit < 0:
		return &FieldError{"config.time_limit", fmt.Sprintf("is %s; must not be negative (0 means no limit)", c.TimeLimit)}
	case time.Duration(c.TimeLimit) > MaxTimeLimit:
		return &FieldError{"config.time_limit", fmt.Sprintf("is %s; at most %s", c.TimeLimit, Duration(MaxTimeLimit))}
	case !slices.Contains(SafetyLevels, c.SafetyLevel):
		return &FieldError{"config.safety_level", fmt.Sprintf("%q is not one of %s", c.SafetyLevel, strings.Join(SafetyLevels, ", "))}
	case !slices.Contains(Providers, c.Provider):
		return &FieldError{"config.provider", fmt.Sprintf("%q is not one of %s", c.Provider, strings.Join(Providers, ", "))}
	case len(c.Model) > 200:
		return &FieldError{"config.model", "is longer than 200 characters"}
	case len(c.EmbeddingModel) > 200:
		return &FieldError{"config.embedding_model", "is longer than 200 characters"}
	case c.EmbeddingProvider != "" && !slices.Contains(EmbeddingProviders, c.EmbeddingProvider):
		return &FieldError{"config.embedding_provider", fmt.Sprintf("%q is not one of %s (or none: the chat provider's own embeddings, else words)", c.EmbeddingProvider, strings.Join(EmbeddingProviders, ", "))}
	case c.EmbeddingProvider == "openai-compatible" && strings.TrimSpace(c.EmbeddingModel) == "":
		return &FieldError{"config.embedding_model", "is needed with embedding_provider openai-compatible: name the embedding model the server serves, e.g. nomic-embed-text"}
	case c.ConvergenceRounds < 1 || c.ConvergenceRounds > MaxConvergenceRounds:
		return &FieldError{"config.convergence_rounds", fmt.Sprintf("is %d; must be from 1 to %d", c.ConvergenceRounds, MaxConvergenceRounds)}
	case c.TopK < 1 || c.TopK > MaxTopK:
		return &FieldError{"config.top_k", fmt.Sprintf("is %d; must be from 1 to %d", c.TopK, MaxTopK)}
	case !(c.DebateShare >= 0 && c.DebateShare <= 1):
		return &FieldError{"config.debate_share", fmt.Sprintf("is %g; must be from 0 (no debates) to 1 (every boundary match a debate)", c.DebateShare)}
	case c.TokenBudget < 0:
		return &FieldError{"config.token_budget", fmt.Sprintf("is %d; must not be negative (0 means no cap)", c.TokenBudget)}
	case !(c.BudgetUSD >= 0 && c.BudgetUSD <= MaxBudgetUSD):
		return &FieldError{"config.budget_usd", fmt.Sprintf("is %g; must be from 0 (no cap) to %g US dollars", c.BudgetUSD, float64(MaxBudgetUSD))}
	}
	if err := c.validateTools(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, t := range c.ReviewTypes {
		if !slices.Contains(ReviewTypes, t) {
			return &FieldError{"config.review_types", fmt.Sprintf("%q is not a review type; use %s", t, strings.Join(ReviewTypes, ", "))}
		}
		if seen[t] {
			return &FieldError{"config.review_types", fmt.Sprintf("%q is listed twice", t)}
		}
		seen[t] = true
	}
	return nil
}

// Duration is a time.Duration that reads and writes as a Go duration string ("90m",
// "2h30m") in JSON, so `temporal workflow start --input` stays writable by hand.
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalText reads a duration from YAML or any text format ("30s").
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf(`%q is not a duration; write one such as "90s", "30m" or "2h"`, b)
	}
	*d = Duration(v)
	return nil
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil // not given, as encoding/json reads null for any other type
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`a duration is a string such as "90s", "30m" or "2h"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf(`%q is not a duration; write one such as "90s", "30m" or "2h"`, s)
	}
	*d = Duration(v)
	return nil
}
