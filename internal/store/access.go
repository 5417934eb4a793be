package store

import (
	"context"
	"fmt"

	"github.com/cosci-dev/cosci/internal/access"
)

// AccessFile is a session's access record: its owner and the people it is shared with
// (access.Record), written by the desk. It lives here rather than in the desk, so that the
// desk keeps no state of its own and every desk of a lab reads the same grants.
const AccessFile = "access.json"

// PutAccess writes a session's access record, replacing the earlier one: a grant is added
// or revoked by writing the whole record again. Two desks that share the same session in
// the same instant race, and the later write wins; sharing is a person's act, rare enough
// for that.
func (s *Store) PutAccess(ctx context.Context, sessionID string, rec access.Record) error {
	if rec.SessionID != sessionID {
		return fmt.Errorf("store: access record of session %q written to session %q", rec.SessionID, sessionID)
	}
	return s.put(ctx, sessionID, AccessFile, rec, false)
}

// Access returns a session's access record; found is false, with a nil error, for a
// session nobody has shared or claimed at the desk (it is its scientist's alone).
func (s *Store) Access(ctx context.Context, sessionID string) (rec access.Record, found bool, err error) {
	found, err = s.find(ctx, sessionID, AccessFile, "access record", &rec)
	return rec, found, err
}

// CreateAccess writes a new session's access record only where none exists, so that
// starting a session never replaces the grants of one that holds the id already; of two
// desks that race, one writes. created says whether rec is now the record.
func (s *Store) CreateAccess(ctx context.Context, sessionID string, rec access.Record) (created bool, err error) {
	if rec.SessionID != sessionID {
		return false, fmt.Errorf("store: access record of session %q written to session %q", rec.SessionID, sessionID)
	}
	if err := s.put(ctx, sessionID, AccessFile, rec, true); err != nil {
		return false, err
	}
	got, found, err := s.Access(ctx, sessionID)
	if err != nil {
		return false, err
	}
	return found && got.Owner == rec.Owner && len(got.Grants) == 0 && len(rec.Grants) == 0, nil
}
