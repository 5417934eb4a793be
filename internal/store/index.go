package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/session"
)

// Summary is a session's row in the session index: who it is, where it sits in the session
// graph, how it stands and what it cost. Every checkpoint refreshes it, so it outlives
// Temporal's retention: a finished session's status, lineage and report stay answerable
// from the store after Temporal has deleted its workflow.
type Summary struct {
	SessionID    string       `json:"session_id"`
	Parent       string       `json:"parent_session_id,omitempty"`
	Conversation string       `json:"conversation_id"`
	Type         lineage.Type `json:"session_type"`
	// Relation is how the session started from its parent (continue, fork, subagent).
	Relation    lineage.Relation `json:"relation,omitempty"`
	Status      session.State    `json:"status"`
	StopReason  string           `json:"stop_reason,omitempty"`
	Goal        string           `json:"goal"`
	ScientistID string           `json:"scientist_id,omitempty"`
	// The run summary.
	Hypotheses       int     `json:"hypotheses"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	Requests         int     `json:"requests"`
	CostUSD          float64 `json:"cost_usd,omitempty"`
	DurationSeconds  float64 `json:"duration_seconds"`
	// Checkpoint is the latest checkpoint's number: the row never goes back to an earlier one.
	Checkpoint int    `json:"checkpoint"`
	Created    string `json:"created"` // RFC 3339, UTC
	Updated    string `json:"updated"`
	Archived   string `json:"archived,omitempty"` // when it was archived
}

// Tokens is prompt plus completion tokens.
func (s Summary) Tokens() int { return s.PromptTokens + s.CompletionTokens }

// summaryOf is the index row a checkpoint gives its session. A session without a lineage
// descriptor (one recorded before the session graph) is a root of its own conversation.
func summaryOf(snap session.Snapshot) Summary {
	sum := Summary{
		SessionID:        snap.SessionID,
		Conversation:     snap.SessionID,
		Type:             lineage.User,
		Status:           snap.State,
		StopReason:       snap.StopReason,
		Goal:             snap.Goal,
		ScientistID:      snap.ScientistID,
		Hypotheses:       len(snap.Hypotheses),
		PromptTokens:     snap.Usage.PromptTokens,
		CompletionTokens: snap.Usage.CompletionTokens,
		Requests:         snap.Usage.Requests,
		CostUSD:          snap.Usage.CostUSD,
		DurationSeconds:  snap.Progress.ElapsedSeconds,
		Checkpoint:       snap.Seq,
		Created:          snap.StartedAt,
		Updated:          snap.Time,
	}
	if d := snap.Lineage; d != nil {
		sum.Parent, sum.Relation = d.Parent, d.Relation
		if d.Conversation != "" {
			sum.Conversation = d.Conversation
		}
		if d.Type != "" {
			sum.Type = d.Type
		}
	}
	return sum
}

// Sessions returns the session index, newest first (by creation), for every session that
// has written a checkpoint.
func (s *Store) Sessions(ctx context.Context) ([]Summary, error) {
	rows, err := s.b.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(rows, func(a, b Summary) int {
		if c := strings.Compare(b.Created, a.Created); c != 0 {
			return c
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
	return rows, nil
}

// Session returns one session's index row. If the index has none, the error wraps
// fs.ErrNotExist.
func (s *Store) Session(ctx context.Context, sessionID string) (Summary, error) {
	rows, err := s.b.Sessions(ctx)
	if err != nil {
		return Summary{}, err
	}
	for _, r := range rows {
		if r.SessionID == sessionID {
			return r, nil
		}
	}
	return Summary{}, fmt.Errorf("store: the session index of %s has no session %q: %w", s.location, sessionID, errNoRecord)
}
