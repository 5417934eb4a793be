package research

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// The conversation with the session: what the converse agent is given, what it answers,
// and each message as the store keeps it.

// ConverseRequest asks the converse agent to answer the scientist's message, knowing the
// session: its goal and context (the plan, the refinements, the latest meta-review, the
// scientist's steering), the top of the ranking with their reviews, the tool calls that
// wait, recent events, and the conversation so far; in a session with tools, the tools it
// may call and its tool conversation so far (Tooling).
type ConverseRequest struct {
	TurnID  string
	Goal    string
	Message string // the scientist's message
	By      string // who wrote it
	// State is the session's state and counts, one line ("active, round 3: 14 hypotheses, ...").
	State       string
	Refinements []string // the goal's refinements, oldest first
	Top         []Ranked // the best hypotheses, best first
	Waiting     []string // the tool calls that wait for the scientist, one line each
	Events      []string // the latest events of the session's log, one line each, oldest first
	History     []Message
	// Ended says the session has ended: the answer comes from its final state, and any
	// command it proposes will be refused.
	Ended   bool
	Context Context
	Prompt  string
	Cache   Cache
	Seed    int64
	// Tooling is the tools the turn may call and its conversation so far; zero for a
	// turn without tools.
	Tooling Tooling
}

// Ranked is a hypothesis at its place in the ranking, with its reviews.
type Ranked struct {
	Rank       int
	Hypothesis Hypothesis
	Elo        float64
	Matches    int
	Reviews    []Review
}

// ConverseAnswer is the converse agent's answer: the text the scientist reads, the
// commands it proposes (none unless the message asked for a change), and the sources it
// cites (by id).
type ConverseAnswer struct {
	Text       string
	Proposals  []ProposedCommand
	References []Reference
	// Dropped says why proposals the model made were not kept (an unknown command, a
	// payload the command refuses), one line each.
	Dropped []string
}

// ProposedCommand is a command the converse agent proposes: its name and its payload, as
// the command's update takes it. Effect is what confirming it does, written by the session
// from the command (session.Effect).
type ProposedCommand struct {
	Command string          `json:"command"`
	Args    json.RawMessage `json:"args,omitempty"`
	Effect  string          `json:"effect"`
}

// Digest names exactly the command a proposal applies: its name and its arguments, as
// canonical JSON (keys sorted, numbers as written, the same escapes whoever wrote it: the
// store re-encodes what it keeps). The desk sends the digest of what it showed the
// scientist with the confirmation, and the session applies the proposal only if it is
// that command.
func (p ProposedCommand) Digest() string {
	args := []byte(p.Args)
	dec := json.NewDecoder(bytes.NewReader(p.Args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil {
		if b, err := json.Marshal(v); err == nil {
			args = b
		}
	}
	sum := sha256.Sum256(append([]byte(p.Command+"\n"), args...))
	return hex.EncodeToString(sum[:])
}

// Message is one message of the conversation as the store keeps it, under its id.
type Message struct {
	ID   string `json:"id"`
	Role string `json:"role"` // "scientist" or "session"
	By   string `json:"by,omitempty"`
	Time string `json:"time"`
	Text string `json:"text"`
	// Signed and Update are a question's signature of the desk's and the id of the update
	// that carried it (session.Message's), kept for the pages that read it from here.
	Signed string `json:"signed,omitempty"`
	Update string `json:"update,omitempty"`
	// For the session's answers: the message it answers, the turn that wrote it, the
	// commands it proposed (numbered from 1 in the order given), and its citations with
	// what the check found.
	Answers    string            `json:"answers,omitempty"`
	Turn       string            `json:"turn,omitempty"`
	Proposals  []ProposedCommand `json:"proposals,omitempty"`
	References []Reference       `json:"references,omitempty"`
	Citations  []CitationCheck   `json:"citations,omitempty"`
	Dropped    []string          `json:"dropped,omitempty"`
}
