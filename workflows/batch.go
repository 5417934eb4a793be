package workflows

// Batches (config.batch): a round's steps that make many calls at once (generation,
// evolution, reviews, each batch of tournament matches) send them through the provider's
// batch API, for half the price, and wait for the answers durably. Submitting is one
// activity, whose result (the batch's id) is in the history, so no replay submits again;
// the wait is one activity that polls through its retry policy, so a batch of hours adds
// a handful of events, not one per poll; meanwhile every command works (a suspended session
// takes the answers once it resumes; terminate cancels the batch). A provider without a
// batch API (a local OpenAI-compatible server, the offline model) and a turn that may call
// tools make their calls one by one, as without batches. A batched turn runs with the
// input it was submitted with; a request the batch failed is made as an ordinary call.

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// batching says whether a step's turns of agent (kind: a strategy, a review type) go
// through the batch API: the session asks for it, its provider is a real one, and the
// turn does not call tools (a tool loop needs each answer before its next step).
func (s *supervisor) batching(agent, kind string) bool {
	c := s.req.Config
	return c.Batch && s.NoBatchAPI == "" && c.Provider != research.DefaultProvider && c.Provider != "" && len(s.toolsFor(agent, kind)) == 0
}

// batch submits a step's turns, all of agent, as one batch and waits until it has ended, and returns the
// name the turns read their answers by (Turn.Batch), or "" when they make their calls
// themselves: batches are off, the provider has none, or the budget cannot hold them.
// release gives back what the batch reserved of the budget, once the step's turns are done
// (batched turns reserve nothing of their own: the batch did it for them).
func (s *supervisor) batch(ctx workflow.Context, what, agent string, turns []activities.BatchTurn) (name string, release func()) {
	release = func() {}
	if len(turns) == 0 || !s.mayGo(ctx) {
		return "", release
	}
	var expected research.Usage
	for range turns {
		expected = expected.Add(s.expected(agent))
	}
	expected.CostUSD *= research.DefaultBatchShare // the tokens are as many, the price half
	release, err := s.reserve("batched "+what, expected)
	if err != nil {
		return "", func() {}
	}
	s.BatchSeq++
	name = fmt.Sprintf("round-%d-%s-%d", s.Rounds, what, s.BatchSeq)
	in := activities.BatchInput{SessionID: s.id, Name: name, Provider: s.req.Config.Provider, Model: s.req.Config.Model, Turns: turns}
	var out activities.BatchSubmitted
	summary := fmt.Sprintf("submit a batch of %d %s", len(turns), what)
	actx := workflow.WithActivityOptions(ctx, turnOptions(summary))
	if err := s.untilStored(ctx, s.mayGo, func() error { return workflow.ExecuteActivity(actx, a.SubmitBatch, in).Get(ctx, &out) }); err != nil {
		s.note(fmt.Sprintf("the %s go one by one: the batch could not be submitted: %s", what, errorText(err)))
		release() // each turn reserves its own
		return "", func() {}
	}
	if out.Direct != "" {
		if out.NoAPI {
			s.NoBatchAPI = out.Direct // no need to ask again
			s.note("no batches for this session: " + out.Direct + "; its calls go one by one")
		} else {
			s.note(fmt.Sprintf("the %s go one by one: %s", what, out.Direct))
		}
		release() // each turn reserves its own
		return "", func() {}
	}
	s.Batch = &session.BatchWait{Name: name, What: what, Requests: out.Requests, ID: out.ID, Submitted: session.Stamp(workflow.Now(ctx))}
	s.note(fmt.Sprintf("submitted %s as batch %s of %d requests", what, out.ID, out.Requests))
	s.show(ctx)
	s.awaitBatch(ctx, activities.BatchRef{SessionID: s.id, Name: name, Provider: in.Provider, Model: in.Model})
	s.Batch = nil
	s.show(ctx)
	// The name even if the wait failed: each turn reads the result the batch stored for
	// it, if any, and otherwise calls the provider.
	return name, release
}

// awaitBatch waits for a batch to end and its results to be stored, while the session's
// commands go on. Terminate cancels the wait and the batch.
func (s *supervisor) awaitBatch(ctx workflow.Context, ref activities.BatchRef) {
	wctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	future := workflow.ExecuteActivity(workflow.WithActivityOptions(wctx, awaitOptions(fmt.Sprintf("wait for batch %s", s.Batch.ID))), a.AwaitBatch, ref)
	var (
		out  activities.BatchDone
		err  error
		done bool
	)
	workflow.Go(ctx, func(ctx workflow.Context) {
		err = future.Get(ctx, &out)
		done = true
	})
	s.wait(ctx, func() bool { return done || s.Life.Effective() == session.Terminating })
	if !done {
		cancel()
		s.wait(ctx, func() bool { return done })
		cctx := workflow.WithActivityOptions(ctx, turnOptions("cancel batch "+s.Batch.ID))
		if cerr := workflow.ExecuteActivity(cctx, a.CancelBatch, ref).Get(ctx, nil); cerr != nil {
			s.note(fmt.Sprintf("batch %s could not be cancelled: %s", s.Batch.ID, errorText(cerr)))
		} else {
			s.note(fmt.Sprintf("batch %s cancelled: the session is ending", s.Batch.ID))
		}
		return
	}
	if err != nil {
		s.note(fmt.Sprintf("batch %s brought no answers (%s): its turns call the provider themselves", s.Batch.ID, errorText(err)))
		return
	}
	s.note(fmt.Sprintf("batch %s %s: %d answered, %d failed (those are asked one by one)", s.Batch.ID, out.Status, out.Answered, out.Failed))
}

