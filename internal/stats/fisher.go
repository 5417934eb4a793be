package stats

import "math"

// FisherTest is Fisher's exact test on a 2 x 2 table, as R's fisher.test: the two-sided p
// sums the tables no more probable than the one observed (with R's relative tolerance of
// 1e-7), and the effect is the conditional maximum-likelihood odds ratio with its exact
// conditional 95% CI, found as R finds them but by bisection to full precision (R's uniroot
// stops at 1.2e-4 on the scale it searches, so R's figures differ from these in the fourth
// or fifth digit). With a zero cell the odds ratio is 0 or Inf and the CI reaches it.
// Larger tables are refused: the chi-square test is on the menu for them.
func FisherTest(t [][]float64) (Result, error) {
	if len(t) != 2 || len(t[0]) != 2 || len(t[1]) != 2 {
		return Result{}, inputErr("Fisher's exact test here takes a 2 x 2 table (use chi-square for r x c)")
	}
	if _, _, _, err := counts(t); err != nil {
		return Result{}, err
	}
	h := newHyper(t)
	if h.hi-h.lo+1 > maxSupport {
		return Result{}, inputErr("the table's margins allow %d tables, more than %d: use chi-square on counts this large", h.hi-h.lo+1, maxSupport)
	}
	const alpha = (1 - Confidence) / 2
	r := Result{
		Test: Fisher, N: []int{int(h.m + h.n)},
		P: h.twoSided(),
		Effect: Effect{Name: "odds ratio", Value: h.mle(),
			CI: ci95(h.lower(alpha), h.upper(alpha))},
		Notes: []string{"conditional maximum-likelihood odds ratio and exact conditional CI, as R's fisher.test"},
	}
	return r, nil
}

// hyper is the conditional distribution of the top-left cell given the margins: R's m (first
// column's total), n (second column's), k (first row's) and x (the cell).
type hyper struct {
	m, n, k float64
	x       int
	lo, hi  int
	logdc   []float64 // log dhyper over lo..hi
}

func newHyper(t [][]float64) hyper {
	h := hyper{m: t[0][0] + t[1][0], n: t[0][1] + t[1][1], k: t[0][0] + t[0][1], x: int(t[0][0])}
	h.lo = int(math.Max(0, h.k-h.n))
	h.hi = int(math.Min(h.k, h.m))
	if h.hi-h.lo+1 > maxSupport {
		return h
	}
	h.logdc = make([]float64, h.hi-h.lo+1)
	for i := range h.logdc {
		s := float64(h.lo + i)
		h.logdc[i] = lchoose(h.m, s) + lchoose(h.n, h.k-s) - lchoose(h.m+h.n, h.k)
	}
	return h
}

func lchoose(n, k float64) float64 {
	a, _ := math.Lgamma(n + 1)
	b, _ := math.Lgamma(k + 1)
	c, _ := math.Lgamma(n - k + 1)
	return a - b - c
}

// density is R's dnhyper: the noncentral hypergeometric probabilities at odds ratio ncp.
func (h hyper) density(ncp float64) []float64 {
	d := make([]float64, len(h.logdc))
	top := math.Inf(-1)
	lg := math.Log(ncp)
	for i, l := range h.logdc {
		d[i] = l + lg*float64(h.lo+i)
		if d[i] > top {
			top = d[i]
		}
	}
	sum := 0.0
	for i := range d {
		// Below e^-746 of the mode a term is 0 in float64: skip its Exp.
		if d[i]-top < -746 {
			d[i] = 0
			continue
		}
		d[i] = math.Exp(d[i] - top)
		sum += d[i]
	}
	for i := range d {
		d[i] /= sum
	}
	return d
}

// mean is R's mnhyper: the expected top-left cell at odds ratio ncp.
func (h hyper) mean(ncp float64) float64 {
	if ncp == 0 {
		return float64(h.lo)
	}
	if math.IsInf(ncp, 1) {
		return float64(h.hi)
	}
	s := 0.0
	for i, p := range h.density(ncp) {
		s += float64(h.lo+i) * p
	}
	return s
}

// tail is R's pnhyper: P(X <= x), or P(X >= x) when upper, at odds ratio ncp.
func (h hyper) tail(ncp float64, upper bool) float64 {
	s := 0.0
	for i, p := range h.density(ncp) {
		if (upper && h.lo+i >= h.x) || (!upper && h.lo+i <= h.x) {
			s += p
		}
	}
	return math.Min(1, s)
}

func (h hyper) twoSided() float64 {
	d := h.density(1)
	obs := d[h.x-h.lo] * (1 + 1e-7)
	p := 0.0
	for _, v := range d {
		if v <= obs {
			p += v
		}
	}
	return math.Min(1, p)
}

// solve finds the odds ratio where f(ncp) = target for f increasing in ncp: in (0, 1) when
// f(1) > target, else in (1, ∞) through 1/t with t in (eps, 1), as R searches.
func solve(f func(float64) float64, target float64) float64 {
	at1 := f(1)
	switch {
	case at1 > target:
		return bisect(func(t float64) float64 { return f(t) - target }, 0, 1)
	case at1 < target:
		return 1 / bisect(func(t float64) float64 { return target - f(1/t) }, eps, 1)
	}
	return 1
}

// bisect finds the root of g, increasing on [a, b] with g(a) <= 0 <= g(b), to adjacent
// floats: at most 64 halvings of the floats' order, where halving the interval itself takes
// over a thousand near 0, each summing the whole support.
func bisect(g func(float64) float64, a, b float64) float64 {
	return firstFloat(a, b, func(t float64) bool { return g(t) >= 0 })
}

func (h hyper) mle() float64 {
	switch h.x {
	case h.lo:
		return 0
	case h.hi:
		return math.Inf(1)
	}
	return solve(h.mean, float64(h.x))
}

// upper is R's ncp.U: the odds ratio at which P(X <= x) falls to alpha.
func (h hyper) upper(alpha float64) float64 {
	if h.x == h.hi {
		return math.Inf(1)
	}
	// P(X <= x) decreases in ncp; solve wants an increasing function.
	return solve(func(ncp float64) float64 { return -h.tail(ncp, false) }, -alpha)
}

// lower is R's ncp.L: the odds ratio at which P(X >= x) rises to alpha.
func (h hyper) lower(alpha float64) float64 {
	if h.x == h.lo {
		return 0
	}
	return solve(func(ncp float64) float64 { return h.tail(ncp, true) }, alpha)
}
