package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// pollInterval is how often eventually re-checks its condition.
const pollInterval = 75 * time.Millisecond

// eventually polls cond until it holds, and fails the test naming what it waited for if it
// does not hold within timeout. An error from cond counts as "not yet" (a query may fail
// while a worker starts); the last one is reported on timeout.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	eventuallyEvery(t, timeout, pollInterval, what, cond)
}

// eventuallyEvery is eventually with its own poll interval: a benchmark polls a large
// session less often, or a fast event more often.
func eventuallyEvery(t testing.TB, timeout, interval time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var lastErr error
	for {
		ok, err := cond()
		if err == nil && ok {
			return
		}
		if err != nil {
			lastErr = err
		}
		if time.Now().After(deadline) {
			if lastErr != nil {
				t.Fatalf("gave up after %s waiting for %s; last error: %v", timeout, what, lastErr)
			}
			t.Fatalf("gave up after %s waiting for %s", timeout, what)
		}
		<-tick.C
	}
}

// workerProc is a worker process started by startWorker.
type workerProc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
	err  error         // how it exited, once done is closed
}

var workerSeq atomic.Int64

// startWorker starts a cosci worker on the dev server with its session store in storeDir
// and the given flags (such as --offline-latency 100ms). The worker is stopped when the
// test ends, and its output is shown if the test failed.
func startWorker(t testing.TB, storeDir string, flags ...string) *workerProc {
	t.Helper()
	return startWorkerEnv(t, storeDir, nil, flags...)
}

// startWorkerEnv is startWorker with extra environment variables (KEY=value), such as a
// provider's credentials.
func startWorkerEnv(t testing.TB, storeDir string, env []string, flags ...string) *workerProc {
	t.Helper()
	return startWorkerOn(t, serverAddress, "", storeDir, env, flags...)
}

// startWorkerOn starts a cosci worker on the Temporal server at address, in working
// directory dir ("" for this one), with its session store at store (a directory or a
// postgres:// URL).
func startWorkerOn(t testing.TB, address, dir, storeDir string, env []string, flags ...string) *workerProc {
	t.Helper()
	return startWorkerBinary(t, workerBinary, address, dir, storeDir, env, flags...)
}

// startWorkerBinary is startWorkerOn with a worker binary of the test's (another build).
func startWorkerBinary(t testing.TB, bin, address, dir, storeDir string, env []string, flags ...string) *workerProc {
	t.Helper()
	name := fmt.Sprintf("worker-%d", workerSeq.Add(1))
	logPath := filepath.Join(buildDir, safeName(t.Name())+"-"+name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, flags...)
	cmd.Env = append(append(cleanEnv(address), "COSCI_STORE="+storeDir), env...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("cannot start %s: %v", name, err)
	}
	w := &workerProc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		w.err = cmd.Wait()
		logFile.Close()
		close(w.done)
	}()
	t.Logf("started %s (pid %d, server %s, store %s, flags %q, %d extra environment variables, log %s)", name, cmd.Process.Pid, address, storeDir, flags, len(env), logPath)
	t.Cleanup(func() {
		w.Stop(t)
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("---- output of %s ----\n%s\n---- end of %s ----", name, tail(b, 150), name)
		}
	})
	return w
}

// cleanEnv is this process's environment without any Temporal, cosci or model provider
// settings, plus the given server address: a worker or starter must talk to the test's
// server and nothing else, and never to a real model with the developer's key.
func cleanEnv(address string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TEMPORAL_") || strings.HasPrefix(kv, "COSCI_") ||
			strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "ANTHROPIC_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"TEMPORAL_ADDRESS="+address,
		"TEMPORAL_NAMESPACE=default",
		// No temporal.toml profile of the developer's may point elsewhere.
		"TEMPORAL_CONFIG_FILE="+filepath.Join(buildDir, "no-such-temporal.toml"),
	)
}

// Kill ends the worker at once, as a crash would (SIGKILL), and waits for it to exit.
func (w *workerProc) Kill(t testing.TB) {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("cannot kill %s: %v", w.name, err)
	}
	w.Wait(t, 30*time.Second)
}

// Stop asks the worker to shut down (SIGINT, as Ctrl-C does) and waits for it; a worker
// that does not stop within 20 seconds is killed.
func (w *workerProc) Stop(t testing.TB) {
	t.Helper()
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-w.done:
	case <-time.After(20 * time.Second):
		t.Errorf("%s did not stop within 20s of SIGINT; killing it", w.name)
		_ = w.cmd.Process.Signal(syscall.SIGKILL)
		<-w.done
	}
}

