package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/cosci-dev/cosci/e2e/temporalpg"
	"github.com/cosci-dev/cosci/internal/pgtest"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// The production shape, on one machine: a Temporal server on PostgreSQL (persistence and
// visibility, as docker-compose.yml runs it), cosci's session store in the same
// PostgreSQL, and worker hosts that share nothing but those two, each in a working
// directory of its own.

// productionLatency is the offline turn's time in these tests: slow enough that a
// session is still part-way when a test has seen it start, whatever the machine's load.
const productionLatency = "300ms"

// production is the package's Temporal-on-PostgreSQL server, started by the first test
// that needs it and stopped after the last.
type production struct {
	pg     *pgtest.Server
	server *temporalpg.Server
	client client.Client
}

var (
	prodOnce sync.Once
	prod     *production
	prodErr  error
	storeDBs atomic.Int64
)

func productionServer(t *testing.T) *production {
	t.Helper()
	prodOnce.Do(func() {
		began := time.Now()
		dir := filepath.Join(buildDir, "production")
		p := &production{}
		if p.pg, prodErr = pgtest.Start(""); prodErr != nil {
			return
		}
		cleanups = append(cleanups, func() { p.pg.Close() })
		os.MkdirAll(filepath.Join(dir, "temporal"), 0o755)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if p.server, prodErr = temporalpg.Start(ctx, filepath.Join(dir, "temporal"), p.pg, workflows.SearchAttributes); prodErr != nil {
			return
		}
		cleanups = append(cleanups, func() { p.server.Stop() })
		if p.client, prodErr = client.Dial(client.Options{HostPort: p.server.Address(), Logger: quietLogger()}); prodErr != nil {
			return
		}
		cleanups = append(cleanups, p.client.Close)
		prod = p
		fmt.Fprintf(os.Stderr, "e2e: Temporal on PostgreSQL at %s, PostgreSQL on port %d, up in %s\n", p.server.Address(), p.pg.Port, time.Since(began).Round(time.Millisecond))
	})
	if prodErr != nil {
		t.Fatalf("cannot start Temporal on PostgreSQL: %v", prodErr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("---- Temporal server log ----\n%s", tail([]byte(prod.server.Log()), 80))
		}
	})
	return prod
}

