package e2e

// Benchmarks of cosci against the design spec's quality requirements (checkpoint < 5 s,
// session creation < 1 s, state queries < 100 ms, 100+ concurrent sessions, sessions with
// 1000+ hypotheses), on the real dev server TestMain starts and real worker processes with
// the offline provider. They run only with -bench; see BENCHMARKS.md for the commands and
// the results on the reference machine.

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

const benchGoal = "Identify druggable mechanisms that slow tau propagation in early Alzheimer's disease"

// BenchmarkSessionStart measures session creation as a scientist sees it: from
// ExecuteWorkflow until the status query answers "active". Each session is terminated
// (outside the timer) right after it answers, so that no earlier session's turns load the
// worker while a later one is timed.
func BenchmarkSessionStart(b *testing.B) {
	req := warmWorker(b)

	var total, rpc []time.Duration
	polls := 0
	for b.Loop() {
		id := newSessionID(b)
		tRPC, tActive, err := startUntilActive(id, req)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		total, rpc = append(total, tActive.Duration), append(rpc, tRPC)
		polls += tActive.polls
		terminateIfRunning(b, id)
		b.StartTimer()
	}
	b.ReportMetric(ms(median(rpc)), "start-rpc-ms")
	b.ReportMetric(ms(median(total)), "p50-ms")
	b.ReportMetric(ms(percentile(total, 0.95)), "p95-ms")
	b.ReportMetric(ms(slices.Max(total)), "max-ms")
	b.ReportMetric(float64(polls)/float64(len(total)), "polls/op")
}

// activeAfter is how long a session took to answer "active", and how many status queries
// that took.
type activeAfter struct {
	time.Duration
	polls int
}

// startUntilActive starts a session and polls its status query until it answers "active".
// It returns how long ExecuteWorkflow took and how long until "active" (both from the call).
func startUntilActive(id string, req research.Request) (time.Duration, activeAfter, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t0 := time.Now()
	if _, err := temporalClient.ExecuteWorkflow(ctx, startOptions(id), workflows.WorkflowType, req); err != nil {
		return 0, activeAfter{}, fmt.Errorf("start %s: %w", id, err)
	}
	tRPC := time.Since(t0)
	var lastErr error
	for polls := 1; ctx.Err() == nil; polls++ {
		v, err := temporalClient.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
		if err == nil {
			var st workflows.Status
			if err = v.Get(&st); err == nil && st.State == session.Active {
				return tRPC, activeAfter{time.Since(t0), polls}, nil
			}
		}
		lastErr = err
		time.Sleep(2 * time.Millisecond)
	}
	return tRPC, activeAfter{}, fmt.Errorf("session %s did not answer active within 30s (last error: %v)", id, lastErr)
}

