// Package store keeps a research session's texts on local disk. Workflow state holds only
// ids and scores (the claim-check pattern); hypotheses, reviews, provider turns,
// checkpoints, the event log and the report live here, one directory per session:
//
//	<root>/<session id>/hypotheses/<hypothesis id>.json
//	<root>/<session id>/reviews/<hypothesis id>/<review type>-<n>.json
//	<root>/<session id>/turns/<turn id>.json
//	<root>/<session id>/checkpoints/000001.json
//	<root>/<session id>/events.jsonl
//	<root>/<session id>/plan.json
//	<root>/<session id>/debates/<debate id>.json
//	<root>/<session id>/metareviews/0001.json
//	<root>/<session id>/overview.json
//	<root>/<session id>/report.md, and other report artefacts (PutFile)
//
// Ids may hold any character; each is escaped into a single file name.
//
// Every write is atomic: a crash leaves the old file or the new one, never a torn one.
// Hypotheses, reviews, turns, checkpoints, the plan, meta-reviews and the overview are
// written once: activities are retried, and a retry must never change what an earlier
// attempt stored, so a second Put of the same key keeps the first record and returns nil.
// A debate's transcript grows turn by turn, so it is replaced; so are the report artefacts.
//
// A Store is safe for concurrent use. Several processes may share a root, provided only
// one of them writes a given session's checkpoints at a time, as a workflow ensures.
package store

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// Names inside a session directory.
const (
	hypothesesDir  = "hypotheses"
	reviewsDir     = "reviews"
	turnsDir       = "turns"
	checkpointsDir = "checkpoints"
	eventsFile     = "events.jsonl"
	reportFile     = "report.md"
	planFile       = "plan.json"
	debatesDir     = "debates"
	metaReviewsDir = "metareviews"
	overviewFile   = "overview.json"
)

// Store is a directory of research sessions.
type Store struct {
	root string // absolute, so every path the store returns is too
}

// Open returns the store rooted at root, creating the directory if it is missing.
func Open(root string) (*Store, error) {
	if root == "" {
		return nil, errors.New("store: root directory is empty; name the directory that should hold session data")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := mkdirs(abs); err != nil {
		return nil, err
	}
	return &Store{root: abs}, nil
}

// Root returns the store's absolute root directory.
func (s *Store) Root() string { return s.root }

// SessionDir returns the directory that holds a session: the root joined with the escaped
// session id. It returns "" for an id that cannot name a directory ("", "." or ".." or
// one too long); the methods that write or read a session report why.
func (s *Store) SessionDir(sessionID string) string {
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return ""
	}
	return dir
}

func (s *Store) sessionDir(sessionID string) (string, error) {
	name, err := escape("session id", sessionID)
	if err != nil {
		return "", err
	}
	return filepath.Join(s.root, name), nil
}

// path joins a session's directory, a subdirectory and escaped ids, then appends suffix.
// kindIDs alternates what an id is (for error messages) with the id itself.
func (s *Store) path(sessionID, sub, suffix string, kindIDs ...string) (string, error) {
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return "", err
	}
	elems := []string{dir, sub}
	for i := 0; i+1 < len(kindIDs); i += 2 {
		name, err := escape(kindIDs[i], kindIDs[i+1])
		if err != nil {
			return "", err
		}
		elems = append(elems, name)
	}
	elems[len(elems)-1] += suffix
	return filepath.Join(elems...), nil
}

// PutHypothesis stores a hypothesis under its ID. If the session already holds a
// hypothesis with that ID, PutHypothesis keeps it and returns nil.
func (s *Store) PutHypothesis(sessionID string, h research.Hypothesis) error {
	path, err := s.path(sessionID, hypothesesDir, ".json", "hypothesis id", h.ID)
	if err != nil {
		return err
	}
	return putJSON(path, h, true)
}

// Hypothesis returns a stored hypothesis. If there is none, the error wraps fs.ErrNotExist.
func (s *Store) Hypothesis(sessionID, id string) (research.Hypothesis, error) {
	var h research.Hypothesis
	path, err := s.path(sessionID, hypothesesDir, ".json", "hypothesis id", id)
	if err != nil {
		return h, err
	}
	if err := getJSON(path, &h); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return h, fmt.Errorf("store: session %q has no hypothesis %q: %w", sessionID, id, fs.ErrNotExist)
		}
		return h, err
	}
	return h, nil
}

