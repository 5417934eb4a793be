package workflows

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/internal/policy"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// providerTurns are the activities that call a model.
var providerTurns = map[string]bool{"Plan": true, "Generate": true, "Evolve": true, "Review": true, "Compare": true,
	"Debate": true, "MetaReview": true, "Overview": true}

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
	// The CPU-heavy activities run on the compute queue, the model turns on the turns
	// queue (the store's small work stays on the session's own).
	want := map[string]string{"Tournament": ComputeQueue, "Report": ComputeQueue, "Generate": TurnsQueue}
	seen := map[string]bool{}
	for _, st := range h.starts {
		if q, ok := want[st.activity]; ok {
			seen[st.activity] = true
			if st.queue != q {
				t.Errorf("%s ran on task queue %q; want %s", st.activity, st.queue, q)
			}
		}
	}
	if len(seen) != len(want) {
		t.Errorf("saw %v of the activities %v", seen, want)
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

// Answer answers with the methods of failing, which change some of the simulator's answers.
func (m failing) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, m, q)
}

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

// TestFinishedSessionClosesInARunOfItsOwn: a session whose last run grew long ends in a
// closing run, which answers every query exactly as the finished run does, refuses
// commands as a completed session does, makes no provider turn, and returns the session's
// result.
func TestFinishedSessionClosesInARunOfItsOwn(t *testing.T) {
	h := newHarness(t, 0, nil)
	h.at(time.Millisecond, func() { h.env.SetCurrentHistoryLength(closingRunAfter + 1) })
	res := h.run(goal(24))
	if len(h.earlier) != 1 {
		t.Fatalf("the session ran in %d runs; want the research and the closing run", len(h.earlier)+1)
	}
	finished := &harness{t: t, env: h.earlier[0]} // the finished run, which still answers

	h.mu.Lock()
	var closing []string // the activities after the report: the closing run's
	for _, s := range h.starts {
		closing = append(closing, s.activity)
		if s.activity == "Report" || s.activity == "Log" {
			closing = nil
		}
	}
	h.mu.Unlock()
	if len(closing) == 0 || slices.ContainsFunc(closing, func(a string) bool { return a != "Ranking" }) {
		t.Errorf("the closing run ran %v; want only Ranking, which reads the final ranking back", closing)
	}
	same := func(name string, a, b any) {
		t.Helper()
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the closing run answers\n%+v\nthe finished run\n%+v", name, a, b)
		}
	}
	same("status", query[Status](h, QueryStatus), query[Status](finished, QueryStatus))
	gp, wp := query[session.Progress](h, QueryProgress), query[session.Progress](finished, QueryProgress)
	gp.Elapsed, gp.ElapsedSeconds, wp.Elapsed, wp.ElapsedSeconds = "", 0, "", 0 // each run's own clock
	same("progress", gp, wp)
	for _, p := range []Page{{}, {Offset: 5, Limit: 7}, {Limit: MaxPageLimit}} {
		same(fmt.Sprintf("state %+v", p), query[StateView](h, QueryState, p), query[StateView](finished, QueryState, p))
	}
	same("history", query[HistoryView](h, QueryHistory, Page{Limit: MaxPageLimit}), query[HistoryView](finished, QueryHistory, Page{Limit: MaxPageLimit}))

	final, err := h.store.LatestCheckpoint(t.Context(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var top []session.Entry
	for _, e := range final.Hypotheses {
		if e.Excluded == "" && len(top) < 10 {
			top = append(top, e)
		}
	}
	if res.State != session.Completed || res.Hypotheses != 24 || !reflect.DeepEqual(res.Top, top) || res.Checkpoint != h.store.Where(res.SessionID, fmt.Sprintf("checkpoints/%06d.json", final.Seq)) {
		t.Errorf("the closing run returns %s with %d hypotheses, top %v, checkpoint %s; the final checkpoint %d has %d, top %v",
			res.State, res.Hypotheses, res.Top, res.Checkpoint, final.Seq, len(final.Hypotheses), top)
	}
	if _, err := os.Stat(res.ReportPath); err != nil {
		t.Errorf("the closing run's report: %v", err)
	}
	h.update(Suspend, map[string]string{"reason": "too late"}, func(_ Status, err error) {
		if err == nil || !strings.Contains(err.Error(), "completed") {
			t.Errorf("suspending the closed session: %v; want it refused as completed", err)
		}
	})
}
