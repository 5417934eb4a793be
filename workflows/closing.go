package workflows

// How a session ends: finish (the scientist's last contributions, the overview, the final
// checkpoint and the report), and, for a session whose last run grew long, the closing run.

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/session"
)

// finish ends the session: the scientist's last contributions, the research overview, a
// final checkpoint, the report, and the completed state.
func (s *supervisor) finish(ctx workflow.Context) (Result, error) {
	s.Reason = s.StopReason
	if s.hasSubagents() {
		s.awaitSubagents(ctx)
	}
	// Turns still waiting for the scientist are refused their calls, and finish.
	s.closingTools = true
	s.wait(ctx, func() bool { return s.toolTurns == 0 })
	s.storeAdded(ctx)
	s.storeImports(ctx)
	s.storeManualReviews(ctx)
	s.overview(ctx)
	// The final checkpoint and the report wait out a store fault like any work: the
	// session suspends, and they are written once it resumes.
	if err := s.untilStored(ctx, s.resumed, func() error { return s.checkpoint(ctx, "final") }); err != nil {
		s.note("no report: the final checkpoint failed: " + err.Error())
	} else {
		var path string
		rctx := workflow.WithActivityOptions(ctx, s.computeOptions("write the research report"))
		report := func() error {
			return workflow.ExecuteActivity(rctx, a.Report, activities.ReportInput{SessionID: s.id, Checkpoint: s.Checkpoints, MetaReviewRound: s.MetaRound, Lab: s.labTests()}).Get(ctx, &path)
		}
		if err := s.untilStored(ctx, s.resumed, report); err != nil {
			s.note("report failed: " + errorText(err))
		} else {
			s.ReportPath = path
			s.note("report written to " + path)
		}
	}
	s.tellSuccessor(ctx)
	s.tellForeground(ctx)
	s.move(ctx, "complete", (*session.Lifecycle).Complete, s.StopReason)
	s.publish(ctx)
	if s.notifies {
		_ = s.notify(ctx, "completed", s.StopReason).Get(ctx, nil) // a webhook that is down loses its word
	}
	if since(ctx, versionFinalLog) {
		s.logTail(ctx)
	}
	// Let any update still in its handler answer before the run closes.
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	if s.closeInNewRun(ctx) {
		return Result{}, s.closingRun(ctx)
	}
	return s.result(), nil
}

// result is what the session returns when it ends.
func (s *supervisor) result() Result {
	return Result{
		SessionID:   s.id,
		State:       s.Life.State,
		StopReason:  s.StopReason,
		Hypotheses:  len(s.Entries),
		Top:         s.top(10),
		ReportPath:  s.ReportPath,
		Checkpoint:  s.CheckpointPath,
		Usage:       s.Usage,
		ContinuedAs: s.Successor,
	}
}

// A finished session is still asked questions: status, progress, a page of its ranking.
// Temporal answers a query on a closed workflow by replaying its last run on a worker,
// fetching its history each time. A research run at 800 hypotheses costs about 0.1 ms of
// the worker's time an event to replay and 600 bytes an event to fetch, more as the
// session grows (BENCHMARKS.md, "A finished session answers fast"). So a session whose
// last run grew long ends in a closing run of its own: the finished session continues as
// new, and the new run reads the final checkpoint's ranking back, packed (as any next run
// does), answers queries and commands (which a completed session refuses), and returns
// the session's result at once. Replaying it costs a handful of events and the packed
// ranking, whatever the session's size.

// closingRunAfter is the length of a last run past which a finished session closes in a
// run of its own: about what a closing run of a session of a few hundred hypotheses costs
// to replay. Before versionClosingSooner it was 1,000 events, set when a small session's
// run replayed in 0.07 ms an event: a finished session of 800 hypotheses whose last run
// stayed under it took 150 to 190 ms to answer a query.
const (
	closingRunAfter       = 100
	closingRunAfterBefore = 1000
)

// versionClosingSooner gates closingRunAfter.
const versionClosingSooner = "closing-run-sooner"

// closeInNewRun says the finished session should close in a run of its own.
func (s *supervisor) closeInNewRun(ctx workflow.Context) bool {
	if !s.ledger {
		return false
	}
	after := closingRunAfterBefore
	if since(ctx, versionClosingSooner) {
		after = closingRunAfter
	}
	return workflow.GetInfo(ctx).GetCurrentHistoryLength() > after
}

// closingRun hands the finished session to its closing run: its counters, its log's tail
// and the final checkpoint, from which that run reads the ranking.
func (s *supervisor) closingRun(ctx workflow.Context) error {
	s.Runs++
	s.trimEvents(eventsCarried)
	s.forgetFinished()
	s.req.Lineage = &s.lineage
	return workflow.NewContinueAsNewError(ctx, ResearchSession, s.req, s.carryOver())
}

// closed is the closing run: the session has finished; it answers and returns its result.
func (s *supervisor) closed(ctx workflow.Context) (Result, error) {
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return s.result(), nil
}
