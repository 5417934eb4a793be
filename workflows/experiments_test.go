package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/session"
)

// labPlan is the analyst's plan a fake ProposeAnalysis answers with.
func labPlan(h, prediction string) experiment.Plan {
	return experiment.Plan{
		Hypothesis: h,
		Prediction: experiment.Prediction{Text: orDefault(prediction, "the treated arm's value is higher"), Direction: experiment.Greater},
		Analysis:   experiment.Analysis{Query: "SELECT arm AS grp, value FROM plates", Test: "welch-t", Columns: []string{"grp", "value"}},
		Expected:   []experiment.Table{{Name: "plates", Columns: []string{"arm", "value"}}},
	}
}

// lab is a workflow test's lab: the analyst's and the sandbox's activities mocked, the
// runs each records, and a history length that grows before each update (the test
// environment keeps none), so marks order as a server's would.
type lab struct {
	h       *harness
	events  int
	ran     []activities.RunAnalysisInput
	outcome func(activities.RunAnalysisInput) experiment.Outcome
	notes   map[string]int // Notify activities by event
}

func newLab(h *harness) *lab { return &lab{h: h, events: 10, notes: map[string]int{}} }

// mock installs the fakes in the harness' current environment.
func (l *lab) mock() {
	env := l.h.env
	env.OnActivity(l.h.acts.ProposeAnalysis, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ProposeAnalysisInput) (activities.ProposeAnalysisResult, error) {
			p := labPlan(in.HypothesisID, in.Prediction)
			return activities.ProposeAnalysisResult{Plan: p, Digest: p.Digest()}, nil
		})
	env.OnActivity(l.h.acts.RunAnalysis, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RunAnalysisInput) (activities.RunAnalysisResult, error) {
			l.ran = append(l.ran, in)
			return activities.RunAnalysisResult{ID: in.ID, Outcome: l.outcome(in)}, nil
		})
	env.OnActivity(l.h.acts.Notify, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.NotifyInput) error {
			l.h.mu.Lock()
			defer l.h.mu.Unlock()
			l.notes[in.Event]++
			return nil
		})
	env.SetCurrentHistoryLength(l.events)
}

// send sends a lab update after moving the history on; done gets the answer.
func (l *lab) send(name string, arg any, done func(LabAnswer, error)) {
	l.events += 7
	l.h.env.SetCurrentHistoryLength(l.events)
	l.h.env.UpdateWorkflow(name, "", &labCallback{done: done}, arg)
}

type labCallback struct{ done func(LabAnswer, error) }

func (c *labCallback) Accept()          {}
func (c *labCallback) Reject(err error) { c.done(LabAnswer{}, err) }
func (c *labCallback) Complete(v any, err error) {
	if err != nil {
		c.done(LabAnswer{}, err)
		return
	}
	c.done(v.(LabAnswer), nil)
}

// TestLabThreeWeeks: a session whose rounds end with four confirmed experiments waits three
// weeks for the lab (time skipped), reminded every week, continues as new on the way, and
// resumes on the results: the registered plans run unchanged as the pre-registered tests,
// the standings are set, and the hypothesis that led, refuted, leaves the top 3.
func TestLabThreeWeeks(t *testing.T) {
	h := newHarness(t, time.Minute, nil)
	l := newLab(h)
	var leader string
	l.outcome = func(in activities.RunAnalysisInput) experiment.Outcome {
		if in.Plan.Hypothesis == leader { // the wrong way: refuted
			return experiment.Outcome{Test: "welch-t", Effect: -2, Low: -3, High: -1, P: 0.001, N: 40}
		}
		return experiment.Outcome{Test: "welch-t", Effect: 2, Low: 1, High: 3, P: 0.001, N: 40}
	}
	var start time.Time
	var waiting ExperimentsView
	runs := 0
	const day = 24 * time.Hour
	// at runs fn at d after the session's start, in whichever run is current then.
	at := func(d time.Duration, fn func()) { h.at(d-h.env.Now().Sub(start), fn) }
	res := h.runEach(goal(4), func() {
		runs++
		if runs == 1 {
			start = h.env.Now()
		} else {
			l.events = 10 // a new run's history starts again
		}
		l.mock()
		if runs == 1 {
			at(4*time.Minute, func() { l.planAndConfirmAll(t) })
			// A history grown long: the next wake continues as new.
			at(10*day, func() { h.env.SetCurrentHistoryLength(continueAsNewEvents) })
		}
		if runs == 2 {
			at(20*day, func() {
				waiting = query[ExperimentsView](h, QueryExperiments)
				if st := query[Status](h, QueryStatus); !strings.HasPrefix(st.Reason, "waiting for the lab") {
					t.Errorf("status while waiting: %s, %q; want waiting for the lab", st.State, st.Reason)
				}
			})
			at(21*day+time.Hour, func() { l.resultsForAll(t, &leader) })
		}
	})
	if runs < 2 {
		t.Fatalf("the session ran %d run(s); it should have continued as new while it waited", runs)
	}
	if waiting.Waiting.Experiments != 4 || !strings.HasPrefix(waiting.Why, "waiting for the lab: 4 experiments") {
		t.Errorf("after 20 days: waiting %+v, %q; want 4 experiments waiting for the lab", waiting.Waiting, waiting.Why)
	}
	if got := h.env.Now().Sub(start); got < 21*day {
		t.Errorf("the session ended after %s, before the lab's results", got)
	}
	reminders := 0
	for _, e := range query[ExperimentsView](h, QueryExperiments).Experiments {
		reminders += e.Reminded
		if e.State != experiment.Analysed || e.Result == nil {
			t.Errorf("%s is %s, not analysed: %s", e.ID, e.State, e.Refused)
		}
	}
	if reminders < 4 { // the third week's reminders of each, counted since the last wait began
		t.Errorf("%d reminders counted in the last run; want one per experiment at least", reminders)
	}
	if n := l.notified("lab-reminder"); n < 12 {
		t.Errorf("%d lab reminders sent over 3 weeks; want 3 per experiment (12)", n)
	}
	if len(l.ran) != 4 || slices.ContainsFunc(l.ran, func(in activities.RunAnalysisInput) bool { return in.Kind != experiment.PreRegistered }) {
		t.Errorf("runs %+v; want 4 pre-registered runs", l.ran)
	}
	for i, e := range res.Top {
		if e.ID == leader && i < 3 {
			t.Errorf("refuted %s is #%d of the top", leader, i+1)
		}
		if e.ID == leader && e.Standing != session.Refuted {
			t.Errorf("%s's standing is %q, want refuted", leader, e.Standing)
		}
	}
	if leader == "" {
		t.Fatal("no leader was tested")
	}
}

