// Package workflows holds the ResearchSession workflow: the co-scientist's supervisor, run
// durably by Temporal. This file is its public surface: the names a client uses with the
// SDK or the `temporal` CLI, and the shapes of what queries and updates return.
package workflows

import (
	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// Names a client needs. The session ID is the workflow ID.
const (
	TaskQueue    = "cosci"
	WorkflowType = "ResearchSession"
	// TurnsQueue carries the provider turns (every activity that calls a model), so a
	// worker can bound them on their own: at most --slots at once per worker, and a
	// requests-per-second limit that holds across workers.
	TurnsQueue = "cosci-turns"
	// ComputeQueue carries the activities that use the worker's CPU for long (the
	// tournament's fit, the report), so a worker runs at most --compute-slots of them at
	// once and keeps cores for the workflow tasks and queries of every session it serves.
	ComputeQueue = "cosci-compute"
)

// Commands: each is both a signal and an update of the same name. The signal is
// fire-and-forget (a rejected one is recorded in the session's history); the update answers
// at once with the new status or a clear rejection. Their payloads and descriptions are in
// session.Commands.
const (
	Suspend       = "suspend"
	Resume        = "resume"
	RefineGoal    = "refine-goal"
	Checkpoint    = "checkpoint"
	Terminate     = "terminate"
	AddHypothesis = "add-hypothesis" // the scientist in the loop, from here on
	Review        = "review"
	Feedback      = "feedback"
	SetBudget     = "set-budget"
	AnswerTool    = "answer-tool"  // approve or refuse a tool call that waits, or give its result
	TrustTool     = "trust-tool"   // a tool's calls stop waiting for approval in this session
	UntrustTool   = "untrust-tool" // undoes trust-tool
)

// ToolQueue is the task queue of a tool server's calls: the workers that connect to the
// server poll it, and its activities-per-second limit is the server's rate limit, which
// the Temporal server enforces across all of them.
func ToolQueue(server string) string { return "cosci-tools-" + server }

// ToolCatalogWorkflow is the type of the short workflow that lists the workers' tools.
const ToolCatalogWorkflow = "ToolCatalog"

// Catalog is the ToolCatalog workflow's answer: the tools of the servers a worker
// connects to. A client reads it from here, not from activities, whose code it never runs.
type Catalog = activities.Catalog

// Commands lists every command name, in the order of session.Commands, the table that
// names, describes and parses them.
var Commands = commandNames()

func commandNames() []string {
	names := make([]string, len(session.Commands))
	for i, c := range session.Commands {
		names[i] = c.Name
	}
	return names
}

// Descriptions of the commands and queries, shown by the Web UI and `temporal workflow
// metadata`. The commands' come from session.Commands.
var Descriptions = descriptions()

func descriptions() map[string]string {
	d := map[string]string{
		HandOver:          `Sent by the session that continues this one: end like a terminate, then tell it the final checkpoint. {"successor": "<id>"}`,
		Message:           `A message from another session (a cron review, the heartbeat); it steers the next prompts. {"from", "type", "text"}`,
		QueryStatus:       "State, reason, scientist, goal and timestamps.",
		QueryProgress:     "Counts: hypotheses, reviews, matches, debates, evolved, excluded, meta-reviews, tokens, elapsed, checkpoints.",
		QueryState:        `Goal, plan, config, agents, usage and a page of the ranking. {"offset", "limit"}`,
		QueryHistory:      `A page of the session's own event log. {"offset", "limit"}`,
		QueryPage:         `Status, progress, a page of the ranking and one of the conversation, at once (the desk's session page). {"ranking": {"offset", "limit"}, "conversation": {"offset", "limit"}}`,
		Ask:               `Ask the session a question or for a change, in plain words: {"text": "...", "by": "..."}. It answers, and proposes commands for a change; nothing changes until you confirm one.`,
		Confirm:           `Confirm a proposal of the session's answer: {"proposal": "m-0004.1", "by": "..."}. Its command is checked and applied as yours.`,
		QueryConversation: `A page of the conversation with the session, oldest first. {"offset", "limit"}`,
	}
	for _, c := range session.Commands {
		d[c.Name] = c.Describe()
	}
	return d
}

// The conversation with the session (conversation.go): the scientist's message goes in
// an ask update, which answers with the session's reply and the commands it proposes; a
// confirm update applies one of them as the confirming scientist's command. The
// conversation query pages over the messages.
const (
	Ask               = "ask"          // AskRequest -> AskAnswer
	Confirm           = "confirm"      // ConfirmRequest -> ConfirmAnswer
	QueryConversation = "conversation" // takes an optional Page -> ConversationView
)

// What a session that has ended answers to the conversation's updates. A closed workflow
// takes no update (the server says "already completed"), but a session's run stays open a
// moment after it has ended (its last log, the handlers still running; its closing run),
// and then it refuses a question with EndedAskRefusal. internal/converse knows an ended
// session by these words, and takes the question to the EndedConversation workflow
// instead; that workflow refuses every confirmation with EndedConfirmRefusal.
const (
	EndedAskRefusal     = "ask: " + activities.EndedReason + "; ask its final state with starter ask, which answers from the store"
	EndedConfirmRefusal = "confirm: " + activities.EndedReason + "; nothing can change it now"
)

// EndedReason is why a proposal of an ended session's answer is refused: what a client
// reading an ended session's conversation from the store gives StoredConversation.
const EndedReason = activities.EndedReason

// AskRequest is the scientist's message (at most session.MaxAskLength characters) and who
// writes it.
type AskRequest struct {
	Text  string `json:"text"`
	By    string `json:"by,omitempty"`
	BySig string `json:"by_sig,omitempty"` // the desk's signature of the question (session.Command.BySig)
	// UpdateID is the id the client gives the update (internal/converse), which the
	// signature covers and the session records; "" lets Temporal choose one.
	UpdateID string `json:"-"`
}

// ConfirmRequest names the proposal to apply ("m-0004.1") and who confirms it.
type ConfirmRequest struct {
	Proposal string `json:"proposal"`
	By       string `json:"by,omitempty"`
	BySig    string `json:"by_sig,omitempty"` // the desk's signature of the confirmation (session.Command.BySig)
	UpdateID string `json:"-"`                // as AskRequest's
	// Digest, if set, is the digest of the command the scientist was shown
	// (research.ProposedCommand.Digest): a proposal whose command is not that one is
	// refused, so that nothing is applied but what was read.
	Digest string `json:"digest,omitempty"`
}

// ConversationEntry is one message of the conversation: its id, role, who wrote it and
// when, the proposals of an answer with their status, and its text. TextInStore says the
// text is not in the session's memory (an old message): read it from the store
// (store.Message, conversation/<id>.json).
type ConversationEntry struct {
	session.Message
	Text        string `json:"text,omitempty"`
	TextInStore bool   `json:"text_in_store,omitempty"`
}

// AskAnswer answers the ask update: the message as kept, and the session's answer with
// the commands it proposes (each with its id, its effect and its status). References
// counts the sources the answer cites, Flagged those the citation check flagged.
type AskAnswer struct {
	Question   ConversationEntry `json:"question"`
	Answer     ConversationEntry `json:"answer"`
	References int               `json:"references,omitempty"`
	Flagged    int               `json:"flagged,omitempty"`
}

// ConfirmAnswer answers the confirm update: the proposal with its new status, and the
// session's status after the command.
type ConfirmAnswer struct {
	Proposal session.Proposal `json:"proposal"`
	Status   Status           `json:"status"`
}

// ConversationView answers the conversation query: a page of the messages, oldest first
// (the newest last), numbered across the whole session. InStore counts the oldest
// messages the session no longer keeps in its state: they are in the store only. Earlier
// is the session whose conversation this one continues (starter continue), if any.
type ConversationView struct {
	Messages []ConversationEntry `json:"messages"`
	Total    int                 `json:"total"`
	Offset   int                 `json:"offset"`
	Limit    int                 `json:"limit"`
	InStore  int                 `json:"in_store,omitempty"`
	Earlier  string              `json:"earlier,omitempty"`
}

// Queries.
const (
	QueryStatus   = "status"
	QueryProgress = "progress"
	QueryState    = "state"   // takes an optional Page
	QueryHistory  = "history" // takes an optional Page
	// QueryPage is what a page of the desk shows, in one query: a page that asked four
	// queries waited for four query tasks, and its slowest set its time.
	QueryPage = "page" // takes a PageRequest -> PageView
)

// PageRequest asks the page query for a page of the ranking and one of the conversation.
type PageRequest struct {
	Ranking      Page `json:"ranking"`
	Conversation Page `json:"conversation"`
}

// PageView answers the page query: the answers of the status, progress, state and
// conversation queries, read at one moment.
type PageView struct {
	Status       Status           `json:"status"`
	Progress     session.Progress `json:"progress"`
	State        StateView        `json:"state"`
	Conversation ConversationView `json:"conversation"`
}

// The session graph (see internal/lineage): other workflow types, and the signals sessions
// send each other.
const (
	// SubagentWorkflow runs a task a session delegated, as the session's child workflow
	// with id lineage.ForkID(parent, n).
	SubagentWorkflow = "Subagent"
	// HeartbeatWorkflow is the single batch session (workflow id HeartbeatID) that forks a
	// verification subagent for each lead of the most recent foreground session and sends
	// it the digest.
	HeartbeatWorkflow = "Heartbeat"
	HeartbeatID       = "heartbeat"
	// ArchiveWorkflow marks a finished session archived (soft delete: it stays readable).
	// Its workflow id is ArchiveID(session), so a session is archived at most once.
	ArchiveWorkflow = "ArchiveSession"

	// HandOver asks a suspended session to end because a session continues it:
	// {"successor": "<id>"}. The session finishes, then answers the successor with
	// HandedOver: {"checkpoint": N}, the final checkpoint to start from.
	HandOver   = "hand-over"
	HandedOver = "handed-over"
	// Message delivers a message from another session: {"from", "type", "text"}. It is
	// recorded in the history and steers the next prompts like the scientist's feedback.
	Message = "message"
)

// ArchiveID is the id of the workflow that archived a session.
func ArchiveID(sessionID string) string { return "archive:" + sessionID }

// SessionMessage is what one session tells another (the Message signal).
type SessionMessage struct {
	From string       `json:"from"`
	Type lineage.Type `json:"type"`
	Text string       `json:"text"`
}

// HeartbeatInput configures a heartbeat run.
type HeartbeatInput struct {
	// Top is how many leads of the foreground session get a verification subagent (default 3).
	Top int `json:"top,omitempty"`
}

// ArchiveInput names the session to archive.
type ArchiveInput = activities.ArchiveSessionInput

// Page selects a slice of a long list in the paged queries. A negative Offset counts
// from the end: {"offset": -20, "limit": 20} is the latest 20.
type Page struct {
	Offset int `json:"offset,omitempty"`
	Limit  int `json:"limit,omitempty"`
}

// Page limits keep every query answer far below Temporal's payload limits.
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 500
)

