package simulator

import (
	"context"
	"math"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// TestJudgeNoise: without JudgeNoise the judges perceive the true quality; with it, each
// hypothesis' error is the same in every match of a session (it does not average out),
// has the standard deviation asked for over many hypotheses, and leaves the truth, and
// what generation draws, as they were.
func TestJudgeNoise(t *testing.T) {
	ctx := context.Background()
	fair, noisy := &Offline{}, &Offline{JudgeNoise: 1.5}
	var sum, sumSq float64
	const n = 4000
	for i := range n {
		q := float64(i%7) - 3
		h := research.Hypothesis{Statement: "statement " + string(rune('a'+i%26)) + string(rune(i)), Latent: &q}
		if got := fair.perceived(7, h); got != q {
			t.Fatalf("no noise: perceived %g, true %g", got, q)
		}
		e := noisy.perceived(7, h) - q
		if again := noisy.perceived(7, h) - q; again != e {
			t.Fatalf("the error of one hypothesis changed between matches: %g, %g", e, again)
		}
		sum, sumSq = sum+e, sumSq+e*e
	}
	mean := sum / n
	if sd := math.Sqrt(sumSq/n - mean*mean); math.Abs(sd-1.5) > 0.1 || math.Abs(mean) > 0.1 {
		t.Errorf("errors of mean %.3f, sd %.3f; want 0 and 1.5", mean, sd)
	}
	req := research.GenerateRequest{Seed: 7, TurnID: "generate-h-0001", Goal: "a goal", Strategy: research.StrategyLiterature}
	a, _, err := fair.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := noisy.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if *a.Latent != *b.Latent {
		t.Errorf("generation drew %g with noisy judges, %g without", *b.Latent, *a.Latent)
	}
}

// TestJudgeNoiseMisleadsTheJudge: with a large JudgeNoise, a match between two
// hypotheses goes the way of their perceived qualities, even against the truth, in most
// of its replays.
func TestJudgeNoiseMisleadsTheJudge(t *testing.T) {
	ctx := context.Background()
	o := &Offline{JudgeNoise: 3}
	lo, hi := 0.0, 0.5
	a := research.Hypothesis{ID: "h-0001", Title: "A", Statement: "Hypothesis A about tau.", Latent: &lo}
	b := research.Hypothesis{ID: "h-0002", Title: "B", Statement: "Hypothesis B about tau.", Latent: &hi}
	var seed int64
	for seed = 1; seed < 1000 && o.perceived(seed, a) < o.perceived(seed, b)+2; seed++ {
	} // a session whose judges see A (worse) as clearly better
	if seed == 1000 {
		t.Fatal("in no session of 1000 do the judges see A as clearly better than B")
	}
	wins := 0
	for i := range 200 {
		c, _, err := o.Compare(ctx, research.CompareRequest{Seed: seed, TurnID: "match-" + string(rune('a'+i%26)) + string(rune(i)), Goal: "a goal", A: a, B: b})
		if err != nil {
			t.Fatal(err)
		}
		if c.Winner == a.ID {
			wins++
		}
	}
	if wins < 140 {
		t.Errorf("A, worse but seen as better, won %d of 200; want most", wins)
	}
}
