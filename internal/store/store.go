// Package store keeps research sessions' texts: hypotheses, reviews, provider turns,
// checkpoints, the event log and the report. Workflow state holds only ids and scores (the
// claim-check pattern); everything that grows with text lives here.
//
// A Store is the sessions' records as the activities and the starter read and write them. It
// keeps them in a Backend, a small interface with two implementations that pass the same
// contract tests (store_test.go):
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
//	debates/<debate id>.json
//	metareviews/0001.json
//	tools/<digest>.json (the audit trail of tool results, content-addressed)
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
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/research"
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

// put writes v as indented JSON, which a scientist can read with any tool.
func (s *Store) put(ctx context.Context, sessionID, key string, v any, once bool) error {
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

// PutHypothesis stores a hypothesis under its ID. If the session already holds a
// hypothesis with that ID, PutHypothesis keeps it and returns nil.
func (s *Store) PutHypothesis(ctx context.Context, sessionID string, h research.Hypothesis) error {
	k, err := key(sessionID, hypothesesDir, ".json", "hypothesis id", h.ID)
	if err != nil {
		return err
	}
	return s.put(ctx, sessionID, k, h, true)
}

// Hypothesis returns a stored hypothesis. If there is none, the error wraps fs.ErrNotExist.
func (s *Store) Hypothesis(ctx context.Context, sessionID, id string) (research.Hypothesis, error) {
	var h research.Hypothesis
	k, err := key(sessionID, hypothesesDir, ".json", "hypothesis id", id)
	if err != nil {
		return h, err
	}
	err = s.get(ctx, sessionID, k, fmt.Sprintf("hypothesis %q", id), &h)
	return h, err
}

// Hypotheses returns the stored hypotheses with the given ids, keyed by id. If some are
// missing it returns the others together with an error that wraps fs.ErrNotExist and
// names the missing ids, so a caller that can do without them (a report) may go on.
func (s *Store) Hypotheses(ctx context.Context, sessionID string, ids []string) (map[string]research.Hypothesis, error) {
	found := make(map[string]research.Hypothesis, len(ids))
	var missing []string
	for _, id := range ids {
		if _, ok := found[id]; ok {
			continue
		}
		h, err := s.Hypothesis(ctx, sessionID, id)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if !slices.Contains(missing, id) {
				missing = append(missing, id)
			}
		case err != nil:
			return nil, err
		default:
			found[id] = h
		}
	}
	if len(missing) > 0 {
		shown := missing
		if len(shown) > 5 {
			shown = shown[:5]
		}
		first, _ := key(sessionID, hypothesesDir, ".json", "hypothesis id", missing[0])
		return found, fmt.Errorf("store: session %q lacks %d of the %d hypotheses asked for (%s; no %s): %w",
			sessionID, len(missing), len(found)+len(missing), strings.Join(quoteAll(shown), ", "), s.b.Where(sessionID, first), errNoRecord)
	}
	return found, nil
}

func quoteAll(ss []string) []string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return q
}

// PutReview stores the n-th review of type r.Type of hypothesis r.HypothesisID. The index
// lets a scientist add reviews of a type the session already ran. If the session already
// holds that review, PutReview keeps it and returns nil.
func (s *Store) PutReview(ctx context.Context, sessionID string, n int, r research.Review) error {
	if n < 0 {
		return fmt.Errorf("store: review index %d is negative; number reviews from 0", n)
	}
	k, err := key(sessionID, reviewsDir, "-"+strconv.Itoa(n)+".json",
		"hypothesis id", r.HypothesisID, "review type", r.Type)
	if err != nil {
		return err
	}
	return s.put(ctx, sessionID, k, r, true)
}

