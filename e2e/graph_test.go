package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

var (
	starterOnce sync.Once
	starterBin  string
	starterErr  error
)

// starter builds the starter once for the package's tests.
func starter(t *testing.T) string {
	t.Helper()
	starterOnce.Do(func() {
		starterBin = filepath.Join(buildDir, "starter")
		if out, err := goBuild(starterBin, "../starter"); err != nil {
			starterErr = fmt.Errorf("the starter does not build: %v\n%s", err, out)
		}
	})
	if starterErr != nil {
		t.Fatal(starterErr)
	}
	return starterBin
}

// starterSession builds the starter and starts a worker on a store of its own and one
// session on it, with 20 ms offline turns: where a test of the session graph begins.
func starterSession(t *testing.T, goal string, maxHypotheses int) (bin, id string) {
	t.Helper()
	bin = starter(t)
	startWorker(t, t.TempDir(), "--offline-latency", "20ms")
	id = newSessionID(t)
	startSession(t, id, research.Request{ResearchGoal: goal, Config: research.Config{MaxHypotheses: maxHypotheses}})
	return bin, id
}

// list runs a visibility query and returns the workflow ids it finds, eventually
// consistent as visibility is: each session once, by its current run, as the desk and
// the starter list them (a session that continued as new, or closed in a run of its own,
// has a record for each run).
func list(t *testing.T, query string) []string {
	t.Helper()
	query = "(" + query + ") AND ExecutionStatus != 'ContinuedAsNew'"
	resp, err := temporalClient.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
	if err != nil {
		t.Fatalf("list %q: %v", query, err)
	}
	var ids []string
	for _, ex := range resp.GetExecutions() {
		ids = append(ids, ex.GetExecution().GetWorkflowId())
	}
	return ids
}

// sessionEvents reads a finished session's whole event log from the store.
func sessionEvents(t *testing.T, storeDir, id string) []session.Event {
	t.Helper()
	st, err := store.Open(context.Background(), storeDir)
	if err != nil {
		t.Fatal(err)
	}
	events, err := st.Events(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// statusOf is a workflow's status as the server has it (not as visibility lists it).
func statusOf(id string) (enumspb.WorkflowExecutionStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := temporalClient.DescribeWorkflowExecution(ctx, id, "")
	return d.GetWorkflowExecutionInfo().GetStatus(), err
}

// TestSubagentSurvivesWorkerCrash forks subagents on the real server, kills the worker
// while a subagent runs, and checks that on another worker the parent merges each
// subagent's result exactly once, at its fork point.
func TestSubagentSurvivesWorkerCrash(t *testing.T) {
	storeDir := t.TempDir()
	workerA := startWorker(t, storeDir, "--offline-latency", "300ms")
	id := newSessionID(t)
	startSession(t, id, research.Request{
		ResearchGoal: "Find why some coral reefs recover from bleaching faster than others",
		Config:       research.Config{MaxHypotheses: 30, ConvergenceRounds: research.MaxConvergenceRounds},
	})
	// Visibility lags: a subagent it lists as running may have closed. The kill waits for
	// one the server itself says runs, and the test checks that it still ran after the kill.
	var child string
	eventuallyEvery(t, 3*time.Minute, 50*time.Millisecond, "a subagent to be running", func() (bool, error) {
		for _, c := range list(t, fmt.Sprintf("%s = '%s' AND ExecutionStatus = 'Running'", workflows.AttrParentSession, id)) {
			if st, err := statusOf(c); err != nil || st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				continue
			}
			child = c
			return true, nil
		}
		return false, nil
	})
	workerA.Kill(t)
	if st, err := statusOf(child); err != nil || st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("subagent %s was %s when the worker had been killed (%v); want it running through the crash", child, st, err)
	}
	t.Logf("killed the worker while subagent %s ran", child)
	startWorker(t, storeDir, "--offline-latency", "300ms")
	res, err := result(id, 5*time.Minute)
	if err != nil || res.State != session.Completed {
		t.Fatalf("session after the crash: %+v, %v", res, err)
	}

	// Temporal delivered each child's completion once...
	completions := map[string]int{}
	for _, run := range sessionHistories(t, id) {
		for _, e := range run {
			if a := e.GetChildWorkflowExecutionCompletedEventAttributes(); a != nil {
				completions[a.GetWorkflowExecution().GetWorkflowId()]++
			}
		}
	}
	if completions[child] != 1 {
		t.Errorf("the subagent that ran through the crash completed %d times in the parent's history; want 1", completions[child])
	}
	// ...and the session merged each result once, at its fork point.
	forks := map[string]int{}
	merged := map[string]int{}
	for _, e := range sessionEvents(t, storeDir, id) {
		if e.Kind != session.EventSubagent {
			continue
		}
		if e.At == 0 {
			forks[e.Session] = e.Seq
			continue
		}
		merged[e.Session]++
		if e.At != forks[e.Session] {
			t.Errorf("the result of %s merged at event %d; it was forked at %d", e.Session, e.At, forks[e.Session])
		}
	}
	if _, ok := forks[child]; !ok {
		t.Fatalf("the parent's log does not record forking %s", child)
	}
	for sub := range forks {
		if merged[sub] != 1 {
			t.Errorf("subagent %s: %d results merged; want exactly 1", sub, merged[sub])
		}
	}
	// The subagent is a session of its own in visibility: type, parent and conversation.
	subs := list(t, fmt.Sprintf("%s = 'subagent' AND %s = '%s' AND %s = '%s'", workflows.AttrSessionType, workflows.AttrParentSession, id, workflows.AttrConversation, id))
	if len(subs) != len(forks) {
		t.Errorf("visibility lists %d subagents of %s; the log forked %d", len(subs), id, len(forks))
	}
}