// Status answers the status query and every accepted update.
type Status struct {
	SessionID string        `json:"session_id"`
	State     session.State `json:"state"`
	// After is set while a checkpoint is written: the state the session returns to then.
	// A suspend that lands during a checkpoint answers {"state": "checkpointing",
	// "after": "suspended"}.
	After       session.State `json:"after,omitempty"`
	Reason      string        `json:"reason,omitempty"`
	ScientistID string        `json:"scientist_id"`
	Goal        string        `json:"goal"`
	StartedAt   string        `json:"started_at"`
	UpdatedAt   string        `json:"updated_at"`
	// Detail says what an accepted update did, when there is more to say than the state
	// ("added as h-0013; it enters the tournament next round").
	Detail string `json:"detail,omitempty"`
	// Waiting is the tool calls that wait for the scientist's answer (answer-tool).
	Waiting []session.WaitingCall `json:"waiting,omitempty"`
	// Batch is the provider batch the session waits for, if any.
	Batch *session.BatchWait `json:"batch,omitempty"`
	// Trusted are the tools trusted for the session (trust-tool), which untrust-tool undoes.
	Trusted []session.Trust `json:"trusted,omitempty"`
}

// AgentStat counts one agent's turns.
type AgentStat struct {
	Agent     string `json:"agent"`
	Turns     int    `json:"turns"`
	Succeeded int    `json:"succeeded"`
	Failed    int    `json:"failed"`
	// Usage is what the agent's turns spent (zero in sessions started before it was kept
	// per agent); Dearest the most one of its calls spent, in tokens and in dollars, which
	// the budget expects of its next call.
	Usage   research.Usage `json:"usage,omitzero"`
	Dearest research.Usage `json:"dearest,omitzero"`
}

