package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/internal/research"
)

// BenchmarkOrchestration measures what cosci's workflow costs on top of the activities it
// runs. A session runs to its hypotheses with the zero-latency offline provider; its
// history says which activities it scheduled in which batches (those one workflow task
// scheduled together). Then a bare workflow runs the same activities, with the same inputs
// under another session id, in the same batches (each batch all at once, the next when it
// has finished), on the same worker. Both rates are activities per second of wall time;
// the ratio cosci / bare is what the orchestration leaves of the bare rate (issue #11's
// target: at least 0.8). Subagents' activities are not in the session's history, so their
// work counts against cosci: the ratio is a lower bound.
func BenchmarkOrchestration(b *testing.B) {
	w := startWorker(b, b.TempDir())
	bare := worker.New(temporalClient, bareQueue, worker.Options{})
	bare.RegisterWorkflowWithOptions(bareRounds, workflow.RegisterOptions{Name: "BareRounds"})
	if err := bare.Start(); err != nil {
		b.Fatal(err)
	}
	defer bare.Stop()
	var ratios []float64
	for i := 0; b.Loop(); i++ {
		id := newSessionID(b)
		t0 := time.Now()
		startSession(b, id, research.Request{ResearchGoal: benchGoal, ScientistID: "bench",
			Config: research.Config{MaxHypotheses: *orchestrationHypotheses, Seed: int64(i + 1), ConvergenceRounds: research.MaxConvergenceRounds}})
		if _, err := result(id, 20*time.Minute); err != nil {
			b.Fatalf("session %s: %v", id, err)
		}
		cosci := time.Since(t0)
		if err := w.exited(); err != nil {
			b.Fatal(err)
		}
		plan, n := batchesOf(b, id)

		t1 := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		opts := startOptions(id + "-bare")
		opts.TaskQueue = bareQueue
		run, err := temporalClient.ExecuteWorkflow(ctx, opts, "BareRounds", plan)
		if err == nil {
			err = run.Get(ctx, nil)
		}
		cancel()
		if err != nil {
			b.Fatalf("the bare workflow: %v", err)
		}
		plain := time.Since(t1)
		rc, rb := float64(n)/cosci.Seconds(), float64(n)/plain.Seconds()
		ratios = append(ratios, rc/rb)
		b.Logf("%d activities in %d batches: cosci %s (%.1f/s), bare %s (%.1f/s), ratio %.2f",
			n, len(plan), cosci.Round(time.Millisecond), rc, plain.Round(time.Millisecond), rb, rc/rb)
	}
	b.ReportMetric(medianFloat(ratios), "cosci/bare")
}

var orchestrationHypotheses = flag.Int("bench.orchestration-hypotheses", 40, "hypotheses in each of BenchmarkOrchestration's sessions")

func medianFloat(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// bareQueue is where the bare workflow's workflow tasks go; its activities go where the
// session's went.
const bareQueue = "cosci-bench-bare"

// call is one activity of a batch: its type, task queue and input as it was scheduled.
type call struct {
	Activity string          `json:"activity"`
	Queue    string          `json:"queue"`
	Input    json.RawMessage `json:"input"`
}

// batchesOf reads a finished session's activities from every run's history, grouped by the
// workflow task that scheduled them, with the session's id in their inputs replaced by the
// bare workflow's, so that its activities do the same work over again. (A subagent's
// result is imported from the subagent's session, as the session did.)
func batchesOf(tb testing.TB, id string) (plan [][]call, n int) {
	tb.Helper()
	for _, events := range sessionHistories(tb, id) {
		batchOf := map[int64]int{} // workflow task completed event -> batch
		var batches [][]call
		for _, e := range events {
			a := e.GetActivityTaskScheduledEventAttributes()
			if a == nil {
				continue
			}
			var input json.RawMessage
			if ps := a.GetInput().GetPayloads(); len(ps) == 1 {
				// The session's id as a whole value only: an import reads the subagent's
				// session ("<id>-fork-…"), which the bare workflow does not run again.
				input = json.RawMessage(strings.ReplaceAll(string(ps[0].GetData()), `"`+id+`"`, `"`+id+`-bare"`))
			}
			k, ok := batchOf[a.GetWorkflowTaskCompletedEventId()]
			if !ok {
				k = len(batches)
				batchOf[a.GetWorkflowTaskCompletedEventId()] = k
				batches = append(batches, nil)
			}
			batches[k] = append(batches[k], call{Activity: a.GetActivityType().GetName(), Queue: a.GetTaskQueue().GetName(), Input: input})
			n++
		}
		plan = append(plan, batches...)
	}
	return plan, n
}

// bareRounds runs each batch's activities at once and waits for all of them before the
// next batch: the orchestration a session needs at the least.
func bareRounds(ctx workflow.Context, plan [][]call) error {
	for _, batch := range plan {
		var futures []workflow.Future
		for _, c := range batch {
			actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{TaskQueue: c.Queue, StartToCloseTimeout: 5 * time.Minute})
			futures = append(futures, workflow.ExecuteActivity(actx, c.Activity, c.Input))
		}
		for _, f := range futures {
			if err := f.Get(ctx, nil); err != nil {
				return fmt.Errorf("a bare %v", err)
			}
		}
	}
	return nil
}
