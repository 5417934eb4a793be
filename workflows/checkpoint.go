package workflows

// Checkpoints: the snapshot a checkpoint writes, whole or as the changes since the last
// one, the events that go with it, and the log's tail once the session has ended.

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/session"
)

// markSaved notes that the latest checkpoint holds the session as it is now.
func (s *supervisor) markSaved() {
	s.saved = slices.Clone(s.Entries)
	s.forget()
	s.savedEdges = len(s.Edges)
	s.newPairs = nil
}

// versionFinalLog gates logTail for histories recorded before it.
const versionFinalLog = "final-log"

// logTail stores the events logged after the final checkpoint (its own record, the
// report, the completion), so the store's event log holds the whole session.
func (s *supervisor) logTail(ctx workflow.Context) {
	upTo := len(s.Events)
	if s.Persisted == upTo {
		return
	}
	lctx := workflow.WithActivityOptions(ctx, storeOptions("log the session's last events"))
	if err := workflow.ExecuteActivity(lctx, a.Log, activities.LogInput{SessionID: s.id, Events: s.Events[s.Persisted:upTo]}).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("the session's last events are not in its store log", "error", err)
		return
	}
	s.Persisted = upTo
}

// versionSerialCheckpoints gates the wait of a checkpoint for one that is being written.
// Before it, a round's checkpoint that met one the scientist asked for (a confirmed
// refine-goal, written by a turn that finished after its step moved on) failed with
// "session is checkpointing", and the session suspended as if the store had failed.
const versionSerialCheckpoints = "serial-checkpoints"

// checkpoint writes a snapshot of the session to the store, after the one being written,
// if another coroutine is writing one.
func (s *supervisor) checkpoint(ctx workflow.Context, why string) error {
	if s.Life.State == session.Checkpointing && since(ctx, versionSerialCheckpoints) {
		_ = workflow.Await(ctx, func() bool { return s.Life.State != session.Checkpointing })
	}
	s.CheckpointWanted = false
	if err := s.Life.BeginCheckpoint(); err != nil {
		return err
	}
	seq := s.Checkpoints + 1
	snap := s.snapshot(ctx, seq)
	if s.StopReason != "" {
		// The final checkpoint is the record of the finished session the report is made from.
		snap.State = session.Completed
	}
	upTo := len(s.Events)
	in := activities.CheckpointInput{Snapshot: snap, Events: s.Events[s.Persisted:upTo]}
	if s.incremental() {
		// Incremental: only what changed since the last checkpoint; the store merges. A
		// restored session's first one builds on the checkpoint it started from.
		in.Base = s.Checkpoints
		if s.ledger {
			base := s.base()
			in.Base = base.Seq
			if base.Session != s.id {
				in.BaseSession = base.Session
			}
		}
		in.Snapshot.Hypotheses = s.changed()
		in.Snapshot.Played = slices.Sorted(slices.Values(s.newPairs))
		in.Snapshot.Edges = s.Edges[s.savedEdges:]
		in.Snapshot.Results = s.Results
	} else {
		in.Snapshot.Hypotheses = s.ranked()
		in.Snapshot.Played = workflow.DeterministicKeys(s.Played)
		in.Snapshot.Edges = s.Edges
		in.Snapshot.Results = s.Results // since the ledger, every result until the first checkpoint
	}
	cctx := workflow.WithActivityOptions(ctx, storeOptions(fmt.Sprintf("checkpoint %d (%s)", seq, why)))
	var path string
	err := workflow.ExecuteActivity(cctx, a.Checkpoint, in).Get(ctx, &path)
	if endErr := s.Life.EndCheckpoint(); endErr != nil {
		return endErr
	}
	if err != nil {
		s.log(session.Event{Kind: session.EventCheckpoint, Detail: fmt.Sprintf("checkpoint %d (%s) failed: %s", seq, why, errorText(err))})
		return failure{err}
	}
	s.Persisted = upTo
	s.trimEvents(eventsKept)
	s.markSaved()
	s.Checkpoints = seq
	s.storeFlaps, s.autoResumed = 0, false // the store took a whole checkpoint: it works
	s.CheckpointPath = path
	s.LastCheckpoint = session.Stamp(workflow.Now(ctx))
	s.LastCheckpointAt = workflow.Now(ctx)
	s.log(session.Event{Kind: session.EventCheckpoint, Detail: fmt.Sprintf("checkpoint %d (%s) written to %s", seq, why, path)})
	return nil
}

// snapshot is the session as a checkpoint records it, without the lists that grow with
// it (hypotheses, pairs, similarities): checkpoint adds them whole or as changes.
func (s *supervisor) snapshot(ctx workflow.Context, seq int) session.Snapshot {
	state := s.Life.Effective()
	p := s.progress(ctx)
	p.State, p.Checkpoints, p.LastCheckpoint = state, seq, session.Stamp(workflow.Now(ctx))
	return session.Snapshot{
		SessionID:   s.id,
		Seq:         seq,
		Time:        session.Stamp(workflow.Now(ctx)),
		State:       state,
		StopReason:  s.StopReason,
		ScientistID: s.req.ScientistID,
		Goal:        s.Goal,
		Refinements: s.Refinements,
		Config:      s.req.Config,
		Progress:    p,
		Usage:       s.Usage,
		SpentBy:     s.spentBy(),
		StartedAt:   session.Stamp(s.StartedAt),

		Lineage:       &s.lineage,
		Plan:          s.Plan,
		Focus:         s.Focus,
		Feedback:      s.Feedback,
		MetaCritiques: s.MetaCritiques,
		Rating:        s.Rating,
		NextID:        s.NextID,
		ReviewsBy:     s.ReviewsBy,
		Messages:      s.Messages,
		Conversation:  s.Conversation,
	}
}

// checkpointDue says whether the session has researched for its checkpoint interval
// since the last checkpoint (or its start).
func (s *supervisor) checkpointDue(ctx workflow.Context) bool {
	since := s.LastCheckpointAt
	if since.IsZero() {
		since = s.StartedAt
	}
	return workflow.Now(ctx).Sub(since) >= time.Duration(s.req.Config.CheckpointInterval)
}

// trimEvents forgets the oldest events beyond keep that the store's log already holds,
// so memory and the continue-as-new input stay bounded however long the session runs.
func (s *supervisor) trimEvents(keep int) {
	drop := s.Persisted - keep
	if drop <= 0 {
		return
	}
	s.Events = slices.Clone(s.Events[drop:])
	s.Persisted -= drop
	s.EventBase += drop
}
