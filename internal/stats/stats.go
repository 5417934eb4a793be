// Package stats holds the fixed menu of tests an analysis may choose from: Welch's t,
// Mann-Whitney U, Fisher's exact test, the chi-square test of independence, Pearson and
// Spearman correlation and simple linear regression, each with an effect size, its 95% CI and
// a p-value, and Benjamini-Hochberg adjustment across a session's analyses.
//
// Every figure follows R's (stats package, R 4.2) definitions so that a reader can check it
// with the tool statisticians trust; internal/stats/testdata/r-truth.json holds R's own
// answers on its built-in datasets (made by `make stats-truth`) and the tests compare with
// them. Where R's figure comes from a root finder with a loose tolerance (Fisher's odds ratio
// and its CI, the Mann-Whitney CI in the normal approximation) ours is the exact root and
// the tests say by how much the two may differ.
//
// Run uses R's defaults, with two departures, both documented where they are made:
// Spearman's p is always R's t approximation (exact = FALSE), where R's default for fewer
// than 1290 pairs without ties is the AS 89 series; and Mann-Whitney's estimate in the normal
// approximation is the median of the pairwise differences, where R reports whichever zero of
// its z function uniroot lands on. Effects R does not compute (Hedges' g, rank-biserial r,
// Cramér's V, Spearman's CI) are given by their textbook formulas, and say so.
//
// Inputs are refused with an error rather than answered with NaN: too few observations,
// NaN or Inf values, zero variance, negative or fractional counts, mismatched lengths, empty
// rows or columns. A Result never holds NaN. It may hold ±Inf where the quantity is
// infinite: the upper CI bound of an odds ratio with a zero cell, the statistic of a perfect
// correlation or a perfect fit; in JSON those are the strings "Inf" and "-Inf".
package stats

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The menu's names, as an analysis names its test.
const (
	WelchT           = "welch-t"
	MannWhitney      = "mann-whitney"
	Fisher           = "fisher"
	ChiSquare        = "chi-square"
	Pearson          = "pearson"
	Spearman         = "spearman"
	LinearRegression = "linear-regression"
)

// Menu lists the tests Run accepts, in a fixed order.
var Menu = []string{WelchT, MannWhitney, Fisher, ChiSquare, Pearson, Spearman, LinearRegression}

// Confidence is the level of every interval: 95%.
const Confidence = 0.95

// Interval is a confidence interval. High may be +Inf (an odds ratio with a zero cell).
// Level is the confidence it has: 0.95, except where small groups cannot reach it (an exact
// Mann-Whitney CI of 2 and 3 values covers at most 80%), which a note then says, as R warns.
type Interval struct {
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	Level float64 `json:"level"`
}

func ci95(low, high float64) *Interval { return &Interval{low, high, Confidence} }

// Effect is an effect size with its confidence interval, when the test has one.
type Effect struct {
	Name  string    `json:"name"`
	Value float64   `json:"value"`
	CI    *Interval `json:"ci,omitempty"`
}

// Result is what every test returns.
type Result struct {
	Test string `json:"test"`
	// N is the number of observations per group (two-sample tests), the number of pairs
	// (correlation, regression) or the table's total count.
	N []int `json:"n"`
	// StatisticName is R's name for the statistic ("t", "W", "X-squared", "S"); empty for
	// Fisher's exact test, which has none.
	StatisticName string  `json:"statistic_name,omitempty"`
	Statistic     float64 `json:"statistic"`
	// DF is the statistic's degrees of freedom; 0 for tests without (Mann-Whitney, Fisher).
	DF float64 `json:"df"`
	P  float64 `json:"p"`
	// Effect is the test's effect size: mean difference, Hodges-Lehmann shift, odds ratio,
	// Cramér's V, r, rho or slope.
	Effect Effect `json:"effect"`
	// Secondary is a second, standardised effect where one is customary: Hedges' g for
	// Welch's t, the rank-biserial correlation for Mann-Whitney, R² for regression.
	Secondary *Effect `json:"secondary,omitempty"`
	// Notes say what was computed how and what a reader should know (ties, small expected
	// counts, the approximation used).
	Notes []string `json:"notes,omitempty"`
}

