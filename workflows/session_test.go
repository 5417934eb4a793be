package workflows

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/policy"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
)

// harness is one workflow test environment with the real activities, the offline provider
// and a store in a temp dir. Turns can be given a duration on the workflow clock, so
// commands can arrive mid-session at a chosen time.
type harness struct {
	t     *testing.T
	env   *testsuite.TestWorkflowEnvironment
	acts  *activities.Activities
	store *store.Store

	mu     sync.Mutex
	starts []started // provider turns, in the order they started
}

type started struct {
	at       time.Duration // workflow time since the session started
	activity string
	input    activities.GenerateInput // for Generate turns
}

func newHarness(t *testing.T, turn time.Duration, model activities.Model) *harness {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, st, turn, model)
}

// newHarnessOn is a harness over a given store: the runs of one session, a parent and
// the sessions that continue or fork it.
func newHarnessOn(t *testing.T, st *store.Store, turn time.Duration, model activities.Model) *harness {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	if model == nil {
		model = &simulator.Offline{}
	}
	h := &harness{t: t, env: env, store: st, acts: &activities.Activities{Store: st, Models: map[string]activities.Model{"offline": model}}}
	Register(env)
	env.RegisterActivity(h.acts)
	if turn > 0 {
		// Every provider turn takes `turn` on the workflow clock, running the real activity.
		for _, fn := range []any{h.acts.Plan, h.acts.Generate, h.acts.Evolve, h.acts.Review, h.acts.Compare,
			h.acts.Debate, h.acts.Proximity, h.acts.MetaReview, h.acts.Overview} {
			env.OnActivity(fn, mock.Anything, mock.Anything).After(turn).Return(fn)
		}
	}
	begin := env.Now()
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		s := started{at: env.Now().Sub(begin), activity: info.ActivityType.Name}
		if s.activity == "Generate" {
			if err := args.Get(&s.input); err != nil {
				t.Errorf("decode Generate input: %v", err)
			}
		}
		h.mu.Lock()
		h.starts = append(h.starts, s)
		h.mu.Unlock()
	})
	return h
}

// at runs fn at workflow time d after the start.
func (h *harness) at(d time.Duration, fn func()) { h.env.RegisterDelayedCallback(fn, d) }

