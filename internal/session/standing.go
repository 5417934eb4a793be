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

// Standings lists every standing a result can give, in the ranking's order of tiers.
var Standings = []Standing{Supported, Inconclusive, Refuted}

// tier is a standing's place in the ranking, lower first. A lab's result and a
// tournament's rating are not on one scale: the rating says how convincing the judges found
// a hypothesis, the result whether the world agreed, and no number of won matches outweighs
// the world disagreeing. So results order hypotheses in tiers, and ratings order them only
// within a tier: supported first, then those without a verdict (untested or inconclusive,
// which says nothing either way), then refuted. An unknown standing ranks as untested.
func (s Standing) tier() int {
	switch s {
	case Supported:
		return 0
	case Refuted:
		return 2
	}
	return 1
}

// Valid reports whether s is a standing the ranking knows.
func (s Standing) Valid() bool {
	return s == Untested || s == Supported || s == Inconclusive || s == Refuted
}