// StateView answers the state query: the goal, the configuration and one page of the
// ranking (highest Elo first).
type StateView struct {
	SessionID   string               `json:"session_id"`
	State       session.State        `json:"state"`
	Goal        string               `json:"goal"`
	Refinements []session.Refinement `json:"refinements"`
	ScientistID string               `json:"scientist_id"`
	Config      research.Config      `json:"config"`
	Hypotheses  []session.Entry      `json:"hypotheses"`
	Total       int                  `json:"total"`
	Offset      int                  `json:"offset"`
	Limit       int                  `json:"limit"`
	Agents      []AgentStat          `json:"agents"`
	// TopShare counts where the current top 10 came from: generation, evolution, scientist.
	TopShare    map[string]int `json:"top_share"`
	Plan        string         `json:"plan,omitempty"`        // the research plan's summary
	MetaReview  []string       `json:"meta_review,omitempty"` // the latest recurring critiques
	Usage       research.Usage `json:"usage"`
	TokenBudget int            `json:"token_budget,omitempty"`
	StopReason  string         `json:"stop_reason,omitempty"`
}

// HistoryView answers the history query: one page of the session's own event log.
type HistoryView struct {
	// SessionID is the session the events are of, which a reader that checks their
	// signatures sets (the query leaves it out: the caller named the session).
	SessionID string          `json:"session_id,omitempty"`
	Events    []session.Event `json:"events"`
	Total     int             `json:"total"`
	Offset    int             `json:"offset"`
	Limit     int             `json:"limit"`
	// InStore counts the oldest events the session no longer keeps in memory: events 1 to
	// InStore are in the session store's event log (events.jsonl) only.
	InStore int `json:"in_store,omitempty"`
}

// Result is what a finished session returns.
type Result struct {
	SessionID  string          `json:"session_id"`
	State      session.State   `json:"state"`
	StopReason string          `json:"stop_reason"`
	Hypotheses int             `json:"hypotheses"`
	Top        []session.Entry `json:"top"` // the ten best, highest Elo first
	ReportPath string          `json:"report_path,omitempty"`
	Checkpoint string          `json:"checkpoint,omitempty"`
	Usage      research.Usage  `json:"usage"`
	// ContinuedAs is the session that continues this one, if one does.
	ContinuedAs string `json:"continued_as,omitempty"`
}
