package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// The session graph (see internal/lineage) in the store. A session that continues or
// forks another gets its own records, sharing the texts it inherited; a
// subagent's result is imported into its parent; a finished session may be archived.

// ArchiveFile is the archive record in a session's directory (see Archive).
const ArchiveFile = "archived.json"

// Branch prepares session dst to start from checkpoint seq of session src (0: src's
// latest) and returns that checkpoint. dst receives the texts its model turns read under
// its own id: every hypothesis the checkpoint ranks, every review of those hypotheses,
// the research plan, the meta-reviews of rounds up to the checkpoint's latest (only the
// latest for a subagent's branch, which names its hypotheses in only), and the debates
// between those hypotheses. Turns, checkpoints, the event log, the overview and
// the report are not copied: dst makes its own.
//
// Every record is immutable once written (a debate is replaced, never edited in place),
// so the backend may share rather than copy (a Dir makes hard links). A record dst
// already holds is kept, so Branch may be retried after a crash. A text src itself lacks
// is not copied either: dst is exactly as complete as src.
//
// A missing checkpoint gives an error that wraps fs.ErrNotExist and names src and seq.
//
// With only, Branch copies just those hypotheses (and their reviews), the plan and the
// meta-reviews: what a subagent working on them needs, at a cost that does not grow with
// the session.
func (s *Store) Branch(ctx context.Context, src string, seq int, dst string, only ...string) (session.Snapshot, error) {
	var snap session.Snapshot
	switch {
	case seq < 0:
		return snap, fmt.Errorf("store: checkpoint number %d is negative; give a checkpoint of %q, or 0 for its latest", seq, src)
	case src == dst:
		return snap, fmt.Errorf("store: session %q cannot branch from itself; give the new session another id", src)
	}
	if _, err := escape("session id", dst); err != nil {
		return snap, err
	}
	snap, err := s.branchPoint(ctx, src, seq, dst)
	if err != nil {
		return snap, err
	}
	keys, err := s.branchKeys(ctx, src, snap, only)
	if err != nil {
		return snap, err
	}
	if err := s.copyRecords(ctx, src, dst, keys); err != nil {
		return snap, fmt.Errorf("store: branch %q from checkpoint %d of %q: %w", dst, snap.Seq, src, err)
	}
	return snap, nil
}

// branchPoint is the checkpoint seq of src (0 for its latest) that dst branches from.
func (s *Store) branchPoint(ctx context.Context, src string, seq int, dst string) (session.Snapshot, error) {
	var snap session.Snapshot
	var err error
	if seq == 0 {
		snap, err = s.LatestCheckpoint(ctx, src)
	} else {
		snap, err = s.Checkpoint(ctx, src, seq)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if seq == 0 {
			return snap, fmt.Errorf("store: session %q has no checkpoint yet to branch %q from (checkpoint 0 means the latest): %w", src, dst, errNoRecord)
		}
		return snap, fmt.Errorf("store: session %q has no checkpoint %d to branch %q from: %w", src, seq, dst, errNoRecord)
	}
	return snap, err
}

