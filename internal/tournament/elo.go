// Package tournament ranks hypotheses: Elo ratings updated from pairwise matches, and the
// choice of which pairs meet. Everything here is pure and deterministic, because the
// workflow runs it and must replay it identically.
package tournament

import "math"

// InitialElo is where every new hypothesis starts, as in the co-scientist paper.
const InitialElo = 1200

// K is the Elo K-factor: how far one match moves a rating. A newcomer's rating is a guess,
// so it moves fast for its first matches and settles later.
func K(matchesPlayed int) float64 {
	switch {
	case matchesPlayed < 5:
		return 32
	case matchesPlayed < 15:
		return 24
	default:
		return 16
	}
}

// Expected is the probability that a player rated a beats one rated b.
func Expected(a, b float64) float64 {
	return 1 / (1 + math.Pow(10, (b-a)/400))
}

// Update returns the new ratings after a match. aWon says who won; ka and kb are each
// player's K-factor (see K).
func Update(a, b float64, aWon bool, ka, kb float64) (newA, newB float64) {
	ea := Expected(a, b)
	sa := 0.0
	if aWon {
		sa = 1
	}
	newA = a + ka*(sa-ea)
	newB = b + kb*((1-sa)-(1-ea))
	return round(newA), round(newB)
}

// round keeps ratings to two decimals so they print well and compare exactly across runs.
func round(x float64) float64 { return math.Round(x*100) / 100 }
