package session

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestRankByStanding: the lab's verdicts order the ranking in tiers before Elo, and
// entries without one (every entry recorded before experiments) keep the order they had.
func TestRankByStanding(t *testing.T) {
	entries := []Entry{
		{ID: "h-0001", Elo: 1400, Standing: Refuted},
		{ID: "h-0002", Elo: 1350},
		{ID: "h-0003", Elo: 1210, Standing: Supported},
		{ID: "h-0004", Elo: 1300, Standing: Inconclusive},
		{ID: "h-0005", Elo: 1500, Excluded: "unsafe", Standing: Supported},
		{ID: "h-0006", Elo: 1250},
		{ID: "h-0007", Elo: 1100, Standing: Refuted},
	}
	var got []string
	for _, e := range Rank(entries) {
		got = append(got, e.ID)
	}
	// Supported first, then untested and inconclusive by Elo, then refuted by Elo; the
	// excluded last whatever their standing.
	want := []string{"h-0003", "h-0002", "h-0004", "h-0006", "h-0001", "h-0007", "h-0005"}
	if !slices.Equal(got, want) {
		t.Errorf("Rank = %v; want %v", got, want)
	}
	var top []string
	for _, e := range Top(entries, 3) {
		top = append(top, e.ID)
	}
	if !slices.Equal(top, want[:3]) {
		t.Errorf("Top(3) = %v; want %v (the refuted h-0001, best rated, has left it)", top, want[:3])
	}

	// Sessions recorded before experiments: no standing, so Elo then id as always.
	rng := rand.New(rand.NewPCG(3, 4))
	plain := make([]Entry, 300)
	for i := range plain {
		plain[i] = Entry{ID: fmt.Sprintf("h-%04d", i+1), Elo: 1100 + 8*float64(rng.IntN(40))}
	}
	ranked := Rank(plain)
	if !slices.IsSortedFunc(ranked, func(x, y Entry) int {
		if x.Elo != y.Elo {
			if x.Elo > y.Elo {
				return -1
			}
			return 1
		}
		return cmpString(x.ID, y.ID)
	}) {
		t.Error("entries without a standing are not ordered by Elo then id")
	}

	// Top agrees with Rank when standings are mixed in.
	for i := range plain {
		plain[i].Standing = []Standing{Untested, Untested, Supported, Inconclusive, Refuted}[rng.IntN(5)]
	}
	ranked = Rank(plain)
	for _, n := range []int{1, 3, 10, 299} {
		if got := Top(plain, n); !reflect.DeepEqual(got, ranked[:n]) {
			t.Errorf("Top(%d) with standings is not the ranking's first %d", n, n)
		}
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestSameEntryStanding(t *testing.T) {
	e := Entry{ID: "h-0001", Elo: 1200}
	x := e
	x.Standing = Refuted
	if SameEntry(e, x) {
		t.Error("SameEntry ignores the standing: a checkpoint's delta would drop a new verdict")
	}
}

func TestStandingValid(t *testing.T) {
	for _, s := range append([]Standing{Untested}, Standings...) {
		if !s.Valid() {
			t.Errorf("%q not valid", s)
		}
	}
	if Standing("proven").Valid() {
		t.Error(`"proven" valid`)
	}
}
