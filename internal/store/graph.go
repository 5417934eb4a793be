package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// The session graph (see internal/lineage) in the store. A session that continues or
// forks another gets its own directory, holding links to the texts it inherited; a
// subagent's result is imported into its parent; a finished session may be archived.

// ArchiveFile is the archive record in a session's directory (see Archive).
const ArchiveFile = "archived.json"

// link makes a hard link; tests replace it to take the copying path.
var link = os.Link

// Branch prepares session dst to start from checkpoint seq of session src (0: src's
// latest) and returns that checkpoint. dst receives the texts its model turns read under
// its own id: every hypothesis the checkpoint ranks, every review of those hypotheses,
// the research plan, the meta-reviews of rounds up to the checkpoint's latest, and the
// debates between those hypotheses. Turns, checkpoints, the event log, the overview and
// the report are not copied: dst makes its own.
//
// Every record is immutable once written (a debate is replaced, never edited in place),
// so a hard link is a free copy; where linking fails (dst on another file system) the
// file is copied through the store's atomic write. A record dst already holds is kept, so
// Branch may be retried after a crash. A text src itself lacks is not copied either: dst
// is exactly as complete as src.
//
// A missing checkpoint gives an error that wraps fs.ErrNotExist and names src and seq.
//
// With only, Branch copies just those hypotheses (and their reviews), the plan and the
// meta-reviews: what a subagent working on them needs, at a cost that does not grow with
// the session.
func (s *Store) Branch(src string, seq int, dst string, only ...string) (session.Snapshot, error) {
	var snap session.Snapshot
	switch {
	case seq < 0:
		return snap, fmt.Errorf("store: checkpoint number %d is negative; give a checkpoint of %q, or 0 for its latest", seq, src)
	case src == dst:
		return snap, fmt.Errorf("store: session %q cannot branch from itself; give the new session another id", src)
	}
	from, err := s.sessionDir(src)
	if err != nil {
		return snap, err
	}
	to, err := s.sessionDir(dst)
	if err != nil {
		return snap, err
	}
	if seq == 0 {
		snap, err = s.LatestCheckpoint(src)
	} else {
		snap, err = s.Checkpoint(src, seq)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if seq == 0 {
			return snap, fmt.Errorf("store: session %q has no checkpoint yet to branch %q from (checkpoint 0 means the latest): %w", src, dst, fs.ErrNotExist)
		}
		return snap, fmt.Errorf("store: session %q has no checkpoint %d to branch %q from: %w", src, seq, dst, fs.ErrNotExist)
	}
	if err != nil {
		return snap, err
	}

	// Collect the records as paths relative to a session directory: escaping depends on
	// the id only, so a record has the same relative path in src and in dst.
	var rels []string
	ids := make(map[string]bool, len(snap.Hypotheses))
	for _, e := range snap.Hypotheses {
		if only != nil && !slices.Contains(only, e.ID) {
			continue
		}
		ids[e.ID] = true
		h, err := escape("hypothesis id", e.ID)
		if err != nil {
			return snap, err
		}
		rels = append(rels, filepath.Join(hypothesesDir, h+".json"))
		reviews, err := records(from, filepath.Join(reviewsDir, h))
		if err != nil {
			return snap, err
		}
		rels = append(rels, reviews...)
	}
	rels = append(rels, planFile)
	metas, err := records(from, metaReviewsDir)
	if err != nil {
		return snap, err
	}
	for _, rel := range metas {
		// Rounds, not names: past 9999 the padding no longer orders them.
		round, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(rel), ".json"))
		if err == nil && round <= snap.Progress.MetaReviews {
			rels = append(rels, rel)
		}
	}
	// A debate's id is "debate-A-B", but ids may hold '-': read who debated instead.
	var debates []string
	if only == nil {
		debates, err = records(from, debatesDir)
		if err != nil {
			return snap, err
		}
	}
	for _, rel := range debates {
		var d research.Debate
		if err := getJSON(filepath.Join(from, rel), &d); err != nil {
			return snap, err
		}
		if ids[d.A] && ids[d.B] {
			rels = append(rels, rel)
		}
	}

	dirs := make(map[string]bool) // directories that gained a link, to sync once each
	for _, rel := range rels {
		linked, err := linkOrCopy(filepath.Join(from, rel), filepath.Join(to, rel))
		if err != nil {
			return snap, fmt.Errorf("store: branch %q from checkpoint %d of %q: %w", dst, snap.Seq, src, err)
		}
		if linked {
			dirs[filepath.Dir(filepath.Join(to, rel))] = true
		}
	}
	for dir := range dirs {
		if err := syncDir(dir); err != nil {
			return snap, err
		}
	}
	return snap, nil
}

