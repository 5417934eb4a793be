package workflows

// The queries (status, progress, state, history, conversation, and page, which is all
// but history at once): views over the supervisor's state.

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/internal/session"
)

// registerQueries installs the query handlers, first of all, so that even a session
// refused at start can be asked why.
func (s *supervisor) registerQueries(ctx workflow.Context) error {
	queries := map[string]any{
		QueryStatus:       func() (Status, error) { return s.status(), nil },
		QueryProgress:     func() (session.Progress, error) { return s.progress(ctx), nil },
		QueryState:        func(p Page) (StateView, error) { return s.stateView(p), nil },
		QueryHistory:      func(p Page) (HistoryView, error) { return s.history(p), nil },
		QueryConversation: func(p Page) (ConversationView, error) { return s.conversation(p), nil },
		QueryPage: func(r PageRequest) (PageView, error) {
			return PageView{Status: s.status(), Progress: s.progress(ctx), State: s.stateView(r.Ranking), Conversation: s.conversation(r.Conversation)}, nil
		},
	}
	for _, name := range []string{QueryStatus, QueryProgress, QueryState, QueryHistory, QueryConversation, QueryPage} {
		if err := workflow.SetQueryHandlerWithOptions(ctx, name, queries[name], workflow.QueryHandlerOptions{Description: Descriptions[name]}); err != nil {
			return err
		}
	}
	return nil
}

func (s *supervisor) status() Status {
	return Status{
		SessionID:   s.id,
		State:       s.Life.State,
		After:       s.Life.After,
		Reason:      s.Reason,
		ScientistID: s.req.ScientistID,
		Goal:        s.Goal,
		StartedAt:   session.Stamp(s.StartedAt),
		UpdatedAt:   session.Stamp(s.UpdatedAt),
		Waiting:     s.waiting(),
		Batch:       s.Batch,
		Trusted:     s.Trusted,
	}
}

func (s *supervisor) progress(ctx workflow.Context) session.Progress {
	elapsed := workflow.Now(ctx).Sub(s.StartedAt)
	return session.Progress{
		HypothesesGenerated: len(s.Entries),
		MaxHypotheses:       s.req.Config.MaxHypotheses,
		Counted:             s.made(),
		Inherited:           max(0, len(s.Entries)-s.made()-s.ScientistAdded),
		ReviewsCompleted:    s.Reviews,
		MatchesPlayed:       s.Matches,
		Debates:             s.Debates,
		Evolved:             s.Evolved,
		Added:               s.ScientistAdded,
		Excluded:            len(s.Entries) - len(s.competing()),
		MetaReviews:         s.MetaRound,
		TokensUsed:          s.Usage.PromptTokens + s.Usage.CompletionTokens,
		CostUSD:             s.Usage.CostUSD,
		TokenBudget:         s.req.Config.TokenBudget,
		BudgetUSD:           s.req.Config.BudgetUSD,
		Rounds:              s.Rounds,
		TurnsFailed:         s.TurnsFailed,
		Elapsed:             elapsed.Round(1e7).String(),
		ElapsedSeconds:      elapsed.Seconds(),
		LastCheckpoint:      s.LastCheckpoint,
		Checkpoints:         s.Checkpoints,
		State:               s.Life.State,
		ToolCalls:           s.ToolCalls,
		ToolErrors:          s.ToolErrors,
		Waiting:             s.waiting(),
		Batch:               s.Batch,
	}
}

func (s *supervisor) stateView(p Page) StateView {
	ranked := s.ranked()
	lo, hi, limit := p.Bounds(len(ranked))
	return StateView{
		SessionID:   s.id,
		State:       s.Life.State,
		Goal:        s.Goal,
		Refinements: s.Refinements,
		ScientistID: s.req.ScientistID,
		Config:      s.req.Config,
		Hypotheses:  ranked[lo:hi],
		Total:       len(ranked),
		Offset:      lo,
		Limit:       limit,
		Agents:      s.Agents,
		TopShare:    s.topShare(),
		Plan:        s.Plan,
		MetaReview:  s.MetaCritiques,
		Usage:       s.Usage,
		TokenBudget: s.req.Config.TokenBudget,
		StopReason:  s.StopReason,
	}
}

// topShare counts where the current top 10 came from.
func (s *supervisor) topShare() map[string]int {
	share := map[string]int{"generation": 0, "evolution": 0, "scientist": 0}
	for _, e := range s.top(10) {
		share[e.Origin]++
	}
	return share
}

// history pages over the whole session's numbering; the part of a page older than what
// the run keeps in memory comes back empty, and InStore says where it is.
func (s *supervisor) history(p Page) HistoryView {
	total := s.EventBase + len(s.Events)
	lo, hi, limit := p.Bounds(total)
	from, to := max(lo, s.EventBase)-s.EventBase, max(hi, s.EventBase)-s.EventBase
	return HistoryView{Events: s.Events[from:to], Total: total, Offset: lo, Limit: limit, InStore: s.EventBase}
}

// Bounds is the page within a list of n items: [lo, hi), and the limit applied.
func (p Page) Bounds(n int) (lo, hi, limit int) {
	limit = p.Limit
	if limit <= 0 {
		limit = DefaultPageLimit
	}
	limit = min(limit, MaxPageLimit)
	lo = p.Offset
	if lo < 0 {
		lo += n
	}
	lo = min(max(lo, 0), n)
	return lo, min(lo+limit, n), limit
}
