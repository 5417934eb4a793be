package session

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestRankByStanding: a refuted hypothesis ranks below every other competing one, a
// supported one as if rated SupportedBonus higher, and entries without a standing (every
// entry recorded before experiments) keep the order they had.
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
	// The supported h-0003 (1210) counts as 1310: above the inconclusive h-0004 (1300),
	// below h-0002 (1350), more than the bonus above it. Refuted last among the competing,
	// by Elo; the excluded last whatever their standing.
	want := []string{"h-0002", "h-0003", "h-0004", "h-0006", "h-0001", "h-0007", "h-0005"}
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
	// At exactly the bonus apart, the tie goes by id as any tie does.
	tie := Rank([]Entry{{ID: "h-2", Elo: 1300}, {ID: "h-1", Elo: 1200, Standing: Supported}})
	if tie[0].ID != "h-1" {
		t.Errorf("a supported 1200 against an untested 1300 (a tie at 1300): %s first; want h-1 by id", tie[0].ID)
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
		return strings.Compare(x.ID, y.ID)
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
