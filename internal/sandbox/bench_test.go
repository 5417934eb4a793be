package sandbox

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	benchThreads = flag.Int("sandbox.threads", 2, "BenchmarkMillionRows: DuckDB's threads")
	benchUntyped = flag.Bool("sandbox.untyped", false, "BenchmarkMillionRows: load every column as VARCHAR and cast in the query")
	benchTimeout = flag.Duration("sandbox.timeout", time.Minute, "BenchmarkMillionRows: the run's time cap")
)

// millionRows writes a canonical CSV of n rows from a fixed seed, as internal/dataset
// writes one: a header, comma separated, '.' decimals, ISO dates, an empty field for a
// missing value (1% of responses).
func millionRows(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "assay.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(46, 2026))
	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w.WriteString("id,site,arm,dose,response,day\n")
	for i := range n {
		arm := "control"
		dose := rng.Float64() * 10
		if i%2 == 1 {
			arm = "treated"
		}
		resp := ""
		if rng.IntN(100) > 0 {
			effect := 0.0
			if arm == "treated" {
				effect = 0.3 * dose
			}
			resp = strconv.FormatFloat(5+effect+rng.NormFloat64(), 'f', 4, 64)
		}
		fmt.Fprintf(w, "%d,site-%02d,%s,%s,%s,%s\n", i+1, rng.IntN(40), arm,
			strconv.FormatFloat(dose, 'f', 3, 64), resp, day0.AddDate(0, 0, rng.IntN(365)).Format(time.DateOnly))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkMillionRows loads a 1,000,000-row CSV (about 45 MB) and runs the analyst's kind
// of query over it: a group-by with counts, means, standard deviations and a correlation.
// Target: the median run (the child's start, the load and the query) within 5 s on 2
// cores. It also reports the child's start alone (SELECT 1 over no input).
func BenchmarkMillionRows(b *testing.B) {
	path := millionRows(b, 1_000_000)
	cols := []Column{{"id", "BIGINT"}, {"site", "VARCHAR"}, {"arm", "VARCHAR"}, {"dose", "DOUBLE"}, {"response", "DOUBLE"}, {"day", "DATE"}}
	q := `SELECT site, arm, count(*) AS n, avg(response) AS mean, stddev_samp(response) AS sd,
	             corr(dose, response) AS r, min(day) AS first, max(day) AS last
	      FROM assay GROUP BY site, arm ORDER BY site, arm`
	if *benchUntyped {
		for i := range cols {
			cols[i].Type = "VARCHAR"
		}
		q = `SELECT site, arm, count(*) AS n, avg(response::DOUBLE) AS mean, stddev_samp(response::DOUBLE) AS sd,
		             corr(dose::DOUBLE, response::DOUBLE) AS r, min(day::DATE) AS first, max(day::DATE) AS last
		      FROM assay GROUP BY site, arm ORDER BY site, arm`
	}
	caps := Caps{Threads: *benchThreads, MemoryMB: 1024, Timeout: *benchTimeout}
	req := Request{Inputs: []Input{{Table: "assay", Format: CSV, Columns: cols, From: path}}, Query: q, Caps: caps}
	var total, load, query, start []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		res, err := testRunner().Run(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		total = append(total, time.Since(t0))
		load, query = append(load, res.Load), append(query, res.Query)
		if len(res.Rows) != 80 {
			b.Fatalf("%d groups, want 80 (40 sites x 2 arms)", len(res.Rows))
		}
		empty, err := testRunner().Run(context.Background(), Request{Query: "SELECT 1", Caps: caps})
		if err != nil {
			b.Fatal(err)
		}
		start = append(start, empty.Start+empty.Load+empty.Query)
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 { slices.Sort(d); return float64(d[len(d)/2].Milliseconds()) }
	b.ReportMetric(med(total), "median-ms")
	b.ReportMetric(med(load), "load-ms")
	b.ReportMetric(med(query), "query-ms")
	b.ReportMetric(med(start), "child-start-ms")
	if m := med(total); m > 5000 {
		b.Errorf("median run %.0f ms: over the 5 s target", m)
	}
}

// BenchmarkRefusals runs each refused or runaway query through both layers: through Run
// (the guard first), and in the child alone with the guard bypassed. It logs the table
// BENCHMARKS.md shows, and fails if any query is not stopped.
func BenchmarkRefusals(b *testing.B) {
	type row struct {
		what, q string
		caps    Caps
		grace   time.Duration
	}
	rows := []row{
		{"read another file", `SELECT * FROM read_csv('/etc/passwd')`, Caps{}, 0},
		{"a file as a table", `SELECT * FROM '/etc/passwd'`, Caps{}, 0},
		{"write a file", `COPY assay TO '/tmp/out.csv'`, Caps{}, 0},
		{"change the data", `DELETE FROM assay`, Caps{}, 0},
		{"drop the data", `DROP TABLE assay`, Caps{}, 0},
		{"attach", `ATTACH ':memory:' AS m`, Caps{}, 0},
		{"attach after a ';'", `SELECT 1; ATTACH ':memory:' AS m`, Caps{}, 0},
		{"install an extension", `INSTALL httpfs`, Caps{}, 0},
		{"load an extension", `LOAD httpfs`, Caps{}, 0},
		{"change a setting", `SET memory_limit = '8GB'`, Caps{}, 0},
		{"read a setting", `SELECT current_setting('home_directory')`, Caps{}, 0},
		{"read all settings", `SELECT * FROM duckdb_settings()`, Caps{}, 0},
		{"log to a file", `CALL enable_logging(storage='file', storage_path='log.csv')`, Caps{}, 0},
		{"cross join 10^6 x 10^6 (2 s cap)", `SELECT count(*) FROM range(1000000) a, range(1000000) b`, Caps{Timeout: 2 * time.Second}, 0},
		{"repeat('x', 2e9), 3 GB allowed (1 s cap, 1 s grace)", `SELECT length(repeat('x', 2e9::BIGINT))`, Caps{Timeout: time.Second, MemoryMB: 3000}, time.Second},
		{"repeat('x', 2e9) in 512 MB", `SELECT length(repeat('x', 2e9::BIGINT))`, Caps{}, 0},
		{"10 GB of output", `SELECT i, repeat('x', 1000) AS s FROM range(10000000) t(i)`, Caps{}, 0},
	}
	var table strings.Builder
	for range b.N {
		table.Reset()
		table.WriteString("\n| query | through Run (guard first) | child alone (guard bypassed) |\n|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&table, "| %s: `%s` | %s | %s |\n", r.what, r.q, stoppedBy(b, r.q, r.caps, r.grace, true), stoppedBy(b, r.q, r.caps, r.grace, false))
		}
	}
	b.Log(table.String())
}

// stoppedBy runs q through Run (guarded) or the child alone and says what stopped it.
func stoppedBy(b *testing.B, q string, caps Caps, grace time.Duration, guarded bool) string {
	in := []Input{{Table: "assay", Format: CSV, Columns: assayColumns, Data: assayCSV(b)}}
	r := Runner{Binary: childBin, Grace: grace}
	t0 := time.Now()
	var res Result
	var err error
	if guarded {
		res, err = r.Run(context.Background(), Request{Inputs: in, Query: q, Caps: caps})
	} else {
		creq, werr := writeInputs(b.TempDir(), Request{Mode: ModeQuery, Inputs: in, Query: q, Caps: caps})
		if werr != nil {
			b.Fatal(werr)
		}
		res, err = r.runChild(context.Background(), childBin, creq)
	}
	took := time.Since(t0).Round(10 * time.Millisecond)
	var ref *Refusal
	switch {
	case errors.As(err, &ref):
		return fmt.Sprintf("%s, %s: %s (%s)", ref.Layer, ref.Reason, ref.Detail, took)
	case err != nil:
		b.Fatalf("%s: %v", q, err)
	case res.Truncated:
		return fmt.Sprintf("cap: cut at %d rows (truncated) (%s)", len(res.Rows), took)
	}
	b.Errorf("%s: not stopped (guarded %v)", q, guarded)
	return "NOT STOPPED"
}
