package e2e

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
)

var groundingHypotheses = flag.Int("bench.grounding", 200, "hypotheses in each of BenchmarkGrounding's sessions")

// historyStats is what a session's Temporal history weighs, over all of its runs.
type historyStats struct {
	runs, events int
	bytes        int // the events' encoded size
	largest      int // the largest payload of any activity, signal, update, start or result
	largestKind  string
	wall         time.Duration
	toolCalls    int
	hypotheses   int
	kinds        map[string]*kindStats // the reviewed hypotheses' references by the kind the simulator planted
	unreviewed   int                   // hypotheses with references that no review checked (near-duplicates)
	atPage       pageStats             // the references cited at a page of a full text
	duplicates   nearDuplicates        // the near-duplicates excluded, by relation
}

// pageStats is what the reviews' checks made of the references cited at a passage (a page)
// of a full text: the honest ones should pass, and those cited at another page than their
// quote's (wrong-page) should not.
type pageStats struct {
	references, cited          int // reviewed references; those cited at a passage
	honest, honestFlagged      int // honest ones at a passage; flagged by the check
	wrongPage, wrongPageCaught int // wrong-page ones; flagged by the check
	wrongPageRead              int // of the wrong-page ones, those cited at a page the turn read
	pages                      map[string]bool
}

// kindStats is what the reviews made of the references of one planted kind.
type kindStats struct {
	n         int
	checked   int            // flagged by the citation check (a verdict other than verified)
	penalised int            // costing the hypothesis something by the check's verdict (research.CitationCosts)
	flagged   int            // flagged by the check or by a review's support judgement
	judged    int            // given a support judgement by some review
	verdicts  map[string]int // the worst verdict any review's check gave it
	accused   []string       // honest references the check found contradicted or out of context, with why
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
		s.events += len(events)
		for _, e := range events {
			s.bytes += proto.Size(e)
		}
		eachPayload(events, note)
	}
	return s
}

