package tournament

import (
	"slices"
	"testing"
)

func contender(id string, strength, se float64, games int) Contender {
	return Contender{ID: id, Rating: Rating{Strength: strength, SE: se, Games: games}}
}

// TestActiveBoundary: the first pick is the top member with the weakest lower bound
// against the outsider with the strongest upper bound, and rematches are allowed.
func TestActiveBoundary(t *testing.T) {
	cs := []Contender{
		contender("a", 2.0, 0.1, 50), // safely in the top 2
		contender("b", 1.0, 0.5, 10), // in, but unsure: lower bound 0
		contender("c", 0.9, 0.5, 10), // out, but unsure: upper bound 1.9
		contender("d", -1, 0.1, 50),  // safely out
	}
	got := Active(cs, nil, 3, ActiveOptions{TopK: 2})
	if len(got) != 3 {
		t.Fatalf("%d matches for a budget of 3: %+v", len(got), got)
	}
	for _, m := range got {
		if pair := []string{m.A, m.B}; !slices.Contains(pair, "b") || !slices.Contains(pair, "c") || m.Turns != 1 || m.Debate {
			t.Errorf("match %+v; want b against c, every time, single comparisons", m)
		}
	}
	// The judge sees each first in turn.
	if got[0].A == got[1].A {
		t.Errorf("matches %+v: the same hypothesis shown first twice running", got)
	}
	if again := Active(cs, nil, 3, ActiveOptions{TopK: 2}); !slices.Equal(again, got) {
		t.Errorf("the same input gave %+v, then %+v", got, again)
	}
}

// TestActivePlacement: a newcomer's first game is against the established hypothesis
// nearest its strength, the more similar of two equally near, and it gets one placement
// game per batch.
func TestActivePlacement(t *testing.T) {
	cs := []Contender{
		contender("top", 2, 0.2, 30),
		contender("mid-1", 0.05, 0.2, 30),
		contender("mid-2", -0.05, 0.2, 30),
		contender("low", -2, 0.2, 30),
		contender("new", 0, 1, 0),
	}
	similar := func(x, y string) float64 {
		if (x == "new" && y == "mid-2") || (x == "mid-2" && y == "new") {
			return 0.6
		}
		return 0
	}
	got := Active(cs, similar, 4, ActiveOptions{TopK: 1})
	if len(got) != 4 {
		t.Fatalf("matches %+v", got)
	}
	if first := got[0]; !(first.A == "new" && first.B == "mid-2" || first.A == "mid-2" && first.B == "new") {
		t.Errorf("the newcomer's placement is %+v; want it against mid-2, as near as mid-1 and similar", first)
	}
	for _, m := range got[1:] {
		if m.A == "new" || m.B == "new" {
			t.Errorf("match %+v: the newcomer's second game waits for the fit of its first", m)
		}
	}
}

// TestActiveBudget: debates cost their turns, and a batch never passes its budget in
// model calls.
func TestActiveBudget(t *testing.T) {
	ids, q := pool(4, 30)
	r := Fit(ids, judged(4, q, ids, 200, 0))
	var cs []Contender
	for _, id := range ids {
		cs = append(cs, Contender{ID: id, Rating: r.By[id]})
	}
	for _, share := range []float64{0, 0.5, 1} {
		for _, budget := range []int{1, 7, 20} {
			calls, debates := 0, 0
			got := Active(cs, nil, budget, ActiveOptions{TopK: 5, DebateShare: share})
			for _, m := range got {
				calls += m.Turns
				if m.Debate {
					debates++
					if m.Turns < MinTurns || m.Turns > MaxDebateTurns {
						t.Errorf("share %.1f: debate of %d turns", share, m.Turns)
					}
				}
			}
			if calls > budget || len(got) == 0 {
				t.Errorf("share %.1f, budget %d: %d matches cost %d calls", share, budget, len(got), calls)
			}
			if share == 0 && debates > 0 || share == 1 && budget >= MaxDebateTurns && debates == 0 {
				t.Errorf("share %.1f, budget %d: %d debates", share, budget, debates)
			}
		}
	}
	if got := Active(cs[:1], nil, 10, ActiveOptions{}); got != nil {
		t.Errorf("one contender: %+v", got)
	}
	if got := Active(cs, nil, 0, ActiveOptions{}); got != nil {
		t.Errorf("no budget: %+v", got)
	}
}

// TestActiveBeatsCurrentAndBuckets is the ranking benchmark's claim at 8n calls in the
// incremental setting (10 rounds of 20 new hypotheses, 1,600 calls): over 40 seeds, the
// fitted ratings with active pairing find more of the true top 10, and lose less quality,
// than cosci's Elo scheduler before and the open co-scientist's buckets. BENCHMARKS.md
// has the whole table (BenchmarkRanking).
func TestActiveBeatsCurrentAndBuckets(t *testing.T) {
	if testing.Short() {
		t.Skip("40 seeds of three strategies take about 20 s")
	}
	names := []string{"cosci Elo (current)", "cosci BT + active top-K (new)", "buckets + Elo (open co-scientist)"}
	var makes []func(uint64) ranker
	for _, name := range names {
		for _, s := range rankStrategies {
			if s.name == name {
				makes = append(makes, s.make)
			}
		}
	}
	eight := budgetsOf([]int{8})
	table := incrementalTable(40, makes, 0, eight)
	t.Log("\n" + markdown("incremental, 40 seeds", names, eight, table))
	current, active, buckets := table[0][0], table[1][0], table[2][0]
	for i, other := range [][3]cell{current, buckets} {
		if active[0].mean <= other[0].mean {
			t.Errorf("top-10 precision at 8n: new %s, %s %s", active[0], names[[]int{0, 2}[i]], other[0])
		}
		if active[1].mean >= other[1].mean {
			t.Errorf("quality regret at 8n: new %s, %s %s", active[1], names[[]int{0, 2}[i]], other[1])
		}
	}
}
