package proximity_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// Siblings are compared on what each adds to their parent: versions of one hypothesis that
// add different things (grounded, more feasible, given a mediator) read alike whole, as
// the parent's words they share, but not on their own; one that adds the same as its
// sibling (a parent simplified twice) is still a near-duplicate. A pair with no common
// ancestor, and a parent and its child, are left to the whole comparison.
func TestKinComparedOnWhatTheyAdd(t *testing.T) {
	var o simulator.Offline
	ctx := context.Background()
	hs := map[string]research.Hypothesis{}
	add := func(h research.Hypothesis, id string, parents ...string) {
		h.ID, h.Parents = id, parents
		hs[id] = h
	}
	for i, id := range []string{"p", "q"} {
		h, _, err := o.Generate(ctx, research.GenerateRequest{TurnID: fmt.Sprint("generate-", i), Goal: simGoals[0], Strategy: research.StrategyLiterature, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		add(h, id)
	}
	evolve := func(id, kind, turn string, parents ...string) {
		var ps []research.Hypothesis
		for _, p := range parents {
			ps = append(ps, hs[p])
		}
		h, _, err := o.Evolve(ctx, research.EvolveRequest{TurnID: turn, Goal: simGoals[0], Kind: kind, Parents: ps, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		add(h, id, parents...)
	}
	evolve("grounded", research.EvolveGrounding, "e1", "p")
	evolve("feasible", research.EvolveFeasibility, "e2", "p")
	evolve("simple", research.EvolveSimplification, "e3", "p")
	evolve("simple-again", research.EvolveSimplification, "e4", "p")
	evolve("grandchild", research.EvolveGrounding, "e5", "feasible")
	sigs := map[string]proximity.Signature{}
	for id, h := range hs {
		sigs[id] = proximity.Sign(h)
	}
	for _, tc := range []struct {
		a, b      string
		kin       bool
		duplicate bool // by the duplicate rule: Own for kin, Sim for the others
	}{
		{"feasible", "grounded", true, false},
		{"simple-again", "simple", true, true},
		{"grandchild", "simple", true, false},   // a nephew: the parent p in common
		{"grandchild", "feasible", false, true}, // a line of descent: whole (the workflow exempts it)
		{"q", "p", false, false},
	} {
		edges := []proximity.Edge{{A: tc.a, B: tc.b, Sim: sigs[tc.a].Similarity(sigs[tc.b])}}
		proximity.Kin(edges, func(id string) []string { return hs[id].Parents }, func(id string) (proximity.Signature, bool) {
			s, ok := sigs[id]
			return s, ok
		})
		e := edges[0]
		sim := e.Sim
		if e.Kin {
			sim = e.Own
		}
		t.Logf("%s ~ %s: whole %.2f, own %.2f (kin %v)", tc.a, tc.b, e.Sim, e.Own, e.Kin)
		if e.Kin != tc.kin || (sim >= proximity.LexicalDuplicate) != tc.duplicate {
			t.Errorf("%s ~ %s: kin %v, similarity %.2f (whole %.2f); want kin %v, a duplicate %v", tc.a, tc.b, e.Kin, sim, e.Sim, tc.kin, tc.duplicate)
		}
		if tc.a != "grandchild" && tc.kin && e.Sim < proximity.LexicalDuplicate { // the nephew is there for its kinship
			t.Errorf("%s ~ %s: whole similarity %.2f, below the duplicate threshold: the case tests nothing", tc.a, tc.b, e.Sim)
		}
	}
}