// Reviews returns every stored review of one hypothesis, ordered by review type (in the
// order of research.ReviewTypes, then other types by name) and then by index. A hypothesis
// without reviews yields an empty list and no error.
func (s *Store) Reviews(ctx context.Context, sessionID, hypothesisID string) ([]research.Review, error) {
	dir, err := key(sessionID, reviewsDir, "/", "hypothesis id", hypothesisID)
	if err != nil {
		return nil, err
	}
	keys, err := s.b.List(ctx, sessionID, dir+"/")
	if err != nil {
		return nil, err
	}
	type indexed struct {
		n int
		r research.Review
	}
	var all []indexed
	for _, k := range keys {
		name, ok := strings.CutSuffix(path.Base(k), ".json")
		if !ok {
			continue
		}
		// The index follows the last '-': escaped types may hold '-', indexes cannot.
		n, err := strconv.Atoi(name[strings.LastIndexByte(name, '-')+1:])
		if err != nil {
			continue // not a review record
		}
		var r research.Review
		if err := s.get(ctx, sessionID, k, "review", &r); err != nil {
			return nil, err
		}
		all = append(all, indexed{n, r})
	}
	slices.SortFunc(all, func(a, b indexed) int {
		return cmp.Or(
			cmp.Compare(typeRank(a.r.Type), typeRank(b.r.Type)),
			strings.Compare(a.r.Type, b.r.Type),
			cmp.Compare(a.n, b.n))
	})
	reviews := make([]research.Review, len(all))
	for i, x := range all {
		reviews[i] = x.r
	}
	return reviews, nil
}

// typeRank places the known review types in the order a session runs them, others after.
func typeRank(t string) int {
	if i := slices.Index(research.ReviewTypes, t); i >= 0 {
		return i
	}
	return len(research.ReviewTypes)
}

// Turn is the idempotency record of a provider turn. The first successful result is
// stored; a retried turn finds it and returns it instead of calling the model again.
type Turn struct {
	ID       string          `json:"id"`
	Agent    string          `json:"agent"` // "generation", "reflection", "ranking", ...
	Prompt   string          `json:"prompt"`
	Result   json.RawMessage `json:"result"`
	Usage    research.Usage  `json:"usage"`
	Finished string          `json:"finished"` // RFC 3339
	// A step of a tool-using turn (its id is the turn's with ".step-N") also keeps its part
	// of the conversation, which the next step reads back: Given, the results of the
	// previous step's calls (their content in the tool records they name); and Said, what
	// the model answered, its text and the calls it asked for.
	Given []research.ToolResult `json:"given,omitempty"`
	Said  *research.ToolStep    `json:"said,omitempty"`
}

// PutTurn stores a finished turn under t.ID. If the session already holds that turn,
// PutTurn keeps it and returns nil.
//
// The record is compressed, and its prompt is kept in pieces (see pieces.go), each
// paragraph once per session however many prompts repeat it; the pieces are written first,
// so a turn record is never without them. Turn reads it back as it was, byte for byte.
func (s *Store) PutTurn(ctx context.Context, sessionID string, t Turn) error {
	k, err := key(sessionID, turnsDir, ".json", "turn id", t.ID)
	if err != nil {
		return err
	}
	parts, pieces := splitPrompt(t.Prompt)
	data, err := encodeCompact(k, storedTurn{Turn: t, Parts: parts})
	if err != nil {
		return err
	}
	if err := s.putPieces(ctx, sessionID, pieces); err != nil {
		return err
	}
	return s.b.Put(ctx, sessionID, k, data, true)
}

// Turn returns a stored turn. found is false, with a nil error, if there is none.
func (s *Store) Turn(ctx context.Context, sessionID, turnID string) (t Turn, found bool, err error) {
	k, err := key(sessionID, turnsDir, ".json", "turn id", turnID)
	if err != nil {
		return t, false, err
	}
	var rec storedTurn
	if found, err := s.find(ctx, sessionID, k, "turn", &rec); !found {
		return Turn{}, false, err
	}
	t = rec.Turn
	switch {
	case rec.Prompt != nil && rec.Parts != nil:
		return Turn{}, false, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, k), Problem: "it holds its prompt both whole and in parts"}
	case rec.Prompt != nil: // written whole, before prompts were split
		t.Prompt = *rec.Prompt
	default:
		if t.Prompt, err = s.prompt(ctx, sessionID, k, rec.Parts); err != nil {
			return Turn{}, false, err
		}
	}
	return t, true, nil
}

