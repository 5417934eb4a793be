package activities

import (
	"context"
	"fmt"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// EndedSession is what the conversation with an ended session knows of it: its final
// state, as its last checkpoint and the store hold it. No workflow of the session runs
// any more, so this is read from the store.
type EndedSession struct {
	Goal        string               `json:"goal"`
	State       string               `json:"state"` // one line, for the converse prompt
	Config      research.Config      `json:"config"`
	Refinements []session.Refinement `json:"refinements,omitempty"`
	Top         []session.Entry      `json:"top,omitempty"`
	Context     ContextRef           `json:"context"`
	// Conversation is every message the store holds (ids, roles, who, when), with the
	// proposals' status as the session left them; a proposal it never saw confirmed is
	// refused, since the session has ended. Messages is the highest message number.
	Conversation []session.Message `json:"conversation,omitempty"`
	Messages     int               `json:"messages"`
}

// ReadEndedSession reads an ended session's final state from the store.
func (a *Activities) ReadEndedSession(ctx context.Context, sessionID string) (EndedSession, error) {
	snap, err := a.Store.LatestCheckpoint(ctx, sessionID)
	if err != nil {
		return EndedSession{}, err
	}
	if !snap.State.Terminal() {
		return EndedSession{}, invalid("session %s has not ended (its latest checkpoint says %s): ask the session itself", sessionID, snap.State)
	}
	e := EndedSession{
		Goal: snap.Goal, Config: snap.Config, Refinements: snap.Refinements,
		State: fmt.Sprintf("%s: %d hypotheses, %d reviews, %d matches in %d rounds; %s", snap.State, len(snap.Hypotheses),
			snap.Progress.ReviewsCompleted, snap.Progress.MatchesPlayed, snap.Progress.Rounds, strings.TrimSpace(snap.StopReason)),
		Context: ContextRef{Plan: snap.Plan != "", MetaReviewRound: snap.Progress.MetaReviews, Focus: last(snap.Focus, 5), Feedback: last(snap.Feedback, 5)},
	}
	for _, h := range snap.Hypotheses {
		if h.Excluded == "" && len(e.Top) < MaxConverseTop {
			e.Top = append(e.Top, h)
		}
	}
	msgs, err := a.Store.Conversation(ctx, sessionID)
	if err != nil {
		return EndedSession{}, err
	}
	e.Conversation, e.Messages = session.EndedConversation(snap.Conversation, msgs, EndedReason)
	e.Messages = max(e.Messages, snap.Messages)
	return e, nil
}

func last(list []string, n int) []string { return list[max(0, len(list)-n):] }