// records lists the record files of one directory of a session, as paths relative to
// the session's directory. Temporary files are skipped; a missing directory has none.
func records(sessionDir, sub string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(sessionDir, sub))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var rels []string
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), tempPrefix) || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		rels = append(rels, filepath.Join(sub, e.Name()))
	}
	return rels, nil
}

// linkOrCopy gives path to the record at from: a hard link, or a copy written atomically
// where linking fails. An existing path is kept, and a missing from is skipped. linked
// says a link was made, whose directory the caller must sync to make it durable.
func linkOrCopy(from, to string) (linked bool, err error) {
	if _, err := os.Lstat(to); err == nil {
		return false, nil // an earlier attempt made it, or dst wrote its own: keep it
	}
	if err := mkdirs(filepath.Dir(to)); err != nil {
		return false, err
	}
	err = link(from, to)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil // a concurrent attempt was first
	}
	// Another file system, or one without hard links: copy. This also tells a missing
	// source apart from a failed link.
	data, err := os.ReadFile(from)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return false, writeFile(to, data, true)
}

// ImportHypothesis copies hypothesis srcID of session src into session dst as dstID: a
// subagent's result entering its parent's tournament. The copy's ID is dstID, and its
// Parents become parents unless that is nil. Like PutHypothesis it writes once: if dst
// already holds dstID, that hypothesis is kept. It returns the hypothesis dst holds.
func (s *Store) ImportHypothesis(src, srcID, dst, dstID string, parents []string) (research.Hypothesis, error) {
	h, err := s.Hypothesis(src, srcID)
	if err != nil {
		return research.Hypothesis{}, err
	}
	h.ID = dstID
	if parents != nil {
		h.Parents = parents
	}
	if err := s.PutHypothesis(dst, h); err != nil {
		return research.Hypothesis{}, err
	}
	return s.Hypothesis(dst, dstID)
}

// Archived is a session's archive record.
type Archived struct {
	Time   string `json:"time"` // RFC 3339, UTC
	Reason string `json:"reason,omitempty"`
}

// NotFinishedError is Archive's refusal of a session that has not finished.
type NotFinishedError struct {
	SessionID  string
	Checkpoint int
	State      session.State
}

func (e *NotFinishedError) Error() string {
	return fmt.Sprintf("store: session %q has not finished (its latest checkpoint, %d, is %s); terminate it first, then archive it",
		e.SessionID, e.Checkpoint, e.State)
}

// Archive marks a finished session archived: a soft delete, which writes ArchiveFile in
// the session's directory and nothing else, so everything stays readable. It refuses a
// session without a checkpoint (the error wraps fs.ErrNotExist) and one whose latest
// checkpoint is not Completed (a *NotFinishedError). Archiving twice keeps the first
// record and returns nil.
func (s *Store) Archive(sessionID string, a Archived) error {
	if a.Time == "" {
		return errors.New("store: the archive record has no time; stamp it with session.Stamp")
	}
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return err
	}
	if _, done, err := s.Archived(sessionID); err != nil || done {
		return err
	}
	snap, err := s.LatestCheckpoint(sessionID)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: session %q has no checkpoint, so it never ran or never finished; only a completed session can be archived: %w", sessionID, fs.ErrNotExist)
	}
	if err != nil {
		return err
	}
	if snap.State != session.Completed {
		return &NotFinishedError{SessionID: sessionID, Checkpoint: snap.Seq, State: snap.State}
	}
	return putJSON(filepath.Join(dir, ArchiveFile), a, true)
}

// Archived returns a session's archive record; found is false, with a nil error, if the
// session is not archived.
func (s *Store) Archived(sessionID string) (a Archived, found bool, err error) {
	dir, err := s.sessionDir(sessionID)
	if err != nil {
		return a, false, err
	}
	if err := getJSON(filepath.Join(dir, ArchiveFile), &a); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Archived{}, false, nil
		}
		return Archived{}, false, err
	}
	return a, true, nil
}
