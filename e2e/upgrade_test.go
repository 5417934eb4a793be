package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// temporalCLI runs the official temporal CLI (bin/temporal) against the test's server, as
// docs/operating.md tells an operator to.
func temporalCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("..", "bin", "temporal"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, append(args, "--address", serverAddress)...).CombinedOutput()
	return string(out), err
}

// TestRollingUpgrade rolls a new build out under running sessions, the way
// docs/operating.md says: sessions run on build A of the Worker Deployment; build B (a
// changed workflow: each round notes that B ran it, behind workflow.GetVersion) starts
// beside it and is made current with `temporal worker deployment set-current-version`; A
// drains (`describe-version` says drained) and stops; every session completes, on B, with
// all its hypotheses. B replays A's part of every history when it takes a session over.
func TestRollingUpgrade(t *testing.T) {
	bBinary := filepath.Join(buildDir, "cosci-worker-b")
	if out, err := goBuild(bBinary, "../worker", "-tags", "cosci_build_b"); err != nil {
		t.Fatalf("build B does not build: %v\n%s", err, out)
	}
	// A namespace of its own: its task queues become versioned, and the other tests'
	// workers are not.
	ns := fmt.Sprintf("upgrade-%d", time.Now().UnixNano())
	if out, err := temporalCLI(t, "operator", "namespace", "create", "--namespace", ns); err != nil {
		t.Fatalf("namespace create: %v\n%s", err, out)
	}
	c, err := client.Dial(client.Options{HostPort: serverAddress, Namespace: ns, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const deployment = "cosci"
	env := []string{"TEMPORAL_NAMESPACE=" + ns}
	storeDir := t.TempDir()
	// Build A's model is slow and B's fast: the sessions are still early on when B becomes
	// current, however long B takes to start on a loaded machine, and then finish quickly.
	// (With both at B's speed, a run with a core kept busy left one session a single round
	// for B to run: one slower start, and A would have finished it.)
	latency := map[string]string{"A": "500ms", "B": "60ms"}
	flags := func(build string) []string {
		return []string{"--deployment", deployment, "--build-id", build, "--offline-latency", latency[build]}
	}
	setCurrent := func(build string) {
		t.Helper()
		// The version exists once its workers have polled: until then the CLI refuses.
		eventually(t, 60*time.Second, "build "+build+" to become current", func() (bool, error) {
			out, err := temporalCLI(t, "worker", "deployment", "set-current-version", "--namespace", ns,
				"--deployment-name", deployment, "--build-id", build, "--yes")
			if err != nil {
				return false, fmt.Errorf("%v: %s", err, strings.TrimSpace(out))
			}
			return true, nil
		})
	}

	a := startWorkerOn(t, serverAddress, "", storeDir, env, flags("A")...)
	setCurrent("A")
	var ids []string
	for i := range 3 {
		id := fmt.Sprintf("%s-%d", newSessionID(t), i)
		ids = append(ids, id)
		req := research.Request{
			ResearchGoal: "Find why some bacteria tolerate antibiotics without resistance genes",
			Config:       research.Config{MaxHypotheses: 24, ReviewTypes: []string{research.ReviewInitial}, Seed: int64(i + 1)},
		}
		if _, err := c.ExecuteWorkflow(context.Background(), startOptions(id), workflows.WorkflowType, req, (*workflows.Carried)(nil)); err != nil {
			t.Fatal(err)
		}
	}
	progress := func(id string) (session.Progress, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		v, err := c.QueryWorkflow(ctx, id, "", workflows.QueryProgress)
		var p session.Progress
		if err == nil {
			err = v.Get(&p)
		}
		return p, err
	}
	for _, id := range ids {
		eventually(t, 60*time.Second, "session "+id+" to make hypotheses on build A", func() (bool, error) {
			p, err := progress(id)
			return p.HypothesesGenerated >= 3, err
		})
	}

	startWorkerBinary(t, bBinary, serverAddress, "", storeDir, env, flags("B")...)
	setCurrent("B")
	eventually(t, 90*time.Second, "build A to drain", func() (bool, error) {
		out, err := temporalCLI(t, "worker", "deployment", "describe-version", "--namespace", ns,
			"--deployment-name", deployment, "--build-id", "A", "--output", "json")
		if err != nil {
			return false, fmt.Errorf("%v: %s", err, out)
		}
		var v struct {
			DrainageInfo struct {
				DrainageStatus string `json:"drainageStatus"`
			} `json:"drainageInfo"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			return false, fmt.Errorf("%v: %s", err, out)
		}
		return v.DrainageInfo.DrainageStatus == "drained", nil
	})
	a.Stop(t)
	t.Log("build A drained and stopped")

	for _, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		var res workflows.Result
		err := c.GetWorkflow(ctx, id, "").Get(ctx, &res)
		cancel()
		if err != nil {
			t.Fatalf("session %s: %v", id, err)
		}
		if res.State != session.Completed || res.Hypotheses != 24 {
			t.Errorf("session %s ended %s with %d hypotheses; want completed with 24", id, res.State, res.Hypotheses)
		}
		v, err := c.QueryWorkflow(context.Background(), id, "", workflows.QueryHistory, workflows.Page{Limit: workflows.MaxPageLimit})
		if err != nil {
			t.Fatal(err)
		}
		var h workflows.HistoryView
		if err := v.Get(&h); err != nil {
			t.Fatal(err)
		}
		onB := 0
		for _, e := range h.Events {
			if e.Detail == buildBNote {
				onB++
			}
		}
		if onB == 0 {
			t.Errorf("session %s has no round run by build B", id)
		}
		t.Logf("session %s: %d hypotheses, %d rounds run by build B", id, res.Hypotheses, onB)
	}
}

// buildBNote is workflows.BuildBNote, which only build B compiles.
const buildBNote = "round run by build B"