// Hypotheses returns the stored hypotheses with the given ids, keyed by id. If some are
// missing it returns the others together with an error that wraps fs.ErrNotExist and
// names the missing ids, so a caller that can do without them (a report) may go on.
func (s *Store) Hypotheses(sessionID string, ids []string) (map[string]research.Hypothesis, error) {
	found := make(map[string]research.Hypothesis, len(ids))
	var missing []string
	for _, id := range ids {
		if _, ok := found[id]; ok {
			continue
		}
		h, err := s.Hypothesis(sessionID, id)
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
		return found, fmt.Errorf("store: session %q lacks %d of the %d hypotheses asked for (%s): %w",
			sessionID, len(missing), len(found)+len(missing), strings.Join(quoteAll(shown), ", "), fs.ErrNotExist)
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
func (s *Store) PutReview(sessionID string, n int, r research.Review) error {
	if n < 0 {
		return fmt.Errorf("store: review index %d is negative; number reviews from 0", n)
	}
	path, err := s.path(sessionID, reviewsDir, "-"+strconv.Itoa(n)+".json",
		"hypothesis id", r.HypothesisID, "review type", r.Type)
	if err != nil {
		return err
	}
	return putJSON(path, r, true)
}

// Reviews returns every stored review of one hypothesis, ordered by review type (in the
// order of research.ReviewTypes, then other types by name) and then by index. A hypothesis
// without reviews yields an empty list and no error.
func (s *Store) Reviews(sessionID, hypothesisID string) ([]research.Review, error) {
	dir, err := s.path(sessionID, reviewsDir, "", "hypothesis id", hypothesisID)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	type indexed struct {
		n int
		r research.Review
	}
	var all []indexed
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(name, tempPrefix) {
			continue
		}
		// The index follows the last '-': escaped types may hold '-', indexes cannot.
		n, err := strconv.Atoi(name[strings.LastIndexByte(name, '-')+1:])
		if err != nil {
			continue // not a review record
		}
		var r research.Review
		if err := getJSON(filepath.Join(dir, e.Name()), &r); err != nil {
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
}

// PutTurn stores a finished turn under t.ID. If the session already holds that turn,
// PutTurn keeps it and returns nil.
func (s *Store) PutTurn(sessionID string, t Turn) error {
	path, err := s.path(sessionID, turnsDir, ".json", "turn id", t.ID)
	if err != nil {
		return err
	}
	return putJSON(path, t, true)
}

// Turn returns a stored turn. found is false, with a nil error, if there is none.
func (s *Store) Turn(sessionID, turnID string) (t Turn, found bool, err error) {
	path, err := s.path(sessionID, turnsDir, ".json", "turn id", turnID)
	if err != nil {
		return t, false, err
	}
	if err := getJSON(path, &t); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Turn{}, false, nil
		}
		return Turn{}, false, err
	}
	return t, true, nil
}

// PutCheckpoint writes snap as checkpoint number snap.Seq and appends newEvents to the
// session's event log. It returns the checkpoint's path.
//
// Both halves survive retries: events whose Seq is not above the last one in the log are
// skipped (so newEvents must be in Seq order), and an existing checkpoint with the same
// number is kept. The events are written first, so a checkpoint on disk implies the
// events before it are too.
func (s *Store) PutCheckpoint(snap session.Snapshot, newEvents []session.Event) (path string, err error) {
	return s.PutCheckpointOver(0, snap, newEvents)
}

// PutCheckpointOver is PutCheckpoint for an incremental snapshot: when base is above 0,
// snap's Hypotheses, Played and Edges hold only what changed since checkpoint base, and
// the checkpoint written is whole (session.Merge), so every checkpoint reads on its own.
func (s *Store) PutCheckpointOver(base int, snap session.Snapshot, newEvents []session.Event) (path string, err error) {
	dir, err := s.sessionDir(snap.SessionID)
	if err != nil {
		return "", err
	}
	if snap.Seq < 0 {
		return "", fmt.Errorf("store: checkpoint number %d is negative; number checkpoints from 1", snap.Seq)
	}
	if base > 0 {
		if base >= snap.Seq {
			return "", fmt.Errorf("store: checkpoint %d cannot build on checkpoint %d, which is not before it", snap.Seq, base)
		}
		prev, err := s.Checkpoint(snap.SessionID, base)
		if err != nil {
			return "", fmt.Errorf("store: checkpoint %d builds on checkpoint %d: %w", snap.Seq, base, err)
		}
		snap = session.Merge(prev, snap)
	}
	if err := appendEvents(filepath.Join(dir, eventsFile), newEvents); err != nil {
		return "", err
	}
	path = filepath.Join(dir, checkpointsDir, checkpointName(snap.Seq))
	if err := putJSON(path, snap, true); err != nil {
		return "", err
	}
	return path, nil
}

// PutEvents appends events to the session's event log outside a checkpoint: the records a
// session makes after its final checkpoint (the report, its completion). Like
// PutCheckpoint it skips events the log already holds, so a retry adds nothing twice.
func (s *Store) PutEvents(sessionID string, events []session.Event) error {
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return err
	}
	return appendEvents(filepath.Join(dir, eventsFile), events)
}

