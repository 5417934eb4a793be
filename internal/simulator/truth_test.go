package simulator

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// Workers that share a truth file know what each other planted, and judge support by it
// alike: a worker that took over a session reviews the citations another worker planted
// as that worker would. One that does not share it knows nothing of them.
func TestTruthSharedByFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "planted.jsonl")
	first, err := OpenTruth(path)
	if err != nil {
		t.Fatal(err)
	}
	second, err := OpenTruth(path) // opened before the first plants anything
	if err != nil {
		t.Fatal(err)
	}
	planter := &Offline{Fabricate: 0.5, Plant: PlantKinds(), Truth: first}
	taker := &Offline{Truth: second}
	stranger := &Offline{}
	var kinds []string
	for seed := range int64(20) {
		h := generateGrounded(t, planter, seed)
		for _, ref := range h.References {
			want, ok := planter.Planted().Hypothesis(h, ref)
			got, shared := taker.Planted().Hypothesis(h, ref)
			if !ok || !shared || got != want {
				t.Fatalf("seed %d, %s: the planter recorded %q (%v), the worker sharing its file read %q (%v)", seed, ref.ID, want, ok, got, shared)
			}
			if k, known := stranger.Planted().Hypothesis(h, ref); known {
				t.Errorf("a worker without the file knows %s as %q", ref.ID, k)
			}
			kinds = append(kinds, want)
		}
		req := research.ReviewRequest{TurnID: "review", Goal: "g", Type: research.ReviewFull, Hypothesis: h}
		a, _, err := planter.Review(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := taker.Review(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Support, b.Support) {
			t.Errorf("seed %d: the planter judged %v, the worker sharing its file %v", seed, a.Support, b.Support)
		}
	}
	if !slices.ContainsFunc(kinds, func(k string) bool { return !Honest(k) }) {
		t.Fatalf("no dishonest citation among %q: nothing told the workers apart", kinds)
	}
	// A reader of the file alone (a benchmark) reads the same.
	again, err := OpenTruth(path)
	if err != nil || len(again.kinds) != len(first.kinds) {
		t.Errorf("the file read again holds %d records of %d (%v)", len(again.kinds), len(first.kinds), err)
	}
}

// A truth file that holds something else is refused, not read as no truth.
func TestTruthFileRefusesGarbage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "planted.jsonl")
	if err := os.WriteFile(path, []byte("not a record\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenTruth(path); err == nil {
		t.Error("a file of garbage opened as the simulator's truth")
	}
}
