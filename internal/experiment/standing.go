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
// p-value is not read, since a 95% interval excludes no effect exactly when the two-sided
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
