package workflows

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/session"
)

// The session graph: where a session sits (its lineage), how a continued or forked session
// starts from its parent's checkpoint, how a suspended session hands its conversation over
// to the session that continues it, and how a long session continues as new.

// Continue-as-new: a run hands over to the next when Temporal suggests it, or at these
// sizes, well inside Temporal's limits (51,200 events, 50 MB) whatever the server suggests.
const (
	continueAsNewEvents = 10_000
	continueAsNewBytes  = 10 << 20
)

// eventsKept is how many of the session's latest events a run keeps in memory for the
// history query, once they are in the store's event log; earlier ones are read from there.
// eventsCarried is how many of them continue-as-new passes on.
const (
	eventsKept    = 500
	eventsCarried = 200
)

// handOverTimeout bounds how long a continued session waits for its suspended parent to
// finish (an overview turn, the final checkpoint and the report).
const handOverTimeout = time.Hour

// HandOverRequest is the HandOver signal's argument.
type HandOverRequest struct {
	Successor string `json:"successor"`
}

// HandedOverNotice is the HandedOver signal's argument: the final checkpoint to start from.
type HandedOverNotice struct {
	Session    string `json:"session"`
	Checkpoint int    `json:"checkpoint"`
}

// placeInGraph checks the session's lineage and shows it: search attributes for
// `temporal workflow list --query`, and the descriptor in the memo, both set once.
func (s *supervisor) placeInGraph(ctx workflow.Context) error {
	if err := s.lineage.Validate(); err != nil {
		return err
	}
	return showLineage(ctx, s.lineage)
}

// restore starts a continued or forked session from its parent's checkpoint: the parent
// hands over first if it is still suspended, then the store gives this session a copy of
// the texts, and the supervisor takes the ranking, the plan and the steering from the
// checkpoint. Counters start again: this is a new session with its own limits.
func (s *supervisor) restore(ctx workflow.Context) error {
	d := s.lineage
	from := d.Checkpoint
	if d.Relation == lineage.Continue {
		seq, err := s.awaitHandOver(ctx, d.Parent)
		if err != nil {
			return err
		}
		from = seq
	}
	what := "its latest checkpoint"
	if from > 0 {
		what = "checkpoint " + strconv.Itoa(from)
	}
	var snap session.Snapshot
	actx := workflow.WithActivityOptions(ctx, storeOptions(fmt.Sprintf("copy the context of %s from %s", d.Parent, what)))
	if err := workflow.ExecuteActivity(actx, a.Branch, activities.BranchInput{From: d.Parent, Checkpoint: from, To: s.id, Lean: s.ledger}).Get(ctx, &snap); err != nil {
		return fmt.Errorf("cannot start from %s of session %s: %s", what, d.Parent, errorText(err))
	}
	if s.ledger {
		// The ranking comes a page at a time; the pairs and graph stay in the parent's
		// checkpoint, which this session builds on until it writes its own.
		entries, err := s.readRanking(ctx, activities.CheckpointRef{Session: d.Parent, Seq: snap.Seq})
		if err != nil {
			return fmt.Errorf("cannot read the hypotheses of checkpoint %d of session %s: %s", snap.Seq, d.Parent, errorText(err))
		}
		snap.Hypotheses = entries
	}
	s.startFrom(snap, since(ctx, versionGivenZeros))
	if s.canFit && (snap.Rating == session.RatingFitted || snap.Progress.MatchesPlayed == 0) {
		// Fitting needs every result: a parent that updated Elo kept none.
		s.Rating = session.RatingFitted
	}
	s.lineage.Checkpoint = snap.Seq
	if err := showLineage(ctx, s.lineage); err != nil {
		return err
	}
	s.note(fmt.Sprintf("%s from %s at checkpoint %d: %d hypotheses, %d matches played", verb(d.Relation), d.Parent, snap.Seq, len(s.Entries), snap.Progress.MatchesPlayed))
	if s.ledger {
		s.markSaved()
	}
	return nil
}

func verb(r lineage.Relation) string {
	if r == lineage.Continue {
		return "continued"
	}
	return "forked"
}

// versionGivenZeros: a zero the request gives (a key present in its config, a flag the
// scientist typed) goes over the checkpoint's value, so "token_budget": 0 lifts the
// parent's cap (research.Config.Over). Before, a zero read as not given.
const versionGivenZeros = "given-config-zeros"

// startFrom takes a checkpoint's ranking, plan and steering. What the request sets (a
// new goal, a larger max_hypotheses, no token budget) goes over what the checkpoint had.
func (s *supervisor) startFrom(snap session.Snapshot, givenZeros bool) {
	over := s.raw.Config
	if !givenZeros {
		over = over.Plain()
	}
	s.req.Config = over.Over(snap.Config)
	if s.raw.ScientistID == "" {
		s.req.ScientistID = snap.ScientistID
	}
	s.req = s.req.WithDefaults()
	s.Goal, s.Refinements = snap.Goal, slices.Clone(snap.Refinements)
	if g := strings.TrimSpace(s.raw.ResearchGoal); g != "" && g != snap.Goal {
		s.Goal = g
		s.Refinements = append(s.Refinements, session.Refinement{Time: session.Stamp(s.now()), Goal: g})
	}
	s.req.ResearchGoal = s.Goal
	s.Plan, s.Focus, s.Feedback = snap.Plan, snap.Focus, snap.Feedback
	s.MetaRound, s.MetaCritiques = snap.Progress.MetaReviews, snap.MetaCritiques
	// Creation order: the order ids were given.
	s.Entries = slices.Clone(snap.Hypotheses)
	slices.SortFunc(s.Entries, func(x, y session.Entry) int { return strings.Compare(x.ID, y.ID) })
	s.NextID = snap.NextID
	for _, e := range s.Entries {
		var n int
		if _, err := fmt.Sscanf(e.ID, "h-%d", &n); err == nil {
			s.NextID = max(s.NextID, n)
		}
	}
	for _, p := range snap.Played {
		s.Played[p] = true
	}
	s.Edges = slices.Clone(snap.Edges)
	for _, id := range workflow.DeterministicKeys(snap.ReviewsBy) {
		s.ReviewsBy[id] = snap.ReviewsBy[id]
	}
	s.reindex()
}

