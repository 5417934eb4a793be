package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// Provider turns: the activities a suspended session must not start.
var turnActivities = []string{"Plan", "Generate", "Evolve", "Review", "Compare", "Debate", "Proximity", "MetaReview", "Overview"}

// TestSteering drives a session through the scientist's whole repertoire: suspend, queries
// and bad commands while suspended, a goal refinement, resume and terminate. It checks what
// the scientist sees and, in the Temporal history and the store, what actually happened.
func TestSteering(t *testing.T) {
	storeDir := t.TempDir()
	startWorker(t, storeDir, "--offline-latency", "150ms")

	const (
		goal      = "Identify druggable mechanisms that slow tau propagation in early Alzheimer's disease"
		refined   = "Determine whether microglial TREM2 signalling limits trans-synaptic tau spread"
		suspendID = "suspend-for-lunch"
		resumeID  = "resume-after-lunch"
	)
	id := newSessionID(t)
	startSession(t, id, research.Request{
		ResearchGoal: goal,
		Config:       research.Config{MaxHypotheses: 40, ReviewTypes: []string{research.ReviewInitial}},
	})

	eventually(t, 60*time.Second, "the session to generate 4 hypotheses", func() (bool, error) {
		p, err := progressOf(id)
		return p.HypothesesGenerated >= 4, err
	})

	// Suspend by update: the answer is the new status.
	st, err := update(id, workflows.Suspend, suspendID, map[string]string{"reason": "lunch"})
	if err != nil {
		t.Fatalf("suspend update: %v", err)
	}
	switch {
	case st.Reason != "lunch" || st.SessionID != id:
		t.Errorf("suspend update answered %+v; want state %q, reason %q, session %s", st, session.Suspended, "lunch", id)
	case st.State == session.Checkpointing && st.After == session.Suspended:
		// The suspend landed while a round's checkpoint was written: the session suspends
		// when the checkpoint ends, and the answer says so.
		t.Logf("the suspend landed during a checkpoint: %+v", st)
	case st.State != session.Suspended:
		t.Errorf("suspend update answered state %q (after %q); want %q", st.State, st.After, session.Suspended)
	}
	// If the suspend landed during a checkpoint, the lifecycle passes through checkpointing
	// for a moment; the status query must settle on suspended.
	eventually(t, 10*time.Second, "the status query to say suspended", func() (bool, error) {
		st, err := query[workflows.Status](id, workflows.QueryStatus)
		return st.State == session.Suspended, err
	})

	// A second suspend is refused, with a reason.
	if _, err := update(id, workflows.Suspend, "suspend-again", map[string]string{"reason": "coffee"}); err == nil {
		t.Errorf("a second suspend was accepted; want it refused")
	} else if !strings.Contains(err.Error(), "cannot suspend: session is suspended") {
		t.Errorf("a second suspend failed with %q; want it to say %q", err, "cannot suspend: session is suspended")
	}

	// Every query answers while suspended.
	status := mustQuery[workflows.Status](t, id, workflows.QueryStatus)
	if status.State != session.Suspended || status.Reason != "lunch" || status.Goal != goal {
		t.Errorf("status while suspended: %+v; want suspended for lunch, goal %q", status, goal)
	}
	if p := mustQuery[session.Progress](t, id, workflows.QueryProgress); p.HypothesesGenerated < 4 || p.State != session.Suspended {
		t.Errorf("progress while suspended: %+v; want >= 4 hypotheses, state suspended", p)
	}
	view := mustQuery[workflows.StateView](t, id, workflows.QueryState, workflows.Page{Limit: 5})
	if len(view.Hypotheses) > 5 || view.Total < 4 || view.Limit != 5 {
		t.Errorf("state page {limit 5} while suspended: %d entries, total %d, limit %d; want at most 5 entries of a total >= 4",
			len(view.Hypotheses), view.Total, view.Limit)
	}
	if h := mustQuery[workflows.HistoryView](t, id, workflows.QueryHistory); h.Total == 0 || len(h.Events) == 0 {
		t.Errorf("history while suspended is empty: %+v", h)
	}

	// A resume signal that does not decode is recorded as rejected and changes nothing.
	signal(t, id, workflows.Resume, "bad")
	eventually(t, 10*time.Second, "the history query to show the malformed resume signal, rejected", func() (bool, error) {
		e, err := findCommand(id, workflows.Resume, "signal")
		return e != nil && e.Accepted != nil && !*e.Accepted, err
	})
	if st := mustQuery[workflows.Status](t, id, workflows.QueryStatus); st.State != session.Suspended {
		t.Errorf("after a malformed resume signal the session is %s; want it still suspended", st.State)
	}

	// Refine the goal while suspended.
	signal(t, id, workflows.RefineGoal, map[string]string{"goal": refined, "focus": "microglia"})
	eventually(t, 10*time.Second, "the history query to show the refine-goal signal, accepted", func() (bool, error) {
		e, err := findCommand(id, workflows.RefineGoal, "signal")
		return e != nil && e.Accepted != nil && *e.Accepted, err
	})
	if v := mustQuery[workflows.StateView](t, id, workflows.QueryState, workflows.Page{Limit: 1}); v.Goal != refined || len(v.Refinements) != 1 || v.Refinements[0].Focus != "microglia" {
		t.Errorf("state after refine-goal: goal %q, refinements %+v; want goal %q and one refinement with focus microglia", v.Goal, v.Refinements, refined)
	}

	// Suspended means idle: the turns in flight finish and nothing new starts.
	untilIdle(t, temporalClient, id)
	visibility := fmt.Sprintf("WorkflowId='%s' AND %s='%s'", id, workflows.AttrSessionStatus, session.Suspended)
	eventually(t, 30*time.Second, "visibility to list the session as suspended", func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := temporalClient.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: visibility})
		if err != nil {
			return false, err
		}
		return len(resp.GetExecutions()) == 1 && resp.GetExecutions()[0].GetExecution().GetWorkflowId() == id, nil
	})
	atSuspension := mustQuery[session.Progress](t, id, workflows.QueryProgress).HypothesesGenerated

	// Resume by update; the session goes on.
	st, err = update(id, workflows.Resume, resumeID, map[string]string{})
	if err != nil {
		t.Fatalf("resume update: %v", err)
	}
	if st.State != session.Active {
		t.Errorf("resume update answered state %q; want %q", st.State, session.Active)
	}
	eventually(t, 60*time.Second, fmt.Sprintf("4 more hypotheses than the %d at suspension", atSuspension), func() (bool, error) {
		p, err := progressOf(id)
		return p.HypothesesGenerated >= atSuspension+4, err
	})

	// Terminate by signal: the session ends gracefully, with a report.
	signal(t, id, workflows.Terminate, map[string]string{"reason": "enough"})
	res, err := result(id, 60*time.Second)
	if err != nil {
		t.Fatalf("session result: %v", err)
	}
	if res.State != session.Completed || !strings.Contains(res.StopReason, "enough") {
		t.Errorf("result: state %q, stop reason %q; want completed, terminated because of %q", res.State, res.StopReason, "enough")
	}
	if res.Hypotheses < atSuspension+4 || res.Hypotheses >= 40 {
		t.Errorf("result has %d hypotheses; want at least %d and fewer than 40", res.Hypotheses, atSuspension+4)
	}
	if report, err := os.ReadFile(res.ReportPath); err != nil {
		t.Errorf("report %q: %v", res.ReportPath, err)
	} else if !strings.Contains(string(report), refined) {
		t.Errorf("report %s does not mention the refined goal %q", res.ReportPath, refined)
	}

	// The Temporal history: no provider turn was scheduled while the session was suspended.
	events := slices.Concat(sessionHistories(t, id)...)
	suspended, resumed, refinedAt := -1, -1, -1
	for i, e := range events {
		switch {
		case e.GetWorkflowExecutionUpdateCompletedEventAttributes().GetMeta().GetUpdateId() == suspendID:
			suspended = i
		case e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetMeta().GetUpdateId() == resumeID:
			resumed = i
		case e.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == workflows.RefineGoal:
			refinedAt = i
		}
	}
	if suspended < 0 || resumed < 0 || refinedAt < 0 || !(suspended < refinedAt && refinedAt < resumed) {
		t.Fatalf("history events: suspend completed at %d, refine-goal signalled at %d, resume accepted at %d; want all three, in that order",
			suspended, refinedAt, resumed)
	}
	checkpointsWhileSuspended, generatesAfterResume := 0, 0
	for i, e := range events {
		a := e.GetActivityTaskScheduledEventAttributes()
		if a == nil {
			continue
		}
		typ := a.GetActivityType().GetName()
		switch {
		case i > suspended && i < resumed && slices.Contains(turnActivities, typ):
			t.Errorf("event %d: activity %s (%s) was scheduled while the session was suspended", e.GetEventId(), typ, a.GetActivityId())
		case i > suspended && i < resumed && typ == "Checkpoint":
			checkpointsWhileSuspended++
		case i > resumed && typ == "Generate":
			generatesAfterResume++
		}
	}
	if checkpointsWhileSuspended == 0 {
		t.Errorf("no checkpoint was written for the goal refinement while suspended")
	}
	if generatesAfterResume == 0 {
		t.Errorf("no Generate activity was scheduled after the resume")
	}

	// The store: hypotheses asked for before the refinement answer the original goal, those
	// asked for after it answer the refined one.
	before, after := map[string]bool{}, map[string]bool{}
	for i, e := range events {
		if !makesHypotheses[e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()] {
			continue
		}
		var in struct {
			HypothesisID string `json:"hypothesis_id"`
		}
		decodeInput(t, e, &in)
		if i < refinedAt {
			before[in.HypothesisID] = true
		} else {
			after[in.HypothesisID] = true
		}
	}
	hyps := storedHypotheses(t, storeDir, id)
	var nBefore, nAfter int
	for hid, h := range hyps {
		switch {
		case before[hid]:
			nBefore++
			if h.Goal != goal {
				t.Errorf("hypothesis %s was generated before the refinement but answers goal %q; want %q", hid, h.Goal, goal)
			}
		case after[hid]:
			nAfter++
			if h.Goal != refined {
				t.Errorf("hypothesis %s was generated after the refinement but answers goal %q; want %q", hid, h.Goal, refined)
			}
		default:
			t.Errorf("hypothesis %s is in the store but no Generate or Evolve activity asked for it", hid)
		}
	}
	t.Logf("suspended at %d hypotheses; %d checkpoint(s) while suspended; ended with %d (%d for the original goal, %d for the refined one)",
		atSuspension, checkpointsWhileSuspended, res.Hypotheses, nBefore, nAfter)
	if nBefore < 4 || nAfter < 4 || len(hyps) != res.Hypotheses {
		t.Errorf("store holds %d hypotheses (%d before the refinement, %d after); want the result's %d, at least 4 on each side",
			len(hyps), nBefore, nAfter, res.Hypotheses)
	}
}

