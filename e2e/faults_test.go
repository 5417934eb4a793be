package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// Records damaged or lost outside cosci, on real servers and real worker processes: the
// session stops on them, saying which, and the scientist carries the research on.

// statusOn queries a session's status on the server of client c.
func statusOn(c client.Client, id string) (workflows.Status, error) {
	var st workflows.Status
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
	if err == nil {
		err = v.Get(&st)
	}
	return st, err
}

// untilSuspendedFor waits until a session is suspended with a reason that holds each of want.
func untilSuspendedFor(t *testing.T, c client.Client, id string, want ...string) workflows.Status {
	t.Helper()
	var st workflows.Status
	eventually(t, 2*time.Minute, fmt.Sprintf("session %s to suspend saying %q", id, want), func() (bool, error) {
		var err error
		if st, err = statusOn(c, id); err != nil || st.State != session.Suspended {
			return false, err
		}
		for _, w := range want {
			if !strings.Contains(st.Reason, w) {
				return false, fmt.Errorf("suspended, but for %q", st.Reason)
			}
		}
		return true, nil
	})
	return st
}

// untilIdle waits until a suspended session has no activity in flight. Suspending stops
// new turns; those already running, and a checkpoint being written, finish. A test that
// changes the store or kills the worker under a suspended session does it only then: a
// checkpoint in flight at the kill is written again by the next worker, over the damage,
// and a hypothesis stored after the test listed the rows is lost with them.
func untilIdle(t *testing.T, c client.Client, id string) {
	t.Helper()
	eventually(t, time.Minute, fmt.Sprintf("suspended session %s to have no activity in flight", id), func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return false, err
		}
		return len(d.GetPendingActivities()) == 0, nil
	})
}

