package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// A finished session is still asked questions: status, progress, a page of its ranking.
// Temporal answers a query on a closed workflow by replaying its last run on a worker,
// and a run of a long session has thousands of events: a query on a finished session of
// 1,500 hypotheses took 1.4 s. So a session whose last run grew long ends in a closing run
// of its own: the finished session continues as new, and the new run reads the final
// checkpoint's ranking back (as any next run does), answers queries and commands (which a
// completed session refuses), and returns the session's result at once. Replaying it costs
// a handful of events, whatever the session's size.

// closingRunAfter is the length of a last run past which a finished session closes in a
// run of its own. Replaying a run costs about 0.07 ms an event on a 2-core machine
// (TestReplay), so a shorter one answers queries in well under 100 ms without one.
const closingRunAfter = 1000

// closeInNewRun says the finished session should close in a run of its own.
func (s *supervisor) closeInNewRun(ctx workflow.Context) bool {
	return s.ledger && workflow.GetInfo(ctx).GetCurrentHistoryLength() > closingRunAfter
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
