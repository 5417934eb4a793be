package activities

import (
	"context"
	"fmt"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/store"
)

func TestProximity(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	a := &Activities{Store: st}
	env.RegisterActivity(a)

	texts := map[string]string{
		"h-0001": "Microglial exosomes carry misfolded tau between connected brain regions",
		"h-0002": "Microglial exosomes carry misfolded tau between distant brain regions", // close to h-0001
		"h-0003": "Astrocytes clear misfolded tau from synapses during sleep",             // shares "misfolded tau"
		"h-0004": "Mycorrhizal fungi ration nitrogen to seedlings in drought",             // unrelated
	}
	var all []string
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("h-%04d", i)
		h := research.Hypothesis{ID: id, Title: texts[id], Statement: texts[id], Predictions: []string{"It should show."}}
		if err := st.PutHypothesis(t.Context(), "s-1", h); err != nil {
			t.Fatal(err)
		}
		all = append(all, id)
	}

	run := func(in ProximityInput) ProximityResult {
		t.Helper()
		v, err := env.ExecuteActivity(a.Proximity, in)
		if err != nil {
			t.Fatal(err)
		}
		var out ProximityResult
		if err := v.Get(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}

	out := run(ProximityInput{SessionID: "s-1", New: []string{"h-0002", "h-0001"}, All: all})
	// h-0001 and h-0002 pick each other: one edge. Each also neighbours h-0003, above the
	// floor; h-0004 shares nothing.
	if len(out.Edges) != 3 {
		t.Fatalf("edges %+v, want 3", out.Edges)
	}
	first := out.Edges[0]
	if first.A != "h-0001" || first.B != "h-0002" || first.Sim < 0.5 || first.Sim >= 1 {
		t.Errorf("first edge %+v, want h-0001 to h-0002 with a high similarity", first)
	}
	for _, e := range out.Edges {
		if e.A == e.B || e.B == "h-0004" || e.A == "h-0004" || e.Sim <= ProximityFloor {
			t.Errorf("unexpected edge %+v", e)
		}
	}

	// A missing hypothesis is left out, not an error.
	out = run(ProximityInput{SessionID: "s-1", New: []string{"h-0003", "h-0009"}, All: append(all, "h-0009")})
	if len(out.Edges) != 2 || out.Edges[0].A != "h-0003" {
		t.Errorf("edges %+v, want h-0003's two neighbours", out.Edges)
	}
}
