// Package store keeps research sessions' texts: hypotheses, reviews, provider turns,
// checkpoints, the event log and the report. Workflow state holds only ids and scores (the
// claim-check pattern); everything that grows with text lives here.
//
// A Store is the sessions' records as the activities and the starter read and write them. It
// keeps them in a Backend, a small interface with two implementations that pass the same
// contract tests (eachStore in contract_test.go, run by the records' tests):
//
//   - Dir, a directory on local disk (the embedded default, `make demo`): one directory per
//     session, one file per record, readable with any tool (the compressed ones with
//     `zstd -dc`);
//   - Postgres, a PostgreSQL database (production): any worker host reads what another
//     wrote, so a host may die or lose its disk and its sessions carry on elsewhere.
//
// Open picks one from a location: a postgres:// URL or a directory.
//
// Records are named by keys relative to their session, the same for both backends:
//
//	hypotheses/<hypothesis id>.json
//	reviews/<hypothesis id>/<review type>-<n>.json
//	turns/<turn id>.json (compressed, its prompt in pieces)
//	pieces/<digest> (paragraphs of the prompts, each once: see pieces.go)
//	checkpoints/000001.json (compressed)
//	plan.json, overview.json, archived.json
//	access.json (who may read and steer the session at the desk; replaced on each change)
//	debates/<debate id>.json
//	metareviews/0001.json
//	tools/<digest>.json (the audit trail of tool results, content-addressed)
//	conversation/<message id>.json (the conversation with the scientist, m-0001, ...)
//	datasets/<digest>.data and datasets/<digest>.json (the lab's tables and their schemas: datasets.go)
//	report.md, and other report artefacts (PutFile)
//
// plus the session's event log and its row in the session index (Sessions). Ids may hold
// any character; each is escaped into a single key segment.
//
// Turns and checkpoints, most of a session's bytes, are Zstandard frames of compact JSON
// (see pack.go); the other records are indented JSON or text, as a person reads them.
// Records written before the store compressed anything read as before.
//
// Hypotheses, reviews, turns and their pieces, checkpoints, the plan, meta-reviews and the
// overview are written once: activities are retried, and a retry must never change what an
// earlier attempt stored, so a second Put of the same key keeps the first record and
// returns nil, even when two writers race. A debate's transcript grows turn by turn, so it is replaced;
// so are the report artefacts. A checkpoint, the events before it and the session's index
// row are committed together.
//
// A Store is safe for concurrent use, by several processes on several hosts, provided only
// one of them writes a given session's checkpoints at a time, as a workflow ensures.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/session"
)

// Names inside a session.
const (
	hypothesesDir  = "hypotheses"
	reviewsDir     = "reviews"
	turnsDir       = "turns"
	checkpointsDir = "checkpoints"
	eventsFile     = "events.jsonl" // the event log, in a Dir
	indexFile      = "session.json" // the session's index row, in a Dir
	reportFile     = "report.md"
	planFile       = "plan.json"
	debatesDir     = "debates"
	metaReviewsDir = "metareviews"
	overviewFile   = "overview.json"
	toolsDir       = "tools"
)

// Backend keeps a store's records: byte strings under a session id and a key (see the
// package comment), each session's event log, and the session index. Keys are made by the
// Store, already escaped; a Backend checks nothing about them.
type Backend interface {
	// Get returns a record; a missing one gives an error wrapping fs.ErrNotExist.
	Get(ctx context.Context, sessionID, key string) ([]byte, error)
	// List returns the keys directly under dir (a key prefix ending in "/"), sorted.
	List(ctx context.Context, sessionID, dir string) ([]string, error)
	// Put writes a record. With once, an existing record wins and Put returns nil; of two
	// concurrent writers exactly one writes.
	Put(ctx context.Context, sessionID, key string, data []byte, once bool) error
	// Copy gives session to the records of session from with the given keys, written once;
	// a key from lacks is skipped.
	Copy(ctx context.Context, from, to string, keys []string) error
	// Commit appends c.Events to the session's log, skipping those whose Seq is not above
	// its last (a retry adds nothing twice), writes c.Data under c.Key once (if c.Key is
	// set) and updates the session's index row (if c.Index is set) unless the index holds a
	// later checkpoint. Postgres does all of it in one transaction; Dir in that order, so a
	// record on disk implies the events before it are too.
	Commit(ctx context.Context, c Commit) error
	// Events returns the session's event log in Seq order.
	Events(ctx context.Context, sessionID string) ([]session.Event, error)
	// Sessions returns the session index, one row per session that has checkpointed.
	Sessions(ctx context.Context) ([]Summary, error)
	// Where says where a record is, for a person: a path, or the database and the key.
	Where(sessionID, key string) string
	Close()
}

// Commit is what Backend.Commit writes together.
type Commit struct {
	SessionID string
	Events    []session.Event
	Key       string
	Data      []byte
	Index     *Summary
}

// Store is a set of research sessions.
type Store struct {
	b         Backend // raw, wrapped as rewrap says
	raw       Backend
	keys      *keyring.Keyring // seals what is written; nil: nothing (Encrypt)
	migrating bool             // with keys, read plain and old-form texts too (Migrating)
	observe   Observer         // told of every backend operation (Observe)
	location  string           // for messages, without a password
	latest    latest
	pieces    pieceSet
}

