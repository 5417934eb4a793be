package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
)

// The session graph's activities (see internal/lineage): a session that continues or
// forks another starts from one of its checkpoints, a subagent's result enters its
// parent's tournament, and a finished session may be archived. None calls a model.

// Application error types of the session graph.
const (
	// ErrNoCheckpoint: the session to start from has no such checkpoint (or none at all).
	// Checkpoints are written by the session itself, so a retry cannot make one appear.
	ErrNoCheckpoint = "NoCheckpoint"
	// ErrNotFinished: only a completed session may be archived; terminate it first.
	ErrNotFinished = "NotFinished"
)

// BranchInput names the checkpoint a new session starts from.
type BranchInput struct {
	From       string `json:"from"`       // the session continued or forked
	Checkpoint int    `json:"checkpoint"` // its checkpoint; 0: the latest
	To         string `json:"to"`         // the new session
	// Only, for a subagent, names the hypotheses it works on: only their texts are copied,
	// and the snapshot comes back without the rest of the ranking, pairs and similarities,
	// so neither the copy nor the answer grows with the session.
	Only []string `json:"only,omitempty"`
	// Lean leaves the hypotheses, pairs and similarities out of the answer: the new session
	// reads the ranking a page at a time (Ranking) and the rest from the checkpoint.
	Lean bool `json:"lean,omitempty"`
}

// Branch gives session in.To the texts of checkpoint in.Checkpoint of session in.From
// (hypotheses, their reviews, the plan, meta-reviews, debates) and returns that
// checkpoint, from which the new session restores its state. Retrying is safe.
func (a *Activities) Branch(ctx context.Context, in BranchInput) (session.Snapshot, error) {
	switch {
	case in.From == "" || in.To == "":
		return session.Snapshot{}, invalid("a branch needs the session to start from and the new session's id; got %q and %q", in.From, in.To)
	case in.From == in.To:
		return session.Snapshot{}, invalid("session %q cannot continue or fork itself; give the new session another id", in.From)
	case in.Checkpoint < 0:
		return session.Snapshot{}, invalid("checkpoint %d does not exist; give a checkpoint of %q, or 0 for its latest", in.Checkpoint, in.From)
	}
	snap, err := a.Store.Branch(ctx, in.From, in.Checkpoint, in.To, in.Only...)
	if errors.Is(err, fs.ErrNotExist) {
		return snap, temporal.NewNonRetryableApplicationError(a.noCheckpoint(ctx, in.From, in.Checkpoint), ErrNoCheckpoint, err)
	}
	if in.Only != nil {
		snap.Hypotheses = slices.DeleteFunc(snap.Hypotheses, func(e session.Entry) bool { return !slices.Contains(in.Only, e.ID) })
		snap.Played, snap.Edges, snap.Results, snap.ReviewsBy = nil, nil, nil, nil
	}
	if in.Lean {
		snap.Hypotheses, snap.Played, snap.Edges, snap.Results = nil, nil, nil, nil
	}
	return snap, err
}

// noCheckpoint says which checkpoints a session has, so the scientist can pick one.
func (a *Activities) noCheckpoint(ctx context.Context, sessionID string, seq int) string {
	wanted := fmt.Sprintf("checkpoint %d", seq)
	if seq == 0 {
		wanted = "checkpoint"
	}
	snaps, err := a.Store.Checkpoints(ctx, sessionID)
	switch {
	case err != nil:
		return fmt.Sprintf("session %q has no %s (its checkpoints could not be listed: %v)", sessionID, wanted, err)
	case len(snaps) == 0:
		return fmt.Sprintf("session %q has no checkpoint at all: it never ran long enough to write one, or the id is wrong", sessionID)
	case len(snaps) == 1:
		return fmt.Sprintf("session %q has no %s; its only checkpoint is %d (or give 0 for the latest)", sessionID, wanted, snaps[0].Seq)
	}
	return fmt.Sprintf("session %q has no %s; its checkpoints run from %d to %d (%d in all): give one of them, or 0 for the latest",
		sessionID, wanted, snaps[0].Seq, snaps[len(snaps)-1].Seq, len(snaps))
}

// ImportInput names a hypothesis of one session (a subagent's result) and the id it takes
// in another (the parent's tournament).
type ImportInput struct {
	From    string   `json:"from"`
	FromID  string   `json:"from_id"`
	To      string   `json:"to"`
	ToID    string   `json:"to_id"`
	Parents []string `json:"parents,omitempty"` // its lineage in To; nil keeps the source's
}

// ImportHypothesis copies a hypothesis from one session into another under a new id and
// returns its title; the workflow enters it in the tournament like any other. Written
// once: a retry finds the earlier copy. An id already taken by another hypothesis is
// refused.
func (a *Activities) ImportHypothesis(ctx context.Context, in ImportInput) (GenerateResult, error) {
	if in.From == "" || in.FromID == "" || in.To == "" || in.ToID == "" {
		return GenerateResult{}, invalid("an import needs both sessions and both hypothesis ids; got %q/%q into %q/%q", in.From, in.FromID, in.To, in.ToID)
	}
	src, err := a.Store.Hypothesis(ctx, in.From, in.FromID)
	if errors.Is(err, fs.ErrNotExist) {
		// The subagent's session holds every hypothesis it reported; a retry cannot help.
		return GenerateResult{}, invalid("cannot import: %v", err)
	}
	if err != nil {
		return GenerateResult{}, err
	}
	h, err := a.Store.ImportHypothesis(ctx, in.From, in.FromID, in.To, in.ToID, in.Parents)
	if err != nil {
		return GenerateResult{}, err
	}
	if h.Statement != src.Statement || h.Title != src.Title {
		return GenerateResult{}, invalid("hypothesis id %s of session %s is already taken by another hypothesis; import %s under a new id", in.ToID, in.To, in.FromID)
	}
	return GenerateResult{HypothesisID: h.ID, Title: h.Title}, nil
}

// ArchiveSessionInput names the session to archive.
type ArchiveSessionInput struct {
	SessionID string `json:"session_id"`
	Reason    string `json:"reason,omitempty"`
}

// Archive marks a completed session archived (a soft delete: everything stays readable)
// and returns the archive record's path. Archiving twice keeps the first record.
func (a *Activities) Archive(ctx context.Context, in ArchiveSessionInput) (string, error) {
	if in.SessionID == "" {
		return "", invalid("name the session to archive")
	}
	err := a.Store.Archive(ctx, in.SessionID, store.Archived{Time: session.Stamp(time.Now()), Reason: in.Reason})
	var unfinished *store.NotFinishedError
	switch {
	case errors.As(err, &unfinished):
		return "", temporal.NewNonRetryableApplicationError(err.Error(), ErrNotFinished, err)
	case errors.Is(err, fs.ErrNotExist):
		return "", temporal.NewNonRetryableApplicationError(err.Error(), ErrNoCheckpoint, err)
	case err != nil:
		return "", err
	}
	return a.Store.Where(in.SessionID, store.ArchiveFile), nil
}
