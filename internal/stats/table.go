package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// maxSupport caps the hypergeometric support Fisher's test sums over (each root of the odds
// ratio and its CI sums it some hundred times); bigger tables are the chi-square test's.
const maxSupport = 100000

// counts checks a table of counts: at least 2 x 2, rectangular, whole non-negative finite
// numbers, no empty row or column (its expected counts would be 0, and R's answer NaN).
// It returns the row and column sums and the total.
func counts(t [][]float64) (rows, cols []float64, total float64, err error) {
	if len(t) < 2 || len(t[0]) < 2 {
		return nil, nil, 0, inputErr("a table of counts needs at least 2 rows and 2 columns")
	}
	cols = make([]float64, len(t[0]))
	rows = make([]float64, len(t))
	for i, row := range t {
		if len(row) != len(cols) {
			return nil, nil, 0, inputErr("row %d has %d cells and row 1 has %d: the table must be rectangular", i+1, len(row), len(cols))
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v != math.Trunc(v) || v > 1<<50 {
				return nil, nil, 0, inputErr("cell [%d,%d] is %v: counts must be whole numbers from 0 to 2^50", i+1, j+1, v)
			}
			rows[i] += v
			cols[j] += v
			total += v
		}
	}
	for i, s := range rows {
		if s == 0 {
			return nil, nil, 0, inputErr("row %d is empty: a test of independence needs every row and column to hold a count", i+1)
		}
	}
	for j, s := range cols {
		if s == 0 {
			return nil, nil, 0, inputErr("column %d is empty: a test of independence needs every row and column to hold a count", j+1)
		}
	}
	return rows, cols, total, nil
}

// ChiSquareTest is Pearson's chi-square test of independence on an r x c table, as R's
// chisq.test(x) with its default correct = TRUE: Yates' continuity correction on 2 x 2
// tables (|O - E| reduced by min(0.5, |O - E|)), none on larger ones. R's default is kept so
// that a reader who checks the figure with R finds it; for 2 x 2 tables Fisher's exact test
// is on the menu too. The effect is Cramér's V, √(X² / (n (min(r, c) - 1))), from the
// uncorrected X² (V is defined on it); it has no CI here. Expected counts below 5 are noted,
// as R warns.
func ChiSquareTest(t [][]float64) (Result, error) {
	rows, cols, n, err := counts(t)
	if err != nil {
		return Result{}, err
	}
	yates := len(rows) == 2 && len(cols) == 2
	var x2, raw float64
	small := 0
	for i := range rows {
		for j := range cols {
			e := rows[i] * cols[j] / n
			if e < 5 {
				small++
			}
			d := math.Abs(t[i][j] - e)
			raw += d * d / e
			if yates {
				d -= math.Min(0.5, d)
			}
			x2 += d * d / e
		}
	}
	df := float64((len(rows) - 1) * (len(cols) - 1))
	k := math.Min(float64(len(rows)), float64(len(cols))) - 1
	r := Result{
		Test: ChiSquare, N: []int{int(n)}, StatisticName: "X-squared", Statistic: x2, DF: df,
		P:      distuv.ChiSquared{K: df}.Survival(x2),
		Effect: Effect{Name: "cramer's v", Value: math.Min(1, math.Sqrt(raw/(n*k)))},
		Notes:  []string{"Cramér's V from the uncorrected X², without a CI"},
	}
	if yates {
		r.Notes = append(r.Notes, "2 x 2 table: Yates' continuity correction applied (R's default)")
	}
	if small > 0 {
		r.Notes = append(r.Notes, "some expected counts are below 5: the chi-square approximation may be poor (Fisher's exact test suits a 2 x 2 table)")
	}
	return r, nil
}
