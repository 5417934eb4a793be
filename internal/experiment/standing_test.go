package experiment

import (
	"math"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/session"
)

// TestJudge: the standing at the rule's boundaries, for differences (no effect is 0) and
// ratios (no effect is 1), each direction, with and without a smallest effect of interest.
func TestJudge(t *testing.T) {
	const (
		sup = session.Supported
		ref = session.Refuted
		inc = session.Inconclusive
	)
	plan := func(test string, d Direction, m float64) Plan {
		p := samplePlan()
		p.Analysis.Test, p.Prediction.Direction, p.Prediction.MinEffect = test, d, m
		return p
	}
	for _, c := range []struct {
		name           string
		test           string
		dir            Direction
		m              float64
		effect, lo, hi float64
		want           session.Standing
	}{
		{"greater, CI above 0", "welch-t", Greater, 0, 0.5, 0.01, 1, sup},
		{"greater, CI touching 0", "welch-t", Greater, 0, 0.5, 0, 1, inc},
		{"greater, CI across 0", "welch-t", Greater, 0, 0.2, -0.1, 0.5, inc},
		{"greater, CI below 0", "welch-t", Greater, 0, -0.5, -1, -0.01, ref},
		{"greater, CI below 0 touching", "welch-t", Greater, 0, -0.5, -1, 0, inc},
		{"less, CI below 0", "welch-t", Less, 0, -0.5, -1, -0.01, sup},
		{"less, CI above 0", "welch-t", Less, 0, 0.5, 0.01, 1, ref},
		{"two-sided, CI above 0", "welch-t", TwoSided, 0, 0.5, 0.01, 1, sup},
		{"two-sided, CI below 0", "welch-t", TwoSided, 0, -0.5, -1, -0.01, sup},
		{"two-sided, CI across 0", "welch-t", TwoSided, 0, 0, -1, 1, inc},
		{"band: CI wholly inside", "welch-t", Greater, 0.2, 0.02, -0.19, 0.19, ref},
		{"band: CI touching its edge", "welch-t", Greater, 0.2, 0.02, -0.19, 0.2, inc},
		{"band: significant but negligible", "welch-t", Greater, 0.2, 0.1, 0.01, 0.19, ref},
		{"band: significant, beyond it", "welch-t", Greater, 0.2, 0.3, 0.01, 0.5, sup},
		{"band: two-sided inside", "welch-t", TwoSided, 0.2, 0, -0.1, 0.1, ref},
		{"positive association", "pearson", Positive, 0, 0.4, 0.1, 0.6, sup},
		{"negative association refuted", "spearman", Negative, 0, 0.4, 0.1, 0.6, ref},
		{"slope across 0", "linear-regression", Positive, 0, 0.4, -0.1, 0.9, inc},
		{"odds ratio above 1", "fisher-exact", Greater, 0, 2.5, 1.01, 6, sup},
		{"odds ratio touching 1", "fisher-exact", Greater, 0, 2.5, 1, 6, inc},
		// 0.9 to 1.5 holds 1 (no effect) though it lies above 0: a ratio's null is 1.
		{"odds ratio across 1, above 0", "fisher-exact", Greater, 0, 1.2, 0.9, 1.5, inc},
		{"odds ratio below 1", "fisher-exact", Greater, 0, 0.5, 0.2, 0.99, ref},
		{"odds ratio unbounded above", "fisher-exact", Greater, 0, 8, 1.2, math.Inf(1), sup},
		{"ratio band inside", "fisher-exact", Greater, 1.5, 1.05, 1 / 1.4, 1.4, ref},
		{"ratio band: lower edge out", "fisher-exact", Greater, 1.5, 1.05, 1 / 1.6, 1.4, inc},
		{"chi-square V above 0", "chi-square", TwoSided, 0, 0.3, 0.1, 0.5, sup},
	} {
		v, err := Judge(plan(c.test, c.dir, c.m), Outcome{Test: c.test, Effect: c.effect, Low: c.lo, High: c.hi, P: 0.01, N: 40})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if v.Standing != c.want {
			t.Errorf("%s: %s (%s); want %s", c.name, v.Standing, v.Why, c.want)
		}
		if v.Why == "" {
			t.Errorf("%s: no reason given", c.name)
		}
	}
}

func TestJudgeRefusesNonOutcomes(t *testing.T) {
	for _, c := range []struct {
		name string
		test string
		o    Outcome
		want string
	}{
		{"NaN", "welch-t", Outcome{Effect: math.NaN(), Low: -1, High: 1}, "NaN"},
		{"upside down", "welch-t", Outcome{Effect: 0, Low: 1, High: -1}, "does not hold its effect"},
		{"effect outside", "welch-t", Outcome{Effect: 2, Low: -1, High: 1}, "does not hold its effect"},
		{"ratio at 0", "fisher-exact", Outcome{Effect: 1, Low: 0, High: 3}, "must lie above 0"},
		{"other test", "welch-t", Outcome{Test: "pearson", Effect: 0, Low: -1, High: 1}, "the outcome is of pearson"},
		{"unknown test", "anova", Outcome{}, "unknown test"},
	} {
		p := samplePlan()
		p.Analysis.Test = c.test
		if _, err := Judge(p, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Judge = %v; want %q", c.name, err, c.want)
		}
	}
}