// branchKeys are the keys of the records of src a branch at snap copies: those of every
// hypothesis, or of only those, with their reviews, the plan, the meta-reviews, the audit
// trail they cite and the debates between them.
func (s *Store) branchKeys(ctx context.Context, src string, snap session.Snapshot, only []string) ([]string, error) {
	// Keys depend on the ids only, so a record has the same key in src and in dst.
	var keys []string
	ids := make(map[string]bool, len(snap.Hypotheses))
	for _, e := range snap.Hypotheses {
		if only != nil && !slices.Contains(only, e.ID) {
			continue
		}
		ids[e.ID] = true
		h, err := key(src, hypothesesDir, ".json", "hypothesis id", e.ID)
		if err != nil {
			return nil, err
		}
		keys = append(keys, h)
		dir, _ := key(src, reviewsDir, "", "hypothesis id", e.ID)
		reviews, err := s.b.List(ctx, src, dir+"/")
		if err != nil {
			return nil, err
		}
		keys = append(keys, reviews...)
	}
	keys = append(keys, planFile)
	metas, err := s.b.List(ctx, src, metaReviewsDir+"/")
	if err != nil {
		return nil, err
	}
	for _, k := range metas {
		// Rounds, not names: past 9999 the padding no longer orders them. A subagent's
		// prompts carry the latest meta-review only, so it gets that one: a session of
		// a thousand rounds forks hundreds of subagents, and copying every meta-review
		// into each would grow the store with rounds × subagents.
		round, err := strconv.Atoi(strings.TrimSuffix(path.Base(k), ".json"))
		if err == nil && round <= snap.Progress.MetaReviews && (only == nil || round == snap.Progress.MetaReviews) {
			keys = append(keys, k)
		}
	}
	trail, err := s.trailKeys(ctx, src, ids, only == nil)
	if err != nil {
		return nil, err
	}
	keys = append(keys, trail...)
	// A debate's id is "debate-A-B", but ids may hold '-': read who debated instead.
	var debates []string
	if only == nil {
		if debates, err = s.b.List(ctx, src, debatesDir+"/"); err != nil {
			return nil, err
		}
	}
	for _, k := range debates {
		var d research.Debate
		if err := s.get(ctx, src, k, "debate", &d); err != nil {
			return nil, err
		}
		if ids[d.A] && ids[d.B] {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// trailKeys are the keys of src's audit trail a branch copies, so the references' checks
// and the report find it: all of it for a whole branch, and for a subagent what its
// hypotheses (ids) cite.
func (s *Store) trailKeys(ctx context.Context, src string, ids map[string]bool, whole bool) ([]string, error) {
	if whole {
		return s.b.List(ctx, src, toolsDir+"/")
	}
	var picked []string
	for id := range ids {
		picked = append(picked, id)
	}
	slices.Sort(picked)
	hs, err := s.Hypotheses(ctx, src, picked)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var keys []string
	for _, id := range picked {
		keys = append(keys, sourceKeys(hs[id])...)
	}
	return keys, nil
}

// ImportHypothesis copies hypothesis srcID of session src into session dst as dstID: a
// subagent's result entering its parent's tournament. The copy's ID is dstID, and its
// Parents become parents unless that is nil. Like PutHypothesis it writes once: if dst
// already holds dstID, that hypothesis is kept. It returns the hypothesis dst holds.
func (s *Store) ImportHypothesis(ctx context.Context, src, srcID, dst, dstID string, parents []string) (research.Hypothesis, error) {
	h, err := s.Hypothesis(ctx, src, srcID)
	if err != nil {
		return research.Hypothesis{}, err
	}
	h.ID = dstID
	if parents != nil {
		h.Parents = parents
	}
	// The sources it cites come along, before it does: a hypothesis in dst finds them.
	if keys := sourceKeys(h); len(keys) > 0 {
		if err := s.copyRecords(ctx, src, dst, keys); err != nil {
			return research.Hypothesis{}, fmt.Errorf("store: import %s of %q into %q: %w", srcID, src, dst, err)
		}
	}
	if err := s.PutHypothesis(ctx, dst, h); err != nil {
		return research.Hypothesis{}, err
	}
	return s.Hypothesis(ctx, dst, dstID)
}

// sourceKeys are the keys of the audit records a hypothesis' references name.
func sourceKeys(h research.Hypothesis) []string {
	var keys []string
	for _, r := range h.References {
		if !digestRE.MatchString(r.Source) {
			continue
		}
		k := toolsDir + "/" + r.Source + ".json"
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
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
// the session and marks its index row, and nothing else, so everything stays readable. It
// refuses a session without a checkpoint (the error wraps fs.ErrNotExist) and one whose
// latest checkpoint is not Completed (a *NotFinishedError). Archiving twice keeps the
// first record and returns nil.
func (s *Store) Archive(ctx context.Context, sessionID string, a Archived) error {
	if a.Time == "" {
		return errors.New("store: the archive record has no time; stamp it with session.Stamp")
	}
	if _, done, err := s.Archived(ctx, sessionID); err != nil || done {
		return err
	}
	snap, err := s.LatestCheckpoint(ctx, sessionID)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: session %q has no checkpoint, so it never ran or never finished; only a completed session can be archived: %w", sessionID, errNoRecord)
	}
	if err != nil {
		return err
	}
	if snap.State != session.Completed {
		return &NotFinishedError{SessionID: sessionID, Checkpoint: snap.Seq, State: snap.State}
	}
	data, err := encode(ArchiveFile, a)
	if err != nil {
		return err
	}
	row := summaryOf(snap)
	row.Archived = a.Time
	return s.b.Commit(ctx, Commit{SessionID: sessionID, Key: ArchiveFile, Data: data, Index: &row})
}

// Archived returns a session's archive record; found is false, with a nil error, if the
// session is not archived.
func (s *Store) Archived(ctx context.Context, sessionID string) (a Archived, found bool, err error) {
	if found, err := s.find(ctx, sessionID, ArchiveFile, "archive record", &a); !found {
		return Archived{}, false, err
	}
	return a, true, nil
}