// storeDatabase is a fresh database for cosci's session store.
func (p *production) storeDatabase(t *testing.T) string {
	t.Helper()
	url, err := p.pg.CreateDatabase(t.Context(), fmt.Sprintf("cosci_%d", storeDBs.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// start starts a session on the production server; it is terminated if the test leaves it running.
func (p *production) start(t *testing.T, req research.Request) string {
	t.Helper()
	id := newSessionID(t)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	if _, err := p.client.ExecuteWorkflow(ctx, startOptions(id), workflows.WorkflowType, req); err != nil {
		t.Fatalf("cannot start session %s: %v", id, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.client.TerminateWorkflow(ctx, id, "", "e2e test cleanup")
	})
	return id
}

func (p *production) progress(id string) (session.Progress, error) {
	var out session.Progress
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := p.client.QueryWorkflow(ctx, id, "", workflows.QueryProgress)
	if err == nil {
		err = v.Get(&out)
	}
	return out, err
}

func (p *production) result(t *testing.T, id string, timeout time.Duration) workflows.Result {
	t.Helper()
	var res workflows.Result
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := p.client.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		t.Fatalf("session %s: %v", id, err)
	}
	return res
}

// untilPartWay waits until a session has at least from hypotheses, and fails if it has all.
func (p *production) untilPartWay(t *testing.T, id string, from, all int) {
	t.Helper()
	eventually(t, 2*time.Minute, fmt.Sprintf("session %s to be part-way (%d or more hypotheses, fewer than %d)", id, from, all), func() (bool, error) {
		pr, err := p.progress(id)
		if err != nil {
			return false, err
		}
		if pr.HypothesesGenerated >= all {
			return false, fmt.Errorf("the session already has all %d hypotheses: too late", all)
		}
		return pr.HypothesesGenerated >= from, nil
	})
}

// partWay starts a worker host on a fresh store database and a session of n hypotheses on
// it, and waits until the session has from of them: where a test of a fault mid-session
// begins.
func (p *production) partWay(t *testing.T, goal string, n, from int) (storeURL, id string) {
	t.Helper()
	storeURL = p.storeDatabase(t)
	startWorkerOn(t, p.server.Address(), t.TempDir(), storeURL, nil, "--offline-latency", productionLatency)
	id = p.start(t, research.Request{ResearchGoal: goal, Config: research.Config{MaxHypotheses: n}})
	p.untilPartWay(t, id, from, n)
	return storeURL, id
}

// checkHypotheses: the session completed with exactly n hypotheses, each with its own id,
// each in the store, which holds no other.
func checkHypotheses(t *testing.T, res workflows.Result, storeURL string, n int) {
	t.Helper()
	if res.State != session.Completed || res.Hypotheses != n {
		t.Errorf("result: %s with %d hypotheses (%s); want completed with %d", res.State, res.Hypotheses, res.StopReason, n)
	}
	stored := storedHypotheses(t, storeURL, res.SessionID)
	if len(stored) != n {
		t.Errorf("the store holds %d hypotheses of %s; want %d", len(stored), res.SessionID, n)
	}
	for id, h := range stored {
		if h.ID != id {
			t.Errorf("hypothesis record %s holds hypothesis %s", id, h.ID)
		}
	}
}

// TestProductionWorkerHostDies: two worker hosts with no disk in common, on Temporal on
// PostgreSQL and the PostgreSQL store. One is killed mid-session; the session completes
// on the other with every hypothesis once, and a third machine (another working directory,
// no worker) reads its report, state, history, tree and list from the store, also after
// Temporal has deleted the workflow.
func TestProductionWorkerHostDies(t *testing.T) {
	p := productionServer(t)
	storeURL := p.storeDatabase(t)
	hostA, hostB, laptop := t.TempDir(), t.TempDir(), t.TempDir()
	// Both start at once on an empty database: the schema is set up once, by one of them.
	a := startWorkerOn(t, p.server.Address(), hostA, storeURL, nil, "--offline-latency", productionLatency)
	startWorkerOn(t, p.server.Address(), hostB, storeURL, nil, "--offline-latency", productionLatency)

	const n = 20
	id := p.start(t, research.Request{ResearchGoal: "Find metabolic vulnerabilities of glioblastoma stem cells", Config: research.Config{MaxHypotheses: n}})
	p.untilPartWay(t, id, 6, n)
	a.Kill(t)
	res := p.result(t, id, 4*time.Minute)
	checkHypotheses(t, res, storeURL, n)

	conn, err := pgx.Connect(t.Context(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var versions, distinct int
	if err := conn.QueryRow(t.Context(), `SELECT count(*), count(DISTINCT version) FROM cosci_schema`).Scan(&versions, &distinct); err != nil || versions != 1 || distinct != 1 {
		t.Errorf("cosci_schema holds %d rows (%d distinct), %v; want the one version, applied once", versions, distinct, err)
	}
	// No worker host kept anything on its own disk.
	for _, dir := range []string{hostA, hostB} {
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("worker host %s wrote %d entries into its working directory (first %s); everything belongs in the store", dir, len(entries), entries[0].Name())
		}
	}

	bin := starter(t)
	env := []string{"COSCI_STORE=" + storeURL}
	report := runStarterIn(t, bin, p.server.Address(), laptop, env, "report", id)
	if report.code != 0 || !strings.HasPrefix(report.stdout, "# ") || !strings.Contains(report.stdout, "glioblastoma") {
		t.Fatalf("starter report from a third machine: exit %d, %.200q", report.code, report.output())
	}

	// Temporal's retention deletes the workflow; the store still answers.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := p.client.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
		Namespace: temporalpg.Namespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id}}); err != nil {
		t.Fatalf("delete the workflow: %v", err)
	}
	eventually(t, time.Minute, "Temporal to forget the session", func() (bool, error) {
		_, err := p.client.DescribeWorkflowExecution(t.Context(), id, "")
		var nf *serviceerror.NotFound
		return errors.As(err, &nf), nil
	})
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"report", id}, []string{"# ", "glioblastoma"}},
		{[]string{"status", id}, []string{"completed", "glioblastoma"}},
		{[]string{"state", id, "--limit", "5"}, []string{"h-00", fmt.Sprint(n)}},
		{[]string{"history", id, "--offset", "100", "--limit", "500"}, []string{"completed"}},
		{[]string{"tree", id}, []string{id}},
		{[]string{"list"}, []string{id, "store only"}},
	} {
		r := runStarterIn(t, bin, p.server.Address(), laptop, env, tt.args...)
		if r.code != 0 {
			t.Errorf("starter %s after Temporal forgot the session: exit %d: %s", strings.Join(tt.args, " "), r.code, r.output())
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("starter %s after Temporal forgot the session does not show %q:\n%s", strings.Join(tt.args, " "), w, r.stdout)
			}
		}
	}
	// Without the store, the starter says where it looked.
	r := runStarterIn(t, bin, p.server.Address(), laptop, nil, "status", id)
	if r.code == 0 || !strings.Contains(r.stderr, "no session store") {
		t.Errorf("starter status of a deleted session without a store: exit %d, %q; want a failure naming the missing store", r.code, r.output())
	}
}

// TestProductionPostgresRestart: PostgreSQL, which holds Temporal's state and the session
// store, goes away for about ten seconds mid-session. Turns fail and are retried by
// Temporal; the session completes with every hypothesis once.
func TestProductionPostgresRestart(t *testing.T) {
	p := productionServer(t)
	storeURL := p.storeDatabase(t)
	startWorkerOn(t, p.server.Address(), t.TempDir(), storeURL, nil, "--offline-latency", productionLatency)
	startWorkerOn(t, p.server.Address(), t.TempDir(), storeURL, nil, "--offline-latency", productionLatency)

	const n = 24
	id := p.start(t, research.Request{ResearchGoal: "Explain why some tardigrades survive desiccation", Config: research.Config{MaxHypotheses: n}})
	p.untilPartWay(t, id, 4, n)
	if err := p.pg.Stop(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	time.Sleep(10 * time.Second) // the outage itself, not a wait for something
	if err := p.pg.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL was down for %s", time.Since(down).Round(time.Millisecond))
	res := p.result(t, id, 5*time.Minute)
	checkHypotheses(t, res, storeURL, n)
}
