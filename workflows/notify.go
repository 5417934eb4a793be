package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/session"
)

// versionNotify: a session tells the people who run cosci when it needs one (it suspends
// by itself) and when it ends (activities.Notify). Sessions that started before run on
// without.
const versionNotify = "notify"

// notifyWait bounds how long a notification is tried: a webhook that is down loses its
// word, never holds the session up for more than this.
const notifyWait = 10 * time.Minute

// notify sends word of an event through the worker (its log, and its webhook if any) and
// returns the call's future; a suspension's word goes out while the session waits.
func (s *supervisor) notify(ctx workflow.Context, event, reason string) workflow.Future {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:                "notify: session " + event,
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: notifyWait,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	return workflow.ExecuteActivity(ctx, a.Notify, activities.NotifyInput{
		SessionID: s.id, Event: event, State: string(s.Life.Effective()), Reason: reason,
		Scientist: s.req.ScientistID, Time: session.Stamp(workflow.Now(ctx)),
	})
}