// PutCheckpoint writes snap as checkpoint number snap.Seq, appends newEvents to the
// session's event log and updates the session's index row. It returns where the
// checkpoint is (see Where).
//
// It survives retries: events whose Seq is not above the last one in the log are skipped
// (so newEvents must be in Seq order), and an existing checkpoint with the same number is
// kept.
func (s *Store) PutCheckpoint(ctx context.Context, snap session.Snapshot, newEvents []session.Event) (where string, err error) {
	return s.PutCheckpointOver(ctx, 0, snap, newEvents)
}

// PutCheckpointOver is PutCheckpoint for an incremental snapshot: when base is above 0,
// snap's Hypotheses, Played and Edges hold only what changed since checkpoint base.
//
// The store keeps such a checkpoint as it came, the changes over base, and Checkpoint
// merges the chain back (session.Merge). A checkpoint is kept whole instead once the
// changes since the last whole one would outweigh it, or the chain would pass
// maxCheckpointChain links: so a session's records grow with its hypotheses, not with
// hypotheses × checkpoints, and reading any checkpoint reads at most about twice a whole
// one.
func (s *Store) PutCheckpointOver(ctx context.Context, base int, snap session.Snapshot, newEvents []session.Event) (where string, err error) {
	if _, err := escape("session id", snap.SessionID); err != nil {
		return "", err
	}
	if snap.Seq < 0 {
		return "", fmt.Errorf("store: checkpoint number %d is negative; number checkpoints from 1", snap.Seq)
	}
	k := checkpointKey(snap.Seq)
	rec, whole := storedCheckpoint{Snapshot: snap}, snap
	if base > 0 {
		if base >= snap.Seq {
			return "", fmt.Errorf("store: checkpoint %d cannot build on checkpoint %d, which is not before it", snap.Seq, base)
		}
		prev, chain, err := s.checkpoint(ctx, snap.SessionID, base, nil)
		if err != nil {
			return "", fmt.Errorf("store: checkpoint %d builds on checkpoint %d: %w", snap.Seq, base, err)
		}
		whole = session.Merge(prev, snap)
		changes, err := json.Marshal(snap) // as the record holds it, before compression
		if err != nil {
			return "", fmt.Errorf("store: encode checkpoint %d: %w", snap.Seq, err)
		}
		rec = storedCheckpoint{Base: base, Links: chain.Links + 1, ChainBytes: chain.ChainBytes + len(changes), WholeBytes: chain.WholeBytes, Snapshot: snap}
		if rec.Links >= maxCheckpointChain || rec.ChainBytes > rec.WholeBytes {
			rec = storedCheckpoint{Snapshot: whole}
		}
	}
	data, err := encodeCompact(k, rec)
	if err != nil {
		return "", err
	}
	sum := summaryOf(whole)
	err = s.b.Commit(ctx, Commit{SessionID: snap.SessionID, Events: newEvents, Key: k, Data: data, Index: &sum})
	if err != nil {
		return "", err
	}
	return s.b.Where(snap.SessionID, k), nil
}

// maxCheckpointChain bounds how many stored changes reading a checkpoint merges.
const maxCheckpointChain = 64

// storedCheckpoint is a checkpoint as the store keeps it: whole, or, when Base is above 0,
// the changes since checkpoint Base (see PutCheckpointOver), with what the chain back to
// the last whole checkpoint holds: its links, the bytes of its changes, and the bytes of
// that whole checkpoint.
type storedCheckpoint struct {
	Base       int `json:"changes_since,omitempty"`
	Links      int `json:"chain_links,omitempty"`
	ChainBytes int `json:"chain_bytes,omitempty"`
	WholeBytes int `json:"whole_bytes,omitempty"`
	session.Snapshot
}

