package store

import (
	"context"

	"github.com/cosci-dev/cosci/internal/session"
)

// Events: the session's event log, appended with each checkpoint (checkpoints.go) or,
// after the last one, on its own.

// PutEvents appends events to the session's event log outside a checkpoint: the records a
// session makes after its final checkpoint (the report, its completion). Like
// PutCheckpoint it skips events the log already holds, so a retry adds nothing twice.
func (s *Store) PutEvents(ctx context.Context, sessionID string, events []session.Event) error {
	if _, err := escape("session id", sessionID); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	return s.b.Commit(ctx, Commit{SessionID: sessionID, Events: events})
}

// Events returns the session's event log in the order it was written. A session that has
// logged nothing yields an empty list and no error.
func (s *Store) Events(ctx context.Context, sessionID string) ([]session.Event, error) {
	if _, err := escape("session id", sessionID); err != nil {
		return nil, err
	}
	return s.b.Events(ctx, sessionID)
}
