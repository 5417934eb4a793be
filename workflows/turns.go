package workflows

// Running activities: the typed provider turn, activity options and retries, waiting
// while suspended, and the time and token budgets that decide whether a turn may start.

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/session"
)

// After this many rounds in a row that produced no hypothesis the provider is clearly
// failing: the session suspends with the last error instead of spinning.
const maxBarrenRounds = 3

// a is only used to name activities; Temporal calls the worker's registered instance.
var a *activities.Activities

// suspendBecause suspends the session on its own account (a spent budget, a failing
// provider or store), with the reason the scientist will see.
func (s *supervisor) suspendBecause(ctx workflow.Context, reason string) {
	s.OwnSuspension = reason
	s.move(ctx, "suspend", (*session.Lifecycle).Suspend, reason)
	s.SuspendedAt = workflow.Now(ctx)
	if s.notifies {
		s.notify(ctx, "suspended", reason) // not waited for: the session waits anyway
	}
}

// parallel runs fn(i) for i in [0, n) as workflow coroutines and waits for all of them,
// serving checkpoint requests while it waits.
//
// A coroutine whose turn waits for the scientist's approval of a tool call (it is
// parked) is not waited for: the step moves on, and the turn finishes late (see late).
func (s *supervisor) parallel(ctx workflow.Context, n int, fn func(ctx workflow.Context, i int)) {
	g := &group{n: n}
	gctx := workflow.WithValue(ctx, groupKey{}, g)
	for i := range n {
		workflow.Go(gctx, func(ctx workflow.Context) {
			defer func() { g.done++ }()
			fn(ctx, i)
		})
	}
	s.wait(ctx, func() bool { return g.done+g.parked == n })
	g.over = true
}

// wait blocks until cond holds, writing any checkpoint the scientist asks for meanwhile
// (a suspended session can still be checkpointed).
func (s *supervisor) wait(ctx workflow.Context, cond func() bool) {
	for {
		_ = workflow.Await(ctx, func() bool { return cond() || s.CheckpointWanted })
		if !s.CheckpointWanted {
			return
		}
		why := "requested"
		if s.intervalCheckpointDue(ctx) {
			why = "interval"
		}
		_ = s.checkpoint(ctx, why)
	}
}

// mayStart waits while the session is suspended, then says whether a new turn may start:
// not once the session is ending, out of time or out of budget. In-flight turns finish.
func (s *supervisor) mayStart(ctx workflow.Context) bool {
	_ = workflow.Await(ctx, func() bool { return s.Life.Effective() != session.Suspended })
	return s.Life.Effective() == session.Active && !s.timeUp(ctx) && !s.budgetSpent()
}

func (s *supervisor) budgetSpent() bool {
	b := s.req.Config.TokenBudget
	return b > 0 && s.Usage.PromptTokens+s.Usage.CompletionTokens >= b
}

// timeUp reports whether the session has researched for its time limit. Time spent
// suspended does not count: a paused session keeps its budget.
func (s *supervisor) timeUp(ctx workflow.Context) bool {
	limit := time.Duration(s.req.Config.TimeLimit)
	return limit > 0 && s.activeTime(ctx) >= limit
}

func (s *supervisor) activeTime(ctx workflow.Context) time.Duration {
	now := workflow.Now(ctx)
	d := now.Sub(s.StartedAt) - s.PausedFor
	if s.Life.Effective() == session.Suspended {
		d -= now.Sub(s.SuspendedAt)
	}
	return d
}

// turn runs one provider turn, the activity fn on in, and books it: agent statistics, the
// event log, the live details in the Web UI. The compiler checks that in and the result
// are fn's types. t is the turn's identity; hypothesis the one it concerns, if any.
func turn[In, Out any](ctx workflow.Context, s *supervisor, agent, summary string, t activities.Turn, hypothesis string,
	fn func(context.Context, In) (Out, error), in In) (Out, error) {
	out, err := runTurnActivity(ctx, s, agent, summary, fn, in)
	s.book(ctx, agent, summary, t, hypothesis, err)
	return out, err
}

