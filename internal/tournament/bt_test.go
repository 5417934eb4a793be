package tournament

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// judged plays n random matches among players with the given true strengths, a judge
// that favours the first shown by bias logits.
func judged(seed uint64, quality map[string]float64, ids []string, n int, bias float64) []Result {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []Result
	for range n {
		i := rng.IntN(len(ids))
		j := rng.IntN(len(ids) - 1)
		if j >= i {
			j++
		}
		a, b := ids[i], ids[j]
		out = append(out, Result{A: a, B: b, AWon: rng.Float64() < sigmoid(quality[a]-quality[b]+bias)})
	}
	return out
}

func pool(seed uint64, n int) ([]string, map[string]float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	var ids []string
	q := map[string]float64{}
	for i := range n {
		id := fmt.Sprintf("h-%04d", i+1)
		ids = append(ids, id)
		q[id] = rng.NormFloat64()
	}
	return ids, q
}

// TestFitIsDeterministic: the same results give the same ratings bit for bit, fitted twice
// or in any order, so a retried activity or another worker gets identical numbers.
func TestFitIsDeterministic(t *testing.T) {
	ids, q := pool(1, 60)
	results := judged(1, q, ids, 400, 0.3)
	first := Fit(ids, results)
	again := Fit(ids, results)

	shuffled := slices.Clone(results)
	rand.New(rand.NewPCG(9, 9)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	reversed := slices.Clone(ids)
	slices.Reverse(reversed)
	reordered := Fit(reversed, shuffled)

	for name, r := range map[string]Ratings{"fitted again": again, "results shuffled, ids reversed": reordered} {
		if r.Scale != first.Scale || r.FirstBias != first.FirstBias || r.Sweeps != first.Sweeps || len(r.By) != len(first.By) {
			t.Errorf("%s: scale %v, bias %v, %d sweeps; first fit %v, %v, %d", name, r.Scale, r.FirstBias, r.Sweeps, first.Scale, first.FirstBias, first.Sweeps)
		}
		for id, want := range first.By {
			if got := r.By[id]; got != want {
				t.Errorf("%s: %s is %+v; first fit %+v", name, id, got, want)
			}
		}
	}
}

// TestFitRecovers: with enough results the fit finds the true order, the pool's spread
// and the judge's position bias.
func TestFitRecovers(t *testing.T) {
	ids, q := pool(2, 40)
	r := Fit(ids, judged(2, q, ids, 8000, 0.4))
	ranking := r.Ranked(ids)
	if tau := KendallTau(ranking, q); tau < 0.8 {
		t.Errorf("Kendall tau %.3f between the fit and the truth; want at least 0.8", tau)
	}
	if math.Abs(r.FirstBias-0.4) > 0.1 {
		t.Errorf("fitted position bias %.3f; the judge's is 0.4", r.FirstBias)
	}
	var sum, sq float64
	for _, id := range ids {
		sum += q[id]
		sq += q[id] * q[id]
	}
	sd := math.Sqrt(sq/40 - sum*sum/1600)
	if math.Abs(r.Scale-sd) > 0.25 {
		t.Errorf("fitted scale %.3f; the pool's strengths have standard deviation %.3f", r.Scale, sd)
	}
	for _, id := range ids {
		if se := r.By[id].SE; se <= 0 || se > 0.3 {
			t.Errorf("%s: standard error %.3f after about 400 games; want a small positive one", id, se)
		}
	}
}

// TestFitSparse: the prior keeps sparse results from giving extreme strengths, and a
// hypothesis without results sits at the pool's mean with the prior's error.
func TestFitSparse(t *testing.T) {
	r := Fit([]string{"h-1", "h-2", "h-3"}, []Result{{A: "h-1", B: "h-2", AWon: true}})
	one, two, three := r.By["h-1"], r.By["h-2"], r.By["h-3"]
	switch {
	case !(one.Strength > 0 && two.Strength < 0) || math.Abs(one.Strength+two.Strength) > 1e-6:
		t.Errorf("one win: winner %+v, loser %+v; want them symmetric about 0", one, two)
	case one.Strength > 2:
		t.Errorf("one win gives strength %.2f (Elo %.0f): the prior should keep it moderate", one.Strength, one.Elo())
	case three.Strength != 0 || three.Games != 0 || math.Abs(three.SE-r.Scale) > 1e-9:
		t.Errorf("no results: %+v; want strength 0 and the prior's scale %.3f as its error", three, r.Scale)
	case three.Elo() != InitialElo:
		t.Errorf("no results: Elo %.2f, want %d", three.Elo(), InitialElo)
	}
	if empty := Fit(nil, nil); len(empty.By) != 0 || empty.Scale != 1 {
		t.Errorf("no hypotheses: %+v", empty)
	}
	// Results against itself say nothing; results may name hypotheses not asked about.
	r = Fit([]string{"h-1"}, []Result{{A: "h-1", B: "h-1", AWon: true}, {A: "h-9", B: "h-1", AWon: true}})
	if r.By["h-1"].Games != 1 || r.By["h-9"].Strength <= 0 {
		t.Errorf("self-match and an unlisted winner: %+v", r.By)
	}
}

// TestEloScale: strength 0 is Elo 1200, and 400 points are odds of 10 to 1.
func TestEloScale(t *testing.T) {
	if got := (Rating{Strength: math.Ln10}).Elo(); got != 1600 {
		t.Errorf("strength ln 10 is Elo %.2f, want 1600", got)
	}
	if got := (Rating{SE: math.Ln10 / 4}).EloSE(); got != 100 {
		t.Errorf("error ln10/4 is %.2f Elo points, want 100", got)
	}
}

func TestResultJSON(t *testing.T) {
	for _, r := range []Result{{A: "h-0001", B: "h-0002", AWon: true}, {A: "h-0003", B: "h-0001"}, {A: "h-0010", B: "h-0011", Debate: true}} {
		if data, back, err := roundTrip(r); err != nil || back != r {
			t.Errorf("%+v -> %s -> %+v, %v", r, data, back, err)
		}
	}
	if data, _ := json.Marshal([]Result{{A: "h-1", B: "h-2", AWon: true, Debate: true}, {A: "h-3", B: "h-1"}}); string(data) != `["h-1 beat h-2 in a debate","h-3 lost to h-1"]` {
		t.Errorf("results encode as %s", data)
	}
	for _, bad := range []string{`"h-1"`, `" beat h-2"`, `"h-1 lost to "`, `42`, `{"a":"h-1"}`} {
		var r Result
		if err := json.Unmarshal([]byte(bad), &r); err == nil || !strings.Contains(err.Error(), "h-0001 beat h-0002") {
			t.Errorf("%s: error %v, want one that shows the form", bad, err)
		}
	}
}

// BenchmarkFit times a fit of 2,000 hypotheses and 9,000 results, a session of 2,000.
func BenchmarkFit(b *testing.B) {
	ids, q := pool(3, 2000)
	results := judged(3, q, ids, 9000, 0)
	for b.Loop() {
		Fit(ids, results)
	}
}

// TestFitFrom: started from an earlier fit as the records show it, the fit of a few more
// results reaches the cold fit's ratings (to a hundredth of an Elo point) in fewer passes,
// and gives the same ratings whenever it is given the same start.
func TestFitFrom(t *testing.T) {
	ids, q := pool(5, 300)
	results := judged(5, q, ids, 1500, 0.2)
	// A block at the top that meets again and again: what makes a cold fit creep.
	for i := range 1500 {
		a, b := ids[i%12], ids[(i*5+1)%12]
		if a != b {
			results = append(results, Result{A: a, B: b, AWon: (i*7)%3 == 0})
		}
	}
	before := Fit(ids, results[:len(results)-18])
	from := map[string]Rating{}
	for id, r := range before.By {
		from[id] = RatingOf(r.Elo(), r.EloSE())
	}
	cold, warm, again := Fit(ids, results), FitFrom(from, ids, results), FitFrom(from, ids, results)
	if warm.Sweeps >= cold.Sweeps {
		t.Errorf("from the earlier fit: %d passes; cold: %d", warm.Sweeps, cold.Sweeps)
	}
	for _, id := range ids {
		if d := math.Abs(warm.By[id].Elo() - cold.By[id].Elo()); d > 0.01 {
			t.Errorf("%s: Elo %.4f from the earlier fit, %.4f cold", id, warm.By[id].Elo(), cold.By[id].Elo())
		}
		if warm.By[id] != again.By[id] {
			t.Errorf("%s: %+v, then %+v from the same start", id, warm.By[id], again.By[id])
		}
	}
	t.Logf("cold %d passes, from the earlier fit %d", cold.Sweeps, warm.Sweeps)
}
