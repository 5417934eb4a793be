package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/cosci-dev/cosci/e2e/temporalpg"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// The chaos soak: faults combined the way production combines them. Twenty sessions run on
// two workers whose provider is slow and fails 30% of its calls; every ~10 s one worker is
// killed with SIGKILL and started again, the other one the next time; once, the Temporal
// server itself is killed and restarted. Then every session must have completed with
// exactly its hypotheses, each id once, one stored result per turn, a gapless event log,
// every checkpoint restorable and its report. Once on the directory store (and the dev
// server on a database file), once on the PostgreSQL store (and Temporal on PostgreSQL).

const (
	soakSessions   = 20
	soakHypotheses = 10
	soakLatency    = "150ms"
	soakErrorRate  = "0.3"
	// soakEvery is the time between kills. The fault schedule is wall-clock time by nature;
	// nothing waits on it for a result.
	soakEvery = 10 * time.Second
	// soakServerKill is the tick at which the server dies instead of a worker.
	soakServerKill = 3
	// soakStall is how long the sessions may make no progress at all (no session's history
	// grows) before the soak fails: a hang, not a slow machine. The faults go on while the
	// sessions progress, so a loaded machine makes the soak longer, not red.
	soakStall = 2 * time.Minute
	// soakTimeout bounds the soak however it progresses.
	soakTimeout = 25 * time.Minute
)

// chaosServer is a Temporal server the soak can crash and bring back.
type chaosServer interface {
	Address() string
	Kill() error
	Restart(ctx context.Context) error
}

func TestChaosSoak(t *testing.T) {
	t.Run("directory store", func(t *testing.T) {
		srv := startDevServerOnFile(t)
		soak(t, srv, srv.client, func(*testing.T) string { return "" }, t.TempDir())
	})
	t.Run("postgres store", func(t *testing.T) {
		p := productionServer(t)
		storeURL := p.storeDatabase(t)
		// Worker hosts share no disk: each starts in a directory of its own.
		soak(t, p.server, p.client, func(t *testing.T) string { return t.TempDir() }, storeURL)
	})
}

// soak runs the chaos on srv with the session store at location; workDir gives each worker
// process its working directory.
func soak(t *testing.T, srv chaosServer, c client.Client, workDir func(*testing.T) string, location string) {
	began := time.Now()
	startSoakWorker := func(i int) *workerProc {
		return startWorkerOn(t, srv.Address(), workDir(t), location, nil,
			"--offline-latency", soakLatency, "--offline-error-rate", soakErrorRate,
			"--offline-error-seed", strconv.Itoa(i+1), "--slots", "8")
	}
	workers := []*workerProc{startSoakWorker(0), startSoakWorker(1)}

	ids := make([]string, soakSessions)
	for i := range ids {
		ids[i] = newSessionID(t)
		ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
		_, err := c.ExecuteWorkflow(ctx, startOptions(ids[i]), workflows.WorkflowType, research.Request{
			ResearchGoal: soakGoals[i%len(soakGoals)],
			Config:       research.Config{MaxHypotheses: soakHypotheses, Seed: int64(i + 1)},
		})
		cancel()
		if err != nil {
			t.Fatalf("cannot start session %d: %v", i, err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c.TerminateWorkflow(ctx, ids[i], "", "e2e test cleanup")
		})
	}

	// The faults, until every session has closed.
	tick := time.NewTicker(soakEvery)
	defer tick.Stop()
	workerKills, serverKills := 0, 0
	events, progressed := int64(0), time.Now()
	for n := 1; ; n++ {
		open, history, err := openSessions(c, ids)
		if err == nil && open == 0 {
			break
		}
		if history != events { // any change: a new event, or a run continued as new
			events, progressed = history, time.Now()
		}
		if stalled := time.Since(progressed); stalled > soakStall || time.Since(began) > soakTimeout {
			t.Fatalf("%d of %d sessions still open after %s of chaos, no history event for %s (%d worker kills, %d server kills; last error %v)",
				open, len(ids), time.Since(began).Round(time.Second), stalled.Round(time.Second), workerKills, serverKills, err)
		}
		<-tick.C
		if n == soakServerKill {
			if err := srv.Kill(); err != nil {
				t.Fatal(err)
			}
			down := time.Now()
			if err := srv.Restart(t.Context()); err != nil {
				t.Fatalf("the server did not come back after kill -9: %v", err)
			}
			serverKills++
			t.Logf("%s: killed the Temporal server with SIGKILL; it was back after %s", time.Since(began).Round(time.Second), time.Since(down).Round(time.Millisecond))
			continue
		}
		k := n % len(workers)
		workers[k].Kill(t)
		workers[k] = startSoakWorker(k)
		workerKills++
		t.Logf("%s: killed worker %d with SIGKILL and started it again (%d sessions open)", time.Since(began).Round(time.Second), k, open)
	}
	elapsed := time.Since(began)
	if serverKills == 0 || workerKills < 4 {
		t.Errorf("the sessions finished after %d worker kills and %d server kills; the soak wants at least 4 and 1 while they run: make them longer", workerKills, serverKills)
	}

	retries, failedTurns := 0, 0
	for _, id := range ids {
		r, f := checkSoakSession(t, c, location, id)
		retries += r
		failedTurns += f
	}
	t.Logf("%d sessions of %d hypotheses completed in %s through %d worker kills and %d server kill: %d activity attempts were retries, %d turns failed all their attempts",
		len(ids), soakHypotheses, elapsed.Round(time.Second), workerKills, serverKills, retries, failedTurns)
}

