package store

import (
	"context"

	"github.com/cosci-dev/cosci/internal/research"
)

// Debates: a tournament match's transcript under debates/<debate id>.json, replaced as it
// grows turn by turn.

// PutDebate stores a debate's transcript under its id, replacing any earlier version: a
// debate grows by one turn at a time, and each version is written atomically.
func (s *Store) PutDebate(ctx context.Context, sessionID, debateID string, d research.Debate) error {
	return s.putByID(ctx, sessionID, debatesDir, "debate", debateID, d, false)
}

// Debate returns a debate's transcript so far. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Debate(ctx context.Context, sessionID, debateID string) (research.Debate, error) {
	return getByID[research.Debate](ctx, s, sessionID, debatesDir, "debate", debateID)
}