// BenchmarkQuery measures the four queries on one session of 1000 hypotheses, first
// suspended (a running workflow: the worker answers from its cache), then completed (a
// closed workflow: a worker answers by replaying the whole history). Building the session
// takes minutes, so it happens once, whatever -count says; the sub-benchmarks repeat.
//
// The session asks for 2000 hypotheses (and never converges), is suspended once it has
// 1000, and is later ended by the scientist's terminate command, which writes the final
// checkpoint and the report: the completed session holds the same 1000 hypotheses.
// Along the way it logs how long the 1000 took, the size of the Temporal history, the
// Checkpoint activities' durations, and checkpoints the scientist asks for while suspended.
func BenchmarkQuery(b *testing.B) {
	want := *benchHypotheses
	storeDir := b.TempDir()
	w := startWorker(b, storeDir)
	id := newSessionID(b)
	t0 := time.Now()
	startSession(b, id, research.Request{
		ResearchGoal: benchGoal, ScientistID: "bench",
		Config: research.Config{MaxHypotheses: 2 * want, Seed: 1, ConvergenceRounds: research.MaxConvergenceRounds},
	})
	// Note when each hundred hypotheses arrived, to see whether rounds slow down as the
	// session grows.
	var marks []string
	var at session.Progress
	next := 100
	eventuallyEvery(b, 30*time.Minute, 500*time.Millisecond, fmt.Sprintf("the session to have %d hypotheses", want), func() (bool, error) {
		if err := w.exited(); err != nil {
			b.Fatal(err)
		}
		p, err := progressOf(id)
		for ; err == nil && p.HypothesesGenerated >= next && next <= want; next += 100 {
			marks = append(marks, fmt.Sprintf("%d@%.0fs", next, time.Since(t0).Seconds()))
			if next%500 == 0 { // a benchmark's log shows only at its end: say how far it is
				fmt.Fprintf(os.Stderr, "BenchmarkQuery: %s\n", marks[len(marks)-1])
			}
		}
		at = p
		return p.HypothesesGenerated >= want, err
	})
	took := time.Since(t0)
	if _, err := update(id, workflows.Suspend, "bench-suspend", map[string]string{"reason": "benchmark"}); err != nil {
		b.Fatalf("suspend %s: %v", id, err)
	}
	b.Logf("%d hypotheses after %s (%.2f/s; by time since start: %v): %d reviews, %d matches (%d debates), %d evolved, %d excluded, %d meta-reviews, %d rounds, %d checkpoints, %d failed turns",
		at.HypothesesGenerated, took.Round(time.Millisecond), float64(at.HypothesesGenerated)/took.Seconds(), marks,
		at.ReviewsCompleted, at.MatchesPlayed, at.Debates, at.Evolved, at.Excluded, at.MetaReviews, at.Rounds, at.Checkpoints, at.TurnsFailed)
	eventuallyEvery(b, 2*time.Minute, 100*time.Millisecond, "the suspended session to settle", func() (bool, error) {
		st, err := query[workflows.Status](id, workflows.QueryStatus)
		if err != nil || st.State != session.Suspended {
			return false, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d, err := temporalClient.DescribeWorkflowExecution(ctx, id, "")
		return err == nil && len(d.GetPendingActivities()) == 0, err
	})
	sp := mustQueryWithin[session.Progress](b, time.Minute, id, workflows.QueryProgress)
	view := mustQueryWithin[workflows.StateView](b, time.Minute, id, workflows.QueryState, workflows.Page{Limit: 1})
	agentTurns := 0
	for _, a := range view.Agents {
		agentTurns += a.Turns
	}
	turns := sp.HypothesesGenerated + sp.ReviewsCompleted + sp.MatchesPlayed
	b.Logf("suspended with %d hypotheses: hypotheses+reviews+matches = %d (%.1f/s over the %s to %d), agent turns %d (%.1f/s)",
		sp.HypothesesGenerated, turns, float64(turns)/took.Seconds(), took.Round(time.Second), want, agentTurns, float64(agentTurns)/took.Seconds())
	logHistorySize(b, id)
	logCheckpointActivities(b, id)

	runQueries(b, "suspended", id, 30*time.Second, w)

	// Checkpoints the scientist asks for while the session is suspended: from the checkpoint
	// update until the progress query shows it written (a snapshot of 1000+ hypotheses,
	// through the Checkpoint activity: temp file, fsync, rename). A fixed few, not a
	// sub-benchmark: each adds its snapshot to a history that is near Temporal's limit.
	var cps []time.Duration
	for range 5 {
		before := mustQueryWithin[session.Progress](b, time.Minute, id, workflows.QueryProgress)
		t := time.Now()
		if _, err := update(id, workflows.Checkpoint, newSessionID(b), map[string]string{}); err != nil {
			b.Fatalf("checkpoint update: %v", err)
		}
		eventuallyEvery(b, time.Minute, 5*time.Millisecond, "the checkpoint to be written", func() (bool, error) {
			p, err := progressOf(id)
			return p.Checkpoints > before.Checkpoints && p.State == session.Suspended, err
		})
		cps = append(cps, time.Since(t))
	}
	b.Logf("checkpoint command on the suspended session, until written: %v (median %s)", cps, median(cps))

	// End the session: terminate writes the final checkpoint and the report.
	t1 := time.Now()
	if _, err := update(id, workflows.Terminate, "bench-terminate", map[string]string{"reason": "benchmark"}); err != nil {
		b.Fatalf("terminate %s: %v", id, err)
	}
	res, err := result(id, 10*time.Minute)
	if err != nil {
		b.Fatalf("session %s: %v", id, err)
	}
	b.Logf("terminate to completed (overview, final checkpoint, report): %s; %d hypotheses; %s",
		time.Since(t1).Round(time.Millisecond), res.Hypotheses, res.StopReason)
	logHistorySize(b, id)
	logRunsAndPayloads(b, id)
	logStoreBytes(b, storeDir, res.Hypotheses)

	runQueries(b, "completed", id, 5*time.Minute, w)
}

// benchHypotheses is the size of BenchmarkQuery's session (issue #11 measures 5,000).
var benchHypotheses = flag.Int("bench.hypotheses", 1000, "hypotheses in BenchmarkQuery's session")

// logRunsAndPayloads logs how many runs a session took (continue-as-new) and the largest
// payload of each kind in all of their histories: each activity's input and result, the
// start and continue-as-new inputs, signals, updates and the result.
func logRunsAndPayloads(tb testing.TB, id string) {
	tb.Helper()
	largest := map[string]int{}
	note := func(kind string, p interface{ Size() int }) { largest[kind] = max(largest[kind], p.Size()) }
	runs := sessionHistories(tb, id)
	for _, events := range runs {
		eachPayload(events, note)
	}
	kinds := slices.Sorted(maps.Keys(largest))
	var lines []string
	for _, k := range kinds {
		lines = append(lines, fmt.Sprintf("%s %d", k, largest[k]))
	}
	tb.Logf("%s took %d runs; largest payloads (bytes): %s", id, len(runs), strings.Join(lines, "; "))
}

// eachPayload calls note with every payload of one run's history, named by its kind: the
// start and continue-as-new inputs, each activity's input and result ("Ranking result", as
// BENCHMARKS.md names them), signals ("signal feedback"), updates and the workflow's result.
func eachPayload(events []*historypb.HistoryEvent, note func(kind string, p interface{ Size() int })) {
	names := map[int64]string{} // the activity each scheduled event started
	for _, e := range events {
		switch {
		case e.GetWorkflowExecutionStartedEventAttributes() != nil:
			note("start input", e.GetWorkflowExecutionStartedEventAttributes().GetInput())
		case e.GetActivityTaskScheduledEventAttributes() != nil:
			a := e.GetActivityTaskScheduledEventAttributes()
			names[e.GetEventId()] = a.GetActivityType().GetName()
			note(a.GetActivityType().GetName()+" input", a.GetInput())
		case e.GetActivityTaskCompletedEventAttributes() != nil:
			a := e.GetActivityTaskCompletedEventAttributes()
			note(names[a.GetScheduledEventId()]+" result", a.GetResult())
		case e.GetWorkflowExecutionSignaledEventAttributes() != nil:
			a := e.GetWorkflowExecutionSignaledEventAttributes()
			note("signal "+a.GetSignalName(), a.GetInput())
		case e.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
			a := e.GetWorkflowExecutionUpdateAcceptedEventAttributes()
			note("update "+a.GetAcceptedRequest().GetInput().GetName(), a.GetAcceptedRequest().GetInput().GetArgs())
		case e.GetWorkflowExecutionContinuedAsNewEventAttributes() != nil:
			note("continue-as-new input", e.GetWorkflowExecutionContinuedAsNewEventAttributes().GetInput())
		case e.GetWorkflowExecutionCompletedEventAttributes() != nil:
			note("workflow result", e.GetWorkflowExecutionCompletedEventAttributes().GetResult())
		}
	}
}

// logStoreBytes logs the bytes the session store holds, and per hypothesis. A directory
// store shares a record between sessions as hard links (a subagent's copy of its parent's
// texts), so each file counts once, as du counts it.
func logStoreBytes(tb testing.TB, dir string, hypotheses int) {
	tb.Helper()
	var total int64
	links, files := 0, map[uint64]bool{}
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		links++
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			if files[st.Ino] {
				return nil
			}
			files[st.Ino] = true
		}
		total += info.Size()
		return nil
	})
	tb.Logf("session store %s: %d files (%d names), %d bytes, %d bytes per hypothesis", dir, len(files), links, total, total/int64(max(hypotheses, 1)))
}