// awaitOptions: the wait for a batch checks the provider, and while the batch runs fails,
// for the retry policy to check again later: every 10 s at first, backing off to every 5
// minutes, until the provider's 24-hour window (and some) has passed. No attempt adds to
// the history.
func awaitOptions(summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue: TaskQueue, // a cheap check, not a model call: no provider slot
		Summary:   summary,
		// A check takes milliseconds, reading an ended batch's results seconds: a worker
		// that dies mid-check is noticed within a minute.
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: 26 * time.Hour,
		WaitForCancellation:    false,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    10 * time.Second,
			BackoffCoefficient: 1.5,
			MaximumInterval:    5 * time.Minute,
			// The schedule-to-close timeout ends the wait; the attempts are bounded only so
			// that no default caps them (the SDK's test environment stops at 10).
			MaximumAttempts:        1000,
			NonRetryableErrorTypes: []string{activities.ErrInvalidInput, activities.ErrProviderAuth, activities.ErrProviderRequest, activities.ErrStoreDamaged},
		},
	}
}

// batched says whether a turn's request went out in a batch, which reserved its cost.
func batched[In any](in In) bool {
	t, ok := any(in).(interface{ Identity() activities.Turn })
	return ok && t.Identity().Batch != ""
}

// batchInput is a turn input that can go out in a batch (activities.BatchTurn).
type batchInput interface {
	activities.GenerateInput | activities.EvolveInput | activities.ReviewInput | activities.CompareInput
}

// request is the batch's request that carries in, and in's turn, which names the batch
// the turn reads its answer from.
func request[I batchInput](in *I) (activities.BatchTurn, *activities.Turn) {
	switch in := any(in).(type) {
	case *activities.GenerateInput:
		return activities.BatchTurn{Generate: in}, &in.Turn
	case *activities.EvolveInput:
		return activities.BatchTurn{Evolve: in}, &in.Turn
	case *activities.ReviewInput:
		return activities.BatchTurn{Review: in}, &in.Turn
	case *activities.CompareInput:
		return activities.BatchTurn{Compare: in}, &in.Turn
	}
	panic(fmt.Sprintf("a %T cannot go in a batch", in)) // batchInput admits only the above
}

// stepBatch is a round step's turns that go out in one batch: the inputs made for it
// before the step (nil for a turn not in it), and the batch's name, "" when it did not go
// out (batches are off, the provider has none, the budget cannot hold it).
type stepBatch[I batchInput] struct {
	made    []*I
	name    string
	fresh   func(i int) I // makes turn i's input as the turn starts
	release func()        // gives back what the batch reserved, once the step's turns are done
}

// submit makes, in order, the inputs of a step's n turns that go in a batch (those
// inBatch says) with input, and sends them as one batch of agent's turns (s.batch), whose
// end it waits for. The step's other turns make their inputs as they start.
func submit[I batchInput](ctx workflow.Context, s *supervisor, what, agent string, n int, inBatch func(i int) bool, input func(i int) I) *stepBatch[I] {
	b := &stepBatch[I]{made: make([]*I, n), fresh: input}
	var turns []activities.BatchTurn
	for i := range n {
		if inBatch(i) {
			in := input(i)
			b.made[i] = &in
			t, _ := request(&in)
			turns = append(turns, t)
		}
	}
	b.name, b.release = s.batch(ctx, what, agent, turns)
	return b
}

// input is turn i's input as it starts: the one it was submitted with, naming the batch,
// when the batch went out; otherwise one made now, so that a refinement meanwhile applies.
func (b *stepBatch[I]) input(i int) I {
	if b.name == "" {
		return b.fresh(i)
	}
	return b.kept(i)
}

// kept is input for a step whose inputs are made once, each naming the new hypothesis it
// asks for (s.newID): a turn made for the batch keeps its input even when the batch did
// not go out.
func (b *stepBatch[I]) kept(i int) I {
	if b.made[i] == nil {
		return b.fresh(i)
	}
	in := *b.made[i]
	_, t := request(&in)
	t.Batch = b.name
	return in
}
