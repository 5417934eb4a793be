package e2e

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

var (
	computeSessions   = flag.Int("bench.compute-sessions", 12, "sessions BenchmarkQueriesWhileComputing runs at once")
	computeHypotheses = flag.Int("bench.compute-hypotheses", 120, "max_hypotheses of each session in BenchmarkQueriesWhileComputing")
)

// BenchmarkQueriesWhileComputing measures what bounding the CPU-heavy activities buys: one
// worker runs sessions of many hypotheses with instant offline turns, so that their fits
// and reports keep the CPU busy, while two clients ask a live session for its progress
// every 20 ms. It runs the load twice in one run, with --compute-slots 64 (as good as
// unbounded) and 1, and reports the progress query's p50 and p99 and how long the load took.
func BenchmarkQueriesWhileComputing(b *testing.B) {
	for _, slots := range []int{64, 1} {
		b.Run(fmt.Sprintf("compute-slots=%d", slots), func(b *testing.B) {
			w := startWorker(b, b.TempDir(), "--compute-slots", fmt.Sprint(slots), "--slots", "32")
			req := research.Request{ResearchGoal: benchGoal, ScientistID: "bench",
				Config: research.Config{MaxHypotheses: *computeHypotheses, ReviewTypes: []string{research.ReviewInitial}}}
			for b.Loop() {
				ids := make([]string, *computeSessions)
				t0 := time.Now()
				for i := range ids {
					ids[i] = newSessionID(b)
					startSession(b, ids[i], req)
				}
				stop := watchProgress(ids, 2, 20*time.Millisecond)
				completed := 0
				for _, id := range ids {
					if res, err := result(id, 30*time.Minute); err == nil && res.State == session.Completed {
						completed++
					}
				}
				wall := time.Since(t0)
				lat, _ := stop()
				if len(lat) == 0 || completed != len(ids) {
					b.Fatalf("%d of %d sessions completed; %d queries answered by a live session", completed, len(ids), len(lat))
				}
				b.Logf("--compute-slots %d: %d sessions of %d hypotheses done in %s; progress on a live session: %d queries, p50 %.1f ms, p99 %.1f ms, max %.1f ms",
					slots, len(ids), *computeHypotheses, wall.Round(100*time.Millisecond), len(lat),
					ms(percentile(lat, 0.5)), ms(percentile(lat, 0.99)), ms(lat[len(lat)-1]))
				b.ReportMetric(wall.Seconds(), "wall-s")
				b.ReportMetric(ms(percentile(lat, 0.5)), "p50-ms")
				b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
			}
			w.Stop(b)
		})
	}
}