// findCommand returns the first command event in the session's own log for the named
// command sent the given way, or nil.
func findCommand(id, name, via string) (*session.Event, error) {
	h, err := query[workflows.HistoryView](id, workflows.QueryHistory, workflows.Page{Limit: workflows.MaxPageLimit})
	if err != nil {
		return nil, err
	}
	for _, e := range h.Events {
		if e.Kind == session.EventCommand && e.Command == name && e.Via == via {
			return &e, nil
		}
	}
	return nil, nil
}

// TestCrashRecovery kills a worker mid-session (SIGKILL, no goodbye) and checks that a new
// worker on the same store finishes the session with every hypothesis made exactly once.
func TestCrashRecovery(t *testing.T) {
	const maxHyps = 24
	storeDir := t.TempDir()
	workerA := startWorker(t, storeDir, "--offline-latency", "100ms")

	id := newSessionID(t)
	startSession(t, id, research.Request{
		ResearchGoal: "Find metabolic vulnerabilities of glioblastoma stem cells",
		Config:       research.Config{MaxHypotheses: maxHyps},
	})
	var atKill session.Progress
	eventually(t, 60*time.Second, "the session to be part-way (6 or more hypotheses, fewer than 24)", func() (bool, error) {
		p, err := progressOf(id)
		if err != nil {
			return false, err
		}
		if p.HypothesesGenerated >= maxHyps {
			return false, fmt.Errorf("the session already has all %d hypotheses: too late to crash it", maxHyps)
		}
		atKill = p
		return p.HypothesesGenerated >= 6, nil
	})
	workerA.Kill(t)
	t.Logf("killed %s at %d hypotheses, %d reviews, %d matches, round %d",
		workerA.name, atKill.HypothesesGenerated, atKill.ReviewsCompleted, atKill.MatchesPlayed, atKill.Rounds)

	startWorker(t, storeDir, "--offline-latency", "100ms")
	res, err := result(id, 3*time.Minute)
	if err != nil {
		t.Fatalf("session result after the crash: %v", err)
	}
	if res.State != session.Completed || res.Hypotheses != maxHyps {
		t.Errorf("result: state %q, %d hypotheses (%s); want completed with %d", res.State, res.Hypotheses, res.StopReason, maxHyps)
	}

	view := mustQuery[workflows.StateView](t, id, workflows.QueryState, workflows.Page{Limit: workflows.MaxPageLimit})
	ids := map[string]bool{}
	for _, e := range view.Hypotheses {
		ids[e.ID] = true
	}
	if len(view.Hypotheses) != maxHyps || len(ids) != maxHyps || view.Total != maxHyps {
		t.Errorf("state lists %d hypotheses (%d distinct ids, total %d); want %d", len(view.Hypotheses), len(ids), view.Total, maxHyps)
	}
	files := storedHypotheses(t, storeDir, id)
	if len(files) != maxHyps {
		t.Errorf("the store holds %d hypothesis files; want %d", len(files), maxHyps)
	}
	for hid := range ids {
		if _, ok := files[hid]; !ok {
			t.Errorf("hypothesis %s is in the session's state but not in the store", hid)
		}
	}

	// Each generation turn completed exactly once, however the crash cut it.
	completed, retried := 0, 0
	for _, events := range sessionHistories(t, id) { // event ids start again in each run
		types := activityTypes(events)
		for _, e := range events {
			if a := e.GetActivityTaskCompletedEventAttributes(); a != nil && makesHypotheses[types[a.GetScheduledEventId()]] {
				completed++
			}
			if a := e.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() > 1 {
				retried++
			}
		}
	}
	if completed != len(ids) {
		t.Errorf("%d Generate and Evolve activities completed for %d distinct hypotheses; want one per hypothesis", completed, len(ids))
	}
	t.Logf("recovered: %d activities needed a retry after the crash", retried)
}

