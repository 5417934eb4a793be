package stats

import (
	"math"
	"sort"
)

// AdjustBH returns Benjamini-Hochberg adjusted p-values (the false discovery rate), in the
// order given, as R's p.adjust(p, method = "BH"): sorted descending, each p times n over its
// rank, made monotone by a running minimum and capped at 1. A session adjusts across all of
// its analyses, so n is every p-value it passes, not only the significant ones. A p-value
// that is NaN or outside [0, 1] is refused (R would pass NA through; here it has no place).
func AdjustBH(p []float64) ([]float64, error) {
	for i, v := range p {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return nil, inputErr("p[%d] = %v is not a p-value", i, v)
		}
	}
	n := len(p)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	// Stable, so ties keep their given order as R's order() does.
	sort.SliceStable(order, func(a, b int) bool { return p[order[a]] > p[order[b]] })
	out := make([]float64, n)
	run := math.Inf(1)
	for k, i := range order {
		rank := float64(n - k) // descending: the first has rank n
		run = math.Min(run, float64(n)/rank*p[i])
		out[i] = math.Min(1, run)
	}
	return out, nil
}