// Wait waits for the worker to exit and returns how it exited.
func (w *workerProc) Wait(t testing.TB, timeout time.Duration) error {
	t.Helper()
	select {
	case <-w.done:
		return w.err
	case <-time.After(timeout):
		t.Fatalf("%s has not exited after %s", w.name, timeout)
		return nil
	}
}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9]+`)

func safeName(s string) string { return strings.Trim(nonWord.ReplaceAllString(s, "-"), "-") }

var sessionSeq atomic.Int64

// newSessionID is a session ID no other test (or earlier run) uses.
func newSessionID(t testing.TB) string {
	return fmt.Sprintf("e2e-%s-%d-%d", strings.ToLower(safeName(t.Name())), time.Now().UnixNano(), sessionSeq.Add(1))
}

// startOptions are the options the starter uses: a fresh ID only.
func startOptions(id string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                workflows.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}
}

// startSession starts a research session and makes sure it does not outlive the test:
// a session still running at the end is terminated, so no later test's worker picks it up.
func startSession(t testing.TB, id string, req research.Request) client.WorkflowRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	run, err := temporalClient.ExecuteWorkflow(ctx, startOptions(id), workflows.WorkflowType, req)
	if err != nil {
		t.Fatalf("cannot start session %s: %v", id, err)
	}
	t.Cleanup(func() { terminateIfRunning(t, id) })
	return run
}

// terminateIfRunning ends a workflow the hard way if it is still open.
func terminateIfRunning(t testing.TB, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := temporalClient.TerminateWorkflow(ctx, id, "", "e2e test cleanup")
	var notFound *serviceerror.NotFound
	if err != nil && !errors.As(err, &notFound) {
		t.Logf("cleanup: cannot terminate %s: %v", id, err)
	}
}

// query runs a query on a session and decodes its answer.
func query[T any](id, name string, args ...any) (T, error) {
	return queryWithin[T](queryTimeout, id, name, args...)
}

// queryTimeout is a query's time, as the desk's and the starter's: over twice the sticky
// queue's 5 s, since the SDK gives the call half of it and the server sends a query that
// the session's worker left on its sticky queue for 5 s to the task queue only within the
// call's time (desk/backend.go). A loaded machine leaves one so now and then.
const queryTimeout = 20 * time.Second

// queryWithin is query with a timeout of its own: a query on a closed workflow of 1000
// hypotheses replays its whole history, which takes longer than query's.
func queryWithin[T any](timeout time.Duration, id, name string, args ...any) (T, error) {
	var out T
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	v, err := temporalClient.QueryWorkflow(ctx, id, "", name, args...)
	if err != nil {
		return out, fmt.Errorf("query %s on %s: %w", name, id, err)
	}
	if err := v.Get(&out); err != nil {
		return out, fmt.Errorf("query %s on %s: decode: %w", name, id, err)
	}
	return out, nil
}

// mustQuery is query for a session that must answer now.
func mustQuery[T any](t testing.TB, id, name string, args ...any) T {
	t.Helper()
	return mustQueryWithin[T](t, queryTimeout, id, name, args...)
}

// mustQueryWithin is mustQuery with a timeout of its own.
func mustQueryWithin[T any](t testing.TB, timeout time.Duration, id, name string, args ...any) T {
	t.Helper()
	v, err := queryWithin[T](timeout, id, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func progressOf(id string) (session.Progress, error) {
	return query[session.Progress](id, workflows.QueryProgress)
}

// update sends a command as an update and waits for its answer.
func update(id, name, updateID string, arg any) (workflows.Status, error) {
	var st workflows.Status
	err := updateInto(id, name, updateID, arg, &st)
	return st, err
}

// updateInto sends an update and waits for its answer, into out.
func updateInto(id, name, updateID string, arg, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := temporalClient.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   id,
		UpdateName:   name,
		UpdateID:     updateID,
		Args:         []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	return h.Get(ctx, out)
}

func signal(t *testing.T, id, name string, arg any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := temporalClient.SignalWorkflow(ctx, id, "", name, arg); err != nil {
		t.Fatalf("signal %s to %s: %v", name, id, err)
	}
}

// result waits for a session to end and returns what it returned.
func result(id string, timeout time.Duration) (workflows.Result, error) {
	var res workflows.Result
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := temporalClient.GetWorkflow(ctx, id, "").Get(ctx, &res)
	return res, err
}

// completedWith waits up to timeout for session id's result and checks that it completed
// with n hypotheses; a session that did not end in time is fatal.
func completedWith(t *testing.T, id string, timeout time.Duration, n int) workflows.Result {
	t.Helper()
	res, err := result(id, timeout)
	if err != nil {
		t.Fatalf("session %s result: %v", id, err)
	}
	if res.State != session.Completed || res.Hypotheses != n {
		t.Errorf("result: %s with %d hypotheses (%s); want completed with %d", res.State, res.Hypotheses, res.StopReason, n)
	}
	return res
}

// temporalHistory is the session's Temporal event history, in order.
func temporalHistory(t *testing.T, id string) []*historypb.HistoryEvent {
	t.Helper()
	return runHistory(t, id, "")
}

// runHistory is the Temporal history of one run of a session ("": its latest).
func runHistory(t testing.TB, id, runID string) []*historypb.HistoryEvent {
	t.Helper()
	return runHistoryOn(t, temporalClient, id, runID)
}

// runHistoryOn is runHistory on the server of client c.
func runHistoryOn(t testing.TB, c client.Client, id, runID string) []*historypb.HistoryEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*historypb.HistoryEvent
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", id, err)
		}
		events = append(events, e)
	}
	return events
}

// sessionHistories is the history of every run of a session, the first run first: a long
// session continues as new, and a finished one whose last run grew long closes in a run of
// its own. Event ids start again in each run.
func sessionHistories(t testing.TB, id string) [][]*historypb.HistoryEvent {
	t.Helper()
	return sessionHistoriesOn(t, temporalClient, id)
}

// sessionHistoriesOn is sessionHistories on the server of client c.
func sessionHistoriesOn(t testing.TB, c client.Client, id string) [][]*historypb.HistoryEvent {
	t.Helper()
	var runs [][]*historypb.HistoryEvent
	for runID := ""; ; {
		events := runHistoryOn(t, c, id, runID)
		runs = append([][]*historypb.HistoryEvent{events}, runs...)
		runID = events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if runID == "" {
			return runs
		}
	}
}

// activityTypes maps each ActivityTaskScheduled event id to its activity type.
func activityTypes(events []*historypb.HistoryEvent) map[int64]string {
	types := map[int64]string{}
	for _, e := range events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			types[e.GetEventId()] = a.GetActivityType().GetName()
		}
	}
	return types
}

// decodeInput decodes the single argument of an activity or signal.
func decodeInput(t *testing.T, e *historypb.HistoryEvent, out any) {
	t.Helper()
	if err := decodeInputErr(e, out); err != nil {
		t.Fatalf("event %d (%s): %v", e.GetEventId(), e.GetEventType(), err)
	}
}

// decodeInputOK is decodeInput for an event whose input may not be of out's shape (an
// activity without arguments, or of another type): it says whether it decoded.
func decodeInputOK(e *historypb.HistoryEvent, out any) bool { return decodeInputErr(e, out) == nil }

func decodeInputErr(e *historypb.HistoryEvent, out any) error {
	var p interface{ GetInput() *commonpb.Payloads }
	switch {
	case e.GetActivityTaskScheduledEventAttributes() != nil:
		p = e.GetActivityTaskScheduledEventAttributes()
	case e.GetWorkflowExecutionSignaledEventAttributes() != nil:
		p = e.GetWorkflowExecutionSignaledEventAttributes()
	default:
		return errors.New("the event has no input to decode")
	}
	if err := converter.GetDefaultDataConverter().FromPayloads(p.GetInput(), out); err != nil {
		return fmt.Errorf("decode input: %w", err)
	}
	return nil
}

// storedHypotheses reads every hypothesis record of a session from the store, by id.
func storedHypotheses(t *testing.T, storeDir, id string) map[string]research.Hypothesis {
	t.Helper()
	st, err := store.Open(context.Background(), storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys, err := st.Backend().List(t.Context(), id, "hypotheses/")
	if err != nil {
		t.Fatalf("hypotheses of %s: %v", id, err)
	}
	out := map[string]research.Hypothesis{}
	for _, k := range keys {
		b, err := st.Backend().Get(t.Context(), id, k)
		if err != nil {
			t.Fatal(err)
		}
		var h research.Hypothesis
		if err := json.Unmarshal(b, &h); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if _, dup := out[h.ID]; dup {
			t.Errorf("two hypothesis files hold id %s", h.ID)
		}
		out[h.ID] = h
	}
	return out
}

// decodePayload decodes one payload (a summary in an event's user metadata, say).
func decodePayload(p *commonpb.Payload, out any) error {
	if p == nil {
		return errors.New("no payload")
	}
	return converter.GetDefaultDataConverter().FromPayload(p, out)
}
