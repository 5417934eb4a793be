package store

import (
	"context"

	"github.com/cosci-dev/cosci/internal/research"
)

// The session's one-off records, each written once: the research plan (plan.json) and the
// research overview (overview.json).

// PutPlan stores the session's research plan. If the session already has one, PutPlan
// keeps it and returns nil.
func (s *Store) PutPlan(ctx context.Context, sessionID string, p research.Plan) error {
	return s.put(ctx, sessionID, planFile, p, true)
}

// Plan returns the session's research plan. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Plan(ctx context.Context, sessionID string) (research.Plan, error) {
	return getAs[research.Plan](ctx, s, sessionID, planFile, "research plan")
}

// PutOverview stores the session's research overview. If the session already has one,
// PutOverview keeps it and returns nil.
func (s *Store) PutOverview(ctx context.Context, sessionID string, o research.Overview) error {
	return s.put(ctx, sessionID, overviewFile, o, true)
}

// Overview returns the session's research overview. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Overview(ctx context.Context, sessionID string) (research.Overview, error) {
	return getAs[research.Overview](ctx, s, sessionID, overviewFile, "research overview")
}