func (h *harness) run(req research.Request) Result {
	h.t.Helper()
	h.env.ExecuteWorkflow(ResearchSession, req, (*Carried)(nil))
	if !h.env.IsWorkflowCompleted() {
		h.t.Fatal("workflow did not complete")
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
		h.env.UpdateWorkflow(name, "", cb)
	} else {
		h.env.UpdateWorkflow(name, "", cb, arg)
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

// providerTurns are the activities that call a model.
var providerTurns = map[string]bool{"Plan": true, "Generate": true, "Evolve": true, "Review": true, "Compare": true,
	"Debate": true, "MetaReview": true, "Overview": true}

func goal(max int) research.Request {
	return research.Request{
		ResearchGoal: "Find druggable mechanisms that slow tau propagation",
		ScientistID:  "ada",
		Config:       research.Config{MaxHypotheses: max, ReviewTypes: []string{"initial", "full"}},
	}
}

func TestSessionRunsToMaxHypotheses(t *testing.T) {
	h := newHarness(t, 0, nil)
	res := h.run(goal(10))

	if res.State != session.Completed || res.StopReason != "reached max_hypotheses (10)" {
		t.Fatalf("result: state %s, stop reason %q", res.State, res.StopReason)
	}
	if res.Hypotheses != 10 || len(res.Top) == 0 {
		t.Fatalf("hypotheses %d, top %d; want 10 and some", res.Hypotheses, len(res.Top))
	}
	ids := map[string]bool{}
	for i, e := range res.Top {
		ids[e.ID] = true
		if i > 0 && e.Elo > res.Top[i-1].Elo {
			t.Errorf("top is not ranked by Elo: %v", res.Top)
		}
		if e.Reviews != 2 {
			t.Errorf("%s has %d reviews, want 2 (initial and full)", e.ID, e.Reviews)
		}
	}
	if len(ids) != len(res.Top) {
		t.Errorf("ids are not unique: %v", res.Top)
	}
	p := query[session.Progress](h, QueryProgress)
	if p.HypothesesGenerated != 10 || p.MatchesPlayed == 0 || p.Checkpoints != p.Rounds+1 {
		t.Errorf("progress = %+v; want 10 hypotheses, some matches, a checkpoint per round and a final one", p)
	}
	report, err := os.ReadFile(res.ReportPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "tau propagation") || !strings.Contains(string(report), res.Top[0].ID) {
		t.Errorf("report lacks the goal or the winner:\n%s", report)
	}
	snap, err := h.store.LatestCheckpoint(t.Context(), res.SessionID)
	if err != nil || snap.State != session.Completed || len(snap.Hypotheses) != 10 {
		t.Errorf("final checkpoint: %+v, %v", snap, err)
	}
}

func TestInvalidRequestRefused(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*research.Request)
		field string
	}{
		{"empty goal", func(r *research.Request) { r.ResearchGoal = " " }, "research_goal"},
		{"oversized goal", func(r *research.Request) { r.ResearchGoal = strings.Repeat("x", 5000) }, "research_goal"},
		{"unknown review type", func(r *research.Request) { r.Config.ReviewTypes = []string{"vibes"} }, "config.review_types"},
		{"negative limit", func(r *research.Request) { r.Config.MaxHypotheses = -1 }, "config.max_hypotheses"},
		{"absurd limit", func(r *research.Request) { r.Config.MaxHypotheses = 1 << 30 }, "config.max_hypotheses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 0, nil)
			req := goal(4)
			tt.edit(&req)
			h.env.ExecuteWorkflow(ResearchSession, req, (*Carried)(nil))
			err := h.env.GetWorkflowError()
			var app *temporal.ApplicationError
			if !errors.As(err, &app) || app.Type() != "InvalidRequest" || !app.NonRetryable() || !strings.Contains(app.Error(), tt.field) {
				t.Fatalf("error = %v; want a non-retryable InvalidRequest naming %s", err, tt.field)
			}
			if st := query[Status](h, QueryStatus); st.State != session.Failed {
				t.Errorf("state %s, want failed", st.State)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.starts) != 0 {
				t.Errorf("an invalid session ran %d activities", len(h.starts))
			}
		})
	}
}

