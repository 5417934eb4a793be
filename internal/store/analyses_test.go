package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/stats"
)

func analysisRecord(id, ran string, rows int) AnalysisRecord {
	r := AnalysisRecord{
		ID: id, Hypothesis: "h-0001", Kind: "exploratory", Plan: "sha256:" + strings.Repeat("a", 64),
		Query: "SELECT arm AS grp, response AS value FROM plates", Test: "welch-t", Columns: []string{"grp", "value"},
		Inputs:    []AnalysisInput{{Table: "plates", Digest: strings.Repeat("b", 64)}},
		PlannedAt: "2026-11-28T20:00:00Z", Ran: ran, ResultColumns: []string{"grp", "value"}, RowCount: rows,
		Stats: &stats.Result{Test: "welch-t", N: []int{rows / 2, rows - rows/2}, StatisticName: "t", Statistic: 2.5, DF: 27.3, P: 0.019,
			Effect: stats.Effect{Name: "mean difference", Value: 4.2, CI: &stats.Interval{Low: 0.7, High: 7.7, Level: 0.95}}},
	}
	for i := range rows {
		r.Rows = append(r.Rows, []any{fmt.Sprintf("arm-%d", i%2), float64(i) + 0.5})
	}
	return r
}

// TestAnalyses: a record is stored once under its id, with its rows bounded, read back as
// written (statistics included), listed in the order the analyses ran, and a second
// record under the same id leaves the first standing.
func TestAnalyses(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := tctx(t)
		first, err := s.PutAnalysis(ctx, "s1", analysisRecord("a-2", "2026-11-28T21:00:00.5Z", 30))
		if err != nil {
			t.Fatal(err)
		}
		if len(first.Rows) != AnalysisRows || !first.RowsCut || first.RowCount != 30 {
			t.Errorf("stored %d rows (cut %v) of %d; want %d, cut", len(first.Rows), first.RowsCut, first.RowCount, AnalysisRows)
		}
		other := analysisRecord("a-2", "2026-11-28T22:00:00Z", 4)
		other.Refused = "a second run"
		again, err := s.PutAnalysis(ctx, "s1", other)
		if err != nil || again.Refused != "" || again.Ran != first.Ran || len(again.Rows) != AnalysisRows {
			t.Errorf("a second record under the id: %+v, %v", again, err)
		}
		read, err := reopen(s).Analysis(ctx, "s1", "a-2")
		if err != nil || read.Stats == nil || read.Stats.P != 0.019 || read.Stats.Effect.CI.High != 7.7 || read.Query != first.Query {
			t.Errorf("read back %+v, %v", read, err)
		}
		if _, err := s.PutAnalysis(ctx, "s1", analysisRecord("a-1", "2026-11-28T21:00:00Z", 2)); err != nil {
			t.Fatal(err)
		}
		list, err := s.Analyses(ctx, "s1")
		if err != nil || len(list) != 2 || list[0].ID != "a-1" || list[1].ID != "a-2" {
			t.Errorf("analyses %+v, %v", list, err)
		}
		if _, err := s.Analysis(ctx, "s1", "a-3"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("an unknown analysis: %v", err)
		}
		if _, found, err := s.FindAnalysis(ctx, "s1", "a-3"); found || err != nil {
			t.Errorf("FindAnalysis of an unknown analysis: %v, %v", found, err)
		}
		if other, err := s.Analyses(ctx, "s2"); err != nil || len(other) != 0 {
			t.Errorf("another session holds %+v, %v", other, err)
		}
	})
}

// TestAnalysisRowBytes: rows within the count but over the byte cap are cut to it.
func TestAnalysisRowBytes(t *testing.T) {
	r := analysisRecord("wide", "2026-11-28T21:00:00Z", 10)
	for i := range r.Rows {
		r.Rows[i] = []any{strings.Repeat("x", 1500), i}
	}
	got, err := open(t).PutAnalysis(tctx(t), "s1", r)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := jsonSize(got.Rows)
	if !got.RowsCut || len(got.Rows) >= 10 || len(got.Rows) == 0 || b > AnalysisRowBytes {
		t.Errorf("%d rows of %d bytes kept (cut %v); want fewer than 10 within %d bytes", len(got.Rows), b, got.RowsCut, AnalysisRowBytes)
	}
}

// Where the session is encrypted, an analysis' query and rows are not in the clear.
func TestAnalysesSealed(t *testing.T) {
	ds := open(t)
	s := encrypted(t, ds.Store)
	ctx := tctx(t)
	if _, err := s.PutAnalysis(ctx, "s1", analysisRecord("a-1", "2026-11-28T21:00:00Z", 4)); err != nil {
		t.Fatal(err)
	}
	raw, err := s.Backend().Get(ctx, "s1", analysesDir+"/a-1.json")
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := Plain(raw)
	for _, clear := range []string{"SELECT arm", "arm-1"} {
		if bytes.Contains(raw, []byte(clear)) || bytes.Contains(plain, []byte(clear)) {
			t.Errorf("the record holds %q in the clear", clear)
		}
	}
	if r, err := s.Analysis(ctx, "s1", "a-1"); err != nil || r.Query == "" {
		t.Errorf("read back %+v, %v", r, err)
	}
}

func jsonSize(rows [][]any) (int, error) {
	b, err := json.Marshal(rows)
	return len(b), err
}
