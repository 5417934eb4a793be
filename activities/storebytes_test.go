package activities_test

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/pgtest"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

var (
	storeHypotheses = flag.Int("store.hypotheses", 800, "hypotheses of BenchmarkStoreBytes' session")
	storeStudy      = flag.Bool("store.study", false, "BenchmarkStoreBytes/dir also weighs other ways to keep the session's prompts and other compressors (storestudy_test.go)")
)

// BenchmarkStoreBytes runs one session to -store.hypotheses hypotheses (800) in the
// workflow test environment, with the real activities and the offline model, on each
// store: a directory and a PostgreSQL database. It reports the bytes the session's records
// take per hypothesis (the session and its subagents' sessions, each record once, the
// event log included) and logs them by kind of record. The session is the one the earlier
// figures in BENCHMARKS.md came from: initial reviews only, exploring to the end, a
// continue-as-new suggested 12 minutes into each run, every provider turn a second long.
//
// The directory's figure counts each file once, as du does (a subagent shares its
// parent's records as hard links), by its length; it also reports the disk blocks the files
// take. The database's counts the bytes of each record's data and of each event's JSON, and
// also reports the tables' own size (rows, indexes and TOAST, after PostgreSQL's
// compression).
func BenchmarkStoreBytes(b *testing.B) {
	b.Run("dir", func(b *testing.B) {
		var root string
		for b.Loop() {
			root = b.TempDir() // each iteration a store of its own: the session id is the same
			st, err := store.Open(b.Context(), root)
			if err != nil {
				b.Fatal(err)
			}
			runSession(b, st, *storeHypotheses)
		}
		kinds, blocks := dirBytes(b, root)
		report(b, kinds, *storeHypotheses)
		b.ReportMetric(float64(blocks)/float64(*storeHypotheses), "disk-B/hypothesis")
		if *storeStudy {
			study(b, root, *storeHypotheses)
		}
	})
	b.Run("postgres", func(b *testing.B) {
		pg, err := pgtest.Start("")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { pg.Close() })
		var url string
		for i := 0; b.Loop(); i++ {
			if url, err = pg.CreateDatabase(b.Context(), fmt.Sprintf("storebytes_%d", i)); err != nil {
				b.Fatal(err)
			}
			st, err := store.Open(b.Context(), url)
			if err != nil {
				b.Fatal(err)
			}
			runSession(b, st, *storeHypotheses)
			st.Close()
		}
		kinds, tables := databaseBytes(b, url)
		report(b, kinds, *storeHypotheses)
		b.ReportMetric(float64(tables)/float64(*storeHypotheses), "tables-B/hypothesis")
	})
}

// kindBytes is what the records of one kind take.
type kindBytes struct {
	kind  string // the first element of the record's key: "turns", "checkpoints", "events.jsonl"
	n     int
	bytes int64
}

func report(b *testing.B, kinds []kindBytes, hypotheses int) {
	var total int64
	slices.SortFunc(kinds, func(x, y kindBytes) int { return cmp.Compare(y.bytes, x.bytes) })
	var lines []string
	for _, k := range kinds {
		total += k.bytes
		lines = append(lines, fmt.Sprintf("%-18s %6d records %11d B %8.1f B/hypothesis", k.kind, k.n, k.bytes, float64(k.bytes)/float64(hypotheses)))
	}
	b.Logf("%d hypotheses, %d B, %.1f B/hypothesis:\n%s", hypotheses, total, float64(total)/float64(hypotheses), strings.Join(lines, "\n"))
	b.ReportMetric(float64(total)/float64(hypotheses), "B/hypothesis")
}

// dirBytes sums the files under root by kind, each file once however many names it has,
// and the disk blocks they take.
func dirBytes(b *testing.B, root string) (kinds []kindBytes, blocks int64) {
	by := map[string]*kindBytes{}
	storedFiles(b, root, func(kind, _ string, info fs.FileInfo) error {
		k := by[kind]
		if k == nil {
			k = &kindBytes{kind: kind}
			by[kind] = k
		}
		k.n++
		k.bytes += info.Size()
		blocks += info.Sys().(*syscall.Stat_t).Blocks * 512
		return nil
	})
	for _, k := range by {
		kinds = append(kinds, *k)
	}
	return kinds, blocks
}