// BenchmarkGrounding compares a grounded session with an ungrounded one of the same goal,
// seed and size: Temporal history (runs, events, bytes, the largest payload), wall time,
// tool calls, and, by the kind of citation the simulator planted (--offline-citation-kinds
// all, with --offline-fabricate 0.3 of them dishonest), how many reflection flagged: by
// its citation check, and by the full reviews' support judgements; and the citations at
// the page of the test library's full texts: honest ones flagged (at most 2%) and quotes
// cited at the wrong page caught (at least 95%), failing when either target is missed.
// Run with
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
		// The simulator records what it planted in a file of its own, apart from the store.
		truthFile := filepath.Join(b.TempDir(), "planted.jsonl")
		w := startWorker(b, storeDir, "--tools", cfg, "--offline-fabricate", "0.3", "--offline-citation-kinds", "all", "--offline-truth", truthFile)
		defer w.Stop(b)
		id := newSessionID(b)
		req := research.Request{ResearchGoal: benchGoal, ScientistID: "bench",
			Config: research.Config{MaxHypotheses: n, Seed: 1, ConvergenceRounds: research.MaxConvergenceRounds,
				ReviewTypes: []string{research.ReviewInitial, research.ReviewFull}}} // a full review judges each citation's support
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
		truth, err := simulator.OpenTruth(truthFile)
		if err != nil {
			b.Fatal(err)
		}
		countCitations(b, &s, storeDir, id, truth)
		s.duplicates = measureNearDuplicates(b, storeDir, id)
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
		fmt.Printf("ungrounded: %s\ngrounded: %s\n", plain.duplicates, grounded.duplicates)
		// On stdout, not in the log: the testing package keeps ten lines of a benchmark's log.
		fmt.Printf("grounded citations of reviewed hypotheses, by the kind the simulator planted (%d hypotheses with references were excluded as near-duplicates before a review):\n%s",
			grounded.unreviewed, citationTable(grounded.kinds))
		ap := grounded.atPage
		b.Logf("cited at the page of a full text: %d of %d reviewed references (%d pages of %s); honest ones flagged by the check %d of %d; wrong-page ones caught %d of %d (%d of them cited at a page the turn read)",
			ap.cited, ap.references, len(ap.pages), "the test library's full texts", ap.honestFlagged, ap.honest, ap.wrongPageCaught, ap.wrongPage, ap.wrongPageRead)
		b.ReportMetric(pct(ap.cited, ap.references), "cited-at-page-%")
		b.ReportMetric(pct(ap.wrongPageCaught, ap.wrongPage), "wrong-page-caught-%")
		// The citation check's targets, at the page: every honest kind flagged at most 2%,
		// every dishonest one at least 95%.
		switch {
		case ap.cited == 0:
			b.Errorf("no reference cites a passage of a full text: the page-level check went unmeasured")
		case ap.wrongPage == 0:
			b.Errorf("no wrong-page reference was planted: the page-level check's catch went unmeasured")
		case pct(ap.honestFlagged, ap.honest) > 2:
			b.Errorf("the check flagged %d of %d honest citations at the page (over 2%%)", ap.honestFlagged, ap.honest)
		case pct(ap.wrongPageCaught, ap.wrongPage) < 95:
			b.Errorf("the check caught %d of %d quotes cited at the wrong page (under 95%%)", ap.wrongPageCaught, ap.wrongPage)
		}
		honest, dishonest := tally(grounded.kinds)
		b.ReportMetric(float64(grounded.bytes)/float64(plain.bytes), "history-bytes-ratio")
		b.ReportMetric(float64(grounded.events)/float64(plain.events), "events-ratio")
		b.ReportMetric(grounded.wall.Seconds()/plain.wall.Seconds(), "wall-ratio")
		b.ReportMetric(float64(max(plain.largest, grounded.largest)), "largest-payload-bytes")
		b.ReportMetric(pct(dishonest.flagged, dishonest.n), "caught-%")
		b.ReportMetric(pct(dishonest.penalised, dishonest.n), "penalised-by-check-%")
		b.ReportMetric(pct(honest.flagged, honest.n), "wrongly-flagged-%")
		// The targets of the citation benchmark (internal/citation): every dishonest kind
		// but the irrelevant quote (verbatim: the support judgement's to catch) penalised by
		// the check, no honest one accused.
		for kind, k := range grounded.kinds {
			switch {
			case dishonestKind(kind) && kind != simulator.PlantedIrrelevant && float64(k.penalised) < 0.95*float64(k.n):
				b.Errorf("%s: %d of %d penalised by the check", kind, k.penalised, k.n)
			case !dishonestKind(kind) && k.verdicts[research.CitationContradicted]+k.verdicts[research.CitationOutOfContext] > 0:
				b.Errorf("%s: %d honest citations contradicted or out of context: %s", kind, k.verdicts[research.CitationContradicted]+k.verdicts[research.CitationOutOfContext], strings.Join(k.accused, "; "))
			}
		}
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

