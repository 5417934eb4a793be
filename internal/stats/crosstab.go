package stats

import (
	"slices"
)

// maxLevels bounds the categories of each variable a cross-tabulation takes: a column with
// more distinct values is an identifier or a measurement, not a category.
const maxLevels = 100

// Crosstab counts the pairs of two categorical columns into a table for Fisher's exact or
// the chi-square test, as R's table(a, b): rows are a's levels and columns b's, each sorted
// (so the same data give the same table, and the same odds ratio's direction, every time).
// Empty strings are missing values and are refused: drop them in the query, where the
// reader can see it.
func Crosstab(a, b []string) (table [][]float64, rows, cols []string, err error) {
	if len(a) != len(b) {
		return nil, nil, nil, inputErr("the columns have %d and %d values: pairs need equal lengths", len(a), len(b))
	}
	for i := range a {
		if a[i] == "" || b[i] == "" {
			return nil, nil, nil, inputErr("row %d has a missing category: drop missing values in the query", i+1)
		}
	}
	rows, cols = levels(a), levels(b)
	if len(rows) > maxLevels || len(cols) > maxLevels {
		return nil, nil, nil, inputErr("%d x %d categories: more than %d in a column is not a categorical variable", len(rows), len(cols), maxLevels)
	}
	table = make([][]float64, len(rows))
	for i := range table {
		table[i] = make([]float64, len(cols))
	}
	for i := range a {
		r, _ := slices.BinarySearch(rows, a[i])
		c, _ := slices.BinarySearch(cols, b[i])
		table[r][c]++
	}
	return table, rows, cols, nil
}

func levels(xs []string) []string {
	l := slices.Clone(xs)
	slices.Sort(l)
	return slices.Compact(l)
}
