package tournament

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// field is n settled players, h-00 the best rated, 40 points apart, 20 matches each.
func field(n int) []Player {
	ps := make([]Player, n)
	for i := range ps {
		ps[i] = Player{ID: fmt.Sprintf("h-%02d", i), Elo: 1600 - 40*float64(i), Matches: 20}
	}
	return ps
}

func TestScheduleRules(t *testing.T) {
	ps := field(40)
	played := func(a, b string) bool { return (a == "h-09" && b == "h-10") || (a == "h-10" && b == "h-09") }
	sim := func(a, b string) float64 { return 0.3 }
	got := Schedule(ps, sim, 30, played, Options{MaxPerPlayer: 2})
	if len(got) != 30 {
		t.Fatalf("%d matches, want the budget of 30", len(got))
	}
	pairs, count := map[[2]string]bool{}, map[string]int{}
	for _, m := range got {
		k := key(m.A, m.B)
		if m.A == m.B || pairs[k] {
			t.Errorf("%v: a self-match or a pair twice", m)
		}
		if played(m.A, m.B) {
			t.Errorf("%v has been played", m)
		}
		pairs[k] = true
		count[m.A]++
		count[m.B]++
		if m.Turns < 1 || m.Turns > TurnLimit || (m.Debate != (m.Turns >= MinTurns)) {
			t.Errorf("%v: bad turns", m)
		}
	}
	for id, c := range count {
		if c > 2 {
			t.Errorf("%s plays %d matches, more than MaxPerPlayer", id, c)
		}
	}
	// The same players in another order, the same schedule.
	shuffled := append([]Player(nil), ps...)
	rand.New(rand.NewPCG(1, 1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if again := Schedule(shuffled, sim, 30, played, Options{MaxPerPlayer: 2}); !reflect.DeepEqual(again, got) {
		t.Errorf("not deterministic:\n%v\n%v", got, again)
	}
}

func TestScheduleFavours(t *testing.T) {
	never := func(a, b string) bool { return false }
	t.Run("newcomers first", func(t *testing.T) {
		ps := append(field(20), Player{ID: "n-1", Elo: InitialElo, New: true}, Player{ID: "n-2", Elo: InitialElo, New: true})
		got := Schedule(ps, nil, 4, never, Options{})
		for _, m := range got {
			if m.A[0] != 'n' && m.B[0] != 'n' {
				t.Errorf("%v has no newcomer; got %v", m, got)
			}
		}
		if got[0] != (Match{A: "n-1", B: "n-2", Turns: 1}) {
			t.Errorf("first match %v, want the two newcomers", got[0])
		}
	})
	t.Run("the top, close pairs", func(t *testing.T) {
		got := Schedule(field(40), nil, 5, never, Options{})
		for _, m := range got {
			var i, j int
			fmt.Sscanf(m.A, "h-%d", &i)
			fmt.Sscanf(m.B, "h-%d", &j)
			if i < 7 || j > 12 || j-i > 2 {
				t.Errorf("%v: want neighbours near the top 10's boundary; got %v", m, got)
			}
		}
	})
	t.Run("similar hypotheses", func(t *testing.T) {
		ps := []Player{{ID: "a", Elo: 1200, Matches: 9}, {ID: "b", Elo: 1200, Matches: 9}, {ID: "c", Elo: 1200, Matches: 9}, {ID: "d", Elo: 1200, Matches: 9}}
		sim := func(x, y string) float64 {
			if key(x, y) == [2]string{"a", "d"} {
				return 0.8
			}
			return 0
		}
		got := Schedule(ps, sim, 1, never, Options{})
		if len(got) != 1 || key(got[0].A, got[0].B) != [2]string{"a", "d"} {
			t.Errorf("got %v, want a against d, the similar pair", got)
		}
	})
}

func TestScheduleDebates(t *testing.T) {
	never := func(a, b string) bool { return false }
	ps := []Player{
		{ID: "a", Elo: 1500, Matches: 20}, {ID: "b", Elo: 1490, Matches: 20}, // 10 apart
		{ID: "c", Elo: 1300, Matches: 20}, {ID: "d", Elo: 1250, Matches: 20}, // 50 apart
		{ID: "e", Elo: 1000, Matches: 20}, {ID: "f", Elo: 900, Matches: 20},
	}
	byPair := func(ms []Match) map[[2]string]Match {
		out := map[[2]string]Match{}
		for _, m := range ms {
			out[key(m.A, m.B)] = m
		}
		return out
	}
	got := byPair(Schedule(ps, nil, 15, never, Options{DebateTopK: 4, MaxPerPlayer: 5}))
	tests := []struct {
		a, b   string
		debate bool
		turns  int
	}{
		{"a", "b", true, 5},  // both in the top 4, 10 points apart
		{"c", "d", true, 4},  // 50 apart
		{"a", "d", true, 3},  // 250 apart
		{"a", "e", false, 1}, // e is not in the top 4
		{"e", "f", false, 1},
	}
	for _, tt := range tests {
		m, ok := got[key(tt.a, tt.b)]
		if !ok {
			t.Errorf("%s-%s not scheduled", tt.a, tt.b)
			continue
		}
		if m.Debate != tt.debate || m.Turns != tt.turns {
			t.Errorf("%s-%s: %+v, want debate %v with %d turns", tt.a, tt.b, m, tt.debate, tt.turns)
		}
		if m.A != tt.a {
			t.Errorf("%+v: A should be the better rated", m)
		}
	}
	for _, m := range Schedule(ps, nil, 15, never, Options{DebateTopK: -1, MaxPerPlayer: 5}) {
		if m.Debate || m.Turns != 1 {
			t.Errorf("%+v: debates are off", m)
		}
	}
}

func TestDebateTurns(t *testing.T) {
	for _, tt := range []struct {
		gap  float64
		want int
	}{{0, 5}, {25, 5}, {26, 4}, {75, 4}, {76, 3}, {1000, 3}} {
		if got := debateTurns(tt.gap); got != tt.want {
			t.Errorf("debateTurns(%v) = %d, want %d", tt.gap, got, tt.want)
		}
	}
}

func TestScheduleDegenerate(t *testing.T) {
	ps := field(3)
	all := func(a, b string) bool { return true }
	if got := Schedule(ps, nil, 0, nil, Options{}); got != nil {
		t.Errorf("budget 0: %v", got)
	}
	if got := Schedule(ps[:1], nil, 5, nil, Options{}); got != nil {
		t.Errorf("one player: %v", got)
	}
	if got := Schedule(ps, nil, 5, all, Options{}); got != nil {
		t.Errorf("every pair played: %v", got)
	}
	if got := Schedule(ps, nil, 5, nil, Options{}); len(got) != 3 {
		t.Errorf("three players, nil played: %v, want all 3 pairs", got)
	}
}

func TestMetrics(t *testing.T) {
	truth := map[string]float64{"a": 4, "b": 3, "c": 2, "d": 1}
	tests := []struct {
		ranking []string
		tau     float64
		top2    float64
	}{
		{[]string{"a", "b", "c", "d"}, 1, 1},
		{[]string{"d", "c", "b", "a"}, -1, 0},
		{[]string{"b", "a", "c", "d"}, 4.0 / 6, 1},
		{[]string{"a", "c", "b", "d"}, 4.0 / 6, 0.5},
		{[]string{"a", "x", "b", "c", "d"}, 1, 0.5}, // x has no truth: ignored by tau, a miss for the top
	}
	for _, tt := range tests {
		if got := KendallTau(tt.ranking, truth); got != tt.tau {
			t.Errorf("KendallTau(%v) = %v, want %v", tt.ranking, got, tt.tau)
		}
		if got := TopKPrecision(tt.ranking, truth, 2); got != tt.top2 {
			t.Errorf("TopKPrecision(%v, 2) = %v, want %v", tt.ranking, got, tt.top2)
		}
	}
	if got := Ranking([]Player{{ID: "b", Elo: 1200}, {ID: "a", Elo: 1200}, {ID: "c", Elo: 1300}}); !reflect.DeepEqual(got, []string{"c", "a", "b"}) {
		t.Errorf("Ranking = %v", got)
	}
}
