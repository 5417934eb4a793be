package tournament

// What pairing works on and gives: a player (Schedule's, by Elo) and a match (Schedule's
// and Active's); and what every ranking and pairing here shares: the stronger-first order
// and the first entry of each id.

import "cmp"

// Player is what pairing needs to know about a hypothesis.
type Player struct {
	ID      string
	Elo     float64
	Matches int  // played so far
	New     bool // entered the tournament since the last round: a newcomer whatever Matches says
}

// Match is one pairing to play: a single comparison (Turns 1) or, between two top-ranked
// players, a debate of Turns turns (see Schedule).
type Match struct {
	A      string `json:"a"`
	B      string `json:"b"`
	Debate bool   `json:"debate,omitempty"`
	Turns  int    `json:"turns"`
	// N numbers the match in its session, from 1, where the same pair may meet again (the
	// workflow sets it, so that each meeting is a turn of its own); 0 where a pair meets
	// once at most.
	N int `json:"n,omitempty"`
}

// strongerFirst orders two players by rating, the stronger first, ties by id: the order of
// every ranking and pairing here (the ratings are Elo or fitted strengths).
func strongerFirst(ratingX, ratingY float64, x, y string) int {
	if c := cmp.Compare(ratingY, ratingX); c != 0 {
		return c
	}
	return cmp.Compare(x, y)
}

// firstOfEach is xs with the first entry of each id only, in order: a repeated id's later
// entries do not count.
func firstOfEach[T any](xs []T, id func(T) string) []T {
	out := make([]T, 0, len(xs))
	seen := make(map[string]bool, len(xs))
	for _, x := range xs {
		if !seen[id(x)] {
			seen[id(x)] = true
			out = append(out, x)
		}
	}
	return out
}