// runQueries runs the four queries as sub-benchmarks of b on session id.
func runQueries(b *testing.B, kind, id string, timeout time.Duration, w *workerProc) {
	historyTotal := mustQueryWithin[workflows.HistoryView](b, timeout, id, workflows.QueryHistory, workflows.Page{Limit: 1}).Total
	queries := []struct {
		name string
		run  func() error
	}{
		{"status", func() error {
			_, err := queryWithin[workflows.Status](timeout, id, workflows.QueryStatus)
			return err
		}},
		{"progress", func() error {
			_, err := queryWithin[session.Progress](timeout, id, workflows.QueryProgress)
			return err
		}},
		{"state", func() error {
			v, err := queryWithin[workflows.StateView](timeout, id, workflows.QueryState, workflows.Page{Limit: 50})
			if err == nil && (len(v.Hypotheses) != 50 || v.Total < *benchHypotheses) {
				err = fmt.Errorf("state page: %d entries of %d; want 50 of >= %d", len(v.Hypotheses), v.Total, *benchHypotheses)
			}
			return err
		}},
		{"history", func() error {
			// The latest 100 events: a long session's run keeps its latest 500 in memory,
			// and the older ones are in the store (in_store).
			v, err := queryWithin[workflows.HistoryView](timeout, id, workflows.QueryHistory, workflows.Page{Offset: historyTotal - 100, Limit: 100})
			if err == nil && len(v.Events) != 100 {
				err = fmt.Errorf("history page: %d events of %d from %d; want 100", len(v.Events), v.Total, historyTotal-100)
			}
			return err
		}},
	}
	for _, q := range queries {
		b.Run(kind+"/"+q.name, func(b *testing.B) {
			if err := w.exited(); err != nil {
				b.Fatal(err) // a query would wait for a worker until it times out
			}
			var lat []time.Duration
			for b.Loop() {
				t := time.Now()
				if err := q.run(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			b.ReportMetric(ms(median(lat)), "p50-ms")
			b.ReportMetric(ms(slices.Max(lat)), "max-ms")
		})
	}
}

// BenchmarkConcurrentSessions starts 100 sessions of 12 hypotheses at once on one worker
// and waits until all have completed. One iteration is a batch of 100.
func BenchmarkConcurrentSessions(b *testing.B) {
	const sessions = 100
	req := warmWorker(b)

	var wall time.Duration
	var sessionLat []time.Duration
	done, turns, modelRequests := 0, 0, 0
	for b.Loop() {
		ids := make([]string, sessions)
		for i := range ids {
			ids[i] = newSessionID(b)
		}
		lat := make([]time.Duration, sessions)
		errs := make([]error, sessions)
		requests := make([]int, sessions)
		t0 := time.Now()
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
				defer cancel()
				r := req
				r.Config.Seed = int64(i + 1)
				run, err := temporalClient.ExecuteWorkflow(ctx, startOptions(id), workflows.WorkflowType, r)
				if err == nil {
					var res workflows.Result
					err = run.Get(ctx, &res)
					if err == nil && (res.State != session.Completed || res.Hypotheses < 12) {
						err = fmt.Errorf("ended %s with %d hypotheses; want completed with 12", res.State, res.Hypotheses)
					}
					requests[i] = res.Usage.Requests
				}
				lat[i], errs[i] = time.Since(t0), err
			})
		}
		wg.Wait()
		elapsed := time.Since(t0)
		b.StopTimer()
		for i, err := range errs {
			if err != nil {
				b.Fatalf("session %s: %v", ids[i], err)
			}
		}
		wall += elapsed
		done += sessions
		sessionLat = append(sessionLat, lat...)
		for i, id := range ids {
			p := mustQueryWithin[session.Progress](b, time.Minute, id, workflows.QueryProgress)
			turns += p.HypothesesGenerated + p.ReviewsCompleted + p.MatchesPlayed
			modelRequests += requests[i]
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(done)/wall.Seconds(), "sessions/s")
	b.ReportMetric(float64(turns)/wall.Seconds(), "turns/s")
	b.ReportMetric(float64(turns)/float64(done), "turns/session")
	b.ReportMetric(float64(modelRequests)/wall.Seconds(), "model-requests/s")
	b.ReportMetric(median(sessionLat).Seconds(), "p50-session-s")
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/batch")
}

