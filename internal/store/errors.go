package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/cosci-dev/cosci/internal/session"
)

// The store's failures come in three kinds, because each calls for something different
// from whoever runs a session:
//
//   - a missing record: the error wraps fs.ErrNotExist. Where a caller expects one (a
//     turn not yet done) that is an answer; where the session needs it, the session's
//     records have lost something.
//   - a damaged record (*DamagedError): the store holds it but cannot read it, as a file
//     truncated or garbled outside the store. No retry reads it; a person must restore or
//     remove it, or carry the research on from an earlier checkpoint.
//   - an unavailable store (*UnavailableError): the store could not be read or written at
//     all (a full disk, a database that refuses writes or is down). That may pass.

// DamagedError is a record the store holds but cannot use.
type DamagedError struct {
	SessionID string
	Record    string // where it is, for a person: a path, or the database and key
	Problem   string // what is wrong with it
	// Key names the key a sealed record needs and the process lacks: nothing is damaged,
	// and the record reads once the key is given.
	Key string
	// Unbound says how a record the store expects sealed to its place is not (not sealed
	// at all, or sealed by an earlier version without its session): one a migrating
	// deployment reads (Store.Migrating), and otherwise one put there outside cosci.
	Unbound string
}

func (e *DamagedError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("store: record %s of session %q is sealed with key %s, which this process does not have: add the key to COSCI_KEYS_FILE (or COSCI_KEYS), restart, and resume the session",
			e.Record, e.SessionID, e.Key)
	}
	if e.Unbound != "" {
		return fmt.Sprintf("store: record %s of session %q %s, and this store reads only records sealed to their session: "+
			"if it was written before encryption was turned on, or by an earlier version of cosci, set COSCI_STORE_MIGRATING=1 "+
			"(or --store-migrating) on the workers and starters until the sessions begun before have finished, and resume the session; "+
			"otherwise it was put there outside cosci: remove it or restore it from a backup",
			e.Record, e.SessionID, e.Unbound)
	}
	return fmt.Sprintf("store: record %s of session %q is damaged (%s); it was changed outside the store: restore it from a backup or remove it",
		e.Record, e.SessionID, e.Problem)
}

// UnavailableError is a read or write the store's backend could not do.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// unavailable marks a backend's failure to read as the store being unavailable, unless it
// is a missing record, a damaged one, or the caller's context ending (a cancelled activity,
// not a store fault).
func unavailable(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return unwritable(err)
}

// unwritable marks a backend's failure to write as the store being unavailable, unless it
// is the caller's context ending or a damaged record (an append that cannot read the log's
// last line). Even a "no such file" is: a write that cannot find its directory says nothing
// about a record, only that the store does not work.
func unwritable(err error) error {
	var (
		u *UnavailableError
		d *DamagedError
	)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &u) || errors.As(err, &d) {
		return err
	}
	return &UnavailableError{Err: err}
}

// guarded is a Backend whose failures say which kind they are (see unavailable and
// unwritable).
type guarded struct{ Backend }

func (g guarded) Get(ctx context.Context, sessionID, key string) ([]byte, error) {
	b, err := g.Backend.Get(ctx, sessionID, key)
	return b, unavailable(err)
}

func (g guarded) List(ctx context.Context, sessionID, dir string) ([]string, error) {
	keys, err := g.Backend.List(ctx, sessionID, dir)
	return keys, unavailable(err)
}

func (g guarded) Put(ctx context.Context, sessionID, key string, data []byte, once bool) error {
	return unwritable(g.Backend.Put(ctx, sessionID, key, data, once))
}

func (g guarded) Copy(ctx context.Context, from, to string, keys []string) error {
	return unwritable(g.Backend.Copy(ctx, from, to, keys))
}

func (g guarded) Commit(ctx context.Context, c Commit) error {
	return unwritable(g.Backend.Commit(ctx, c))
}

func (g guarded) Events(ctx context.Context, sessionID string) ([]session.Event, error) {
	events, err := g.Backend.Events(ctx, sessionID)
	return events, unavailable(err)
}

func (g guarded) Sessions(ctx context.Context) ([]Summary, error) {
	rows, err := g.Backend.Sessions(ctx)
	return rows, unavailable(err)
}

// errNoRecord is fs.ErrNotExist in words that fit a database row as well as a file: the
// store's errors for a missing record wrap it, and errors.Is(err, fs.ErrNotExist) holds.
var errNoRecord error = noRecord{}

type noRecord struct{}

func (noRecord) Error() string        { return "no such record" }
func (noRecord) Is(target error) bool { return target == fs.ErrNotExist }