var soakGoals = []string{
	"Find metabolic vulnerabilities of glioblastoma stem cells",
	"Explain why some tardigrades survive desiccation",
	"Identify drivers of antimicrobial resistance in hospital wastewater",
	"Propose mechanisms of long-term memory consolidation during sleep",
}

// openSessions counts the sessions whose workflow has not closed, and the events of their
// latest runs' histories.
func openSessions(c client.Client, ids []string) (open int, history int64, err error) {
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		cancel()
		if err != nil {
			return len(ids), 0, err
		}
		info := d.GetWorkflowExecutionInfo()
		history += info.GetHistoryLength()
		if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			open++
		}
	}
	return open, history, nil
}

// checkSoakSession checks everything the soak promises of one session, and returns how many
// activity attempts were retries and how many turns failed all their attempts.
func checkSoakSession(t *testing.T, c client.Client, location, id string) (retries, failedTurns int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var res workflows.Result
	if err := c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		t.Errorf("session %s: %v", id, err)
		return
	}
	if res.State != session.Completed || res.Hypotheses != soakHypotheses {
		t.Errorf("session %s: %s with %d hypotheses (%s); want completed with %d", id, res.State, res.Hypotheses, res.StopReason, soakHypotheses)
	}

	// Each hypothesis once: in the session's state and in the store, the same ids.
	v, err := c.QueryWorkflow(ctx, id, "", workflows.QueryState, workflows.Page{Limit: workflows.MaxPageLimit})
	var view workflows.StateView
	if err == nil {
		err = v.Get(&view)
	}
	if err != nil {
		t.Errorf("session %s: state: %v", id, err)
		return
	}
	inState := map[string]bool{}
	for _, e := range view.Hypotheses {
		if inState[e.ID] {
			t.Errorf("session %s: hypothesis %s is listed twice", id, e.ID)
		}
		inState[e.ID] = true
	}
	stored := storedHypotheses(t, location, id)
	if len(inState) != soakHypotheses || !slices.Equal(slices.Sorted(maps.Keys(inState)), slices.Sorted(maps.Keys(stored))) {
		t.Errorf("session %s: state holds hypotheses %v, the store %v; want the same %d", id,
			slices.Sorted(maps.Keys(inState)), slices.Sorted(maps.Keys(stored)), soakHypotheses)
	}

	st, err := store.Open(ctx, location) // a store of its own: nothing read before is remembered
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// The event log: numbered 1, 2, 3... with no gap and no repeat.
	events, err := st.Events(ctx, id)
	if err != nil {
		t.Errorf("session %s: event log: %v", id, err)
	}
	for i, e := range events {
		if e.Seq != i+1 {
			t.Errorf("session %s: event %d of the log has seq %d; want %d (a gap or a repeat)", id, i+1, e.Seq, i+1)
			break
		}
	}

	// One stored result per turn. Temporal's side: each turn's activity completed at most
	// once. The store's: every model turn that completed has its record and the store holds
	// no other. The session's: its log books each completed turn once. (Proximity is a turn
	// of the session's but a computation, not a model call: it stores no record.)
	type turnRun struct {
		activity  string
		completed int
	}
	turns := map[string]*turnRun{}
	for _, events := range sessionHistoriesOn(t, c, id) {
		turnOf := map[int64]string{}
		for _, e := range events {
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
				var in struct {
					TurnID string `json:"turn_id"`
				}
				if decodeInputOK(e, &in) && in.TurnID != "" {
					turnOf[e.GetEventId()] = in.TurnID
					if turns[in.TurnID] == nil {
						turns[in.TurnID] = &turnRun{activity: a.GetActivityType().GetName()}
					}
				}
			}
			if a := e.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() > 1 {
				retries += int(a.GetAttempt() - 1)
			}
			if a := e.GetActivityTaskCompletedEventAttributes(); a != nil && turnOf[a.GetScheduledEventId()] != "" {
				turns[turnOf[a.GetScheduledEventId()]].completed++
			}
		}
	}
	booked := map[string]int{}
	for _, e := range events {
		if e.Kind != session.EventTurn || e.Turn == "" {
			continue
		}
		if strings.Contains(e.Detail, " failed: ") {
			failedTurns++
			continue
		}
		booked[e.Turn]++
	}
	keys, err := st.Backend().List(ctx, id, "turns/")
	if err != nil {
		t.Errorf("session %s: turns: %v", id, err)
	}
	storedTurns := map[string]bool{}
	for _, k := range keys {
		turn, found, err := st.Turn(ctx, id, strings.TrimSuffix(strings.TrimPrefix(k, "turns/"), ".json"))
		if err != nil || !found {
			t.Errorf("session %s: turn record %s: found %v, %v", id, k, found, err)
			continue
		}
		storedTurns[turn.ID] = true
	}
	for turn, r := range turns {
		switch {
		case r.completed > 1:
			t.Errorf("session %s: turn %s (%s) completed %d times", id, turn, r.activity, r.completed)
		case r.completed == 1 && booked[turn] != 1:
			t.Errorf("session %s: turn %s (%s) completed, and the log books it %d times", id, turn, r.activity, booked[turn])
		case r.completed == 1 && r.activity != "Proximity" && !storedTurns[turn]:
			t.Errorf("session %s: turn %s (%s) completed but has no stored result", id, turn, r.activity)
		}
	}
	for turn := range storedTurns {
		if r := turns[turn]; r == nil || r.completed != 1 {
			t.Errorf("session %s: the store holds a result for turn %s, which did not complete once", id, turn)
		}
	}

	// Every checkpoint restorable, read afresh, numbered without a gap, the last one the
	// completed session.
	snaps, err := st.Checkpoints(ctx, id)
	if err != nil || len(snaps) == 0 {
		t.Errorf("session %s: checkpoints: %d, %v", id, len(snaps), err)
	}
	for i, snap := range snaps {
		if snap.Seq != i+1 || snap.SessionID != id {
			t.Errorf("session %s: checkpoint %d reads back as %s's checkpoint %d", id, i+1, snap.SessionID, snap.Seq)
		}
	}
	if n := len(snaps); n > 0 && (snaps[n-1].State != session.Completed || len(snaps[n-1].Hypotheses) != soakHypotheses) {
		t.Errorf("session %s: the last checkpoint is %s with %d hypotheses; want completed with %d", id, snaps[n-1].State, len(snaps[n-1].Hypotheses), soakHypotheses)
	}

	if report, err := st.Report(ctx, id); err != nil || len(report) == 0 {
		t.Errorf("session %s: report: %d bytes, %v", id, len(report), err)
	}
	return retries, failedTurns
}

