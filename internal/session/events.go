package session

import (
	"fmt"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// Event kinds in a session's own log.
const (
	EventTransition = "transition" // the lifecycle moved
	EventCommand    = "command"    // a scientist's command, accepted or rejected
	EventTurn       = "turn"       // a provider turn finished (or failed)
	EventCheckpoint = "checkpoint" // a snapshot was written
	EventNote       = "note"       // anything else worth a line in the notebook
	EventSubagent   = "subagent"   // a subagent was forked, or its result merged back
	EventMessage    = "message"    // another session sent a message
	EventTool       = "tool"       // a tool call of a turn: made, refused, failed, or waiting for the scientist
	EventAsk        = "ask"        // the scientist spoke in the conversation, or the session answered
)

// Event is one line of the session's log. Plain JSON types only, so any tool can read it.
type Event struct {
	Seq  int    `json:"seq"`
	Time string `json:"time"` // RFC 3339, UTC
	Kind string `json:"kind"`
	// For transitions: the states. For commands: the command and whether it was accepted.
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	Command string `json:"command,omitempty"`
	Via     string `json:"via,omitempty"` // "signal", "update" or "conversation"
	// By is who issued the command (Command.By), or who spoke in the conversation; ""
	// when the sender named no one.
	By string `json:"by,omitempty"`
	// Signed is the desk's signature of By (Command.BySig), "" when no desk sent it:
	// a By any client of the namespace may have written.
	Signed string `json:"signed,omitempty"`
	// Update is the id of the Temporal update that carried a command or a question, and
	// Digest the digest of what it carried (Command.Digest, TextDigest, ConfirmDigest for
	// a command applied from a confirmation): what a desk's signature covers besides By.
	Update   string `json:"update,omitempty"`
	Digest   string `json:"digest,omitempty"`
	Accepted *bool  `json:"accepted,omitempty"`
	// For turns: the turn and the hypothesis it concerned.
	Turn       string `json:"turn,omitempty"`
	Hypothesis string `json:"hypothesis,omitempty"`
	Detail     string `json:"detail,omitempty"`
	// For subagents and messages: the other session. A subagent's result names the fork
	// point it merges at: the Seq of the event that forked it.
	Session string `json:"session,omitempty"`
	At      int    `json:"at,omitempty"`
}

// Needs is what a session waits for its scientist for: tool calls to approve, proposals
// of its answers to confirm, a suspension of its own (a spent budget, a failing provider)
// to resolve. The workflow keeps it in its memo, which Temporal's list returns with every
// session, so the desk shows what waits for whom across sessions without asking any.
type Needs struct {
	Calls     int    `json:"calls,omitempty"`
	Proposals int    `json:"proposals,omitempty"`
	Suspended string `json:"suspended,omitempty"` // why the session suspended itself
	// Lab says what the session waits for the lab for ("waiting for the lab: 1
	// experiment, since ..."; experiment.LabWait.Why): not the scientist's move, but shown
	// beside it, and the session does not end while it waits.
	Lab string `json:"lab,omitempty"`
}

// Any says whether the session waits for its scientist, or for the lab, at all.
func (n Needs) Any() bool { return n.Calls > 0 || n.Proposals > 0 || n.Suspended != "" || n.Lab != "" }

// Rank orders sessions by how much they wait for their scientist: calls first (a turn
// waits on each), then a suspension, then proposals; 0 for none.
func (n Needs) Rank() int {
	r := 0
	if n.Calls > 0 {
		r += 4
	}
	if n.Suspended != "" {
		r += 2
	}
	if n.Proposals > 0 {
		r++
	}
	return r
}

// Why says in a few words what the session waits for.
func (n Needs) Why() string {
	var parts []string
	plural := func(k int, one, many string) string {
		if k == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", k, many)
	}
	if n.Calls > 0 {
		parts = append(parts, plural(n.Calls, "tool call", "tool calls")+" to approve")
	}
	if n.Proposals > 0 {
		parts = append(parts, plural(n.Proposals, "proposal", "proposals")+" to confirm")
	}
	if n.Suspended != "" {
		parts = append(parts, "suspended: "+n.Suspended)
	}
	if n.Lab != "" {
		parts = append(parts, n.Lab)
	}
	return strings.Join(parts, " · ")
}

// Trust is a tool the scientist trusted for the session (trust-tool): its calls do not
// wait for approval. By trusted it, at Time (RFC 3339, UTC).
type Trust struct {
	Tool string `json:"tool"`
	By   string `json:"by,omitempty"`
	Time string `json:"time"`
	// Signed, Update and Digest are the trust-tool command's signature, update id and
	// payload digest (Event's), for a page to check By against.
	Signed string `json:"signed,omitempty"`
	Update string `json:"update,omitempty"`
	Digest string `json:"digest,omitempty"`
}

// Refinement is one change the scientist made to the goal.
type Refinement struct {
	Time  string `json:"time"`
	Goal  string `json:"goal,omitempty"`
	Focus string `json:"focus,omitempty"`
}

// Entry is a hypothesis as the supervisor keeps it: ids and numbers, never the text.
type Entry struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Origin   string   `json:"origin"`             // generation, evolution or scientist
	Strategy string   `json:"strategy,omitempty"` // generation strategy or evolution kind
	Parents  []string `json:"parents,omitempty"`  // an evolved hypothesis' lineage
	Round    int      `json:"round"`
	Cluster  int      `json:"cluster,omitempty"` // proximity cluster (0: none yet); since the ledger, named by its first hypothesis' number
	// Excluded says why a hypothesis no longer competes (unsafe, a near-duplicate of
	// another); empty while it does.
	Excluded string `json:"excluded,omitempty"`
	// References counts the sources it cites (a grounded hypothesis), Flagged the citations
	// its reviews' checks flagged (invented or unsupported).
	References int     `json:"references,omitempty"`
	Flagged    int     `json:"flagged,omitempty"`
	Elo        float64 `json:"elo"`
	// EloSE is the rating's standard error in Elo points, since ratings are fitted
	// (RatingFitted); 0 for the Elo updated match by match before.
	EloSE   float64 `json:"elo_se,omitempty"`
	Wins    int     `json:"wins"`
	Losses  int     `json:"losses"`
	Reviews int     `json:"reviews"`
	// Score is the mean overall review score, 0 to 10.
	Score float64 `json:"review_score"`
	// Standing is the lab's verdict on it from the session's active results (empty: none),
	// which the ranking orders by before Elo (see Standing).
	Standing Standing `json:"standing,omitempty"`
}

