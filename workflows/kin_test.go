package workflows

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// inheritor evolves every hypothesis into its first parent's words with one sentence of
// its own, of words no other turn writes: versions of one parent that each add something
// different, and read alike whole by the words they inherit.
type inheritor struct{ *simulator.Offline }

func (m inheritor) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, m, q)
}

func (m inheritor) Evolve(ctx context.Context, req research.EvolveRequest) (research.Hypothesis, research.Usage, error) {
	h, u, err := m.Offline.Evolve(ctx, req)
	if err != nil || len(req.Parents) == 0 {
		return h, u, err
	}
	f := fnv.New64a()
	f.Write([]byte(req.TurnID))
	rng := rand.New(rand.NewPCG(f.Sum64(), 1))
	var own []string
	for range 6 {
		w := make([]byte, 7)
		for i := range w {
			w[i] = byte('a' + rng.IntN(26))
		}
		own = append(own, string(w))
	}
	p := req.Parents[0]
	h.Title, h.Rationale, h.Predictions = p.Title, p.Rationale, p.Predictions
	h.Statement = p.Statement + " It adds " + strings.Join(own, " ") + "."
	return h, u, nil
}

// TestSiblingsComparedOnWhatTheyAdd: versions of one hypothesis that add different things
// are not excluded as near-duplicates of each other, though the words they inherit make
// them read alike whole (TestKinComparedOnWhatTheyAdd: versions that add the same are).
func TestSiblingsComparedOnWhatTheyAdd(t *testing.T) {
	h := newHarness(t, 0, nil)
	h.acts.Models["offline"] = inheritor{&simulator.Offline{}}
	res := h.run(goal(16))
	st := query[StateView](h, QueryState, Page{Limit: MaxPageLimit})
	var ids []string
	for _, e := range st.Hypotheses {
		ids = append(ids, e.ID)
	}
	hs, err := h.store.Hypotheses(t.Context(), res.SessionID, ids)
	if err != nil {
		t.Fatal(err)
	}
	alike := 0 // sibling pairs that read alike whole
	for _, e := range st.Hypotheses {
		x := hs[e.ID]
		for _, y := range hs {
			if y.ID < x.ID && slices.ContainsFunc(x.Parents, func(p string) bool { return slices.Contains(y.Parents, p) }) &&
				proximity.Similarity(x, y) >= proximity.LexicalDuplicate {
				alike++
			}
		}
		if m := strings.TrimPrefix(e.Excluded, "near-duplicate of "); m != e.Excluded {
			other := hs[strings.Fields(m)[0]]
			if slices.ContainsFunc(x.Parents, func(p string) bool { return slices.Contains(other.Parents, p) }) {
				t.Errorf("%s excluded as a near-duplicate of its sibling: %s", e.ID, e.Excluded)
			}
		}
	}
	if alike == 0 {
		t.Fatal(fmt.Sprintf("no two siblings read alike whole: the test tests nothing (%d hypotheses)", len(hs)))
	}
}