// countCitations reads a session's hypotheses and reviews from the store: each reference,
// the kind the simulator planted (from its truth), and what the reviews made of it.
func countCitations(tb testing.TB, s *historyStats, storeDir, id string, truth *simulator.Truth) {
	tb.Helper()
	st, err := store.Open(context.Background(), storeDir)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	hs := hypothesesOf(tb, storeDir, id)
	s.kinds = map[string]*kindStats{}
	s.atPage.pages = map[string]bool{}
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
			kind := plantedKind(truth, h, ref)
			k := s.kinds[kind]
			if k == nil {
				k = &kindStats{verdicts: map[string]int{}}
				s.kinds[kind] = k
			}
			k.n++
			checked, penalised, flagged, judged, worst := false, false, false, false, ""
			for _, r := range reviews {
				for _, c := range r.Citations {
					if c.ID != ref.ID {
						continue
					}
					checked = checked || c.Verdict != research.CitationVerified
					penalised = penalised || research.CitationCosts[c.Verdict].Weakens()
					flagged = flagged || c.Flagged()
					judged = judged || c.Support != ""
					if worst == "" || verdictRank(c.Verdict) > verdictRank(worst) {
						worst = c.Verdict
					}
				}
			}
			k.verdicts[cmp.Or(worst, "unchecked")]++
			s.atPage.references++
			if ref.Passage != "" && ref.Page > 0 {
				s.atPage.cited++
				s.atPage.pages[fmt.Sprintf("%s p. %d", ref.ID, ref.Page)] = true
				if simulator.Honest(kind) {
					s.atPage.honest++
					if checked {
						s.atPage.honestFlagged++
					}
				}
			}
			// A wrong page the turn read is placed: its section and file come from the tool
			// result that holds it; one it did not read keeps only the page of its id.
			if kind == simulator.PlantedWrongPage {
				s.atPage.wrongPage++
				if ref.Section != "" || ref.File != "" {
					s.atPage.wrongPageRead++
				}
				if checked {
					s.atPage.wrongPageCaught++
				}
			}
			if !dishonestKind(kind) && (worst == research.CitationContradicted || worst == research.CitationOutOfContext) {
				for _, r := range reviews {
					if i := slices.IndexFunc(r.Citations, func(c research.CitationCheck) bool { return c.ID == ref.ID }); i >= 0 {
						k.accused = append(k.accused, fmt.Sprintf("%q: %s (%s)", ref.Quote, r.Citations[i].Verdict, r.Citations[i].Note))
						break
					}
				}
			}
			if checked {
				k.checked++
			}
			if penalised {
				k.penalised++
			}
			if flagged {
				k.flagged++
			}
			if judged {
				k.judged++
			}
		}
	}
}

// plantedKind is the kind the simulator planted, as its truth recorded it; a reference it
// has no record of is "unrecorded", which counts as dishonest, so that the benchmark's
// targets fail rather than pass on it.
func plantedKind(truth *simulator.Truth, h research.Hypothesis, ref research.Reference) string {
	if kind, ok := truth.Hypothesis(h, ref); ok {
		return kind
	}
	return "unrecorded"
}

// dishonestKind says whether a review should flag a reference of the kind.
func dishonestKind(kind string) bool { return !simulator.Honest(kind) }

// verdictRank orders the verdicts from verified to invented.
func verdictRank(v string) int { return slices.Index(research.CitationVerdicts, v) }

// tally sums the honest kinds and the dishonest ones.
func tally(kinds map[string]*kindStats) (honest, dishonest kindStats) {
	for kind, k := range kinds {
		t := &honest
		if dishonestKind(kind) {
			t = &dishonest
		}
		t.n, t.checked, t.penalised, t.flagged, t.judged = t.n+k.n, t.checked+k.checked, t.penalised+k.penalised, t.flagged+k.flagged, t.judged+k.judged
	}
	return honest, dishonest
}

// citationTable is the per-kind table BENCHMARKS.md shows.
func citationTable(kinds map[string]*kindStats) string {
	var names []string
	for kind := range kinds {
		names = append(names, kind)
	}
	order := func(kind string) int {
		if i := slices.Index(simulator.PlantKinds(), kind); i >= 0 {
			return i
		}
		return len(simulator.PlantKinds())
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(order(a), order(b)), strings.Compare(a, b)) })
	verdicts := append(slices.Clone(research.CitationVerdicts), "unchecked")
	var b strings.Builder
	fmt.Fprintf(&b, "| kind | n | flagged by the check | penalised by the check | flagged by the check or the support judgement | support judged | %s |\n|---|---:|---:|---:|---:|---:|%s\n",
		strings.Join(verdicts, " | "), strings.Repeat("---:|", len(verdicts)))
	for _, kind := range names {
		k := kinds[kind]
		cells := make([]string, len(verdicts))
		for i, v := range verdicts {
			cells[i] = fmt.Sprint(k.verdicts[v])
		}
		fmt.Fprintf(&b, "| %s | %d | %d (%.0f%%) | %d (%.0f%%) | %d (%.0f%%) | %d | %s |\n", kind, k.n, k.checked, pct(k.checked, k.n),
			k.penalised, pct(k.penalised, k.n), k.flagged, pct(k.flagged, k.n), k.judged, strings.Join(cells, " | "))
	}
	return b.String()
}
