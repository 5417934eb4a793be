package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

var (
	loadSessions = flag.Int("bench.sessions", 1000, "sessions BenchmarkQueriesUnderLoad runs at once")
	loadLatency  = flag.Duration("bench.turn", time.Second, "simulated time per provider turn in BenchmarkQueriesUnderLoad")
	loadSlots    = flag.Int("bench.slots", 200, "the worker's provider slots in BenchmarkQueriesUnderLoad")
)

// BenchmarkQueriesUnderLoad starts many small sessions at once on one worker (6 hypotheses
// each, simulated turns, many provider slots) and, while they run, asks a live session for
// its progress every 50 ms, from four clients at once. It reports how long the whole load
// took, whether every session completed, the progress query's p50 and p99 under that load,
// and the worker's peak memory. One iteration is one load.
func BenchmarkQueriesUnderLoad(b *testing.B) {
	w := startWorker(b, b.TempDir(), "--offline-latency", loadLatency.String(), "--slots", fmt.Sprint(*loadSlots))
	req := research.Request{ResearchGoal: benchGoal, ScientistID: "bench", Config: research.Config{MaxHypotheses: 6}}
	for b.Loop() {
		n := *loadSessions
		ids := make([]string, n)
		for i := range ids {
			ids[i] = newSessionID(b)
		}
		t0 := time.Now()
		starts := make(chan string)
		var wg sync.WaitGroup
		for range 32 { // 32 clients start the sessions
			wg.Go(func() {
				for id := range starts {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					_, err := temporalClient.ExecuteWorkflow(ctx, startOptions(id), workflows.WorkflowType, req)
					cancel()
					if err != nil {
						b.Errorf("start %s: %v", id, err)
					}
				}
			})
		}
		for _, id := range ids {
			starts <- id
		}
		close(starts)
		wg.Wait()
		started := time.Since(t0)

		// While the sessions run: four clients ask for the progress of sessions still running.
		var finished atomic.Int64
		stop := watchProgress(ids, 4, 50*time.Millisecond)
		var states sync.Map
		var rwg sync.WaitGroup
		results := make(chan string)
		for range 64 {
			rwg.Go(func() {
				for id := range results {
					res, err := result(id, 60*time.Minute)
					if err != nil {
						states.Store(id, "error: "+err.Error())
					} else {
						states.Store(id, string(res.State))
					}
					finished.Add(1)
				}
			})
		}
		for _, id := range ids {
			results <- id
		}
		close(results)
		rwg.Wait()
		wall := time.Since(t0)
		lat, failed := stop()
		if err := w.exited(); err != nil {
			b.Fatal(err)
		}

		completed := 0
		states.Range(func(_, v any) bool {
			if v == string(session.Completed) {
				completed++
			}
			return true
		})
		if len(lat) == 0 {
			b.Fatal("no progress query reached a live session")
		}
		b.Logf("%d sessions (6 hypotheses, %s turns, %d slots): started in %s, all done in %s; %d completed; progress on a live session: %d queries, p50 %.1f ms, p99 %.1f ms, max %.1f ms, %d failed; worker peak RSS %s",
			n, *loadLatency, *loadSlots, started.Round(time.Millisecond), wall.Round(time.Second), completed, len(lat),
			ms(percentile(lat, 0.5)), ms(percentile(lat, 0.99)), ms(lat[len(lat)-1]), failed, peakRSS(w.cmd.Process.Pid))
		logWorkflowTaskWaits(b, ids[:min(len(ids), 50)])
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(ms(percentile(lat, 0.5)), "p50-ms")
		b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
		if completed != n {
			b.Errorf("%d of %d sessions completed", completed, n)
		}
	}
}

// watchProgress has clients ask the sessions ids, in turn, for their progress every
// interval, until stop is called; stop returns how long the answers of sessions still
// running took, sorted, and how many queries failed.
func watchProgress(ids []string, clients int, every time.Duration) (stop func() ([]time.Duration, int)) {
	var mu sync.Mutex
	var lat []time.Duration
	var failed int
	done := make(chan struct{})
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; ; i += clients {
				select {
				case <-done:
					return
				case <-time.After(every):
				}
				t := time.Now()
				p, err := queryWithin[session.Progress](30*time.Second, ids[i%len(ids)], workflows.QueryProgress)
				d := time.Since(t)
				mu.Lock()
				if err != nil {
					failed++
				} else if !p.State.Terminal() {
					lat = append(lat, d) // a live session's answer: the case measured
				}
				mu.Unlock()
			}
		})
	}
	return func() ([]time.Duration, int) {
		close(done)
		wg.Wait()
		slices.Sort(lat)
		return lat, failed
	}
}

// peakRSS is a process's peak resident memory (VmHWM), as Linux reports it.
func peakRSS(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// logWorkflowTaskWaits logs how long the sessions' workflow tasks waited in the task queue
// before a worker took them (scheduled to started, from the server's event times): a query
// on a session with a workflow task pending waits for that task.
func logWorkflowTaskWaits(tb testing.TB, ids []string) {
	tb.Helper()
	var waits []time.Duration
	for _, id := range ids {
		for _, events := range sessionHistories(tb, id) {
			scheduled := map[int64]time.Time{}
			for _, e := range events {
				switch {
				case e.GetWorkflowTaskScheduledEventAttributes() != nil:
					scheduled[e.GetEventId()] = e.GetEventTime().AsTime()
				case e.GetWorkflowTaskStartedEventAttributes() != nil:
					if t, ok := scheduled[e.GetWorkflowTaskStartedEventAttributes().GetScheduledEventId()]; ok {
						waits = append(waits, e.GetEventTime().AsTime().Sub(t))
					}
				}
			}
		}
	}
	slices.Sort(waits)
	if len(waits) == 0 {
		tb.Log("no workflow task waits measured")
		return
	}
	tb.Logf("workflow tasks of %d sessions, scheduled to started: %d tasks, p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms",
		len(ids), len(waits), ms(percentile(waits, 0.5)), ms(percentile(waits, 0.9)), ms(percentile(waits, 0.99)), ms(waits[len(waits)-1]))
}