// TestContinueAndFork drives the session graph with the starter: continue (twice at
// once: exactly one wins), fork from a checkpoint, continue a suspended session (it hands
// over), the lineage in visibility and in `starter tree`, and archive.
func TestContinueAndFork(t *testing.T) {
	bin, id := starterSession(t, "Explain why octopuses edit their RNA", 8)
	first, err := result(id, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}

	// Two clients continue the same session at once: Temporal lets exactly one start.
	var wg sync.WaitGroup
	runs := make([]starterRun, 2)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i] = runStarter(t, bin, serverAddress, "continue", id, "--max-hypotheses", "6")
		}()
	}
	wg.Wait()
	next := id + ".2"
	won := 0
	for _, r := range runs {
		switch {
		case r.code == 0 && strings.HasPrefix(r.stdout, next):
			won++
		case r.code == 1 && strings.Contains(r.output(), "already continued as "+next):
		default:
			t.Errorf("continue: exit %d, %q", r.code, r.output())
		}
	}
	if won != 1 {
		t.Fatalf("%d of two simultaneous continues started %s; want exactly one", won, next)
	}
	cont, err := result(next, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if cont.Hypotheses < first.Hypotheses+6 {
		t.Errorf("%s has %d hypotheses; want %s's %d and 6 more", next, cont.Hypotheses, id, first.Hypotheses)
	}
	eventually(t, 10*time.Second, next+" in visibility with its lineage", func() (bool, error) {
		ids := list(t, fmt.Sprintf("%s = '%s' AND %s = '%s' AND %s = 'user'", workflows.AttrParentSession, id, workflows.AttrConversation, id, workflows.AttrSessionType))
		return len(ids) == 1 && ids[0] == next, nil
	})

	// A fork from checkpoint 1 starts a conversation of its own.
	r := runStarter(t, bin, serverAddress, "fork", id, "--checkpoint", "1", "--max-hypotheses", "4")
	if r.code != 0 {
		t.Fatalf("fork exited %d", r.code)
	}
	fork := strings.TrimSpace(strings.SplitN(r.stdout, "\n", 2)[0])
	if !strings.HasPrefix(fork, id+"-fork-") {
		t.Fatalf("fork id %q", fork)
	}
	if _, err := result(fork, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, fork+" in visibility from checkpoint 1", func() (bool, error) {
		ids := list(t, fmt.Sprintf("%s = '%s' AND %s = '%s' AND %s = 1", workflows.AttrParentSession, id, workflows.AttrConversation, fork, workflows.AttrSourceCheckpoint))
		return len(ids) == 1, nil
	})

	// A suspended session hands over to the session that continues it.
	sus := newSessionID(t)
	startSession(t, sus, research.Request{ResearchGoal: "Explain why octopuses edit their RNA", Config: research.Config{MaxHypotheses: 200}})
	eventually(t, 30*time.Second, sus+" to have hypotheses", func() (bool, error) {
		p, err := progressOf(sus)
		return p.HypothesesGenerated >= 4, err
	})
	if r := runStarter(t, bin, serverAddress, "continue", sus); r.code != 1 || !strings.Contains(r.output(), "suspend it first") {
		t.Errorf("continuing an active session: exit %d; want it refused", r.code)
	}
	if _, err := update(sus, workflows.Suspend, "", nil); err != nil {
		t.Fatal(err)
	}
	if r := runStarter(t, bin, serverAddress, "continue", sus, "--max-hypotheses", "4"); r.code != 0 {
		t.Fatalf("continuing a suspended session exited %d", r.code)
	}
	old, err := result(sus, 2*time.Minute)
	if err != nil || old.ContinuedAs != sus+".2" || !strings.Contains(old.StopReason, "continued as "+sus+".2") {
		t.Fatalf("the suspended session ended %+v (%v); want it continued as %s.2", old, err, sus)
	}
	succ, err := result(sus+".2", 2*time.Minute)
	if err != nil || succ.Hypotheses < old.Hypotheses+4 {
		t.Fatalf("the successor: %+v (%v); want %d hypotheses and 4 more", succ, err, old.Hypotheses)
	}

	// The tree from any member shows the whole lineage.
	tree := runStarter(t, bin, serverAddress, "tree", next)
	for _, want := range []string{id, next, fork, "continue", "fork", "from checkpoint 1"} {
		if !strings.Contains(tree.stdout, want) {
			t.Errorf("starter tree lacks %q:\n%s", want, tree.stdout)
		}
	}

	// Archive: soft delete. The session stays readable, and out of the default list.
	if r := runStarter(t, bin, serverAddress, "archive", id); r.code != 0 {
		t.Fatalf("archive exited %d", r.code)
	}
	if _, err := result(id, 10*time.Second); err != nil {
		t.Errorf("an archived session is no longer readable: %v", err)
	}
	if r := runStarter(t, bin, serverAddress, "continue", id); r.code != 1 || !strings.Contains(r.output(), "archived") {
		t.Errorf("continuing an archived session: exit %d", r.code)
	}
	eventually(t, 10*time.Second, "the default list to hide the archived session", func() (bool, error) {
		plain := runStarter(t, bin, serverAddress, "list", "--limit", "100")
		all := runStarter(t, bin, serverAddress, "list", "--limit", "100", "--archived")
		return !strings.Contains(plain.stdout, id+" ") && strings.Contains(all.stdout, id), nil
	})
	if r := runStarter(t, bin, serverAddress, "archive", next); r.code != 0 {
		t.Errorf("archive exited %d", r.code)
	}
}

