package workflows

// What a session waits for its scientist for (session.Needs), kept in its memo so that
// Temporal's list, and with it the desk's sessions page, shows it for every session
// without a query to any: the calls waiting for approval, the open proposals of its
// answers, and a suspension of its own.

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/internal/session"
)

// versionNeedsMemo gates the needs memo: runs that passed this point before it upsert no
// memo (their histories hold no such events).
const versionNeedsMemo = "needs-memo"

// MemoNeeds is the memo key that holds a session's session.Needs; absent while it needs
// nothing.
const MemoNeeds = "needs"

// needs is what the session waits for its scientist for, now.
func (s *supervisor) needs() session.Needs {
	n := session.Needs{Calls: len(s.waiting())}
	for _, m := range s.Conversation {
		for _, p := range m.Proposals {
			if p.Status == session.ProposalProposed {
				n.Proposals++
			}
		}
	}
	if s.Life.Effective() == session.Suspended {
		n.Suspended = s.OwnSuspension
	}
	n.Lab = s.labWait().Why()
	return n
}

// showNeeds upserts the needs memo when what the session needs changed (each upsert is an
// event in its history, so only then).
func (s *supervisor) showNeeds(ctx workflow.Context) {
	if !s.needsMemo {
		return
	}
	n := s.needs()
	if n == s.NeedsShown {
		return
	}
	var v any = n
	if !n.Any() {
		v = nil // an upsert of nil removes the key
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{MemoNeeds: v}); err != nil {
		workflow.GetLogger(ctx).Warn("cannot update the needs memo", "error", err)
		return
	}
	s.NeedsShown = n
}