// TestJudgeWithoutCI: a test that gives its effect no interval (chi-square's Cramér's V)
// is judged by p and the effect against the smallest effect of interest, with the sign
// where the plan predicts one; at the boundaries p = 0.05 and effect = m.
func TestJudgeWithoutCI(t *testing.T) {
	const (
		sup = session.Supported
		ref = session.Refuted
		inc = session.Inconclusive
	)
	for _, c := range []struct {
		name      string
		test      string
		dir       Direction
		m         float64
		effect, p float64
		want      session.Standing
	}{
		{"chi-square, p just below 0.05", "chi-square", TwoSided, 0, 0.3, 0.0499, sup},
		{"chi-square, p at 0.05", "chi-square", TwoSided, 0, 0.3, 0.05, inc},
		{"chi-square, p above", "chi-square", TwoSided, 0, 0.3, 0.2, inc},
		{"chi-square, V of 0", "chi-square", TwoSided, 0, 0, 0.01, inc},
		{"chi-square, V at m", "chi-square", TwoSided, 0.1, 0.1, 0.01, sup},
		{"chi-square, V just under m", "chi-square", TwoSided, 0.1, 0.099, 0.01, inc},
		{"chi-square, V beyond m but p at 0.05", "chi-square", TwoSided, 0.1, 0.5, 0.05, inc},
		{"chi-square, V of 1", "chi-square", TwoSided, 0, 1, 1e-9, sup},
		// A difference with no interval (none on the menu today): its sign is read.
		{"greater, the wrong way", "welch-t", Greater, 0, -0.5, 0.01, ref},
		{"greater, the wrong way, p at 0.05", "welch-t", Greater, 0, -0.5, 0.05, inc},
		{"greater, the right way", "welch-t", Greater, 0, 0.5, 0.01, sup},
		{"less, the wrong way", "welch-t", Less, 0, 0.5, 0.01, ref},
		{"two-sided, negative", "welch-t", TwoSided, 0, -0.5, 0.01, sup},
		{"two-sided, negative under m", "welch-t", TwoSided, 0.6, -0.5, 0.01, inc},
		{"greater, the wrong way, under m", "welch-t", Greater, 0.6, -0.5, 0.01, ref},
		// A ratio with no interval: its side is 1's, its size the logarithm's.
		{"ratio below 1, greater", "fisher-exact", Greater, 0, 0.5, 0.01, ref},
		{"ratio at m", "fisher-exact", Greater, 1.5, 1.5, 0.01, sup},
		{"ratio under m", "fisher-exact", Greater, 1.5, 1.4, 0.01, inc},
		{"ratio of 1", "fisher-exact", TwoSided, 0, 1, 0.01, inc},
	} {
		p := samplePlan()
		p.Analysis.Test, p.Prediction.Direction, p.Prediction.MinEffect = c.test, c.dir, c.m
		lo, hi := min(0, c.effect), max(1, c.effect)
		if c.test == "fisher-exact" {
			lo = min(c.effect, 1e-9)
		}
		v, err := Judge(p, Outcome{Test: c.test, Effect: c.effect, Low: lo, High: hi, P: c.p, N: 100, NoCI: true})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if v.Standing != c.want || !strings.Contains(v.Why, "no CI") {
			t.Errorf("%s: %s (%s); want %s, saying there is no CI", c.name, v.Standing, v.Why, c.want)
		}
	}
	// An outcome recorded before NoCI existed (chi-square with its range as bounds) is
	// judged by that range, as it was: inconclusive, whatever p says. A history replayed
	// gives the same verdict.
	p := samplePlan()
	p.Analysis.Test, p.Prediction.Direction = "chi-square", TwoSided
	if v, err := Judge(p, Outcome{Test: "chi-square", Effect: 0.4, Low: 0, High: 1, P: 1e-6, N: 100}); err != nil || v.Standing != inc {
		t.Errorf("a recorded chi-square outcome: %+v, %v; want inconclusive as before", v, err)
	}
	for _, bad := range []float64{math.NaN(), -0.1, 1.5} {
		if _, err := Judge(p, Outcome{Test: "chi-square", Effect: 0.4, Low: 0, High: 1, P: bad, N: 100, NoCI: true}); err == nil || !strings.Contains(err.Error(), "not a probability") {
			t.Errorf("p = %g: Judge = %v; want it refused", bad, err)
		}
	}
}

// TestInterval: an outcome without an interval never shows its range as one.
func TestInterval(t *testing.T) {
	for _, c := range []struct {
		o    Outcome
		want string
	}{
		{Outcome{Effect: 0.5, Low: 0.1, High: 0.9}, "95% CI [0.1, 0.9]"},
		{Outcome{Effect: 0.3, Low: 0, High: 1, NoCI: true}, "no CI"},
	} {
		if got := c.o.Interval(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.o, got, c.want)
		}
	}
}