// checkpointName pads the number so that a directory listing sorts like the sequence.
func checkpointName(seq int) string { return fmt.Sprintf("%06d.json", seq) }

// appendEvents adds events to a JSON-lines log. It rewrites the whole file through
// writeFile rather than appending in place, so a crash can never leave a torn last line.
func appendEvents(path string, events []session.Event) error {
	if len(events) == 0 {
		return nil
	}
	defer lock(path)()
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: %w", err)
	}
	last, err := lastSeq(path, old)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.Grow(len(old) + 256*len(events))
	buf.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		buf.WriteByte('\n') // the file was edited by hand; keep lines apart
	}
	added := false
	for _, e := range events {
		if e.Seq <= last {
			continue // already logged by an earlier attempt
		}
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("store: encode event %d: %w", e.Seq, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
		last, added = e.Seq, true
	}
	if !added {
		return nil
	}
	return writeFile(path, buf.Bytes(), false)
}

// lastSeq returns the Seq of the last event in a log. An empty log has no last event,
// so it returns math.MinInt: every event is new, even one numbered 0.
func lastSeq(path string, log []byte) (int, error) {
	log = bytes.TrimRight(log, " \t\r\n")
	if len(log) == 0 {
		return math.MinInt, nil
	}
	line := log[bytes.LastIndexByte(log, '\n')+1:]
	var e session.Event
	if err := json.Unmarshal(line, &e); err != nil {
		return 0, fmt.Errorf("store: the last line of %s is not an event (%v); it was changed outside the store: repair or remove that line", path, err)
	}
	return e.Seq, nil
}

// Checkpoint returns checkpoint number seq. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Checkpoint(sessionID string, seq int) (session.Snapshot, error) {
	var snap session.Snapshot
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return snap, err
	}
	if err := getJSON(filepath.Join(dir, checkpointsDir, checkpointName(seq)), &snap); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return snap, fmt.Errorf("store: session %q has no checkpoint %d: %w", sessionID, seq, fs.ErrNotExist)
		}
		return snap, err
	}
	return snap, nil
}

// LatestCheckpoint returns the session's checkpoint with the highest number. If there is
// none, the error wraps fs.ErrNotExist.
func (s *Store) LatestCheckpoint(sessionID string) (session.Snapshot, error) {
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return session.Snapshot{}, err
	}
	entries, err := os.ReadDir(filepath.Join(dir, checkpointsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return session.Snapshot{}, fmt.Errorf("store: %w", err)
	}
	latest := -1
	for _, e := range entries {
		// Compare numbers, not names: past 999999 the padding no longer orders them.
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !allDigits(name) {
			continue
		}
		if n, err := strconv.Atoi(name); err == nil && n > latest {
			latest = n
		}
	}
	if latest < 0 {
		return session.Snapshot{}, fmt.Errorf("store: session %q has no checkpoint yet (none in %s): %w",
			sessionID, filepath.Join(dir, checkpointsDir), fs.ErrNotExist)
	}
	return s.Checkpoint(sessionID, latest)
}

func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// Events returns the session's event log in the order it was written. A session that has
// logged nothing yields an empty list and no error.
func (s *Store) Events(sessionID string) ([]session.Event, error) {
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, eventsFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	var events []session.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20) // a Detail may be long; don't fail on lines past 64 KiB
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e session.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("store: %s:%d is not an event (%v); it was changed outside the store: repair or remove that line", path, line, err)
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("store: read %s: %w", path, err)
	}
	return events, nil
}

// PutReport writes the session's Markdown report, replacing any earlier one, and returns
// its absolute path.
func (s *Store) PutReport(sessionID string, markdown []byte) (path string, err error) {
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return "", err
	}
	path = filepath.Join(dir, reportFile)
	if err := writeFile(path, markdown, false); err != nil {
		return "", err
	}
	return path, nil
}

// PutPlan stores the session's research plan. If the session already has one, PutPlan
// keeps it and returns nil.
func (s *Store) PutPlan(sessionID string, p research.Plan) error {
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return err
	}
	return putJSON(filepath.Join(dir, planFile), p, true)
}

// Plan returns the session's research plan. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Plan(sessionID string) (research.Plan, error) {
	var p research.Plan
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return p, err
	}
	err = getJSON(filepath.Join(dir, planFile), &p)
	if errors.Is(err, fs.ErrNotExist) {
		return p, fmt.Errorf("store: session %q has no research plan: %w", sessionID, fs.ErrNotExist)
	}
	return p, err
}

// PutDebate stores a debate's transcript under its id, replacing any earlier version: a
// debate grows by one turn at a time, and each version is written atomically.
func (s *Store) PutDebate(sessionID, debateID string, d research.Debate) error {
	path, err := s.path(sessionID, debatesDir, ".json", "debate id", debateID)
	if err != nil {
		return err
	}
	return putJSON(path, d, false)
}