// Open opens the store at location: a postgres:// (or postgresql://) URL, or a directory,
// which is created if missing. A database's schema is brought up to date. The location's
// password, if any, appears in no message; prefer PGPASSWORD in the environment to one in
// the URL.
func Open(ctx context.Context, location string) (*Store, error) {
	// A location is never meant to start or end with spaces: a quoting slip that leaves
	// one must not turn a database URL (and its password) into a directory's name.
	location = strings.TrimSpace(location)
	if IsDatabase(location) {
		b, err := OpenPostgres(ctx, location)
		if err != nil {
			return nil, err
		}
		return New(b, Redact(location)), nil
	}
	b, err := OpenDir(location)
	if err != nil {
		return nil, err
	}
	return New(b, b.Root()), nil
}

// IsDatabase says whether a store location names a PostgreSQL database.
func IsDatabase(location string) bool {
	location = strings.TrimSpace(location)
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://")
}

// New is a Store over a backend; location names it in messages.
func New(b Backend, location string) *Store {
	s := &Store{raw: b, location: location}
	s.rewrap()
	return s
}

// Location names the store for a person: a directory, or a database URL without its password.
func (s *Store) Location() string { return s.location }

// Backend returns the store's backend.
func (s *Store) Backend() Backend { return s.raw }

// Close releases the store's connections, if any.
func (s *Store) Close() { s.b.Close() }

// Where says where a session's record is: its path in a Dir, its database and key in
// Postgres. It returns "" for an id that cannot name a session.
func (s *Store) Where(sessionID, key string) string {
	if _, err := escape("session id", sessionID); err != nil {
		return ""
	}
	return s.b.Where(sessionID, key)
}

// key checks a session id and joins a directory and escaped ids into a record's key, then
// appends suffix. kindIDs alternates what an id is (for error messages) with the id itself.
func key(sessionID, dir, suffix string, kindIDs ...string) (string, error) {
	if _, err := escape("session id", sessionID); err != nil {
		return "", err
	}
	elems := []string{dir}
	for i := 0; i+1 < len(kindIDs); i += 2 {
		name, err := escape(kindIDs[i], kindIDs[i+1])
		if err != nil {
			return "", err
		}
		elems = append(elems, name)
	}
	elems[len(elems)-1] += suffix
	return path.Join(elems...), nil
}

// put writes v as indented JSON, which a scientist can read with any tool. Like get, it
// refuses an id that cannot name a session.
func (s *Store) put(ctx context.Context, sessionID, key string, v any, once bool) error {
	if _, err := escape("session id", sessionID); err != nil {
		return err
	}
	b, err := encode(key, v)
	if err != nil {
		return err
	}
	return s.b.Put(ctx, sessionID, key, b, once)
}

func encode(key string, v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("store: encode %s: %w", path.Base(key), err)
	}
	return append(b, '\n'), nil
}

// get reads a session's record into v. A missing record gives an error that says the
// session has no what and wraps fs.ErrNotExist; a damaged one says which record and what
// to do.
func (s *Store) get(ctx context.Context, sessionID, key, what string, v any) error {
	if _, err := escape("session id", sessionID); err != nil {
		return err
	}
	b, err := s.b.Get(ctx, sessionID, key)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: session %q has no %s (no %s): %w", sessionID, what, s.b.Where(sessionID, key), errNoRecord)
	}
	if err != nil {
		return err
	}
	if b, err = unpack(b); err != nil {
		return &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, key), Problem: err.Error()}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, key), Problem: "not a valid record: " + err.Error()}
	}
	return nil
}

// putByID writes v under dir/<id>.json, the id escaped; noun says what the id names.
func (s *Store) putByID(ctx context.Context, sessionID, dir, noun, id string, v any, once bool) error {
	k, err := key(sessionID, dir, ".json", noun+" id", id)
	if err != nil {
		return err
	}
	return s.put(ctx, sessionID, k, v, once)
}

// getByID reads the record putByID wrote.
func getByID[T any](ctx context.Context, s *Store, sessionID, dir, noun, id string) (T, error) {
	k, err := key(sessionID, dir, ".json", noun+" id", id)
	if err != nil {
		var none T
		return none, err
	}
	return getAs[T](ctx, s, sessionID, k, fmt.Sprintf("%s %q", noun, id))
}

// getAs is get into a new T.
func getAs[T any](ctx context.Context, s *Store, sessionID, key, what string) (T, error) {
	var v T
	err := s.get(ctx, sessionID, key, what, &v)
	return v, err
}

// find is get for a record that may not be there: found is false, with a nil error, when
// it is not.
func (s *Store) find(ctx context.Context, sessionID, key, what string, v any) (found bool, err error) {
	if err := s.get(ctx, sessionID, key, what, v); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// checkFile is the record Check writes.
const checkFile = "store-check.json"

// Check writes a small record to the session and reads it back: it says whether the store
// takes writes for the session again, after a fault.
func (s *Store) Check(ctx context.Context, sessionID string, now time.Time) error {
	type check struct {
		Checked string `json:"checked"`
	}
	want := check{session.Stamp(now)}
	if err := s.put(ctx, sessionID, checkFile, want, false); err != nil {
		return err
	}
	var got check
	if err := s.get(ctx, sessionID, checkFile, "store check", &got); err != nil {
		return err
	}
	if got != want {
		return &UnavailableError{Err: fmt.Errorf("store: %s reads back as %v after writing %v", s.b.Where(sessionID, checkFile), got.Checked, want.Checked)}
	}
	return nil
}