// TestDuplicateSessionRefused: a session ID names one session, for good.
func TestDuplicateSessionRefused(t *testing.T) {
	id := newSessionID(t)
	req := research.Request{ResearchGoal: "Explain antibiotic tolerance in persister cells"}
	first := startSession(t, id, req)

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var exists *serviceerror.WorkflowExecutionAlreadyStarted
	_, err := temporalClient.ExecuteWorkflow(ctx, startOptions(id), workflows.WorkflowType,
		research.Request{ResearchGoal: "A different goal under the same ID"})
	if !errors.As(err, &exists) {
		t.Fatalf("starting a second session %s while the first runs: error %v (%T); want *serviceerror.WorkflowExecutionAlreadyStarted", id, err, err)
	}
	d, err := temporalClient.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if info := d.GetWorkflowExecutionInfo(); info.GetExecution().GetRunId() != first.GetRunID() || info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Errorf("after the refused start the session is run %s (%s); want the first run %s, still running",
			info.GetExecution().GetRunId(), info.GetStatus(), first.GetRunID())
	}

	// An ended session's ID is not reused either.
	if err := temporalClient.TerminateWorkflow(ctx, id, "", "e2e: end the first session"); err != nil {
		t.Fatal(err)
	}
	_, err = temporalClient.ExecuteWorkflow(ctx, startOptions(id), workflows.WorkflowType, req)
	if !errors.As(err, &exists) {
		t.Errorf("starting a session with the ID of an ended one: error %v (%T); want *serviceerror.WorkflowExecutionAlreadyStarted", err, err)
	}
}

