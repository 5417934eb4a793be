package session

// Standing is what the lab's results say of a hypothesis, as the ranking reads it: empty
// for a hypothesis no active result has judged (every hypothesis of a session recorded
// before experiments existed), or the verdict of its results (internal/experiment decides
// it from the outcomes and sets it on the entries it ranks; a withdrawn result counts for
// nothing, so withdrawing one gives the entry the standing it had without it).
type Standing string

const (
	Untested     Standing = ""
	Supported    Standing = "supported"
	Inconclusive Standing = "inconclusive"
	Refuted      Standing = "refuted"
)

// Standings lists every standing a result can give.
var Standings = []Standing{Supported, Inconclusive, Refuted}

// SupportedBonus is what a supported result adds to a hypothesis' rating in the ranking,
// in Elo points: it then ranks above every hypothesis without a verdict rated less than
// 100 points above it. 100 points is a 64% expectation of winning a match: a clear edge,
// about one or two standard errors of a settled fitted rating, so the lab's support
// decides between hypotheses the tournament cannot tell apart, and does not lift a
// mediocre hypothesis tested early above much better ones found later. A refutation is
// not weighed against ratings at all: see refutedTier.
const SupportedBonus = 100

// refutedTier places a refuted hypothesis below every hypothesis the lab has not refuted,
// whatever its rating: no number of won matches outweighs the world disagreeing, and a
// refuted hypothesis must not stay among the ones a session recommends.
func (s Standing) refutedTier() int {
	if s == Refuted {
		return 1
	}
	return 0
}

// rating is the rating the ranking orders by: the tournament's, plus SupportedBonus for a
// supported hypothesis. An unknown standing counts as untested.
func (e Entry) rating() float64 {
	if e.Standing == Supported {
		return e.Elo + SupportedBonus
	}
	return e.Elo
}

// Valid reports whether s is a standing the ranking knows.
func (s Standing) Valid() bool {
	return s == Untested || s == Supported || s == Inconclusive || s == Refuted
}