// awaitHandOver asks a suspended parent to end because this session continues it, and
// waits for its final checkpoint. A parent that has already finished cannot be signalled:
// its latest checkpoint is its final one (0).
func (s *supervisor) awaitHandOver(ctx workflow.Context, parent string) (int, error) {
	if err := workflow.SignalExternalWorkflow(ctx, parent, "", HandOver, HandOverRequest{Successor: s.id}).Get(ctx, nil); err != nil {
		return 0, nil
	}
	s.note("asked " + parent + " to hand over: it finishes, then this session starts from its final checkpoint")
	var notice HandedOverNotice
	got := false
	tctx, cancel := workflow.WithCancel(ctx)
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, HandedOver), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, &notice)
		got = true
	})
	sel.AddFuture(workflow.NewTimer(tctx, handOverTimeout), func(workflow.Future) {})
	sel.Select(ctx)
	cancel()
	if !got {
		return 0, fmt.Errorf("session %s did not hand over within %s; see why with: starter status %s", parent, handOverTimeout, parent)
	}
	return notice.Checkpoint, nil
}

// handOver is the parent's side: a session continues this one, so it ends like a
// terminate, and tells the successor its final checkpoint when it has written it.
func (s *supervisor) handOver(ctx workflow.Context, req HandOverRequest) {
	if req.Successor == "" {
		s.logCommand(session.Command{Name: HandOver}, "signal", false, "hand-over: no successor named")
		return
	}
	s.Successor = req.Successor
	reason := "continued as " + req.Successor
	if probe := s.Life; probe.Terminate() != nil {
		// Already ending: the successor hears from finish all the same.
		s.logCommand(session.Command{Name: HandOver}, "signal", true, reason+" (the session was already ending)")
		return
	}
	s.TerminateReason = reason
	s.move(ctx, Terminate, (*session.Lifecycle).Terminate, reason)
	s.logCommand(session.Command{Name: HandOver}, "signal", true, reason)
}

// tellSuccessor answers a successor's hand-over with the final checkpoint.
func (s *supervisor) tellSuccessor(ctx workflow.Context) {
	if s.Successor == "" {
		return
	}
	notice := HandedOverNotice{Session: s.id, Checkpoint: s.Checkpoints}
	if err := workflow.SignalExternalWorkflow(ctx, s.Successor, "", HandedOver, notice).Get(ctx, nil); err != nil {
		s.note("could not tell " + s.Successor + " the final checkpoint: " + err.Error())
	}
}

// runFull says whether this run's history is long enough to hand over to a new run.
func (s *supervisor) runFull(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= continueAsNewEvents ||
		info.GetCurrentHistorySize() >= continueAsNewBytes
}

// continueAsNew ends this run and starts the next with the session's state: a checkpoint
// first (so the store has every event), then every command in flight is applied, so a
// signal sent across the boundary is carried, not lost. Since the ledger, the next run
// reads its hypotheses, pairs and graph from that checkpoint, so without it the session
// suspends instead, and continueAsNew returns nil.
func (s *supervisor) continueAsNew(ctx workflow.Context) error {
	s.awaitSubagents(ctx)
	err := s.checkpoint(ctx, "before continuing as new")
	s.Fresh = err == nil
	switch {
	case err != nil && s.ledger:
		if !s.storeFault(ctx, err) {
			s.suspendBecause(ctx, "the checkpoint before continuing as new failed: "+err.Error()+". Fix the session store, then resume")
		}
		return nil
	case err != nil:
		s.note("continuing as new without a fresh checkpoint: " + err.Error())
	}
	s.drainSignals(ctx)
	s.Runs++
	if s.lab {
		s.HistoryBase += int64(workflow.GetInfo(ctx).GetCurrentHistoryLength()) + 1
	}
	s.note(fmt.Sprintf("continuing as new: run %d of the session starts with %d hypotheses", s.Runs+1, len(s.Entries)))
	s.trimEvents(eventsCarried)
	s.req.Lineage = &s.lineage // with the checkpoint a continued or forked session started from
	if !s.ledger {
		return workflow.NewContinueAsNewError(ctx, ResearchSession, s.req, &s.Carried)
	}
	s.forgetFinished()
	return workflow.NewContinueAsNewError(ctx, ResearchSession, s.req, s.carryOver())
}

// drainSignals applies every signal already received, and waits for update handlers to
// finish, until there is none left: what is left in a channel when the run ends is lost.
func (s *supervisor) drainSignals(ctx workflow.Context) {
	for {
		_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
		drained := false
		for _, sig := range s.signals {
			var arg converter.RawValue
			for sig.ch.ReceiveAsync(&arg) {
				sig.handle(ctx, arg)
				drained = true
			}
		}
		if !drained {
			return
		}
	}
}

func sessionMessageSent(to, text string) session.Event {
	return session.Event{Kind: session.EventMessage, Session: to, Detail: "sent to " + to + ": " + text}
}
