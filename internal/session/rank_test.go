package session

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestTop: the top n is the ranking's first n competing hypotheses, in its order, for
// rankings with ties in Elo (broken by id), excluded hypotheses anywhere and n from none
// to more than there are.
func TestTop(t *testing.T) {
	tied := []Entry{
		{ID: "h-0004", Elo: 1200}, {ID: "h-0002", Elo: 1250, Excluded: "unsafe"}, {ID: "h-0003", Elo: 1200},
		{ID: "h-0001", Elo: 1216}, {ID: "h-0005", Elo: 1300, Excluded: "near-duplicate of h-0001"},
	}
	for _, tt := range []struct {
		n    int
		want []string
	}{
		{0, nil},
		{1, []string{"h-0001"}},
		{2, []string{"h-0001", "h-0003"}},
		{3, []string{"h-0001", "h-0003", "h-0004"}},
		{10, []string{"h-0001", "h-0003", "h-0004"}},
	} {
		var got []string
		for _, e := range Top(tied, tt.n) {
			got = append(got, e.ID)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Top(%d) = %v; want %v", tt.n, got, tt.want)
		}
	}

	// Rankings as sessions make them, from few records to thousands: Elo on a coarse grid
	// so that ties are common, a share excluded, records in the order they were made.
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 7, 60, 800, 2500} {
		entries := make([]Entry, size)
		for i := range entries {
			entries[i] = Entry{ID: fmt.Sprintf("h-%04d", i+1), Elo: 1100 + 8*float64(rng.IntN(40)), Wins: rng.IntN(9)}
			if rng.IntN(5) == 0 {
				entries[i].Excluded = "near-duplicate"
			}
		}
		before := slices.Clone(entries)
		ranked := Rank(entries)
		competing := slices.IndexFunc(ranked, func(e Entry) bool { return e.Excluded != "" })
		if competing < 0 {
			competing = len(ranked)
		}
		for _, n := range []int{1, 3, 5, 10, 50, size, size + 3} {
			want := ranked[:min(n, competing)]
			if got := Top(entries, n); !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
				t.Errorf("%d records: Top(%d) is not the ranking's first %d competing: %d records, first %v; want first %v", size, n, len(want), len(got), first(got), first(want))
			}
		}
		if !reflect.DeepEqual(entries, before) {
			t.Errorf("%d records: Top changed the records it ranked", size)
		}
	}
}

func first(es []Entry) any {
	if len(es) == 0 {
		return nil
	}
	return es[0]
}