// checkpoint reads checkpoint seq whole, and returns how its stored chain stands (all zero
// but WholeBytes for a checkpoint stored whole). whole holds checkpoints already read
// whole, by number, so that reading every checkpoint of a session reads each record once.
func (s *Store) checkpoint(ctx context.Context, sessionID string, seq int, whole map[int]session.Snapshot) (session.Snapshot, storedCheckpoint, error) {
	var rec storedCheckpoint
	if snap, ok := whole[seq]; ok {
		return snap, rec, nil
	}
	if snap, chain, ok := s.latest.get(sessionID, seq); ok {
		return snap, chain, nil
	}
	raw, err := s.b.Get(ctx, sessionID, checkpointKey(seq))
	if errors.Is(err, fs.ErrNotExist) {
		return session.Snapshot{}, rec, fmt.Errorf("store: session %q has no checkpoint %d (no %s): %w", sessionID, seq, s.b.Where(sessionID, checkpointKey(seq)), errNoRecord)
	}
	if err != nil {
		return session.Snapshot{}, rec, err
	}
	plain, err := unpack(raw)
	if err != nil {
		return session.Snapshot{}, rec, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, checkpointKey(seq)), Problem: err.Error()}
	}
	if err := json.Unmarshal(plain, &rec); err != nil {
		return session.Snapshot{}, rec, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, checkpointKey(seq)), Problem: "not a valid checkpoint: " + err.Error()}
	}
	if rec.Base <= 0 {
		// Chains are weighed by their JSON, what reading them parses, compressed or not.
		rec.WholeBytes = len(plain)
		s.latest.keep(seq, rec.Snapshot, storedCheckpoint{WholeBytes: len(plain)})
		return rec.Snapshot, rec, nil
	}
	if rec.Base >= seq {
		return session.Snapshot{}, rec, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, checkpointKey(seq)),
			Problem: fmt.Sprintf("it builds on checkpoint %d, which is not before it", rec.Base)}
	}
	prev, _, err := s.checkpoint(ctx, sessionID, rec.Base, whole)
	if errors.Is(err, fs.ErrNotExist) {
		// Checkpoint seq exists, so the one it builds on did: it was removed.
		return session.Snapshot{}, rec, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, checkpointKey(seq)),
			Problem: fmt.Sprintf("it builds on checkpoint %d, which is missing: no %s", rec.Base, s.b.Where(sessionID, checkpointKey(rec.Base)))}
	}
	if err != nil {
		return session.Snapshot{}, rec, fmt.Errorf("store: checkpoint %d builds on checkpoint %d: %w", seq, rec.Base, err)
	}
	merged := session.Merge(prev, rec.Snapshot)
	chain := rec
	chain.Snapshot = session.Snapshot{}
	s.latest.keep(seq, merged, chain)
	return merged, rec, nil
}

// checkFile is the record Check writes.
const checkFile = "store-check.json"

// Check writes a small record to the session and reads it back: it says whether the store
// takes writes for the session again, after a fault.
func (s *Store) Check(ctx context.Context, sessionID string, now time.Time) error {
	if _, err := escape("session id", sessionID); err != nil {
		return err
	}
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

// checkpointKey pads the number so that a listing sorts like the sequence.
func checkpointKey(seq int) string { return fmt.Sprintf("%s/%06d.json", checkpointsDir, seq) }

// checkpointSeqs lists the numbers of a session's checkpoints, in order.
func (s *Store) checkpointSeqs(ctx context.Context, sessionID string) ([]int, error) {
	keys, err := s.b.List(ctx, sessionID, checkpointsDir+"/")
	if err != nil {
		return nil, err
	}
	var seqs []int
	for _, k := range keys {
		name, ok := strings.CutSuffix(path.Base(k), ".json")
		if !ok || !allDigits(name) {
			continue
		}
		if n, err := strconv.Atoi(name); err == nil {
			seqs = append(seqs, n)
		}
	}
	// Sort numbers, not names: past 999999 the padding no longer orders them.
	slices.Sort(seqs)
	return seqs, nil
}

// Checkpoint returns checkpoint number seq, whole. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Checkpoint(ctx context.Context, sessionID string, seq int) (session.Snapshot, error) {
	snap, _, err := s.checkpoint(ctx, sessionID, seq, nil)
	return snap, err
}