// TestDamagedCheckpointThenFork: the latest checkpoint file of a session is truncated
// while its worker is down. On a new worker the session suspends, naming the session and
// that file, instead of carrying on from a wrong state; `starter fork --checkpoint N-1`
// carries the research on from the checkpoint before.
func TestDamagedCheckpointThenFork(t *testing.T) {
	bin := starter(t)
	storeDir := t.TempDir()
	w := startWorker(t, storeDir, "--offline-latency", "100ms")
	const n = 40
	id := newSessionID(t)
	startSession(t, id, research.Request{ResearchGoal: "Find metabolic vulnerabilities of glioblastoma stem cells", Config: research.Config{MaxHypotheses: n}})
	eventually(t, 2*time.Minute, "two checkpoints, part-way", func() (bool, error) {
		p, err := progressOf(id)
		if err == nil && p.HypothesesGenerated >= n {
			return false, fmt.Errorf("the session already has all %d hypotheses: too late", n)
		}
		return p.Checkpoints >= 2, err
	})
	if r := runStarter(t, bin, serverAddress, "suspend", id, "--reason", "a disk to check"); r.code != 0 {
		t.Fatalf("suspend: exit %d, %s", r.code, r.output())
	}
	untilIdle(t, temporalClient, id)
	w.Kill(t) // and with it what the worker remembered of the checkpoint

	// The newest checkpoint on disk, truncated.
	dir := filepath.Join(storeDir, id, "checkpoints")
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) < 2 {
		t.Fatalf("checkpoints of %s: %d, %v", id, len(entries), err)
	}
	last := entries[len(entries)-1].Name()
	seq, err := strconv.Atoi(strings.TrimSuffix(last, ".json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, last)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}

	startWorker(t, storeDir, "--offline-latency", "100ms")
	if r := runStarter(t, bin, serverAddress, "resume", id); r.code != 0 {
		t.Fatalf("resume: exit %d, %s", r.code, r.output())
	}
	st := untilSuspendedFor(t, temporalClient, id, id, path, "damaged")
	t.Logf("suspended: %s", st.Reason)

	r := runStarter(t, bin, serverAddress, "fork", id, "--checkpoint", strconv.Itoa(seq-1), "--max-hypotheses", "4")
	if r.code != 0 {
		t.Fatalf("fork --checkpoint %d: exit %d, %s", seq-1, r.code, r.output())
	}
	fork := strings.TrimSpace(strings.SplitN(r.stdout, "\n", 2)[0])
	t.Cleanup(func() { terminateIfRunning(t, fork) })
	res, err := result(fork, 3*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	from, err := openStore(t, storeDir).Checkpoint(t.Context(), id, seq-1)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != session.Completed || res.Hypotheses < len(from.Hypotheses)+4 {
		t.Errorf("the fork from checkpoint %d (%d hypotheses): %s with %d hypotheses (%s); want completed with 4 more",
			seq-1, len(from.Hypotheses), res.State, res.Hypotheses, res.StopReason)
	}
}

// TestMissingRowThenRepair: on Temporal on PostgreSQL and the PostgreSQL store, the rows of
// a session's hypotheses are deleted while it is suspended. Resumed, it suspends again,
// naming the session and a record; once the rows are back and the scientist resumes, it
// completes with every hypothesis.
func TestMissingRowThenRepair(t *testing.T) {
	p := productionServer(t)
	bin := starter(t)
	const n = 30
	storeURL, id := p.partWay(t, "Explain why some tardigrades survive desiccation", n, 6)

	if r := runStarter(t, bin, p.server.Address(), "suspend", id); r.code != 0 {
		t.Fatalf("suspend: exit %d, %s", r.code, r.output())
	}
	untilIdle(t, p.client, id)
	// Every hypothesis row so far goes: the next round's matches read some of them.
	ctx := t.Context()
	st := openStore(t, storeURL)
	keys, err := st.Backend().List(ctx, id, "hypotheses/")
	if err != nil || len(keys) == 0 {
		t.Fatalf("hypotheses of %s: %d, %v", id, len(keys), err)
	}
	rows := map[string][]byte{}
	for _, k := range keys {
		if rows[k], err = st.Backend().Get(ctx, id, k); err != nil {
			t.Fatal(err)
		}
	}
	db, err := pgx.Connect(ctx, storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if _, err := db.Exec(ctx, `DELETE FROM cosci_records WHERE session_id = $1 AND starts_with(key, 'hypotheses/')`, id); err != nil {
		t.Fatal(err)
	}

	if r := runStarter(t, bin, p.server.Address(), "resume", id); r.code != 0 {
		t.Fatalf("resume: exit %d, %s", r.code, r.output())
	}
	// The database is named in the record's place, with the session and the key.
	sus := untilSuspendedFor(t, p.client, id, id, "record hypotheses/h-", "cosci_")
	t.Logf("suspended: %s", sus.Reason)

	for k, row := range rows {
		if err := st.Backend().Put(ctx, id, k, row, true); err != nil {
			t.Fatal(err)
		}
	}
	if r := runStarter(t, bin, p.server.Address(), "resume", id); r.code != 0 {
		t.Fatalf("resume after the repair: exit %d, %s", r.code, r.output())
	}
	checkHypotheses(t, p.result(t, id, 5*time.Minute), storeURL, n)
}

// openStore opens a session store for the test's checks.
func openStore(t *testing.T, location string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), location)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// TestReadOnlyDatabaseSuspends: the store's database refuses writes part-way (as a full
// disk or a failover to a replica makes it). The session suspends saying why, resumes by
// itself once the database takes writes again, and completes with every hypothesis once.
func TestReadOnlyDatabaseSuspends(t *testing.T) {
	p := productionServer(t)
	const n = 24
	storeURL, id := p.partWay(t, "Identify drivers of antimicrobial resistance in hospital wastewater", n, 4)

	ctx := t.Context()
	db, err := pgx.Connect(ctx, storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	readOnly := func(on bool) {
		t.Helper()
		name := db.Config().Database
		// New sessions of the database start read-only (or not); the worker's open
		// connections are ended, so its pool reconnects under the new default.
		if _, err := db.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s SET default_transaction_read_only = %v`, pgx.Identifier{name}.Sanitize(), on)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, name); err != nil {
			t.Fatal(err)
		}
	}
	readOnly(true)
	st := untilSuspendedFor(t, p.client, id, "cannot be used", "read-only transaction")
	t.Logf("suspended: %s", st.Reason)
	readOnly(false)

	res := p.result(t, id, 5*time.Minute)
	checkHypotheses(t, res, storeURL, n)
	events, err := openStore(t, storeURL).Events(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	resumed := false
	for _, e := range events {
		resumed = resumed || (e.Kind == session.EventTransition && e.Detail == "the session store works again")
		if e.Kind == session.EventTurn && strings.Contains(e.Detail, " failed: ") {
			t.Errorf("turn %s booked as failed: %s", e.Turn, e.Detail)
		}
	}
	if !resumed {
		t.Error("the session's log does not show it resumed by itself")
	}
}
