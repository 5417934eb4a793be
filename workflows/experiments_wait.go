package workflows

// Waiting for the lab: a session whose rounds are done but whose confirmed experiments
// still wait for their results does not end. It sleeps on a timer until the next reminder
// falls due or something happens (a result, a withdrawal, a terminate), for days or weeks,
// and continues as new when its history grows long, carrying the experiments. A scientist
// ends such a session with terminate (its report is written with the results so far), or
// stops waiting for one experiment with withdraw-experiment.

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/session"
)

// defaultLabReminder is how long an experiment waits before the session reminds the
// people who run it, and again every as long after, when the request sets no
// lab_reminder.
const defaultLabReminder = 7 * 24 * time.Hour

func (s *supervisor) labReminder() time.Duration {
	if d := time.Duration(s.req.Config.LabReminder); d > 0 {
		return d
	}
	return defaultLabReminder
}

func (s *supervisor) plainExperiments() []experiment.Experiment {
	exps := make([]experiment.Experiment, len(s.Experiments))
	for i, e := range s.Experiments {
		exps[i] = e.Experiment
	}
	return exps
}

// labWait is what the session waits for the lab for, now.
func (s *supervisor) labWait() experiment.LabWait {
	return experiment.WaitingForLab(s.plainExperiments(), s.now(), s.labReminder())
}

// waitForLab is called when the session would end: while experiments wait for the lab
// (and the scientist has not terminated it, nor has its history run out), it waits for
// the next thing to happen and reports true, so that the loop asks again. It continues as
// new when the run's history is full, and sends the reminders that fall due.
func (s *supervisor) waitForLab(ctx workflow.Context) (bool, error) {
	if !s.lab || s.Life.Effective() == session.Terminating || s.historyBudgetSpent(ctx) {
		return false, nil
	}
	waiting := s.labWait()
	if waiting.Experiments == 0 {
		return false, nil
	}
	if s.continueAsNewDue(ctx) {
		s.wait(ctx, func() bool { return s.toolTurns == 0 })
		return true, s.continueAsNew(ctx)
	}
	s.showNeeds(ctx)
	s.Reason = waiting.Why()
	seen := s.labMoves
	next := s.nextReminder()
	cond := func() bool {
		return s.labMoves != seen || s.Life.Effective() != session.Active || s.CheckpointWanted
	}
	if next.IsZero() {
		_ = workflow.Await(ctx, cond)
	} else {
		_, _ = workflow.AwaitWithTimeout(ctx, max(next.Sub(workflow.Now(ctx)), time.Second), cond)
	}
	if s.CheckpointWanted {
		_ = s.checkpoint(ctx, "requested")
	}
	s.remindLab(ctx)
	s.showNeeds(ctx)
	return true, nil
}

// nextReminder is when the next reminder of a waiting experiment falls due; zero if none.
func (s *supervisor) nextReminder() time.Time {
	var next time.Time
	for _, e := range s.Experiments {
		if due, ok := e.ReminderDue(s.labReminder()); ok && (next.IsZero() || due.Before(next)) {
			next = due
		}
	}
	return next
}

// remindLab sends a reminder for each waiting experiment whose reminder is due: through
// the worker's log and webhook (notify.go) where the session notifies, and in its log.
func (s *supervisor) remindLab(ctx workflow.Context) {
	now := workflow.Now(ctx)
	for i := range s.Experiments {
		e := &s.Experiments[i]
		if !e.Remind(now, s.labReminder()) {
			continue
		}
		why := fmt.Sprintf("experiment %s (%s) has waited for the lab's result since %s: reminder %d",
			e.ID, e.Hypothesis, e.WaitingSince.UTC().Format("2 Jan 2006"), e.Reminded)
		s.note(why)
		if s.notifies {
			_ = s.notify(ctx, "lab-reminder", why).Get(ctx, nil)
		}
	}
}
