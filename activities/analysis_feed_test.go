package activities

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/sandbox"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// TestRunAnalysisEveryRow: an analysis of 150,000 rows, past the most an answer holds
// (sandbox.MaxRows), feeds the test every row: n is the row count less the rows dropped
// for a missing response, and the effect is the treated mean minus the control mean of
// the file as encoding/csv reads it; the record keeps 20 rows of it.
func TestRunAnalysisEveryRow(t *testing.T) {
	const rows = 150_000
	lab := simulator.Lab(1, 46, simulator.LabDesign{N: rows / 2})
	table, err := csv.NewReader(bytes.NewReader(lab.CSV)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Every 997th response is missing, as labs write it: "NA".
	var sum [2]float64
	var n [2]int
	missing := 0
	for i, r := range table[1:] {
		if i%997 == 0 {
			r[3], missing = "NA", missing+1
			continue
		}
		v, err := strconv.ParseFloat(r[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		arm := 0
		if r[1] == "treated" {
			arm = 1
		}
		sum[arm] += v
		n[arm]++
	}
	var b bytes.Buffer
	if err := csv.NewWriter(&b).WriteAll(table); err != nil {
		t.Fatal(err)
	}
	if len(table)-1 != rows || rows <= sandbox.MaxRows {
		t.Fatalf("%d rows written; the test needs %d, past %d", len(table)-1, rows, sandbox.MaxRows)
	}
	env, a := newActivities(t, &simulator.Offline{})
	a.Sandbox = sandboxChild(t)
	stored, err := a.Store.PutDataset(t.Context(), "s-1", "plate.csv", b.Bytes(), dataset.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var res RunAnalysisResult
	if err := run(t, env, a.RunAnalysis, analysisInput("an-all", labPlan(), DatasetRef{Table: "result", Digest: stored.Digest}), &res); err != nil {
		t.Fatal(err)
	}
	truth := sum[1]/float64(n[1]) - sum[0]/float64(n[0])
	if res.Refused != "" || res.Outcome.N != rows-missing || math.Abs(res.Outcome.Effect-truth) > 1e-9 {
		t.Fatalf("outcome %+v; want n = %d (%d rows less %d missing), effect %g", res, rows-missing, rows, missing, truth)
	}
	rec, err := a.Store.Analysis(t.Context(), "s-1", "an-all")
	if err != nil {
		t.Fatal(err)
	}
	if rec.RowCount != rows || rec.Dropped != missing || len(rec.Rows) != 20 || !rec.RowsCut || rec.Stats.N[0]+rec.Stats.N[1] != rows-missing {
		t.Errorf("record: %d rows counted, %d dropped, %d kept (cut %v), n %v", rec.RowCount, rec.Dropped, len(rec.Rows), rec.RowsCut, rec.Stats.N)
	}
}