// Debate returns a debate's transcript so far. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Debate(sessionID, debateID string) (research.Debate, error) {
	var d research.Debate
	path, err := s.path(sessionID, debatesDir, ".json", "debate id", debateID)
	if err != nil {
		return d, err
	}
	err = getJSON(path, &d)
	if errors.Is(err, fs.ErrNotExist) {
		return d, fmt.Errorf("store: session %q has no debate %q: %w", sessionID, debateID, fs.ErrNotExist)
	}
	return d, err
}

// metaReviewName pads the round so that a directory listing sorts like the rounds.
func metaReviewName(round int) string { return fmt.Sprintf("%04d.json", round) }

// PutMetaReview stores the meta-review of round m.Round. If the session already holds
// that round's meta-review, PutMetaReview keeps it and returns nil.
func (s *Store) PutMetaReview(sessionID string, m research.MetaReview) error {
	if m.Round < 0 {
		return fmt.Errorf("store: meta-review round %d is negative; number rounds from 0", m.Round)
	}
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return err
	}
	return putJSON(filepath.Join(dir, metaReviewsDir, metaReviewName(m.Round)), m, true)
}

// MetaReview returns the meta-review of one round. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) MetaReview(sessionID string, round int) (research.MetaReview, error) {
	var m research.MetaReview
	if round < 0 {
		return m, fmt.Errorf("store: meta-review round %d is negative; number rounds from 0", round)
	}
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return m, err
	}
	err = getJSON(filepath.Join(dir, metaReviewsDir, metaReviewName(round)), &m)
	if errors.Is(err, fs.ErrNotExist) {
		return m, fmt.Errorf("store: session %q has no meta-review of round %d: %w", sessionID, round, fs.ErrNotExist)
	}
	return m, err
}

// PutOverview stores the session's research overview. If the session already has one,
// PutOverview keeps it and returns nil.
func (s *Store) PutOverview(sessionID string, o research.Overview) error {
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return err
	}
	return putJSON(filepath.Join(dir, overviewFile), o, true)
}

// Overview returns the session's research overview. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Overview(sessionID string) (research.Overview, error) {
	var o research.Overview
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return o, err
	}
	err = getJSON(filepath.Join(dir, overviewFile), &o)
	if errors.Is(err, fs.ErrNotExist) {
		return o, fmt.Errorf("store: session %q has no research overview: %w", sessionID, fs.ErrNotExist)
	}
	return o, err
}

// Checkpoints returns every checkpoint of the session, in the order of their numbers. A
// session without checkpoints yields an empty list and no error.
func (s *Store) Checkpoints(sessionID string) ([]session.Snapshot, error) {
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(dir, checkpointsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var seqs []int
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !allDigits(name) {
			continue
		}
		if n, err := strconv.Atoi(name); err == nil {
			seqs = append(seqs, n)
		}
	}
	// Sort numbers, not names: past 999999 the padding no longer orders them.
	slices.Sort(seqs)
	snaps := make([]session.Snapshot, 0, len(seqs))
	for _, n := range seqs {
		snap, err := s.Checkpoint(sessionID, n)
		if err != nil {
			return nil, err
		}
		snaps = append(snaps, snap)
	}
	return snaps, nil
}

// reservedNames are the names of the store's own records in a session directory, which a
// report artefact must not replace.
var reservedNames = []string{
	hypothesesDir, reviewsDir, turnsDir, checkpointsDir, eventsFile,
	planFile, debatesDir, metaReviewsDir, overviewFile, ArchiveFile,
}

// PutFile writes a report artefact (report.json, elo.svg, ...) into the session's
// directory, replacing any earlier version, and returns its absolute path. name must be
// a plain file name: no directory, not hidden, and not one of the store's own records.
func (s *Store) PutFile(sessionID, name string, data []byte) (path string, err error) {
	switch {
	case name == "" || name == "." || name == "..":
		return "", fmt.Errorf("store: file name %q is not a file name; give one such as report.json", name)
	case strings.ContainsAny(name, `/\`+"\x00") || filepath.Base(name) != name:
		return "", fmt.Errorf("store: file name %q holds a path separator; give a plain file name such as report.json", name)
	case strings.HasPrefix(name, "."):
		return "", fmt.Errorf("store: file name %q starts with a dot; report files are not hidden", name)
	case len(name) > maxName:
		return "", fmt.Errorf("store: file name %.40q... is %d bytes; at most %d", name, len(name), maxName)
	case slices.Contains(reservedNames, name):
		return "", fmt.Errorf("store: %q is the store's own record; choose another name for a report file", name)
	}
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return "", err
	}
	path = filepath.Join(dir, name)
	if err := writeFile(path, data, false); err != nil {
		return "", err
	}
	return path, nil
}