// planAndConfirmAll plans an experiment for every hypothesis and confirms each plan with
// the digest its proposal showed.
func (l *lab) planAndConfirmAll(t *testing.T) {
	st := query[StateView](l.h, QueryState, Page{Limit: 50})
	if len(st.Hypotheses) == 0 {
		t.Fatal("no hypotheses to plan experiments for")
	}
	for _, e := range st.Hypotheses {
		l.send(PlanExperiment, PlanRequest{Hypothesis: e.ID, By: "ada"}, func(a LabAnswer, err error) {
			if err != nil {
				t.Errorf("plan %s: %v", e.ID, err)
				return
			}
			l.send(ConfirmExperiment, ConfirmExperimentRequest{Experiment: a.Experiment.ID, Digest: a.Experiment.Plan}, func(_ LabAnswer, err error) {
				if err != nil {
					t.Errorf("confirm %s: %v", a.Experiment.ID, err)
				}
			})
		})
	}
}

// resultsForAll notes the leading hypothesis, then adds a result table for each
// experiment and sends it as the experiment's result.
func (l *lab) resultsForAll(t *testing.T, leader *string) {
	*leader = query[StateView](l.h, QueryState, Page{Limit: 1}).Hypotheses[0].ID
	for i, e := range query[ExperimentsView](l.h, QueryExperiments).Experiments {
		digest := fmt.Sprintf("sha256:%064d", i+1)
		l.send(AddDataset, DatasetRequest{Table: "plates", Digest: digest, Rows: 40, Columns: 2}, func(_ LabAnswer, err error) {
			if err != nil {
				t.Errorf("add-dataset: %v", err)
				return
			}
			l.send(ExperimentResult, ResultRequest{Experiment: e.ID, Data: digest}, func(_ LabAnswer, err error) {
				if err != nil {
					t.Errorf("result of %s: %v", e.ID, err)
				}
			})
		})
	}
}

// notified counts the Notify activities of an event the session ran, in every run.
func (l *lab) notified(event string) int {
	l.h.mu.Lock()
	defer l.h.mu.Unlock()
	return l.notes[event]
}