// TestInvalidRequestRefusedByWorkflow: a request that skipped the client's checks is
// refused by the workflow itself, which fails with the field at fault.
func TestInvalidRequestRefusedByWorkflow(t *testing.T) {
	startWorker(t, t.TempDir())
	id := newSessionID(t)
	startSession(t, id, research.Request{ResearchGoal: ""})

	_, err := result(id, 60*time.Second)
	if err == nil || !strings.Contains(err.Error(), "research_goal") {
		t.Fatalf("a session with an empty goal ended with error %v; want one naming research_goal", err)
	}
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() {
		t.Errorf("the refusal is %T (%v); want a non-retryable application error", err, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := temporalClient.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if s := d.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
		t.Errorf("workflow status %s; want FAILED", s)
	}
	st := mustQuery[workflows.Status](t, id, workflows.QueryStatus)
	if st.State != session.Failed || !strings.Contains(st.Reason, "research_goal") {
		t.Errorf("status of the refused session: %+v; want state failed, reason naming research_goal", st)
	}
}

// TestTimeLimit: a session with a time limit stops on time, whatever its max_hypotheses.
func TestTimeLimit(t *testing.T) {
	const limit = 3 * time.Second
	startWorker(t, t.TempDir(), "--offline-latency", "50ms")
	id := newSessionID(t)
	startSession(t, id, research.Request{
		ResearchGoal: "Propose catalysts for ambient-pressure ammonia synthesis",
		Config:       research.Config{MaxHypotheses: research.MaxHypothesesLimit, TimeLimit: research.Duration(limit)},
	})
	res, err := result(id, 60*time.Second)
	if err != nil {
		t.Fatalf("session result: %v", err)
	}
	if res.State != session.Completed || !strings.Contains(res.StopReason, "time_limit") {
		t.Errorf("result: state %q, stop reason %q; want completed because of the time_limit", res.State, res.StopReason)
	}
	if res.Hypotheses <= 0 || res.Hypotheses >= research.MaxHypothesesLimit {
		t.Errorf("result has %d hypotheses; want some, and fewer than %d", res.Hypotheses, research.MaxHypothesesLimit)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// From the first run's start to the last run's close: a finished session whose run grew
	// long closes in a run of its own.
	last, err := temporalClient.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	first, err := temporalClient.DescribeWorkflowExecution(ctx, id, last.GetWorkflowExecutionInfo().GetFirstRunId())
	if err != nil {
		t.Fatal(err)
	}
	took := last.GetWorkflowExecutionInfo().GetCloseTime().AsTime().Sub(first.GetWorkflowExecutionInfo().GetStartTime().AsTime())
	if took < limit || took > limit+10*time.Second {
		t.Errorf("the session ran for %s; want it to stop soon after its %s time limit", took, limit)
	}
	t.Logf("time limit %s: stopped after %s with %d hypotheses", limit, took.Round(time.Millisecond), res.Hypotheses)
}

// makesHypotheses are the activities that add a hypothesis: generation and evolution.
var makesHypotheses = map[string]bool{"Generate": true, "Evolve": true}