// TestUpdates drives every command through its update: valid ones are accepted with the new
// status, invalid transitions are rejected with a message naming the current state.
func TestUpdates(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	type step struct {
		at      time.Duration
		name    string
		arg     any
		want    session.State // state in the accepted status
		wantErr string
	}
	steps := []step{
		{2 * time.Second, Resume, nil, "", "cannot resume: session is active"},
		{3 * time.Second, Suspend, map[string]string{"reason": "lunch"}, session.Suspended, ""},
		{4 * time.Second, Suspend, nil, "", "cannot suspend: session is suspended"},
		{5 * time.Second, Suspend, "not an object", "", "suspend takes a JSON object"},
		{6 * time.Second, RefineGoal, map[string]string{"focus": "microglia"}, session.Suspended, ""},
		{7 * time.Second, RefineGoal, map[string]string{}, "", "refine-goal needs"},
		{8 * time.Second, Checkpoint, nil, session.Suspended, ""},
		{9 * time.Second, Resume, map[string]string{"typo": "x"}, "", `resume does not take "typo"`},
		{10 * time.Second, Resume, nil, session.Active, ""},
		{12 * time.Second, Terminate, map[string]string{"reason": "done for today"}, session.Terminating, ""},
		{13 * time.Second, Terminate, nil, "", "cannot terminate"},
		{14 * time.Second, RefineGoal, map[string]string{"goal": "another"}, "", "cannot refine-goal: session is terminating"},
	}
	for _, s := range steps {
		h.at(s.at, func() {
			h.update(s.name, s.arg, func(st Status, err error) {
				switch {
				case s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)):
					t.Errorf("at %s %s: error %v, want %q", s.at, s.name, err, s.wantErr)
				case s.wantErr == "" && err != nil:
					t.Errorf("at %s %s: rejected: %v", s.at, s.name, err)
				case s.wantErr == "" && st.State != s.want:
					t.Errorf("at %s %s: state %s, want %s", s.at, s.name, st.State, s.want)
				}
			})
		})
	}
	res := h.run(goal(200))
	if res.State != session.Completed || res.StopReason != "terminated by the scientist: done for today" {
		t.Fatalf("result %s %q", res.State, res.StopReason)
	}
	var accepted []string
	for _, e := range h.history() {
		if e.Kind == session.EventCommand && e.Via == "update" && *e.Accepted {
			accepted = append(accepted, e.Command)
		}
	}
	// Rejected updates never reach the history: the validator refuses them before they are
	// written, which is what a validator is for.
	if want := []string{Suspend, RefineGoal, Checkpoint, Resume, Terminate}; !slices.Equal(accepted, want) {
		t.Errorf("accepted commands in history %v, want %v", accepted, want)
	}
}

