package workflows

// Faults of the session store. A record the session needs may be damaged or missing (a
// file truncated or edited by hand, a row deleted), or the store may take no writes at all
// (a full disk, a database that refuses them). Either way the session must neither go on
// as if the work were done nor on wrong data: it suspends with a reason that names the
// record or the fault, and the work the store refused is done again once it resumes. A
// damaged record waits for a person (repair it and resume, or fork the session from an
// earlier checkpoint); an unavailable store is watched, and the session resumes by itself
// when the store works again.

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/session"
)

// versionStoreFaults gates suspending on store faults; before it a turn the store refused
// was booked as failed and the session went on.
const versionStoreFaults = "store-faults"

// storeFaultOf returns err's ApplicationError if err is the session store's failure
// (activities.ErrStoreDamaged or activities.ErrStoreUnavailable), and nil otherwise.
func storeFaultOf(err error) *temporal.ApplicationError {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && (app.Type() == activities.ErrStoreDamaged || app.Type() == activities.ErrStoreUnavailable) {
		return app
	}
	return nil
}

// failure is an activity's failure as the session reports it: its innermost message, and
// underneath the error itself, for its kind.
type failure struct{ err error }

func (f failure) Error() string { return errorText(f.err) }
func (f failure) Unwrap() error { return f.err }

// storeFault says whether err is the session store's failure, to be waited out rather than
// booked; if so it suspends the session (unless it is suspended or ending already) with a
// reason that names the record or the fault.
func (s *supervisor) storeFault(ctx workflow.Context, err error) bool {
	app := storeFaultOf(err)
	if app == nil || !since(ctx, versionStoreFaults) {
		return false
	}
	switch {
	case s.Life.Effective() != session.Active:
	case app.Type() == activities.ErrStoreDamaged:
		s.suspendBecause(ctx, app.Message()+". Repair or restore that record and resume the session, or fork the session from an earlier checkpoint")
	default:
		if s.autoResumed {
			s.storeFlaps++ // failed again before a checkpoint: the check passes where work fails
		}
		s.autoResumed = false
		s.suspendBecause(ctx, "the session store cannot be used: "+app.Message()+". The session resumes by itself once the store works again")
		s.watchStore(ctx)
	}
	return true
}

// untilStored runs an activity, and while it fails for the session store's sake, waits
// until the session resumes (with wait: mayStart in a turn's coroutine, mayGo in the
// supervisor's) and runs it again. It returns the last error: the activity's own, or the
// store's once the session is ending.
func (s *supervisor) untilStored(ctx workflow.Context, wait func(workflow.Context) bool, run func() error) error {
	for {
		err := run()
		if !s.storeFault(ctx, err) || !wait(ctx) {
			return err
		}
	}
}

// resumed waits while the session is suspended and says whether it is active again: the
// wait of untilStored for the work that ends a session, which no time limit or budget stops.
func (s *supervisor) resumed(ctx workflow.Context) bool {
	s.wait(ctx, func() bool { return s.Life.Effective() != session.Suspended })
	return s.Life.Effective() == session.Active
}

// watchStore checks the session store until it takes a write again, and then resumes the
// session if it is still suspended. A resume by the scientist stops the watch.
//
// The check writes one record at the session's root. A fault it cannot see (one directory
// of a directory store made unwritable by hand) lets the session resume only to fail
// again: each time that happens before a checkpoint succeeds, the watch waits twice as
// long before it checks, from a minute up to an hour, so such a session settles into a
// slow retry instead of flapping.
func (s *supervisor) watchStore(ctx workflow.Context) {
	if s.stopWatch != nil {
		return
	}
	wctx, cancel := workflow.WithCancel(ctx)
	s.stopWatch = cancel
	workflow.Go(wctx, func(ctx workflow.Context) {
		if s.storeFlaps > 0 && since(ctx, versionWatchBackoff) {
			if workflow.Sleep(ctx, watchBackoff(s.storeFlaps)) != nil {
				return // cancelled by a resume
			}
		}
		actx := workflow.WithActivityOptions(ctx, watchOptions)
		if err := workflow.ExecuteActivity(actx, a.StoreWorks, s.id).Get(ctx, nil); err != nil {
			return // cancelled by a resume, or the session ended
		}
		s.stopWatch = nil
		if s.Life.Effective() == session.Suspended {
			s.resume(ctx, "the session store works again")
			s.autoResumed = true
		}
	})
}

// versionWatchBackoff gates the watch's wait after a store that failed again.
const versionWatchBackoff = "store-watch-backoff"

// watchBackoff is how long the watch waits before its first check after the store failed
// again flaps times right after an automatic resume: 1, 2, 4… minutes, at most an hour.
func watchBackoff(flaps int) time.Duration {
	return min(time.Minute<<min(flaps-1, 6), time.Hour)
}

// watchOptions: the store is checked with backoff up to every two minutes, for as long as
// it takes; each check is retried by Temporal, so a day of waiting adds no history.
var watchOptions = workflow.ActivityOptions{
	Summary:             "wait for the session store to work again",
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2, MaximumInterval: 2 * time.Minute},
}

// resume ends a suspension: its time does not count against the session's time limit.
func (s *supervisor) resume(ctx workflow.Context, reason string) {
	if s.stopWatch != nil {
		s.stopWatch()
		s.stopWatch = nil
	}
	s.PausedFor += workflow.Now(ctx).Sub(s.SuspendedAt)
	s.OwnSuspension = ""
	s.move(ctx, Resume, (*session.Lifecycle).Resume, reason)
}
