package experiment

import (
	"fmt"
	"math"

	"github.com/cosci-dev/cosci/internal/session"
)

// Outcome is what a test of the menu found: its effect (the mean difference, the odds
// ratio, the correlation, the slope, ...), the effect's 95% confidence interval, the
// p-value and the number of observations. The statistics package's result maps to it.
type Outcome struct {
	Test   string  `json:"test"`
	Effect float64 `json:"effect"`
	Low    float64 `json:"low"` // the 95% CI
	High   float64 `json:"high"`
	P      float64 `json:"p"`
	N      int     `json:"n"`
	// NoCI says the test gives its effect no interval (chi-square's Cramér's V): Low and
	// High then only bound the effect's range, and Judge reads p and the effect instead
	// (see judgeWithoutCI). Outcomes recorded before it existed lack it and are judged as
	// they were, by their interval.
	NoCI bool `json:"no_ci,omitempty"`
}

// Interval is the outcome's interval as a page shows it: "95% CI [low, high]", or "no CI"
// for a test that gives its effect none, whose bounds are only its range and must not be
// shown as an interval.
func (o Outcome) Interval() string {
	if o.NoCI {
		return "no CI"
	}
	return fmt.Sprintf("95%% CI [%.3g, %.3g]", o.Low, o.High)
}

// Figures is the outcome as one line of a page or a terminal: "effect 0.42, 95% CI [0.1,
// 0.74], p 0.012, n 48".
func (o Outcome) Figures() string {
	return fmt.Sprintf("effect %.3g, %s, p %.2g, n %d", o.Effect, o.Interval(), o.P, o.N)
}

// Verdict is a standing with the reason for it, in words a page can show.
type Verdict struct {
	Standing session.Standing `json:"standing"`
	Why      string           `json:"why"`
}

// Judge gives the standing an outcome earns the plan's prediction. The rule, read off
// the 95% confidence interval alone so that it reads the same for every test of the menu:
//
//   - Supported: the interval excludes no effect (0, or 1 for a ratio such as an odds
//     ratio) on the predicted side. For a two-sided prediction, on either side.
//   - Refuted: the interval excludes no effect on the other side (the effect goes the
//     wrong way), or the prediction named a smallest effect of interest and the interval
//     lies wholly inside it (between −m and m; between 1/m and m for a ratio): whatever the
//     effect is, it is too small to matter. This holds even when the interval also excludes
//     no effect: a real but negligible effect does not bear the prediction out.
//   - Inconclusive: anything else; the data cannot tell.
//
// An interval that touches no effect does not exclude it: the bounds are strict. The
// p-value is not read (but see judgeWithoutCI for a test with no interval), since a 95% interval excludes no effect exactly when the two-sided
// p is below 0.05, and the interval also says which side and how far; p serves the
// session's false-discovery control instead. Judge refuses an outcome that is not one: a
// NaN, an interval upside down or not holding its effect, a ratio's bound not above 0.
func Judge(plan Plan, o Outcome) (Verdict, error) {
	test, ok := Lookup(plan.Analysis.Test)
	if !ok {
		return Verdict{}, fmt.Errorf("unknown test %q", clip(plan.Analysis.Test))
	}
	if o.Test != "" && o.Test != test.Name {
		return Verdict{}, fmt.Errorf("the outcome is of %s, the plan's test is %s", clip(o.Test), test.Name)
	}
	if err := checkOutcome(o, test.Ratio); err != nil {
		return Verdict{}, err
	}
	if o.NoCI {
		return judgeWithoutCI(plan, o, test.Ratio)
	}
	low, high, m := o.Low, o.High, plan.Prediction.MinEffect
	null := "0"
	if test.Ratio { // on the log scale a ratio is a difference, and its band symmetric
		low, high, null = math.Log(low), math.Log(high), "1"
		if m > 0 {
			m = math.Log(m)
		}
	}
	ci := fmt.Sprintf("the 95%% CI [%.3g, %.3g]", o.Low, o.High)
	sign := plan.Prediction.Direction.sign()
	switch {
	case m > 0 && low > -m && high < m:
		return Verdict{session.Refuted, fmt.Sprintf("%s lies within the smallest effect of interest (%g): too small to matter", ci, plan.Prediction.MinEffect)}, nil
	case sign >= 0 && low > 0 || sign <= 0 && high < 0:
		return Verdict{session.Supported, fmt.Sprintf("%s excludes %s on the predicted side", ci, null)}, nil
	case sign > 0 && high < 0 || sign < 0 && low > 0:
		return Verdict{session.Refuted, fmt.Sprintf("%s excludes %s on the side opposite the prediction", ci, null)}, nil
	}
	return Verdict{session.Inconclusive, fmt.Sprintf("%s includes %s", ci, null)}, nil
}

