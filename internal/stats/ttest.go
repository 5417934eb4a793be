package stats

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// WelchTTest is Welch's two-sample t-test of equal means without assuming equal variances,
// as R's t.test(x, y, var.equal = FALSE). The effect is the difference in means x̄ - ȳ with
// its Welch CI (R's conf.int); the secondary effect is Hedges' g: the difference over the
// pooled standard deviation, times the exact small-sample correction
// J = Γ(ν/2) / (√(ν/2) Γ((ν-1)/2)), ν = nx + ny - 2. Hedges' g rather than Cohen's d
// because d is biased upward in the small groups labs report; g carries no CI here (its
// usual CIs are approximations R's base does not make, so there is nothing to check them by).
func WelchTTest(x, y []float64) (Result, error) {
	if len(x) < 2 || len(y) < 2 {
		return Result{}, inputErr("Welch's t needs at least 2 observations per group (have %d and %d)", len(x), len(y))
	}
	if err := finite("x", x); err != nil {
		return Result{}, err
	}
	if err := finite("y", y); err != nil {
		return Result{}, err
	}
	nx, ny := float64(len(x)), float64(len(y))
	mx, vx := stat.MeanVariance(x, nil)
	my, vy := stat.MeanVariance(y, nil)
	sx, sy := vx/nx, vy/ny
	se := math.Sqrt(sx + sy)
	// R's own guard: a standard error this small against the means is rounding, not spread.
	if se < 10*eps*math.Max(math.Abs(mx), math.Abs(my)) || se == 0 {
		return Result{}, inputErr("both groups are constant (zero variance): the t statistic is undefined")
	}
	// Welch-Satterthwaite df from the shares of the variance, so it does not depend on its
	// scale: squaring variances near 1e-300 underflows to 0/0 (found by FuzzRun).
	a, b := sx/(sx+sy), sy/(sx+sy)
	df := 1 / (a*a/(nx-1) + b*b/(ny-1))
	diff := mx - my
	t := diff / se
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	q := dist.Quantile(1 - (1-Confidence)/2)
	r := Result{
		Test: WelchT, N: []int{len(x), len(y)},
		StatisticName: "t", Statistic: t, DF: df,
		P:      twoSidedT(t, df),
		Effect: Effect{Name: "mean difference", Value: diff, CI: ci95(diff-q*se, diff+q*se)},
	}
	nu := nx + ny - 2
	sp := math.Sqrt(((nx-1)*vx + (ny-1)*vy) / nu)
	if sp > 0 {
		lg1, _ := math.Lgamma(nu / 2)
		lg2, _ := math.Lgamma((nu - 1) / 2)
		j := math.Exp(lg1 - lg2 - 0.5*math.Log(nu/2))
		r.Secondary = &Effect{Name: "hedges g", Value: diff / sp * j}
	}
	return r, nil
}

// eps is R's .Machine$double.eps.
const eps = 2.220446049250313e-16

// twoSidedT is the two-sided p of a t statistic, from the lower tail so that tiny p-values
// keep their digits.
func twoSidedT(t, df float64) float64 {
	p := 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(-math.Abs(t))
	return math.Min(p, 1)
}

// twoSidedZ is the two-sided p of a standard normal statistic.
func twoSidedZ(z float64) float64 {
	return math.Min(math.Erfc(math.Abs(z)/math.Sqrt2), 1)
}
