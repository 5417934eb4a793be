package tournament

import (
	"cmp"
	"slices"
)

// KendallTau is Kendall's rank correlation (tau-a) between a ranking, best first, and the
// true qualities, higher better: the share of pairs the ranking orders as the truth does,
// less the share it orders the other way. 1 is the true order, -1 its reverse, 0 no better
// than chance. Ids without a true quality are ignored; pairs of equal quality count as
// neither.
func KendallTau(ranking []string, truth map[string]float64) float64 {
	q := make([]float64, 0, len(ranking))
	for _, id := range ranking {
		if v, ok := truth[id]; ok {
			q = append(q, v)
		}
	}
	n := len(q)
	if n < 2 {
		return 0
	}
	agree := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			switch {
			case q[i] > q[j]: // ranked higher and truly better
				agree++
			case q[i] < q[j]:
				agree--
			}
		}
	}
	return float64(agree) / float64(n*(n-1)/2)
}

// TopKPrecision is the share of the ranking's first k that are among the k truly best (ties
// in the truth broken by id). k is capped at the number of ids with a true quality.
func TopKPrecision(ranking []string, truth map[string]float64, k int) float64 {
	ids := make([]string, 0, len(truth))
	for id := range truth {
		ids = append(ids, id)
	}
	k = min(k, len(ids))
	if k <= 0 {
		return 0
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := cmp.Compare(truth[b], truth[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	best := make(map[string]bool, k)
	for _, id := range ids[:k] {
		best[id] = true
	}
	hits := 0
	for _, id := range ranking[:min(k, len(ranking))] {
		if best[id] {
			hits++
		}
	}
	return float64(hits) / float64(k)
}

// Ranking returns the players' ids by Elo, best first, ties by id.
func Ranking(players []Player) []string {
	ps := slices.Clone(players)
	slices.SortFunc(ps, byElo)
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}

// byElo orders players best first, ties by id.
func byElo(x, y Player) int { return strongerFirst(x.Elo, y.Elo, x.ID, y.ID) }