// alpha is the two-sided level a p-value is read at where no interval says it: the 95%
// interval's own, so that both rules draw the line in the same place.
const alpha = 0.05

// judgeWithoutCI is the verdict for a test that gives its effect no interval: on the
// menu, chi-square, whose effect, Cramér's V, runs from 0 to 1 with no sign, so its
// predictions are two-sided (Menu). It reads p and the effect's size against the
// smallest effect of interest m (and the effect's sign, where the plan predicts one and
// the effect has one):
//
//   - Supported: p < 0.05 (as a 95% interval excluding no effect would say), the effect on
//     the predicted side, and, where the prediction names m, at least m in size.
//   - Refuted: p < 0.05 with the effect on the side opposite the prediction; never for a
//     two-sided prediction, so never for chi-square.
//   - Inconclusive: p ≥ 0.05 (the data cannot tell an effect from none), or p < 0.05 with
//     an effect smaller than m: the estimate is small, but without an interval nothing
//     says the effect itself is, so it is not refuted as too small to matter either.
//
// So chi-square can support a prediction but never refute one: a refutation needs an
// effect shown to go the wrong way or to lie within m, and it has neither a sign nor an
// interval. A prediction that must be able to fail should plan Fisher's exact test (a
// 2 x 2 table, with the odds ratio's interval and a direction) or another test with an
// interval.
func judgeWithoutCI(plan Plan, o Outcome, ratio bool) (Verdict, error) {
	if math.IsNaN(o.P) || o.P < 0 || o.P > 1 {
		return Verdict{}, fmt.Errorf("the outcome's p %g is not a probability, and a test without an interval is judged by it", o.P)
	}
	effect, m := o.Effect, plan.Prediction.MinEffect
	if ratio { // a ratio's size and side are its logarithm's
		effect = math.Log(effect)
		if m > 0 {
			m = math.Log(m)
		}
	}
	what := fmt.Sprintf("p = %.3g, effect %.3g with no CI", o.P, o.Effect)
	sign := plan.Prediction.Direction.sign()
	switch {
	case o.P >= alpha:
		return Verdict{session.Inconclusive, what + ": p is not below 0.05, the data cannot tell an effect from none"}, nil
	case sign > 0 && effect < 0 || sign < 0 && effect > 0:
		return Verdict{session.Refuted, what + ": p is below 0.05 with the effect opposite the prediction"}, nil
	case effect == 0:
		return Verdict{session.Inconclusive, what + ": p is below 0.05 but the effect has no size"}, nil
	case m > 0 && math.Abs(effect) < m:
		return Verdict{session.Inconclusive, fmt.Sprintf("%s: p is below 0.05, but the effect is smaller than the smallest effect of interest (%g), and no interval says whether the true one is", what, plan.Prediction.MinEffect)}, nil
	}
	return Verdict{session.Supported, what + ": p is below 0.05, an effect of the size predicted on its side"}, nil
}

func checkOutcome(o Outcome, ratio bool) error {
	for _, x := range []float64{o.Effect, o.Low, o.High} {
		if math.IsNaN(x) {
			return fmt.Errorf("the outcome has no number (NaN): effect %g, CI [%g, %g]", o.Effect, o.Low, o.High)
		}
	}
	if o.Low > o.High || o.Effect < o.Low || o.Effect > o.High {
		return fmt.Errorf("the outcome's CI [%g, %g] does not hold its effect %g", o.Low, o.High, o.Effect)
	}
	if ratio && o.Low <= 0 {
		return fmt.Errorf("a ratio's CI [%g, %g] must lie above 0", o.Low, o.High)
	}
	return nil
}