// storedFiles calls each for every file of a directory store under root, once however
// many names it has (pieces are hard links), with its kind: the folder below the
// session's (turns, pieces, events.jsonl...).
func storedFiles(b *testing.B, root string, each func(kind, path string, info fs.FileInfo) error) {
	seen := map[uint64]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		ino := info.Sys().(*syscall.Stat_t).Ino
		if seen[ino] {
			return nil
		}
		seen[ino] = true
		rel, _ := filepath.Rel(root, path)
		parts := strings.Split(filepath.ToSlash(rel), "/") // session/kind[/...]
		return each(parts[1], path, info)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// databaseBytes sums the records' data by kind, and the events' JSON, and the size of the
// store's tables.
func databaseBytes(b *testing.B, url string) (kinds []kindBytes, tables int64) {
	ctx := b.Context()
	db, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close(context.Background())
	rows, err := db.Query(ctx, `
		SELECT split_part(key, '/', 1), count(*), sum(octet_length(data)) FROM cosci_records GROUP BY 1
		UNION ALL
		SELECT 'events.jsonl', count(*), sum(octet_length(event::text) + 1) FROM cosci_events`)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var k kindBytes
		if err := rows.Scan(&k.kind, &k.n, &k.bytes); err != nil {
			b.Fatal(err)
		}
		kinds = append(kinds, k)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRow(ctx, `SELECT pg_total_relation_size('cosci_records') + pg_total_relation_size('cosci_events') + pg_total_relation_size('cosci_sessions')`).Scan(&tables); err != nil {
		b.Fatal(err)
	}
	return kinds, tables
}

// runSession runs a session to n hypotheses on st, through every run it continues as new
// into.
func runSession(b *testing.B, st *store.Store, n int) {
	acts := &activities.Activities{Store: st, Models: map[string]activities.Model{"offline": &simulator.Offline{}}}
	req := research.Request{
		ResearchGoal: "Find druggable mechanisms that slow tau propagation",
		ScientistID:  "ada",
		Config:       research.Config{MaxHypotheses: n, ReviewTypes: []string{"initial"}, ConvergenceRounds: 1000},
	}
	var carried *workflows.Carried
	for run := 1; ; run++ {
		var suite testsuite.WorkflowTestSuite
		suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
		env := suite.NewTestWorkflowEnvironment()
		env.SetTestTimeout(10 * time.Minute)
		env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{activities.Classifier()}})
		workflows.Register(env)
		env.RegisterActivity(acts)
		// Every provider turn takes a second on the workflow clock, running the real activity.
		for _, fn := range []any{acts.Plan, acts.Generate, acts.Evolve, acts.Review, acts.Compare,
			acts.Debate, acts.Proximity, acts.MetaReview, acts.Overview} {
			env.OnActivity(fn, mock.Anything, mock.Anything).After(time.Second).Return(fn)
		}
		env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, 12*time.Minute)
		env.ExecuteWorkflow(workflows.ResearchSession, req, carried)
		if !env.IsWorkflowCompleted() {
			b.Fatalf("run %d did not complete", run)
		}
		var can *workflow.ContinueAsNewError
		err := env.GetWorkflowError()
		if errors.As(err, &can) {
			carried = nil
			if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &req, &carried); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if err != nil {
			b.Fatal(err)
		}
		var res workflows.Result
		if err := env.GetWorkflowResult(&res); err != nil {
			b.Fatal(err)
		}
		if res.Hypotheses != n {
			b.Fatalf("the session ended with %d hypotheses (%s); want %d", res.Hypotheses, res.StopReason, n)
		}
		b.Logf("%d hypotheses in %d runs: %s", res.Hypotheses, run, res.StopReason)
		return
	}
}