// TestLabRefusesAndUndoes: a confirmation with another digest is refused; data that
// arrived before the plan was confirmed runs as exploratory and gives no standing; a
// result on data after it is the pre-registered test and refutes; withdrawing it undoes
// the standing; terminate ends a session that waits for the lab.
func TestLabRefusesAndUndoes(t *testing.T) {
	h := newHarness(t, time.Minute, nil)
	l := newLab(h)
	l.outcome = func(activities.RunAnalysisInput) experiment.Outcome {
		return experiment.Outcome{Test: "welch-t", Effect: -2, Low: -3, High: -1, P: 0.001, N: 40}
	}
	var hyp string
	var x LabExperiment
	var after []string // what each step left: the experiment's state and the standing
	note := func() {
		v := query[ExperimentsView](h, QueryExperiments)
		st := query[StateView](h, QueryState, Page{Limit: 50})
		standing := "?"
		for _, e := range st.Hypotheses {
			if e.ID == hyp {
				standing = orDefault(string(e.Standing), "untested")
			}
		}
		for _, e := range v.Experiments {
			if e.ID == x.ID {
				after = append(after, string(e.State)+" "+standing)
			}
		}
	}
	must := func(what string) func(LabAnswer, error) {
		return func(_ LabAnswer, err error) {
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		}
	}
	var refusals []string
	refused := func(what string) func(LabAnswer, error) {
		return func(_ LabAnswer, err error) {
			if err == nil {
				t.Errorf("%s was accepted", what)
				return
			}
			refusals = append(refusals, err.Error())
		}
	}
	const early, late, misnamed = "sha256:" + "e0e0e0e0e0e0", "sha256:" + "1a1a1a1a1a1a", "sha256:" + "2b2b2b2b2b2b"
	res := h.runEach(goal(4), func() {
		l.mock()
		h.at(4*time.Minute, func() {
			hyp = query[StateView](h, QueryState, Page{Limit: 1}).Hypotheses[0].ID
			l.send(PlanExperiment, PlanRequest{Hypothesis: hyp}, func(a LabAnswer, err error) {
				if err != nil {
					t.Fatalf("plan: %v", err)
				}
				x = *a.Experiment
			})
			// A second experiment, never given a result, holds the session open.
			other := query[StateView](h, QueryState, Page{Limit: 2}).Hypotheses[1].ID
			l.send(PlanExperiment, PlanRequest{Hypothesis: other}, func(a LabAnswer, err error) {
				if err != nil {
					t.Fatalf("plan: %v", err)
				}
				l.send(ConfirmExperiment, ConfirmExperimentRequest{Experiment: a.Experiment.ID, Digest: a.Experiment.Plan}, must("confirm the other"))
			})
		})
		h.at(5*time.Minute, func() {
			l.send(ExperimentResult, ResultRequest{Experiment: x.ID, Data: early}, refused("a result on data never added"))
			l.send(AddDataset, DatasetRequest{Table: "plates", Digest: early, Rows: 10, Columns: 2}, must("add early"))
			l.send(ExperimentResult, ResultRequest{Experiment: x.ID, Data: early}, refused("a result before the plan is confirmed"))
			l.send(ConfirmExperiment, ConfirmExperimentRequest{Experiment: x.ID, Digest: "sha256:" + "00112233445566"}, refused("a confirmation of another digest"))
		})
		h.at(6*time.Minute, func() {
			l.send(ConfirmExperiment, ConfirmExperimentRequest{Experiment: x.ID, Digest: x.Plan}, must("confirm"))
			// A result under a table the plan's query does not read: the query would read
			// the older "plates" and count it as the pre-registered test.
			l.send(AddDataset, DatasetRequest{Table: "assay", Digest: misnamed, Rows: 40, Columns: 2}, func(_ LabAnswer, err error) {
				must("add misnamed")(LabAnswer{}, err)
				l.send(ExperimentResult, ResultRequest{Experiment: x.ID, Data: misnamed}, refused("a result under a table the plan does not read"))
			})
		})
		h.at(7*time.Minute, func() {
			l.send(ExperimentResult, ResultRequest{Experiment: x.ID, Data: early}, must("result on early data"))
		})
		h.at(8*time.Minute, func() {
			note() // received, untested: exploratory
			l.send(WithdrawResult, WithdrawRequest{Experiment: x.ID, Reason: "the data predates the plan"}, must("withdraw exploratory"))
		})
		h.at(9*time.Minute, func() {
			l.send(AddDataset, DatasetRequest{Table: "plates", Digest: late, Rows: 40, Columns: 2}, func(_ LabAnswer, err error) {
				must("add late")(LabAnswer{}, err)
				l.send(ExperimentResult, ResultRequest{Experiment: x.ID, Data: late}, must("result on late data"))
			})
		})
		h.at(12*time.Minute, func() {
			note() // analysed, refuted
			l.send(WithdrawResult, WithdrawRequest{Experiment: x.ID, Reason: "a failed assay"}, must("withdraw"))
			l.send(WithdrawResult, WithdrawRequest{Experiment: x.ID, Reason: " "}, refused("a withdrawal without a reason"))
		})
		h.at(13*time.Minute, note) // waiting, untested again
		h.at(2*24*time.Hour, func() { h.mustUpdate(Terminate, map[string]string{"reason": "the lab closed"}) })
	})
	want := []string{"received untested", "analysed refuted", "waiting untested"}
	if !slices.Equal(after, want) {
		t.Errorf("after each step: %q, want %q", after, want)
	}
	if len(refusals) != 5 {
		t.Errorf("refusals %q; want 5", refusals)
	}
	if len(l.ran) != 2 || l.ran[0].Kind != experiment.Exploratory || l.ran[1].Kind != experiment.PreRegistered {
		t.Errorf("runs %+v; want the early data's exploratory, the late's pre-registered", l.ran)
	}
	if !strings.Contains(res.StopReason, "terminated") {
		t.Errorf("stop reason %q; want the terminate", res.StopReason)
	}
}
