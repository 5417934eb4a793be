package activities

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/stats"
	"github.com/cosci-dev/cosci/internal/store"
)

// TestReportAdjustsOverStoredAnalyses: the report's family of analyses is every record the
// session store holds under analyses/, a tool's analysis on no experiment included, and a
// refused one stays out of it: report.json's q are R's p.adjust(c(0.01, 0.04), "BH").
func TestReportAdjustsOverStoredAnalyses(t *testing.T) {
	env, a := newActivities(t, &simulator.Offline{})
	for _, r := range []store.AnalysisRecord{
		{ID: "x-0001-run-1", Experiment: "x-0001", Kind: "pre-registered", Test: "welch_t", Ran: "2026-03-01T10:00:00Z", Stats: &stats.Result{Test: "welch_t", P: 0.01}},
		{ID: "tool-h-0001-1", Kind: "exploratory", Test: "pearson", Ran: "2026-03-01T11:00:00Z", Stats: &stats.Result{Test: "pearson", P: 0.04}},
		{ID: "tool-h-0001-2", Kind: "exploratory", Test: "pearson", Ran: "2026-03-01T12:00:00Z", Refused: "the query reads no loaded table"},
	} {
		if _, err := a.Store.PutAnalysis(t.Context(), "s-1", r); err != nil {
			t.Fatal(err)
		}
	}
	snap := session.Snapshot{SessionID: "s-1", Seq: 1, State: session.Completed, Goal: "g"}
	if _, err := env.ExecuteActivity(a.Checkpoint, CheckpointInput{Snapshot: snap}); err != nil {
		t.Fatal(err)
	}
	v, err := env.ExecuteActivity(a.Report, ReportInput{SessionID: "s-1", Checkpoint: 1})
	if err != nil {
		t.Fatal(err)
	}
	var md string
	if err := v.Get(&md); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(md), "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var x struct {
		Analyses struct {
			FamilySize int `json:"family_size"`
			Family     []struct {
				ID string  `json:"id"`
				P  float64 `json:"p"`
				Q  float64 `json:"q"`
			} `json:"family"`
			Refused []struct {
				ID string `json:"id"`
			} `json:"refused"`
		} `json:"analyses"`
	}
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	f := x.Analyses
	if f.FamilySize != 2 || len(f.Family) != 2 || len(f.Refused) != 1 || f.Refused[0].ID != "tool-h-0001-2" {
		t.Fatalf("analyses = %+v; want a family of 2 and the refused one apart", f)
	}
	for i, want := range []struct {
		id   string
		p, q float64
	}{{"x-0001-run-1", 0.01, 0.02}, {"tool-h-0001-1", 0.04, 0.04}} {
		if m := f.Family[i]; m.ID != want.id || m.P != want.p || m.Q != want.q {
			t.Errorf("family[%d] = %s p %g q %g, want %s p %g q %g", i, m.ID, m.P, m.Q, want.id, want.p, want.q)
		}
	}
}
