package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// PearsonTest is Pearson's product-moment correlation as R's cor.test(method = "pearson"):
// t = r √(n-2) / √(1-r²) on n-2 df, and the 95% CI by Fisher's z, tanh(atanh r ± z₀.₉₇₅/√(n-3)),
// which R gives only for n ≥ 4 (with 3 pairs the CI is left out, with a note). A perfect
// correlation gives t = ±Inf and p = 0, as R.
func PearsonTest(x, y []float64) (Result, error) {
	if err := paired(x, y, 3); err != nil {
		return Result{}, err
	}
	r, err := correlation(x, y)
	if err != nil {
		return Result{}, err
	}
	res := correlationResult(Pearson, r, len(x))
	res.StatisticName = "t"
	return res, nil
}

// SpearmanTest is Spearman's rank correlation: Pearson's r on average ranks, so ties are
// handled as R's cor.test(method = "spearman"). Its statistic is R's S = (n³-n)(1-ρ)/6 and
// its p-value R's with exact = FALSE: the t approximation ρ√(n-2)/√(1-ρ²) on n-2 df. R's
// default for n < 1290 without ties is instead the exact or Edgeworth series p (AS 89), which
// differs from this one most at small n; the t approximation is used for every n here so that
// the same data give the same kind of p with or without ties. The CI is Fisher's z with
// standard error 1/√(n-3), an approximation for ranks (R gives none to check it against).
func SpearmanTest(x, y []float64) (Result, error) {
	if err := paired(x, y, 3); err != nil {
		return Result{}, err
	}
	rho, err := correlation(ranks(x), ranks(y))
	if err != nil {
		return Result{}, err
	}
	n := float64(len(x))
	res := correlationResult(Spearman, rho, len(x))
	res.StatisticName = "S"
	res.Statistic = (n*n*n - n) * (1 - rho) / 6
	res.Notes = append(res.Notes, "p by the t approximation (R's exact = FALSE); CI by Fisher's z, approximate for ranks")
	return res, nil
}

// correlationResult fills the parts Pearson and Spearman share: t, p and the Fisher-z CI.
func correlationResult(test string, r float64, n int) Result {
	df := float64(n - 2)
	res := Result{Test: test, N: []int{n}, DF: df, Effect: Effect{Name: "r", Value: r}}
	if test == Spearman {
		res.Effect.Name = "rho"
	}
	if math.Abs(r) == 1 {
		res.Statistic = math.Copysign(math.Inf(1), r)
		res.P = 0
		res.Notes = append(res.Notes, "perfect correlation: t is infinite and p is 0")
	} else {
		res.Statistic = math.Sqrt(df) * r / math.Sqrt(1-r*r)
		res.P = twoSidedT(res.Statistic, df)
	}
	if n < 4 {
		res.Notes = append(res.Notes, "no CI with fewer than 4 pairs (Fisher's z needs n-3 > 0)")
		return res
	}
	z := math.Atanh(r)
	h := distuv.UnitNormal.Quantile(1-(1-Confidence)/2) / math.Sqrt(float64(n-3))
	res.Effect.CI = ci95(math.Tanh(z-h), math.Tanh(z+h))
	return res
}

// correlation is Pearson's r by centred sums, refusing a constant column.
func correlation(x, y []float64) (float64, error) {
	m := centred(x, y)
	if m.sxx == 0 {
		return 0, inputErr("x is constant: a correlation needs both columns to vary")
	}
	if m.syy == 0 {
		return 0, inputErr("y is constant: a correlation needs both columns to vary")
	}
	return corrFrom(m), nil
}

// corrFrom is r from centred sums. One square root of the product rounds once, so an exact
// line gives exactly ±1; where the product overflows or underflows (values near 1e±100 in a
// long column), two roots. Rounding can carry |r| a hair past 1, where atanh and the square
// roots downstream would give NaN: it is clamped.
func corrFrom(m moments) float64 {
	p := m.sxx * m.syy
	r := m.sxy / math.Sqrt(p)
	if p < 1e-290 || math.IsInf(p, 0) {
		r = m.sxy / math.Sqrt(m.sxx) / math.Sqrt(m.syy)
	}
	return math.Max(-1, math.Min(1, r))
}

// moments are the means and centred sums of squares and products of paired columns.
type moments struct{ mx, my, sxx, syy, sxy float64 }

func centred(x, y []float64) moments {
	m := moments{mx: mean(x), my: mean(y)}
	for i := range x {
		dx, dy := x[i]-m.mx, y[i]-m.my
		m.sxx += dx * dx
		m.syy += dy * dy
		m.sxy += dx * dy
	}
	return m
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, v := range xs {
		s += v
	}
	m := s / float64(len(xs))
	// A second pass corrects the first's rounding, as R's mean does.
	c := 0.0
	for _, v := range xs {
		c += v - m
	}
	return m + c/float64(len(xs))
}

// Regression is simple linear regression of y on x by least squares, as R's lm(y ~ x) with
// summary and confint: the effect is the slope with its 95% CI (t quantile on n-2 df), the
// statistic the slope's t, the secondary effect R². A perfect fit (no residual) has an
// infinite t and p = 0, with a note; a constant x or y is refused.
func Regression(x, y []float64) (Result, error) {
	if err := paired(x, y, 3); err != nil {
		return Result{}, err
	}
	m := centred(x, y)
	mx, my, sxx, syy, sxy := m.mx, m.my, m.sxx, m.syy, m.sxy
	if sxx == 0 {
		return Result{}, inputErr("x is constant: no slope can be fitted")
	}
	if syy == 0 {
		return Result{}, inputErr("y is constant: the slope is 0 with no residual, so it has no test")
	}
	b := sxy / sxx
	a := my - b*mx
	rss := 0.0
	for i := range x {
		e := y[i] - a - b*x[i]
		rss += e * e
	}
	if math.IsInf(b, 0) || math.IsInf(a, 0) || math.IsInf(rss, 0) || math.IsNaN(rss) {
		return Result{}, inputErr("x and y differ in scale by too much to fit in float64: rescale them")
	}
	n := len(x)
	df := float64(n - 2)
	res := Result{
		Test: LinearRegression, N: []int{n}, StatisticName: "t", DF: df,
		Effect: Effect{Name: "slope", Value: b},
	}
	r2 := math.Pow(corrFrom(m), 2)
	res.Secondary = &Effect{Name: "r squared", Value: r2}
	se := math.Sqrt(rss / df / sxx)
	if se == 0 {
		res.Statistic = math.Copysign(math.Inf(1), b)
		res.Effect.CI = ci95(b, b)
		res.Notes = append(res.Notes, "perfect fit: no residual, so t is infinite and p is 0")
		return res, nil
	}
	res.Statistic = b / se
	res.P = twoSidedT(res.Statistic, df)
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-Confidence)/2)
	res.Effect.CI = ci95(b-q*se, b+q*se)
	return res, nil
}
