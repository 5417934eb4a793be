package stats

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestRefusals: every kind of bad input is an ErrInput naming what is wrong, never a
// Result.
func TestRefusals(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name, test string
		in         Input
		want       string
	}{
		{"unknown test", "anova", Input{}, "unknown test"},
		{"welch one value", WelchT, Input{X: []float64{1}, Y: []float64{1, 2}}, "at least 2"},
		{"welch NaN", WelchT, Input{X: []float64{1, nan}, Y: []float64{1, 2}}, "x[1] is NaN"},
		{"welch Inf", WelchT, Input{X: []float64{1, 2}, Y: []float64{inf, 2}}, "y[0] is +Inf"},
		{"welch huge", WelchT, Input{X: []float64{1, 2}, Y: []float64{1e300, 2}}, "rescale"},
		{"welch constant", WelchT, Input{X: []float64{3, 3, 3}, Y: []float64{3, 3}}, "zero variance"},
		{"mann-whitney all tied", MannWhitney, Input{X: []float64{2, 2}, Y: []float64{2, 2, 2}}, "all observations are equal"},
		{"mann-whitney one value", MannWhitney, Input{X: []float64{1}, Y: []float64{2, 3}}, "at least 2"},
		{"pearson lengths", Pearson, Input{X: []float64{1, 2, 3}, Y: []float64{1, 2}}, "equal lengths"},
		{"pearson two pairs", Pearson, Input{X: []float64{1, 2}, Y: []float64{1, 2}}, "at least 3"},
		{"pearson constant y", Pearson, Input{X: []float64{1, 2, 3}, Y: []float64{5, 5, 5}}, "y is constant"},
		{"spearman constant x", Spearman, Input{X: []float64{1, 1, 1}, Y: []float64{1, 2, 3}}, "x is constant"},
		{"regression constant x", LinearRegression, Input{X: []float64{4, 4, 4}, Y: []float64{1, 2, 3}}, "x is constant"},
		{"regression constant y", LinearRegression, Input{X: []float64{1, 2, 3}, Y: []float64{7, 7, 7}}, "y is constant"},
		{"fisher negative", Fisher, Input{Table: [][]float64{{1, -2}, {3, 4}}}, "whole numbers"},
		{"fisher fraction", Fisher, Input{Table: [][]float64{{1, 2.5}, {3, 4}}}, "whole numbers"},
		{"fisher NaN", Fisher, Input{Table: [][]float64{{1, 2}, {nan, 4}}}, "whole numbers"},
		{"fisher 3x2", Fisher, Input{Table: [][]float64{{1, 2}, {3, 4}, {5, 6}}}, "2 x 2"},
		{"fisher empty row", Fisher, Input{Table: [][]float64{{0, 0}, {3, 4}}}, "row 1 is empty"},
		{"fisher too large", Fisher, Input{Table: [][]float64{{4e5, 4e5}, {4e5, 4e5}}}, "use chi-square"},
		{"chi-square ragged", ChiSquare, Input{Table: [][]float64{{1, 2, 3}, {3, 4}}}, "rectangular"},
		{"chi-square one row", ChiSquare, Input{Table: [][]float64{{1, 2, 3}}}, "at least 2 rows"},
		{"chi-square empty column", ChiSquare, Input{Table: [][]float64{{1, 0, 3}, {3, 0, 1}}}, "column 2 is empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Run(c.test, c.in)
			if err == nil {
				t.Fatalf("no error; got %+v", r)
			}
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q: want an ErrInput containing %q", err, c.want)
			}
		})
	}
}

