package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
)

var groundingHypotheses = flag.Int("bench.grounding", 200, "hypotheses in each of BenchmarkGrounding's sessions")

// historyStats is what a session's Temporal history weighs, over all of its runs.
type historyStats struct {
	runs, events  int
	bytes         int // the events' encoded size
	largest       int // the largest payload of any activity, signal, update, start or result
	largestKind   string
	wall          time.Duration
	toolCalls     int
	hypotheses    int
	genuine, fake int // the references the simulator cited truly, and those it made up
	caught, wrong int // made-up ones a review flagged; genuine ones a review flagged
	unreviewed    int // hypotheses with references that no review checked (near-duplicates)
}

func measureHistory(tb testing.TB, id string) historyStats {
	tb.Helper()
	var s historyStats
	note := func(kind string, p interface{ Size() int }) {
		if n := p.Size(); n > s.largest {
			s.largest, s.largestKind = n, kind
		}
	}
	runs := sessionHistories(tb, id)
	s.runs = len(runs)
	for _, events := range runs {
		names := map[int64]string{}
		for _, e := range events {
			s.events++
			s.bytes += proto.Size(e)
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
			case e.GetWorkflowExecutionContinuedAsNewEventAttributes() != nil:
				note("continue-as-new input", e.GetWorkflowExecutionContinuedAsNewEventAttributes().GetInput())
			case e.GetWorkflowExecutionCompletedEventAttributes() != nil:
				note("workflow result", e.GetWorkflowExecutionCompletedEventAttributes().GetResult())
			}
		}
	}
	return s
}

// BenchmarkGrounding compares a grounded session with an ungrounded one of the same goal,
// seed and size: Temporal history (runs, events, bytes, the largest payload), wall time,
// tool calls, and how well reflection's citation check tells the references the
// simulator made up (a tenth, --offline-fabricate) from the genuine ones. Run with
//
//	go test -run '^$' -bench BenchmarkGrounding -benchtime 1x -timeout 60m ./e2e/
func BenchmarkGrounding(b *testing.B) {
	n := *groundingHypotheses
	library, err := filepath.Abs(fixtureLibrary)
	if err != nil {
		b.Fatal(err)
	}
	cfg := filepath.Join(b.TempDir(), "tools.yaml")
	os.WriteFile(cfg, fmt.Appendf(nil, "servers:\n  - name: literature\n    command: [%q, --library, %q, --index, %q]\n", literatureBinary, library, b.TempDir()), 0o644)
	run := func(grounded bool) historyStats {
		storeDir := b.TempDir()
		w := startWorker(b, storeDir, "--tools", cfg, "--offline-fabricate", "0.1")
		defer w.Stop(b)
		id := newSessionID(b)
		req := research.Request{ResearchGoal: benchGoal, ScientistID: "bench",
			Config: research.Config{MaxHypotheses: n, Seed: 1, ConvergenceRounds: research.MaxConvergenceRounds}}
		if grounded {
			req.Config.Tools = []string{"literature.search", "literature.fetch"}
		}
		t0 := time.Now()
		startSession(b, id, req)
		res, err := result(id, 30*time.Minute)
		if err != nil || res.State != session.Completed || res.Hypotheses < n {
			b.Fatalf("session %s: %+v, %v", id, res, err)
		}
		s := measureHistory(b, id)
		s.wall = time.Since(t0)
		s.hypotheses = res.Hypotheses
		p := mustQueryWithin[session.Progress](b, time.Minute, id, "progress")
		s.toolCalls = p.ToolCalls
		countCitations(b, &s, storeDir, id)
		return s
	}
	for b.Loop() {
		plain := run(false)
		grounded := run(true)
		for _, c := range []struct {
			name string
			s    historyStats
		}{{"ungrounded", plain}, {"grounded", grounded}} {
			b.Logf("%s: %d hypotheses in %s; %d runs, %d events, %d history bytes (%.0f per hypothesis); largest payload %d bytes (%s); %d tool calls",
				c.name, c.s.hypotheses, c.s.wall.Round(time.Second), c.s.runs, c.s.events, c.s.bytes, float64(c.s.bytes)/float64(c.s.hypotheses), c.s.largest, c.s.largestKind, c.s.toolCalls)
		}
		b.Logf("grounded citations of reviewed hypotheses: %d genuine, %d made up; the check caught %d of the made up (%.0f%%) and flagged %d of the genuine (%.1f%%); %d hypotheses with references were excluded as near-duplicates before a review",
			grounded.genuine, grounded.fake, grounded.caught, pct(grounded.caught, grounded.fake), grounded.wrong, pct(grounded.wrong, grounded.genuine), grounded.unreviewed)
		b.ReportMetric(float64(grounded.bytes)/float64(plain.bytes), "history-bytes-ratio")
		b.ReportMetric(float64(grounded.events)/float64(plain.events), "events-ratio")
		b.ReportMetric(grounded.wall.Seconds()/plain.wall.Seconds(), "wall-ratio")
		b.ReportMetric(float64(max(plain.largest, grounded.largest)), "largest-payload-bytes")
		b.ReportMetric(pct(grounded.caught, grounded.fake), "caught-%")
		b.ReportMetric(pct(grounded.wrong, grounded.genuine), "wrongly-flagged-%")
		if grounded.bytes > 2*plain.bytes {
			b.Errorf("the grounded history is %d bytes, more than twice the ungrounded one's %d", grounded.bytes, plain.bytes)
		}
		if max(plain.largest, grounded.largest) > 256<<10 {
			b.Errorf("a payload of %d bytes: over 256 KiB", max(plain.largest, grounded.largest))
		}
	}
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// countCitations reads a session's hypotheses and reviews from the store: its references,
// those the simulator made up, and what the reviews' checks said of each.
func countCitations(tb testing.TB, s *historyStats, storeDir, id string) {
	tb.Helper()
	st, err := store.Open(context.Background(), storeDir)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	keys, err := st.Backend().List(ctx, id, "hypotheses/")
	if err != nil {
		tb.Fatal(err)
	}
	var ids []string
	for _, k := range keys {
		ids = append(ids, strings.TrimSuffix(path.Base(k), ".json")) // h-0001: nothing to unescape
	}
	hs, err := st.Hypotheses(ctx, id, ids)
	if err != nil {
		tb.Fatal(err)
	}
	for hid, h := range hs {
		if len(h.References) == 0 {
			continue
		}
		reviews, err := st.Reviews(ctx, id, hid)
		if err != nil {
			tb.Fatal(err)
		}
		if len(reviews) == 0 {
			// Excluded as a near-duplicate before its review: nobody checked its
			// citations, and it is not in the ranking or the report.
			s.unreviewed++
			continue
		}
		for _, ref := range h.References {
			flagged := false
			for _, r := range reviews {
				for _, c := range r.Citations {
					flagged = flagged || (c.ID == ref.ID && c.Verdict != research.CitationVerified)
				}
			}
			switch {
			case ref.Fabricated:
				s.fake++
				if flagged {
					s.caught++
				}
			default:
				s.genuine++
				if flagged {
					s.wrong++
				}
			}
		}
	}
}
