package e2e

// The dev server `make demo` and these tests run, measured (issue #45, "Current Temporal"):
// the Temporal CLI's start-dev (server 1.29.1 inside CLI v1.5.1) against bin/temporal-server
// (the release `make server-tools` builds) on a SQLite file, chosen by COSCI_E2E_DEVSERVER
// (main_test.go). BENCHMARKS.md, "The dev server", has the figures and the commands:
//
//	go test ./e2e/ -run '^$' -bench 'BenchmarkDevServer' -benchtime 1x -count 1 -v
//	COSCI_E2E_DEVSERVER=temporal-server go test ./e2e/ -run '^$' -bench 'BenchmarkDevServer' -benchtime 1x -count 1 -v

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func BenchmarkDevServer(b *testing.B) {
	b.Run("start", benchDevServerStart)
	// design.md's floor: one workflow running 50 activities one after another (82 ms an
	// activity on start-dev with its SQLite file), and 100 workflows of 20 at once.
	b.Run("sequential", func(b *testing.B) { benchActivities(b, 1, 50) })
	b.Run("concurrent", func(b *testing.B) { benchActivities(b, 100, 20) })
}

// benchDevServerStart starts a second dev server of the kind the harness runs, on a new
// database file as `make server` does, and times it until its namespace answers with cosci's search attributes: what
// `make server` or a test waits for before the first session can start.
func benchDevServerStart(b *testing.B) {
	var took []time.Duration
	for i := range b.N {
		port, err := freeLoopbackPort()
		if err != nil {
			b.Fatal(err)
		}
		tmp := b.TempDir()
		dir := filepath.Join(tmp, "server")
		log, err := os.Create(filepath.Join(buildDir, fmt.Sprintf("devserver-start-%d.log", i)))
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		t := time.Now()
		s, err := startDevServer(ctx, dir, filepath.Join(tmp, "temporal.db"), port, log)
		took = append(took, time.Since(t))
		cancel()
		if err != nil {
			log.Close()
			b.Fatal(err)
		}
		if _, err := s.client.DescribeWorkflowExecution(context.Background(), "no-such-session", ""); err == nil {
			b.Fatal("a session that was never started was described")
		}
		s.client.Close()
		if err := s.stop(); err != nil {
			b.Log("stopping:", err)
		}
		log.Close()
	}
	b.ReportMetric(ms(median(took)), "ms-to-first-answer")
	b.Logf("%s: started and answering in %v (each run: %v)", devServerName(), median(took), took)
}

// benchActivities runs workflows of n no-op activities each, all at once, on the harness's
// dev server (its database in memory, as the tests run it) with a worker in this process, and reports the time an activity takes (one
// workflow) or the activities a second (several).
func benchActivities(b *testing.B, workflows, n int) {
	queue := fmt.Sprintf("bench-activities-%d", time.Now().UnixNano())
	w := worker.New(temporalClient, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(chainOfActivities, workflow.RegisterOptions{Name: "BenchChainOfActivities"})
	w.RegisterActivityWithOptions(func(context.Context, int) error { return nil }, activity.RegisterOptions{Name: "BenchNoop"})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		runs := make([]client.WorkflowRun, workflows)
		for i := range runs {
			run, err := temporalClient.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, "BenchChainOfActivities", n)
			if err != nil {
				b.Fatal(err)
			}
			runs[i] = run
		}
		for _, run := range runs {
			if err := run.Get(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	elapsed := time.Since(start)
	total := b.N * workflows * n
	b.ReportMetric(ms(elapsed)/float64(b.N*n), "ms/activity-in-a-workflow")
	b.ReportMetric(float64(total)/elapsed.Seconds(), "activities/s")
	b.Logf("%s: %d workflows of %d activities: %v, %.1f ms an activity in a workflow, %.1f activities/s",
		devServerName(), workflows, n, elapsed.Round(time.Millisecond), ms(elapsed)/float64(b.N*n), float64(total)/elapsed.Seconds())
}

// chainOfActivities runs n activities one after another.
func chainOfActivities(ctx workflow.Context, n int) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute, // a loaded 2-core machine: 100 workflows at once
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	for i := range n {
		if err := workflow.ExecuteActivity(ctx, "BenchNoop", i).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

func devServerName() string {
	if name := os.Getenv(devServerEnv); name != "" {
		return name
	}
	return "start-dev"
}