// Progress is what the progress query answers.
type Progress struct {
	HypothesesGenerated int `json:"hypotheses_generated"` // every hypothesis the session holds
	MaxHypotheses       int `json:"max_hypotheses"`
	// Counted is how many of them count against max_hypotheses: the agents' own and those
	// taken in from subagents. The scientist's (Added) do not, nor do those a continued
	// or forked session started with (Inherited). See Counts for progress written before.
	Counted          int `json:"counted"`
	Inherited        int `json:"inherited,omitempty"`
	ReviewsCompleted int `json:"reviews_completed"`
	MatchesPlayed    int `json:"matches_played"`
	Debates          int `json:"debates"`  // matches played as multi-turn debates
	Evolved          int `json:"evolved"`  // hypotheses made by the evolution agent
	Added            int `json:"added"`    // hypotheses the scientist added
	Excluded         int `json:"excluded"` // unsafe or near-duplicate, out of the tournament
	MetaReviews      int `json:"meta_reviews"`
	TokensUsed       int `json:"tokens_used"`
	// CostUSD is what the model calls cost so far, as the worker's price table estimates
	// it; TokenBudget and BudgetUSD are the session's caps (0: none).
	CostUSD        float64 `json:"cost_usd,omitempty"`
	TokenBudget    int     `json:"token_budget,omitempty"`
	BudgetUSD      float64 `json:"budget_usd,omitempty"`
	Rounds         int     `json:"rounds"`
	TurnsFailed    int     `json:"turns_failed"`
	Elapsed        string  `json:"elapsed"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	LastCheckpoint string  `json:"last_checkpoint,omitempty"`
	Checkpoints    int     `json:"checkpoints"`
	State          State   `json:"state"`
	// Tool use: calls made, calls that failed or returned a tool error, and the calls
	// waiting for the scientist's approval, with since when.
	ToolCalls  int           `json:"tool_calls,omitempty"`
	ToolErrors int           `json:"tool_errors,omitempty"`
	Waiting    []WaitingCall `json:"waiting,omitempty"`
	// Batch is the provider batch the session waits for, if any.
	Batch *BatchWait `json:"batch,omitempty"`
}

// BatchWait is a provider batch a session waits for: a step's requests, submitted at once.
type BatchWait struct {
	Name      string `json:"name"`      // the step's batch in the session, e.g. "round-3-reviews-7"
	What      string `json:"what"`      // "reviews", "matches", ...
	Requests  int    `json:"requests"`  // how many
	ID        string `json:"id"`        // the provider's batch id
	Submitted string `json:"submitted"` // RFC 3339
}

// WaitingCall is a tool call that waits for the scientist's answer.
type WaitingCall struct {
	ID    string `json:"id"`   // what the answer-tool command names
	Tool  string `json:"tool"` // server.tool
	Brief string `json:"brief,omitempty"`
	// Arguments are the call's whole arguments, indented JSON cut at 4 KiB with the cut
	// named: what the scientist approves. Printed, they are escaped.
	Arguments string `json:"arguments,omitempty"`
	Turn      string `json:"turn"`
	Since     string `json:"since"` // RFC 3339
}

// Snapshot is what a checkpoint writes: everything needed to report on or restart a
// session, except the texts, which the store already holds.
type Snapshot struct {
	SessionID   string          `json:"session_id"`
	Seq         int             `json:"seq"`
	Time        string          `json:"time"`
	State       State           `json:"state"`
	StopReason  string          `json:"stop_reason,omitempty"`
	ScientistID string          `json:"scientist_id"`
	Goal        string          `json:"goal"`
	Refinements []Refinement    `json:"refinements,omitempty"`
	Config      research.Config `json:"config"`
	// Hypotheses are ranked: highest Elo first.
	Hypotheses []Entry        `json:"hypotheses"`
	Progress   Progress       `json:"progress"`
	Usage      research.Usage `json:"usage"`
	// SpentBy is what each agent's turns spent, by agent ("generation", "ranking", ...).
	SpentBy   map[string]research.Usage `json:"spent_by,omitempty"`
	StartedAt string                    `json:"started_at"`

	// Lineage is the session's place in the session graph.
	Lineage *lineage.Descriptor `json:"lineage,omitempty"`
	// The rest of what a session that continues or forks from this checkpoint starts from.
	Plan          string   `json:"plan,omitempty"`
	Focus         []string `json:"focus,omitempty"`
	Feedback      []string `json:"feedback,omitempty"`
	MetaCritiques []string `json:"meta_critiques,omitempty"`
	Played        []string `json:"played,omitempty"` // pairs that met: "a|b", a < b
	// Rating says how the Elo numbers were made: RatingFitted, or "" for Elo updated match
	// by match; Results are every judged match of a fitted session.
	Rating    string              `json:"rating,omitempty"`
	Results   []tournament.Result `json:"results,omitempty"`
	Edges     []proximity.Edge    `json:"edges,omitempty"`
	NextID    int                 `json:"next_id,omitempty"`
	ReviewsBy map[string]int      `json:"reviews_by,omitempty"` // the scientist's reviews per hypothesis
	// The conversation with the scientist: how many messages it numbered, and the latest
	// (ids, who, when, the proposals' status; the texts are in the store).
	Messages     int       `json:"messages,omitempty"`
	Conversation []Message `json:"conversation,omitempty"`
}

// RatingFitted is Snapshot.Rating for a session whose ratings are Bradley–Terry strengths
// fitted to all its results (tournament.Fit), shown on the Elo scale.
const RatingFitted = "bradley-terry"

// Stamp formats a time the way every record in a session does.
func Stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
