// Package lineage places a research session in the session graph: what kind of session it
// is, the conversation it belongs to, and the session and checkpoint it started from. A
// session's descriptor is written once, when it is created, and never changes.
//
// Sessions form a DAG of immutable snapshots, like commits. A root session starts a
// conversation. "continue" starts the next session of the same conversation from the
// latest checkpoint of a finished or suspended one; "fork" starts a new conversation from
// any checkpoint of any session. A subagent is a session a parent forks for a delegated
// task; it runs as the parent's child workflow and reports one result back.
package lineage

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Type says what a session represents and where its messages go.
type Type string

const (
	// User is a scientist's foreground session; the only kind messages are routed to when
	// a sender names no session.
	User Type = "user"
	// Cron is a session a Temporal Schedule started: a recurring review of a field.
	Cron Type = "cron"
	// Heartbeat is the single batch session that launches subagents over the leads of the
	// most recent foreground session.
	Heartbeat Type = "heartbeat"
	// Subagent is a session forked for a delegated task; it always has a parent and a name.
	Subagent Type = "subagent"
)

// Types lists every session type.
var Types = []Type{User, Cron, Heartbeat, Subagent}

// Relation says how a session came from its parent.
type Relation string

const (
	Root     Relation = ""         // no parent: a new conversation
	Continue Relation = "continue" // the next session of the parent's conversation
	Fork     Relation = "fork"     // a new conversation from one of the parent's checkpoints
	Spawn    Relation = "subagent" // a subagent the parent forked as a child workflow
)

// Descriptor is a session's place in the graph, persisted at creation (in the workflow's
// memo and search attributes, and in every checkpoint).
type Descriptor struct {
	Type Type `json:"type"`
	// Conversation groups the sessions of one line of work: a root or fork starts one
	// (conversation = session id); continue and subagents stay in their parent's.
	Conversation string `json:"conversation_id,omitempty"`
	// Seq is the session's place in its conversation's chain: 1 for the first.
	Seq      int      `json:"seq,omitempty"`
	Parent   string   `json:"parent_session_id,omitempty"`
	Relation Relation `json:"relation,omitempty"`
	// Checkpoint is the parent's checkpoint the session starts from (0: its latest).
	Checkpoint int `json:"source_checkpoint,omitempty"`
	// Name is a subagent's name ("verify h-0007"); Schedule a cron session's schedule id.
	Name     string `json:"name,omitempty"`
	Schedule string `json:"schedule_id,omitempty"`
	// Intention is what a forked session was forked to do.
	Intention *Intention `json:"intention,omitempty"`
}

// Intention is what a fork carries besides the parent's context: the work to do, what the
// parent knew, and what to do with the result (bub's AgentIntention).
type Intention struct {
	NextSteps      string `json:"next_steps"`
	ContextSummary string `json:"context_summary,omitempty"`
	OnComplete     string `json:"on_complete,omitempty"`
}

// Limits keep a descriptor small: it travels in every start and in the memo.
const (
	MaxNameLength      = 200
	MaxIntentionLength = 2000
)

// WithDefaults fills what a descriptor leaves unset for the session with the given id: a
// user session, first in a conversation of its own.
func (d Descriptor) WithDefaults(sessionID string) Descriptor {
	if d.Type == "" {
		d.Type = User
	}
	if d.Conversation == "" {
		d.Conversation = sessionID
	}
	if d.Seq == 0 {
		d.Seq = 1
	}
	return d
}

// Validate checks a descriptor after defaults were applied.
func (d Descriptor) Validate() error {
	switch d.Type {
	case User, Cron, Heartbeat, Subagent:
	default:
		return fmt.Errorf("lineage.type %q: must be one of user, cron, heartbeat, subagent", d.Type)
	}
	switch d.Relation {
	case Root:
		if d.Parent != "" {
			return fmt.Errorf("lineage.relation: a session with a parent must say how it came from it (continue, fork or subagent)")
		}
	case Continue, Fork, Spawn:
		if d.Parent == "" {
			return fmt.Errorf("lineage.parent_session_id: a %s needs the session it comes from", d.Relation)
		}
	default:
		return fmt.Errorf("lineage.relation %q: must be continue, fork or subagent", d.Relation)
	}
	if d.Type == Subagent && (d.Parent == "" || d.Name == "" || d.Relation != Spawn) {
		return fmt.Errorf("lineage: a subagent always has a parent and a name, and is spawned by its parent")
	}
	if d.Relation == Spawn && d.Type != Subagent {
		return fmt.Errorf("lineage.type: a spawned session is a subagent")
	}
	if d.Checkpoint < 0 {
		return fmt.Errorf("lineage.source_checkpoint: %d is negative", d.Checkpoint)
	}
	if d.Seq < 1 {
		return fmt.Errorf("lineage.seq: %d; a conversation counts its sessions from 1", d.Seq)
	}
	if n := utf8.RuneCountInString(d.Name); n > MaxNameLength {
		return fmt.Errorf("lineage.name: %d characters; at most %d", n, MaxNameLength)
	}
	if in := d.Intention; in != nil {
		if n := utf8.RuneCountInString(in.NextSteps + in.ContextSummary + in.OnComplete); n > MaxIntentionLength {
			return fmt.Errorf("lineage.intention: %d characters; at most %d", n, MaxIntentionLength)
		}
	}
	return nil
}

// Foreground reports whether messages with no addressee may be routed to the session.
func (d Descriptor) Foreground() bool { return d.Type == User }

// ForkID names a subagent a parent session forks: "{parent}-fork-{8 hex}". The suffix is
// a hash of the parent and key, a string unique among the parent's forks (a counter; for a
// session whose id repeats across runs, the run id too), so a workflow computes the same
// id on replay and two parents never collide.
func ForkID(parent, key string) string {
	sum := sha256.Sum256([]byte(parent + "\x00" + key))
	return parent + "-fork-" + hex.EncodeToString(sum[:4])
}

// NextID names the session that continues the seq-th session of a conversation. It is a
// function of the conversation and the position, so two clients continuing the same
// session at once ask Temporal for the same workflow id and exactly one of them wins.
func NextID(conversation string, seq int) string {
	return conversation + "." + strconv.Itoa(seq+1)
}
