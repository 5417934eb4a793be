package e2e

// A query on a finished session (issue #38): Temporal answers it by replaying the
// session's last run on a worker, fetching its history each time, so what it costs is what
// that run holds. The session is made as a scientist's fork would make it: a checkpoint of
// 800 hypotheses is written to the store as a session would have left it, and a real
// session forks from it and researches for a few rounds until it has finished, in one run,
// as the last run of an 800-hypothesis session can be.

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// finishedHypotheses is the finished session's size (issue #38: 800), and finishedRounds
// how many hypotheses its fork adds before it finishes: enough rounds for a last run of
// several hundred events, the runs a finished session once replayed whole.
var (
	finishedHypotheses = flag.Int("bench.finished.hypotheses", 800, "hypotheses in BenchmarkFinishedQuery's session")
	finishedAdded      = flag.Int("bench.finished.added", 20, "hypotheses BenchmarkFinishedQuery's fork adds before it finishes")
)

// finishedTarget is the target: a query on a finished session of 800 hypotheses in
// at most 50 ms, the median of the queries from this process.
const finishedTarget = 50 * time.Millisecond

// BenchmarkFinishedQuery asks a finished session of 800 hypotheses for its progress, from
// this process (the SDK's client, as the desk and the starter ask), and describes it as
// the CLI's describe does (the server's own record, no worker), one after the other. It
// fails if the queries' median is over 50 ms.
func BenchmarkFinishedQuery(b *testing.B) {
	storeDir := b.TempDir()
	parent := newSessionID(b)
	writeFinishedCheckpoint(b, storeDir, parent, *finishedHypotheses)
	w := startWorker(b, storeDir)
	id := newSessionID(b)
	// A fork's max_hypotheses counts the hypotheses it makes, not those it inherits.
	startSession(b, id, research.Request{ScientistID: "bench",
		Config:  research.Config{MaxHypotheses: *finishedAdded, ConvergenceRounds: research.MaxConvergenceRounds, Seed: 1},
		Lineage: &lineage.Descriptor{Type: lineage.User, Parent: parent, Relation: lineage.Fork}})
	res, err := result(id, 20*time.Minute)
	if err != nil || res.State != session.Completed {
		b.Fatalf("session %s: %+v, %v", id, res, err)
	}
	runs := sessionHistories(b, id)
	for i, events := range runs {
		bytes := 0
		for _, e := range events {
			bytes += e.Size()
		}
		b.Logf("run %d of %d: %d events, %d bytes", i+1, len(runs), len(events), bytes)
	}

	var queries, describes []time.Duration
	for b.Loop() {
		if err := w.exited(); err != nil {
			b.Fatal(err) // a query would wait for a worker until it times out
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		t := time.Now()
		_, err := temporalClient.DescribeWorkflowExecution(ctx, id, "")
		describes = append(describes, time.Since(t))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		t = time.Now()
		p, err := queryWithin[session.Progress](time.Minute, id, workflows.QueryProgress)
		queries = append(queries, time.Since(t))
		if err != nil {
			b.Fatal(err)
		}
		if p.State != session.Completed || p.HypothesesGenerated != res.Hypotheses {
			b.Fatalf("progress of the finished session: %s with %d hypotheses; want completed with %d", p.State, p.HypothesesGenerated, res.Hypotheses)
		}
	}
	b.ReportMetric(ms(median(queries)), "p50-ms")
	b.ReportMetric(ms(slices.Max(queries)), "max-ms")
	b.ReportMetric(ms(median(describes)), "describe-p50-ms")
	b.Logf("progress of a finished session of %d hypotheses (%d runs, the last of %d events), %d queries: p50 %s, slowest %s; describe p50 %s; the query takes %s more (target: at most %s: %s)",
		res.Hypotheses, len(runs), len(runs[len(runs)-1]), len(queries), median(queries), slices.Max(queries), median(describes),
		median(queries)-median(describes), finishedTarget, met(median(queries) <= finishedTarget))
	if median(queries) > finishedTarget {
		b.Errorf("a query on the finished session took %s (median of %d); the target is %s", median(queries), len(queries), finishedTarget)
	}
}

// writeFinishedCheckpoint writes what a session of n hypotheses leaves in the store: each
// hypothesis, and a checkpoint ranking them as a tournament would have: ratings spread
// around 1200 with their standard errors, results, reviews, evolved ones with parents,
// a fifth excluded. Titles are cut from prose cosci was not written from (proseTitles),
// so that the records pack as a model's would, not as a pattern does.
func writeFinishedCheckpoint(b *testing.B, storeDir, id string, n int) {
	ctx := context.Background()
	st, err := store.Open(ctx, storeDir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	titles := proseTitles(b, n)
	rng := rand.New(rand.NewPCG(38, uint64(n)))
	snap := session.Snapshot{SessionID: id, Seq: 1, Time: session.Stamp(time.Now()), State: session.Suspended,
		ScientistID: "bench", Goal: benchGoal, StartedAt: session.Stamp(time.Now().Add(-time.Hour)), Rating: session.RatingFitted,
		Config:   research.Config{MaxHypotheses: n, ReviewTypes: []string{"initial"}},
		Progress: session.Progress{HypothesesGenerated: n, Checkpoints: 1, State: session.Suspended}}
	strategies := []string{"literature", "debate", "assumptions", "expansion", "out_of_box"}
	for i := range n {
		h := research.Hypothesis{ID: fmt.Sprintf("h-%04d", i+1), Title: titles[i], Origin: "generation", Goal: benchGoal,
			Strategy: strategies[rng.IntN(len(strategies))], Statement: titles[(i+1)%n] + ". " + titles[(i+2)%n] + ".",
			Rationale: strings.Repeat(titles[(i+3)%n]+". ", 6), Predictions: []string{titles[(i+4)%n], titles[(i+5)%n]}}
		e := session.Entry{ID: h.ID, Title: h.Title, Origin: h.Origin, Strategy: h.Strategy, Round: i/4 + 1, Cluster: 1 + rng.IntN(60),
			Elo: 1200 + 80*rng.NormFloat64(), EloSE: 30 + 60*rng.Float64(), Wins: rng.IntN(15), Losses: rng.IntN(15),
			Reviews: 1 + rng.IntN(2), Score: 4 + 5*rng.Float64()}
		if i > 20 && rng.IntN(3) == 0 {
			h.Origin, e.Origin, h.Strategy, e.Strategy = "evolution", "evolution", "combination", "combination"
			e.Parents = []string{fmt.Sprintf("h-%04d", 1+rng.IntN(i)), fmt.Sprintf("h-%04d", 1+rng.IntN(i))}
		}
		if rng.IntN(5) == 0 {
			e.Excluded = fmt.Sprintf("near-duplicate of h-%04d (similarity %.2f)", 1+rng.IntN(n), 0.4+0.5*rng.Float64())
		}
		if err := st.PutHypothesis(ctx, id, h); err != nil {
			b.Fatal(err)
		}
		snap.Hypotheses = append(snap.Hypotheses, e)
	}
	if _, err := st.PutCheckpoint(ctx, snap, nil); err != nil {
		b.Fatal(err)
	}
}

// proseTitles are n titles of 5 to 12 words, cut in order from the Go standard library's
// package documentation (its doc.go files, about 8,500 words: a thousand titles, then
// they repeat): English prose of a vocabulary cosci was not written from, standing in for
// a model's hypothesis titles, about as long.
func proseTitles(b *testing.B, n int) []string {
	var files []string
	for _, pattern := range []string{"*/doc.go", "*/*/doc.go", "*/*/*/doc.go"} {
		found, err := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", pattern))
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, found...)
	}
	var words []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			if text, ok := strings.CutPrefix(strings.TrimSpace(line), "//"); ok && !strings.HasPrefix(text, "go:") {
				words = append(words, strings.Fields(text)...)
			}
		}
	}
	if len(words) < 100 {
		b.Fatalf("no package documentation under %s (%d words)", runtime.GOROOT(), len(words))
	}
	titles := make([]string, 0, n)
	for i := 0; len(titles) < n; {
		k := 5 + len(titles)%8
		if i+k > len(words) {
			i = 0
		}
		titles = append(titles, strings.Join(words[i:i+k], " "))
		i += k
	}
	return titles
}