// ---- helpers for benchmarks (the test helpers take *testing.T) ----

// exited says, if the worker has exited, how: something outside the benchmark stopped it.
func (w *workerProc) exited() error {
	select {
	case <-w.done:
		return fmt.Errorf("%s (pid %d) exited during the benchmark (%v); see %s", w.name, w.cmd.Process.Pid, w.err, w.log)
	default:
		return nil
	}
}

// logHistorySize logs the length and size of a session's Temporal history: Temporal
// warns at 10240 events or 10 MB and ends a run at 51200 events or 50 MB.
func logHistorySize(tb testing.TB, id string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := temporalClient.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		tb.Logf("describe %s: %v", id, err)
		return
	}
	info := d.GetWorkflowExecutionInfo()
	tb.Logf("history of %s: %d events, %.1f MB", id, info.GetHistoryLength(), float64(info.GetHistorySizeBytes())/1e6)
}

// logCheckpointActivities logs how long the session's Checkpoint activities took, from the
// server's event times: scheduled to completed, and started to completed (the worker's
// part), over all checkpoints and over the last ten (the largest snapshots).
func logCheckpointActivities(tb testing.TB, id string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	it := temporalClient.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]time.Time{}
	started := map[int64]time.Time{}
	var total, worker []time.Duration
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			tb.Logf("history of %s: %v", id, err)
			return
		}
		checkpointActivityTimes(e, scheduled, started, &total, &worker)
	}
	if len(total) == 0 {
		tb.Logf("no Checkpoint activity in the history of %s", id)
		return
	}
	last := max(0, len(total)-10)
	tb.Logf("Checkpoint activity (%d of them), scheduled->completed: median %s, max %s; last ten: median %s, max %s; started->completed, last ten: median %s",
		len(total), median(total), slices.Max(total), median(total[last:]), slices.Max(total[last:]), median(worker[last:]))
}

