package workflows

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
)

// The workflow test harness: a session on the SDK's test environment with real activities
// over a store in a temporary directory and a model of the test's choosing.

// harness is one workflow test environment with the real activities, the offline provider
// and a store in a temp dir. Turns can be given a duration on the workflow clock, so
// commands can arrive mid-session at a chosen time.
type harness struct {
	t     testing.TB
	env   *testsuite.TestWorkflowEnvironment
	acts  *activities.Activities
	store *store.Store
	turn  time.Duration
	dc    converter.DataConverter // nil: the default
	// earlier are the environments of the runs before h.env's, which still answer queries.
	earlier []*testsuite.TestWorkflowEnvironment

	mu          sync.Mutex
	starts      []started                    // provider turns, in the order they started
	checkpoints []activities.CheckpointInput // the Checkpoint activities' inputs, in order
}

type started struct {
	at       time.Duration // workflow time since the session started
	activity string
	queue    string                   // the task queue it was scheduled on
	input    activities.GenerateInput // for Generate turns
	converse activities.ConverseInput // for Converse turns
}

func newHarness(t testing.TB, turn time.Duration, model activities.Model) *harness {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, st, turn, model)
}

// newHarnessOn is a harness over a given store: the runs of one session, a parent and
// the sessions that continue or fork it.
func newHarnessOn(t testing.TB, st *store.Store, turn time.Duration, model activities.Model) *harness {
	t.Helper()
	if model == nil {
		model = &simulator.Offline{}
	}
	h := &harness{t: t, store: st, turn: turn, acts: &activities.Activities{Store: st, Models: map[string]activities.Model{"offline": model}}}
	h.newEnv()
	return h
}

// newEnv gives the harness a fresh test environment: for the session's first run, and for
// each run it continues as new into.
func (h *harness) newEnv() {
	t, turn := h.t, h.turn
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	h.env = env
	if h.dc != nil {
		env.SetDataConverter(h.dc)
	}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{activities.Classifier()}})
	Register(env)
	env.RegisterActivity(h.acts)
	if turn > 0 {
		// Every provider turn takes `turn` on the workflow clock, running the real activity.
		for _, fn := range []any{h.acts.Plan, h.acts.Generate, h.acts.Evolve, h.acts.Review, h.acts.Compare,
			h.acts.Debate, h.acts.Proximity, h.acts.MetaReview, h.acts.Overview, h.acts.Converse} {
			env.OnActivity(fn, mock.Anything, mock.Anything).After(turn).Return(fn)
		}
	}
	begin := env.Now()
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		s := started{at: env.Now().Sub(begin), activity: info.ActivityType.Name, queue: info.TaskQueue}
		var cp activities.CheckpointInput
		switch s.activity {
		case "Generate":
			if err := args.Get(&s.input); err != nil {
				t.Errorf("decode Generate input: %v", err)
			}
		case "Converse":
			if err := args.Get(&s.converse); err != nil {
				t.Errorf("decode Converse input: %v", err)
			}
		case "Checkpoint":
			if err := args.Get(&cp); err != nil {
				t.Errorf("decode Checkpoint input: %v", err)
			}
		}
		h.mu.Lock()
		h.starts = append(h.starts, s)
		if s.activity == "Checkpoint" {
			h.checkpoints = append(h.checkpoints, cp)
		}
		h.mu.Unlock()
	})
}

// useConverter encodes every payload of this and later runs with dc.
func (h *harness) useConverter(dc converter.DataConverter) {
	h.dc = dc
	h.env.SetDataConverter(dc)
}

// at runs fn at workflow time d after the start.
func (h *harness) at(d time.Duration, fn func()) { h.env.RegisterDelayedCallback(fn, d) }

// run runs a session to its end, through every run it continues as new into; h.env is
// then the last run's, as a client's queries would find it.
func (h *harness) run(req research.Request) Result {
	h.t.Helper()
	return h.runEach(req, nil)
}

// runEach is run with each, when not nil, called in every run's environment before the
// run starts; with each set, a run continued as new also starts where the last one
// stopped on the workflow clock (a new environment starts at the wall-clock time).
func (h *harness) runEach(req research.Request, each func()) Result {
	h.t.Helper()
	if each != nil {
		each()
	}
	h.env.ExecuteWorkflow(ResearchSession, req, (*Carried)(nil))
	for {
		if !h.env.IsWorkflowCompleted() {
			h.t.Fatal("workflow did not complete")
		}
		var can *workflow.ContinueAsNewError
		err := h.env.GetWorkflowError()
		if !errors.As(err, &can) {
			break
		}
		var next research.Request
		var carried *Carried
		dc := h.dc
		if dc == nil {
			dc = converter.GetDefaultDataConverter()
		}
		if err := dc.FromPayloads(can.Input, &next, &carried); err != nil {
			h.t.Fatal(err)
		}
		now := h.env.Now()
		h.earlier = append(h.earlier, h.env)
		h.newEnv()
		if each != nil {
			h.env.SetStartTime(now)
			each()
		}
		h.env.ExecuteWorkflow(ResearchSession, next, carried)
	}
	if err := h.env.GetWorkflowError(); err != nil {
		h.t.Fatalf("workflow failed: %v", err)
	}
	var res Result
	if err := h.env.GetWorkflowResult(&res); err != nil {
		h.t.Fatal(err)
	}
	return res
}

// update sends an update; done gets its status or its rejection when the workflow answers.
func (h *harness) update(name string, arg any, done func(Status, error)) {
	h.updateAs(name, "", arg, done)
}

// updateAs is update as the update of that id, as the desk sends its updates.
func (h *harness) updateAs(name, id string, arg any, done func(Status, error)) {
	cb := &testsuite.TestUpdateCallback{
		OnReject: func(err error) { done(Status{}, err) },
		OnAccept: func() {},
		OnComplete: func(v any, err error) {
			if err != nil {
				done(Status{}, err)
				return
			}
			done(v.(Status), nil)
		},
	}
	if arg == nil {
		h.env.UpdateWorkflow(name, id, cb)
	} else {
		h.env.UpdateWorkflow(name, id, cb, arg)
	}
}

// mustUpdate sends an update that must be accepted.
func (h *harness) mustUpdate(name string, arg any) {
	h.update(name, arg, func(_ Status, err error) {
		if err != nil {
			h.t.Errorf("%s rejected: %v", name, err)
		}
	})
}

func query[T any](h *harness, name string, args ...any) T {
	h.t.Helper()
	v, err := h.env.QueryWorkflow(name, args...)
	if err != nil {
		h.t.Fatalf("query %s: %v", name, err)
	}
	var out T
	if err := v.Get(&out); err != nil {
		h.t.Fatalf("query %s: %v", name, err)
	}
	return out
}

func (h *harness) history() []session.Event {
	return query[HistoryView](h, QueryHistory, Page{Limit: MaxPageLimit}).Events
}

func goal(max int) research.Request {
	return research.Request{
		ResearchGoal: "Find druggable mechanisms that slow tau propagation",
		ScientistID:  "ada",
		Config:       research.Config{MaxHypotheses: max, ReviewTypes: []string{"initial", "full"}},
	}
}

// mostAtOnce is the most provider turns that started at the same moment of the workflow
// clock: the turns a step ran in parallel.
func (h *harness) mostAtOnce() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	at := map[time.Duration]int{}
	most := 0
	for _, s := range h.starts {
		switch s.activity {
		case "Generate", "Evolve", "Review", "Compare", "Debate":
			at[s.at]++
			most = max(most, at[s.at])
		}
	}
	return most
}