// LatestCheckpoint returns the session's checkpoint with the highest number. If there is
// none, the error wraps fs.ErrNotExist.
func (s *Store) LatestCheckpoint(ctx context.Context, sessionID string) (session.Snapshot, error) {
	if _, err := escape("session id", sessionID); err != nil {
		return session.Snapshot{}, err
	}
	seqs, err := s.checkpointSeqs(ctx, sessionID)
	if err != nil {
		return session.Snapshot{}, err
	}
	if len(seqs) == 0 {
		return session.Snapshot{}, fmt.Errorf("store: session %q has no checkpoint yet (none in %s): %w",
			sessionID, s.b.Where(sessionID, checkpointsDir), errNoRecord)
	}
	return s.Checkpoint(ctx, sessionID, seqs[len(seqs)-1])
}

func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// Checkpoints returns every checkpoint of the session, in the order of their numbers. A
// session without checkpoints yields an empty list and no error.
func (s *Store) Checkpoints(ctx context.Context, sessionID string) ([]session.Snapshot, error) {
	if _, err := escape("session id", sessionID); err != nil {
		return nil, err
	}
	seqs, err := s.checkpointSeqs(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	snaps := make([]session.Snapshot, 0, len(seqs))
	whole := make(map[int]session.Snapshot, len(seqs))
	for _, n := range seqs {
		snap, _, err := s.checkpoint(ctx, sessionID, n, whole)
		if err != nil {
			return nil, err
		}
		whole[n] = snap
		snaps = append(snaps, snap)
	}
	return snaps, nil
}

// Events returns the session's event log in the order it was written. A session that has
// logged nothing yields an empty list and no error.
func (s *Store) Events(ctx context.Context, sessionID string) ([]session.Event, error) {
	if _, err := escape("session id", sessionID); err != nil {
		return nil, err
	}
	return s.b.Events(ctx, sessionID)
}

// PutReport writes the session's Markdown report, replacing any earlier one, and returns
// where it is (see Where).
func (s *Store) PutReport(ctx context.Context, sessionID string, markdown []byte) (where string, err error) {
	if _, err := escape("session id", sessionID); err != nil {
		return "", err
	}
	if err := s.b.Put(ctx, sessionID, reportFile, markdown, false); err != nil {
		return "", err
	}
	return s.b.Where(sessionID, reportFile), nil
}

// Report returns the session's Markdown report. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Report(ctx context.Context, sessionID string) ([]byte, error) {
	return s.File(ctx, sessionID, reportFile)
}

// PutPlan stores the session's research plan. If the session already has one, PutPlan
// keeps it and returns nil.
func (s *Store) PutPlan(ctx context.Context, sessionID string, p research.Plan) error {
	if _, err := escape("session id", sessionID); err != nil {
		return err
	}
	return s.put(ctx, sessionID, planFile, p, true)
}

// Plan returns the session's research plan. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Plan(ctx context.Context, sessionID string) (research.Plan, error) {
	var p research.Plan
	err := s.get(ctx, sessionID, planFile, "research plan", &p)
	return p, err
}

// PutDebate stores a debate's transcript under its id, replacing any earlier version: a
// debate grows by one turn at a time, and each version is written atomically.
func (s *Store) PutDebate(ctx context.Context, sessionID, debateID string, d research.Debate) error {
	k, err := key(sessionID, debatesDir, ".json", "debate id", debateID)
	if err != nil {
		return err
	}
	return s.put(ctx, sessionID, k, d, false)
}

// Debate returns a debate's transcript so far. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Debate(ctx context.Context, sessionID, debateID string) (research.Debate, error) {
	var d research.Debate
	k, err := key(sessionID, debatesDir, ".json", "debate id", debateID)
	if err != nil {
		return d, err
	}
	err = s.get(ctx, sessionID, k, fmt.Sprintf("debate %q", debateID), &d)
	return d, err
}