// TestSignals sends the same commands as signals: accepted ones act, malformed or
// ill-timed ones are recorded as rejected, and none of them harms the session.
func TestSignals(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	signals := []struct {
		at   time.Duration
		name string
		arg  any
	}{
		{2 * time.Second, Resume, nil},                                    // not suspended: rejected
		{3 * time.Second, Suspend, "lunch"},                               // not an object: rejected
		{4 * time.Second, Suspend, map[string]any{"reason": 42}},          // wrong type: rejected
		{5 * time.Second, Suspend, nil},                                   // accepted
		{6 * time.Second, RefineGoal, map[string]string{"focus": "APOE"}}, // accepted
		{7 * time.Second, Resume, map[string]string{}},                    // accepted
		{8 * time.Second, Checkpoint, nil},                                // accepted
		{9 * time.Second, Terminate, map[string]string{"reason": "ok"}},   // accepted
	}
	for _, s := range signals {
		h.at(s.at, func() {
			h.env.SignalWorkflow(s.name, s.arg)
			if s.name == Terminate {
				h.env.SignalWorkflow(Suspend, nil) // terminating: rejected
			}
		})
	}
	res := h.run(goal(200))
	if res.State != session.Completed || res.StopReason != "terminated by the scientist: ok" {
		t.Fatalf("result %s %q", res.State, res.StopReason)
	}
	type rec struct {
		cmd      string
		accepted bool
		detail   string
	}
	var got []rec
	for _, e := range h.history() {
		if e.Kind == session.EventCommand {
			got = append(got, rec{e.Command, *e.Accepted, e.Detail})
		}
	}
	want := []rec{
		{Resume, false, "cannot resume: session is active; it is already running"},
		{Suspend, false, `suspend takes a JSON object such as {"reason": "..."}, not "lunch"`},
		{Suspend, false, `suspend: "reason" must be a string`},
		{Suspend, true, ""},
		{RefineGoal, true, "goal: (unchanged); focus: APOE"},
		{Resume, true, ""},
		{Checkpoint, true, ""},
		{Terminate, true, "ok"},
		{Suspend, false, "cannot suspend: session is terminating"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("commands in history:\n got %v\nwant %v", got, want)
	}
}

// TestSuspendPausesTurns: while suspended no provider turn starts (in-flight ones finish),
// every query answers, and resume carries on where the session stopped.
func TestSuspendPausesTurns(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	var suspendedAt time.Duration
	h.at(2500*time.Millisecond, func() {
		h.mustUpdate(Suspend, map[string]string{"reason": "reading"})
		suspendedAt = 2500 * time.Millisecond
	})
	h.at(30*time.Second, func() {
		if st := query[Status](h, QueryStatus); st.State != session.Suspended || st.Reason != "reading" {
			t.Errorf("status while suspended: %+v", st)
		}
		p := query[session.Progress](h, QueryProgress)
		if p.State != session.Suspended || p.HypothesesGenerated == 0 {
			t.Errorf("progress while suspended: %+v", p)
		}
		if v := query[StateView](h, QueryState, Page{Limit: 2}); len(v.Hypotheses) != 2 || v.Total != p.HypothesesGenerated || v.Limit != 2 {
			t.Errorf("state page while suspended: %d entries, total %d, limit %d", len(v.Hypotheses), v.Total, v.Limit)
		}
		if v := query[HistoryView](h, QueryHistory); v.Total == 0 || len(v.Events) == 0 {
			t.Errorf("history while suspended: %+v", v)
		}
	})
	h.at(60*time.Second, func() {
		h.mustUpdate(Resume, nil)
	})
	res := h.run(goal(12))
	if res.Hypotheses != 12 {
		t.Fatalf("%d hypotheses after resume, want 12", res.Hypotheses)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var before, after int
	for _, s := range h.starts {
		if !providerTurns[s.activity] {
			continue
		}
		switch {
		case s.at > suspendedAt && s.at < 60*time.Second:
			t.Errorf("%s started at %s, while suspended", s.activity, s.at)
		case s.at <= suspendedAt:
			before++
		default:
			after++
		}
	}
	if before == 0 || after == 0 {
		t.Errorf("turns before suspension %d, after resume %d: want both", before, after)
	}
}

// TestRefineGoalReachesNextPrompt: a refinement applies from the next turn on, in the
// activity input and in the prompt the model is shown.
func TestRefineGoalReachesNextPrompt(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	const newGoal = "Find druggable mechanisms that slow tau propagation through microglia"
	var refinedAt time.Duration = 3500 * time.Millisecond
	h.at(refinedAt, func() {
		h.mustUpdate(RefineGoal, map[string]string{"goal": newGoal, "focus": "TREM2 signalling"})
	})
	res := h.run(goal(12))

	h.mu.Lock()
	defer h.mu.Unlock()
	var old, refined int
	for _, s := range h.starts {
		if s.activity != "Generate" {
			continue
		}
		in := s.input
		if s.at < refinedAt {
			old++
			if in.Goal != goal(0).ResearchGoal || len(in.Focus) != 0 {
				t.Errorf("turn %s before the refinement saw goal %q focus %v", in.TurnID, in.Goal, in.Focus)
			}
			continue
		}
		refined++
		if in.Goal != newGoal || !slices.Equal(in.Focus, []string{"TREM2 signalling"}) {
			t.Errorf("turn %s after the refinement saw goal %q focus %v", in.TurnID, in.Goal, in.Focus)
		}
		turn, ok, err := h.store.Turn(t.Context(), res.SessionID, in.TurnID)
		if err != nil || !ok {
			t.Fatalf("turn %s not stored: %v", in.TurnID, err)
		}
		if !strings.Contains(turn.Prompt, newGoal) || !strings.Contains(turn.Prompt, "TREM2 signalling") {
			t.Errorf("prompt of %s lacks the refinement:\n%s", in.TurnID, turn.Prompt)
		}
	}
	if old == 0 || refined == 0 {
		t.Fatalf("generation turns before %d, after %d: want both", old, refined)
	}
	st := query[StateView](h, QueryState)
	if st.Goal != newGoal || len(st.Refinements) != 1 || st.Refinements[0].Focus != "TREM2 signalling" {
		t.Errorf("state after refinement: goal %q, refinements %+v", st.Goal, st.Refinements)
	}
}

func TestTimeLimit(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	req := goal(1000)
	req.Config.TimeLimit = research.Duration(30 * time.Second)
	// Time suspended does not count against the limit.
	h.at(5*time.Second, func() { h.env.SignalWorkflow(Suspend, nil) })
	h.at(5*time.Minute, func() { h.env.SignalWorkflow(Resume, nil) })
	res := h.run(req)
	if !strings.HasPrefix(res.StopReason, "reached time_limit (30s") {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	p := query[session.Progress](h, QueryProgress)
	if p.HypothesesGenerated == 0 || p.HypothesesGenerated >= 1000 {
		t.Fatalf("%d hypotheses in a 30s session", p.HypothesesGenerated)
	}
	if p.ElapsedSeconds < (5*time.Minute + 25*time.Second).Seconds() {
		t.Errorf("session ended after %.0fs; the 4m55s suspended must not count against 30s of research", p.ElapsedSeconds)
	}
}

func TestMaxHypothesesNotMultipleOfBatch(t *testing.T) {
	h := newHarness(t, 0, nil)
	res := h.run(goal(7))
	if res.Hypotheses != 7 {
		t.Fatalf("%d hypotheses, want 7", res.Hypotheses)
	}
}

// failing is a model whose every turn fails as a provider outage would.
type failing struct{ *simulator.Offline }

func (failing) Generate(context.Context, research.GenerateRequest) (research.Hypothesis, research.Usage, error) {
	// A failed call can still have cost tokens (a provider that answered badly).
	return research.Hypothesis{}, research.Usage{PromptTokens: 100, CompletionTokens: 10, Requests: 1},
		temporal.NewNonRetryableApplicationError("provider unavailable", "Outage", nil)
}

// TestFailingProviderSuspends: turns that keep failing never fail the session; after a few
// barren rounds it suspends with the reason, and can still be terminated cleanly.
func TestFailingProviderSuspends(t *testing.T) {
	h := newHarness(t, 0, failing{&simulator.Offline{}})
	h.at(time.Hour, func() {
		st := query[Status](h, QueryStatus)
		if st.State != session.Suspended || !strings.Contains(st.Reason, "no hypothesis came out of 3 rounds") || !strings.Contains(st.Reason, "provider unavailable") {
			t.Errorf("status %+v; want suspended with the provider's error", st)
		}
		h.env.SignalWorkflow(Terminate, map[string]string{"reason": "provider down"})
	})
	res := h.run(goal(8))
	if res.State != session.Completed || res.Hypotheses != 0 {
		t.Fatalf("result %+v", res)
	}
	if p := query[session.Progress](h, QueryProgress); p.TurnsFailed != 3*policy.BatchSize {
		t.Errorf("failed turns %d, want %d", p.TurnsFailed, 3*policy.BatchSize)
	}
	// The failed turns' tokens count in the session's usage: 12 failed generations and the plan.
	if u := query[StateView](h, QueryState).Usage; u.Requests != 3*policy.BatchSize+1 || u.PromptTokens < 3*policy.BatchSize*100 {
		t.Errorf("usage %+v; want the failed turns' tokens counted", u)
	}
}

// TestHistoryBudgetEndsGracefully: a session whose history nears Temporal's limits ends
// with its final checkpoint and report, instead of being killed by the server.
//
// Since the session graph a session continues as new instead (graph_test.go); this is
// what a session started before it still does.
func TestHistoryBudgetEndsGracefully(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	h.env.OnGetVersion(versionGraph, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	h.at(5*time.Second, func() { h.env.SetCurrentHistoryLength(historyEventBudget + 1) })
	res := h.run(goal(1000))
	if !strings.HasPrefix(res.StopReason, "reached the workflow history budget (40001 events") {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	if res.State != session.Completed || res.ReportPath == "" || res.Hypotheses == 0 || res.Hypotheses >= 1000 {
		t.Errorf("result %+v; want a completed session with its report", res)
	}
}