// TestEdges: ties, zero cells, the fewest observations, perfect correlation. Each figure
// asserted follows from the definitions (the R truth covers the zero cells too).
func TestEdges(t *testing.T) {
	t.Run("ties force the normal approximation", func(t *testing.T) {
		r := mustRun(t, MannWhitney, Input{X: []float64{1, 2, 2, 3}, Y: []float64{2, 4, 5, 6}})
		if !hasNote(r, "normal approximation") || !hasNote(r, "tied") {
			t.Errorf("notes %q: small groups with ties must fall back to the normal approximation, as R", r.Notes)
		}
		// W counts the pairs with x above y, a tie one half: 3 > 2, and the two 2s of x tie
		// the 2 of y: 1 + 2 halves.
		if r.Statistic != 2 {
			t.Errorf("W = %g, want 2", r.Statistic)
		}
	})
	t.Run("zero cell gives odds ratio 0 and CI from 0", func(t *testing.T) {
		r := mustRun(t, Fisher, Input{Table: [][]float64{{0, 5}, {7, 3}}})
		if r.Effect.Value != 0 || r.Effect.CI.Low != 0 || !(r.Effect.CI.High > 0) || math.IsInf(r.Effect.CI.High, 0) {
			t.Errorf("odds ratio %g CI %+v: want 0 with a finite upper bound", r.Effect.Value, *r.Effect.CI)
		}
	})
	t.Run("zero cell gives odds ratio Inf and CI to Inf", func(t *testing.T) {
		r := mustRun(t, Fisher, Input{Table: [][]float64{{6, 0}, {2, 4}}})
		if !math.IsInf(r.Effect.Value, 1) || !math.IsInf(r.Effect.CI.High, 1) || r.Effect.CI.Low <= 0 {
			t.Errorf("odds ratio %g CI %+v: want Inf with a positive lower bound", r.Effect.Value, *r.Effect.CI)
		}
	})
	t.Run("three pairs: a p but no CI", func(t *testing.T) {
		r := mustRun(t, Pearson, Input{X: []float64{1, 2, 3}, Y: []float64{1, 3, 2}})
		if r.Effect.CI != nil || r.DF != 1 || !hasNote(r, "no CI") {
			t.Errorf("got CI %v, df %g, notes %q: want no CI on 1 df, said", r.Effect.CI, r.DF, r.Notes)
		}
		if math.Abs(r.Effect.Value-0.5) > 1e-15 {
			t.Errorf("r = %g, want 0.5", r.Effect.Value)
		}
	})
	t.Run("three per group", func(t *testing.T) {
		r := mustRun(t, WelchT, Input{X: []float64{1, 2, 3}, Y: []float64{4, 5, 6}})
		// Equal variances (1) and sizes: t = -3 / sqrt(2/3), df = 4.
		if math.Abs(r.Statistic+3/math.Sqrt(2.0/3)) > 1e-12 || math.Abs(r.DF-4) > 1e-12 {
			t.Errorf("t = %g on %g df, want %g on 4", r.Statistic, r.DF, -3/math.Sqrt(2.0/3))
		}
		// Pooled SD 1, so d = -3; J(4) = Γ(2) / (√2 Γ(3/2)) = 1 / (√2 · √π/2) = √(2/π).
		if want := -3 * math.Sqrt(2/math.Pi); math.Abs(r.Secondary.Value-want) > 1e-12 {
			t.Errorf("hedges g = %.15g, want %.15g", r.Secondary.Value, want)
		}
	})
	t.Run("perfect correlation", func(t *testing.T) {
		// Centred sums 10, 20 and 40: r = 20 / sqrt(400) is 1 exactly, so t is infinite.
		in := Input{X: []float64{1, 2, 3, 4, 5}, Y: []float64{2, 4, 6, 8, 10}}
		for _, test := range []string{Pearson, Spearman} {
			r := mustRun(t, test, in)
			if r.Effect.Value != 1 || r.P != 0 || !math.IsInf(r.Statistic, 1) && test == Pearson ||
				r.Effect.CI.Low != 1 || r.Effect.CI.High != 1 {
				t.Errorf("%s: %+v: want r = 1, p = 0, CI [1, 1]", test, r)
			}
		}
		r := mustRun(t, LinearRegression, in)
		if r.Effect.Value != 2 || r.P != 0 || r.Secondary.Value != 1 || *r.Effect.CI != (Interval{2, 2, Confidence}) || !hasNote(r, "perfect fit") {
			t.Errorf("regression: %+v: want slope 2, p 0, R² 1, CI [2, 2], noted", r)
		}
	})
	t.Run("monotone but not linear: Spearman 1, Pearson below", func(t *testing.T) {
		in := Input{X: []float64{1, 2, 3, 4, 5, 6}, Y: []float64{1, 4, 9, 16, 25, 1000}}
		if s, p := mustRun(t, Spearman, in), mustRun(t, Pearson, in); s.Effect.Value != 1 || !(p.Effect.Value < 0.9) {
			t.Errorf("rho %g, r %g", s.Effect.Value, p.Effect.Value)
		}
	})
}

func mustRun(t *testing.T, test string, in Input) Result {
	t.Helper()
	r, err := Run(test, in)
	if err != nil {
		t.Fatalf("%s: %v", test, err)
	}
	return r
}

func hasNote(r Result, s string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// TestAdjustBHRefusals: a value that is not a p-value is refused; none is no work.
func TestAdjustBHRefusals(t *testing.T) {
	for _, p := range [][]float64{{0.1, math.NaN()}, {0.1, 1.5}, {-0.01}} {
		if _, err := AdjustBH(p); !errors.Is(err, ErrInput) {
			t.Errorf("AdjustBH(%v): err %v, want ErrInput", p, err)
		}
	}
	if got, err := AdjustBH(nil); err != nil || len(got) != 0 {
		t.Errorf("AdjustBH(nil) = %v, %v", got, err)
	}
}

// TestInputUntouched: a test sorts and ranks copies; the caller's columns (which may be the
// analysis record's own) keep their order.
func TestInputUntouched(t *testing.T) {
	for _, m := range Menu {
		in := Input{X: []float64{5, 1, 4, 2, 3}, Y: []float64{2, 9, 1, 7, 3}, Table: [][]float64{{3, 1}, {1, 3}}}
		mustRun(t, m, in)
		if !slices.Equal(in.X, []float64{5, 1, 4, 2, 3}) || !slices.Equal(in.Y, []float64{2, 9, 1, 7, 3}) {
			t.Errorf("%s reordered its input: %v %v", m, in.X, in.Y)
		}
	}
}

// TestDescribeIsTheMenu: the analyst is shown exactly the tests Run accepts, in order.
func TestDescribeIsTheMenu(t *testing.T) {
	d := Describe()
	if len(d) != len(Menu) {
		t.Fatalf("%d descriptions for %d tests", len(d), len(Menu))
	}
	for i, m := range Menu {
		if d[i].Name != m || d[i].Reads == "" || d[i].Effect == "" || d[i].When == "" {
			t.Errorf("description %d: %+v, want %s described", i, d[i], m)
		}
	}
}

// TestMenuRuns: every name on the menu reaches its test (a typo in Run's switch would
// answer "unknown test").
func TestMenuRuns(t *testing.T) {
	pairs := Input{X: []float64{1, 2, 3, 4, 5}, Y: []float64{2, 1, 4, 3, 6},
		Table: [][]float64{{3, 1}, {1, 3}}}
	for _, m := range Menu {
		if r := mustRun(t, m, pairs); r.Test != m {
			t.Errorf("Run(%q) answered as %q", m, r.Test)
		}
	}
}