// metaReviewKey pads the round so that a listing sorts like the rounds.
func metaReviewKey(round int) string { return fmt.Sprintf("%s/%04d.json", metaReviewsDir, round) }

// PutMetaReview stores the meta-review of round m.Round. If the session already holds
// that round's meta-review, PutMetaReview keeps it and returns nil.
func (s *Store) PutMetaReview(ctx context.Context, sessionID string, m research.MetaReview) error {
	if m.Round < 0 {
		return fmt.Errorf("store: meta-review round %d is negative; number rounds from 0", m.Round)
	}
	if _, err := escape("session id", sessionID); err != nil {
		return err
	}
	return s.put(ctx, sessionID, metaReviewKey(m.Round), m, true)
}

// MetaReview returns the meta-review of one round. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) MetaReview(ctx context.Context, sessionID string, round int) (research.MetaReview, error) {
	var m research.MetaReview
	if round < 0 {
		return m, fmt.Errorf("store: meta-review round %d is negative; number rounds from 0", round)
	}
	err := s.get(ctx, sessionID, metaReviewKey(round), fmt.Sprintf("meta-review of round %d", round), &m)
	return m, err
}

// PutOverview stores the session's research overview. If the session already has one,
// PutOverview keeps it and returns nil.
func (s *Store) PutOverview(ctx context.Context, sessionID string, o research.Overview) error {
	if _, err := escape("session id", sessionID); err != nil {
		return err
	}
	return s.put(ctx, sessionID, overviewFile, o, true)
}

// Overview returns the session's research overview. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Overview(ctx context.Context, sessionID string) (research.Overview, error) {
	var o research.Overview
	err := s.get(ctx, sessionID, overviewFile, "research overview", &o)
	return o, err
}

// reservedNames are the names of the store's own records in a session, which a report
// artefact must not replace.
var reservedNames = []string{
	hypothesesDir, reviewsDir, turnsDir, piecesDir, checkpointsDir, eventsFile, indexFile,
	planFile, debatesDir, metaReviewsDir, overviewFile, ArchiveFile,
}

// checkFileName refuses a report artefact's name that is not a plain file name of its own.
func checkFileName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("store: file name %q is not a file name; give one such as report.json", name)
	case strings.ContainsAny(name, `/\`+"\x00"):
		return fmt.Errorf("store: file name %q holds a path separator; give a plain file name such as report.json", name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("store: file name %q starts with a dot; report files are not hidden", name)
	case len(name) > maxName:
		return fmt.Errorf("store: file name %.40q... is %d bytes; at most %d", name, len(name), maxName)
	case slices.Contains(reservedNames, name):
		return fmt.Errorf("store: %q is the store's own record; choose another name for a report file", name)
	}
	return nil
}

// PutFile writes a report artefact (report.json, elo.svg, ...) into the session, replacing
// any earlier version, and returns where it is (see Where). name must be a plain file
// name: no directory, not hidden, and not one of the store's own records.
func (s *Store) PutFile(ctx context.Context, sessionID, name string, data []byte) (where string, err error) {
	if err := checkFileName(name); err != nil {
		return "", err
	}
	if _, err := escape("session id", sessionID); err != nil {
		return "", err
	}
	if err := s.b.Put(ctx, sessionID, name, data, false); err != nil {
		return "", err
	}
	return s.b.Where(sessionID, name), nil
}

// File returns a report artefact written by PutFile (or the report). If there is none, the
// error wraps fs.ErrNotExist.
func (s *Store) File(ctx context.Context, sessionID, name string) ([]byte, error) {
	if name != reportFile {
		if err := checkFileName(name); err != nil {
			return nil, err
		}
	}
	if _, err := escape("session id", sessionID); err != nil {
		return nil, err
	}
	b, err := s.b.Get(ctx, sessionID, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: session %q has no %s in %s: %w", sessionID, name, s.location, errNoRecord)
	}
	return b, err
}
