package tournament

import (
	"cmp"
	"math"
	"slices"
)

// Player is what pairing needs to know about a hypothesis.
type Player struct {
	ID      string
	Elo     float64
	Matches int
}

// Match is one pairing to play.
type Match struct{ A, B string }

// Pair schedules matches until each newcomer is in perPlayer of them (a match against
// another newcomer counts for both), choosing the players closest in Elo that it has not met
// yet, so a match tells the tournament something (a 1200 newcomer against a
// 1500 leader mostly confirms what is known). Newcomers may meet each other. The result is
// deterministic: ties break by id, and a pair is never scheduled twice.
//
// played reports whether two ids have already met.
func Pair(players []Player, newcomers []string, perPlayer int, played func(a, b string) bool) []Match {
	byID := make(map[string]Player, len(players))
	for _, p := range players {
		byID[p.ID] = p
	}
	scheduled := map[[2]string]bool{}
	key := func(a, b string) [2]string {
		if a > b {
			a, b = b, a
		}
		return [2]string{a, b}
	}
	count := map[string]int{}
	var matches []Match
	for _, id := range newcomers {
		me, ok := byID[id]
		if !ok {
			continue
		}
		candidates := make([]Player, 0, len(players))
		for _, p := range players {
			if p.ID != id && !played(id, p.ID) && !scheduled[key(id, p.ID)] {
				candidates = append(candidates, p)
			}
		}
		slices.SortFunc(candidates, func(x, y Player) int {
			if c := cmp.Compare(math.Abs(x.Elo-me.Elo), math.Abs(y.Elo-me.Elo)); c != 0 {
				return c
			}
			return cmp.Compare(x.ID, y.ID)
		})
		for _, c := range candidates {
			if count[id] >= perPlayer {
				break
			}
			scheduled[key(id, c.ID)] = true
			count[id]++
			count[c.ID]++
			matches = append(matches, Match{A: id, B: c.ID})
		}
	}
	return matches
}