// runTurnActivity runs a provider turn's activity (or one step of a tool-using turn),
// waiting out a fault of the session store.
func runTurnActivity[In, Out any](ctx workflow.Context, s *supervisor, agent, summary string, fn func(context.Context, In) (Out, error), in In) (Out, error) {
	var out Out
	if !batched(in) { // a batched turn's batch reserved its cost
		release, err := s.reserve(agent, s.expected(agent))
		if err != nil {
			return out, err
		}
		defer release()
	}
	opts := turnOptions(summary)
	if agent == activities.AgentProximity {
		opts.TaskQueue = TaskQueue // a computation over the store, not a model call
	}
	actx := workflow.WithActivityOptions(ctx, opts)
	err := s.untilStored(ctx, s.mayStart, func() error { return workflow.ExecuteActivity(actx, fn, in).Get(ctx, &out) })
	return out, err
}

// book records a finished (or failed) turn: the agent's statistics, the event log, the
// Web UI's details, and whether a checkpoint is due.
func (s *supervisor) book(ctx workflow.Context, agent, summary string, t activities.Turn, hypothesis string, err error) {
	if errors.Is(err, errOverBudget) {
		return // never started
	}
	stat := s.stat(agent)
	stat.Turns++
	ev := session.Event{Kind: session.EventTurn, Turn: t.TurnID, Hypothesis: hypothesis, Detail: summary}
	if err != nil {
		stat.Failed++
		s.TurnsFailed++
		s.spend(agent, activities.SpentBy(err)) // a failed turn's tokens count too
		s.LastError = errorText(err)
		ev.Detail = summary + " failed: " + s.LastError
		var app *temporal.ApplicationError
		if errors.As(err, &app) && app.Type() == activities.ErrProviderAuth && s.Life.Effective() == session.Active {
			// Retrying cannot fix credentials: pause until a human does.
			defer s.suspendBecause(ctx, "the model provider refused the worker's credentials: "+app.Message()+
				". Fix the key in the worker's environment, restart the worker, then resume")
		}
	} else {
		stat.Succeeded++
	}
	s.log(ev)
	s.show(ctx)
	if s.intervalCheckpointDue(ctx) {
		s.CheckpointWanted = true // written by the round's wait, between turns
	}
}

func (s *supervisor) turnInput(turnID string) activities.Turn {
	return activities.Turn{
		SessionID: s.id, TurnID: turnID, Goal: s.Goal,
		Provider: s.req.Config.Provider, Model: s.req.Config.Model, Seed: s.req.Config.Seed,
		Round: s.Rounds,
	}
}

// contextRef names the shared context a turn's prompt carries.
func (s *supervisor) contextRef() activities.ContextRef {
	return activities.ContextRef{Plan: s.Plan != "", MetaReviewRound: s.MetaRound, Focus: s.recent(s.Focus), Feedback: s.recent(s.Feedback), Remarks: s.remarks()}
}

// turnOptions: a model turn may take minutes, but a dead worker is noticed within the
// heartbeat timeout. Temporal's retry policy is the only retry mechanism. Turns run on the
// turns queue, where each worker bounds how many run at once (its provider slots).
func turnOptions(summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           TurnsQueue,
		Summary:             summary,
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			MaximumAttempts:        5,
			NonRetryableErrorTypes: []string{activities.ErrMalformedAnswer, activities.ErrUnknownProvider, activities.ErrProviderAuth, activities.ErrProviderRequest},
		},
	}
}

// storeOptions: checkpoints, reports and the scientist's texts touch only local disk.
func storeOptions(summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		Summary:             summary,
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 5},
	}
}

// errorText is the innermost message of an activity failure: what went wrong, without the
// layers of "activity error (type: ..., scheduledEventID: ...)".
func errorText(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Error()
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return "timed out (" + timeout.TimeoutType().String() + ")"
	}
	return err.Error()
}