func checkpointActivityTimes(e *historypb.HistoryEvent, scheduled, started map[int64]time.Time, total, worker *[]time.Duration) {
	switch {
	case e.GetActivityTaskScheduledEventAttributes() != nil:
		if e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "Checkpoint" {
			scheduled[e.GetEventId()] = e.GetEventTime().AsTime()
		}
	case e.GetActivityTaskStartedEventAttributes() != nil:
		id := e.GetActivityTaskStartedEventAttributes().GetScheduledEventId()
		if _, ok := scheduled[id]; ok {
			started[id] = e.GetEventTime().AsTime()
		}
	case e.GetActivityTaskCompletedEventAttributes() != nil:
		id := e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()
		if s, ok := scheduled[id]; ok {
			at := e.GetEventTime().AsTime()
			*total = append(*total, at.Sub(s))
			*worker = append(*worker, at.Sub(started[id]))
		}
	}
}

func median(d []time.Duration) time.Duration { return percentile(d, 0.5) }

// percentile is the p-quantile of d (nearest rank).
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// warmWorker starts a worker and one session on it, until the session answers "active", so
// that the worker's pollers are connected and its first workflow task served before
// anything is timed. It returns the request of a 12-hypothesis session.
func warmWorker(b *testing.B) research.Request {
	startWorker(b, b.TempDir())
	req := research.Request{ResearchGoal: benchGoal, ScientistID: "bench", Config: research.Config{MaxHypotheses: 12}}
	warm := newSessionID(b)
	if _, _, err := startUntilActive(warm, req); err != nil {
		b.Fatal(err)
	}
	terminateIfRunning(b, warm)
	return req
}