// Input holds what a test reads. The two-sample tests read X and Y as the two groups;
// correlation and regression read them as paired columns (regression: X predicts Y); Fisher
// and chi-square read Table, a table of counts by row.
type Input struct {
	X, Y  []float64
	Table [][]float64
}

// ErrInput marks every refusal of bad input, so callers can tell it from a bug.
var ErrInput = errors.New("stats: bad input")

func inputErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, a...))
}

// Run runs the test the menu names on the input. Unknown names and bad input are errors;
// a returned Result holds no NaN (checked here, so a slip in one test cannot pass one on).
func Run(test string, in Input) (Result, error) {
	var (
		r   Result
		err error
	)
	switch test {
	case WelchT:
		r, err = WelchTTest(in.X, in.Y)
	case MannWhitney:
		r, err = MannWhitneyTest(in.X, in.Y, Auto)
	case Fisher:
		r, err = FisherTest(in.Table)
	case ChiSquare:
		r, err = ChiSquareTest(in.Table)
	case Pearson:
		r, err = PearsonTest(in.X, in.Y)
	case Spearman:
		r, err = SpearmanTest(in.X, in.Y)
	case LinearRegression:
		r, err = Regression(in.X, in.Y)
	default:
		return Result{}, inputErr("unknown test %q (the menu: %s)", test, strings.Join(Menu, ", "))
	}
	if err != nil {
		return Result{}, err
	}
	if err := r.check(); err != nil {
		return Result{}, err
	}
	return r, nil
}

// check refuses a result holding NaN: an answer that is not a number must never be passed
// on as if it were one.
func (r Result) check() error {
	bad := func(what string, v float64) error {
		if math.IsNaN(v) {
			return fmt.Errorf("stats: %s: %s is NaN", r.Test, what)
		}
		return nil
	}
	errs := []error{bad("statistic", r.Statistic), bad("df", r.DF), bad("p", r.P),
		bad("effect", r.Effect.Value)}
	if r.P < 0 || r.P > 1 {
		errs = append(errs, fmt.Errorf("stats: %s: p = %g outside [0, 1]", r.Test, r.P))
	}
	for _, e := range []*Effect{&r.Effect, r.Secondary} {
		if e == nil {
			continue
		}
		errs = append(errs, bad(e.Name, e.Value))
		if e.CI != nil {
			errs = append(errs, bad(e.Name+" CI low", e.CI.Low), bad(e.Name+" CI high", e.CI.High))
		}
	}
	return errors.Join(errs...)
}

// maxMagnitude bounds the values a test takes: their squares, summed over a million rows,
// must stay finite, or a mean or variance overflows to Inf and a difference of them to NaN.
const maxMagnitude = 1e100

// finite refuses a column holding NaN, ±Inf, or a value too large to square and sum, naming
// the first.
func finite(name string, xs []float64) error {
	for i, v := range xs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return inputErr("%s[%d] is %v: missing and infinite values must be dropped before the test", name, i, v)
		}
		if math.Abs(v) > maxMagnitude {
			return inputErr("%s[%d] = %g is beyond ±1e100: rescale the column", name, i, v)
		}
	}
	return nil
}

// paired checks two columns read as pairs: equal lengths, finite, at least min pairs.
func paired(x, y []float64, min int) error {
	if len(x) != len(y) {
		return inputErr("x has %d values and y %d: pairs need equal lengths", len(x), len(y))
	}
	if len(x) < min {
		return inputErr("%d pairs: the test needs at least %d", len(x), min)
	}
	return errors.Join(finite("x", x), finite("y", y))
}

// ranks returns the average ranks (1-based) of xs, as R's rank(ties.method="average").
func ranks(xs []float64) []float64 {
	type vi struct {
		v float64
		i int
	}
	s := make([]vi, len(xs))
	for i, v := range xs {
		s[i] = vi{v, i}
	}
	// Tied values get one rank whatever their order, so an unstable sort will do.
	slices.SortFunc(s, func(a, b vi) int { return cmp.Compare(a.v, b.v) })
	r := make([]float64, len(xs))
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && s[j].v == s[i].v {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks i+1..j averaged
		for k := i; k < j; k++ {
			r[s[k].i] = avg
		}
		i = j
	}
	return r
}
