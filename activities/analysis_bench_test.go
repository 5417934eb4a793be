package activities

import (
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/sandbox"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
)

// BenchmarkRunAnalysis: one Welch analysis of the simulated lab's two-group table of
// 100,000 rows (sandbox.MaxRows, the most an analysis reads), from the store's bytes to
// the stored record: reading and writing the canonical CSV, the child's load and query,
// the test. Each iteration runs under a new id, so none returns a stored record.
func BenchmarkRunAnalysis(b *testing.B) {
	st, err := store.Open(b.Context(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	a := &Activities{Store: st, Sandbox: sandboxChild(b)}
	env.RegisterActivity(a)
	lab := simulator.Lab(1, 5, simulator.LabDesign{N: sandbox.MaxRows / 2})
	rec, err := st.PutDataset(b.Context(), "s-1", "lab.csv", lab.CSV, dataset.Options{}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	ds := DatasetRef{Table: "result", Digest: rec.Digest}
	i := 0
	for b.Loop() {
		i++
		var res RunAnalysisResult
		v, err := env.ExecuteActivity(a.RunAnalysis, analysisInput(fmt.Sprintf("bench-%d", i), labPlan(), ds))
		if err == nil {
			err = v.Get(&res)
		}
		if err != nil || res.Refused != "" || res.Outcome.N != sandbox.MaxRows {
			b.Fatalf("%+v, %v", res, err)
		}
	}
}