// devServer is a dev server of a test's own, on a database file, so that it can be killed
// and come back with everything it held.
type devServer struct {
	args    []string
	address string
	log     string
	client  client.Client
	proc    *temporalpg.Process // nil once killed
}

// startDevServerOnFile starts a dev server on free loopback ports with its state in a
// file; it is stopped when the test ends.
func startDevServerOnFile(t *testing.T) *devServer {
	t.Helper()
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	d := &devServer{
		address: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		log:     filepath.Join(buildDir, safeName(t.Name())+"-server.log"),
		args: []string{"server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
			"--db-filename", filepath.Join(dir, "temporal.db"), "--log-level", "error",
			"--dynamic-config-value", "frontend.enableServerVersionCheck=false"},
	}
	for _, name := range slices.Sorted(maps.Keys(workflows.SearchAttributes)) {
		d.args = append(d.args, "--search-attribute", name+"="+workflows.SearchAttributes[name])
	}
	if err := d.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d.client, err = client.Dial(client.Options{HostPort: d.address, Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.client.Close()
		if d.proc != nil {
			_ = d.proc.Signal(syscall.SIGINT)
			<-d.proc.Done()
		}
		if t.Failed() {
			b, _ := os.ReadFile(d.log)
			t.Logf("---- dev server log ----\n%s", tail(b, 80))
		}
	})
	return d
}

func (d *devServer) Address() string { return d.address }

// Kill ends the server with SIGKILL and waits until it has exited.
func (d *devServer) Kill() error {
	if d.proc == nil {
		return nil
	}
	if err := d.proc.Kill(); err != nil {
		return err
	}
	d.proc = nil
	return nil
}

// Restart starts the server (again) and waits until its frontend answers.
func (d *devServer) Restart(ctx context.Context) error {
	if err := d.Kill(); err != nil {
		return err
	}
	temporalBin, err := filepath.Abs(filepath.Join("..", "bin", "temporal"))
	if err != nil {
		return err
	}
	if d.proc, err = temporalpg.StartProcess(temporalBin, d.args, "", d.log); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = d.proc.Await(ctx, 200*time.Millisecond, func() error {
		probe, err := client.Dial(client.Options{HostPort: d.address, Logger: quietLogger()})
		if err != nil {
			return err
		}
		defer probe.Close()
		if _, err := probe.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			return err
		}
		// The namespace answers: a session that does not exist is not found.
		_, err = probe.DescribeWorkflowExecution(ctx, "no-such-session", "")
		if notFound := (*serviceerror.NotFound)(nil); errors.As(err, &notFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("the dev server at %s did not come up within a minute: %w; see %s", d.address, err, d.log)
	}
	return nil
}