// TestScheduleAndHeartbeat: a Temporal Schedule starts cron sessions, and the heartbeat
// forks verification subagents over the foreground session's leads; both send their
// message to the most recent foreground session, found through visibility.
func TestScheduleAndHeartbeat(t *testing.T) {
	bin, fg := starterSession(t, "Find what sets the lifespan of naked mole-rats", 500)
	eventually(t, 60*time.Second, fg+" to have a checkpoint", func() (bool, error) {
		p, err := progressOf(fg)
		return p.Checkpoints >= 1, err
	})
	if _, err := update(fg, workflows.Suspend, "", map[string]string{"reason": "waiting for the night's reviews"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, fg+" to be the foreground session", func() (bool, error) {
		return len(list(t, fmt.Sprintf("WorkflowId = '%s' AND %s = 'user'", fg, workflows.AttrSessionType))) == 1, nil
	})

	name := "review-" + safeName(t.Name())
	if r := runStarter(t, bin, serverAddress, "schedule", "create", "--id", name, "--every", "1h", "--goal", "Review what is new on naked mole-rat longevity", "--max-hypotheses", "4"); r.code != 0 {
		t.Fatalf("schedule create exited %d", r.code)
	}
	t.Cleanup(func() { runStarter(t, bin, serverAddress, "schedule", "delete", name) })
	if r := runStarter(t, bin, serverAddress, "schedule", "trigger", name); r.code != 0 {
		t.Fatalf("schedule trigger exited %d", r.code)
	}
	if r := runStarter(t, bin, serverAddress, "heartbeat", "--top", "2"); r.code != 0 {
		t.Fatalf("heartbeat exited %d", r.code)
	}
	var beat workflows.HeartbeatResult
	if err := temporalClient.GetWorkflow(context.Background(), workflows.HeartbeatID, "").Get(context.Background(), &beat); err != nil {
		t.Fatal(err)
	}
	if beat.Foreground != fg || len(beat.Results) != 2 {
		t.Errorf("heartbeat: %+v; want 2 verifications of %s's leads", beat, fg)
	}

	eventually(t, 2*time.Minute, "the cron session's and the heartbeat's messages to reach "+fg, func() (bool, error) {
		last, err := query[workflows.HistoryView](fg, workflows.QueryHistory, workflows.Page{Limit: 1})
		if err != nil {
			return false, err
		}
		h, err := query[workflows.HistoryView](fg, workflows.QueryHistory, workflows.Page{Offset: max(0, last.Total-workflows.MaxPageLimit), Limit: workflows.MaxPageLimit})
		if err != nil {
			return false, err
		}
		from := map[string]bool{}
		for _, e := range h.Events {
			if e.Kind == session.EventMessage {
				from[e.Session] = true
			}
		}
		cron := false
		for s := range from {
			cron = cron || strings.HasPrefix(s, name)
		}
		return cron && from[workflows.HeartbeatID], nil
	})
	crons := list(t, fmt.Sprintf("%s = 'cron' AND WorkflowId STARTS_WITH '%s'", workflows.AttrSessionType, name))
	if len(crons) != 1 {
		t.Errorf("visibility lists %d cron sessions of %s; want 1", len(crons), name)
	}
	terminateIfRunning(t, fg)
}
