package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// rnum reads R's numbers as scripts/statstruth.R writes them: JSON numbers, or "Inf" and
// "-Inf", as a Result's JSON does.
type rnum = jnum

func floats(rs []rnum) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = float64(r)
	}
	return out
}

type truthCase struct {
	Name   string   `json:"name"`
	Test   string   `json:"test"`
	Method string   `json:"method"`
	X      []rnum   `json:"x"`
	Y      []rnum   `json:"y"`
	Table  [][]rnum `json:"table"`
	Want   struct {
		Statistic *rnum  `json:"statistic"`
		P         rnum   `json:"p"`
		DF        *rnum  `json:"df"`
		Estimate  []rnum `json:"estimate"`
		CI        []rnum `json:"ci"`
		ConfLevel *rnum  `json:"conf_level"`
		Method    string `json:"method"`
		CramersV  *rnum  `json:"cramers_v"`
		RSquared  *rnum  `json:"r_squared"`
	} `json:"want"`
}

type truth struct {
	RVersion string      `json:"r_version"`
	Cases    []truthCase `json:"cases"`
	BH       []struct {
		Name string `json:"name"`
		P    []rnum `json:"p"`
		Want []rnum `json:"want"`
	} `json:"bh"`
}

func readTruth(t *testing.T) truth {
	t.Helper()
	b, err := os.ReadFile("testdata/r-truth.json")
	if err != nil {
		t.Fatal(err)
	}
	var tr truth
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	if len(tr.Cases) < 60 {
		t.Fatalf("r-truth.json holds %d cases; make stats-truth writes 81", len(tr.Cases))
	}
	return tr
}

// Tolerances. Closed forms and exact sums must agree with R to 1e-6 relative (they agree
// far closer; the bound leaves room for R's and gonum's special functions). Where R's figure
// is a root found by uniroot, R's own error sets the bound: Fisher's odds ratio and CI within
// 2e-4 on the scale R searches (the ratio or its inverse, whichever is below 1, tol 1.2e-4),
// Mann-Whitney's normal-approximation CI within 2e-4 absolute (tol.root 1e-4).
const (
	relTol  = 1e-6
	rootTol = 2e-4
)

func near(got, want, rel float64) bool {
	if math.IsInf(want, 0) || math.IsInf(got, 0) {
		return got == want
	}
	return math.Abs(got-want) <= rel*math.Abs(want)+1e-13
}

// oddsScale is the scale R's uniroot searches an odds ratio on: t in (0, 1], or 1/t.
func oddsScale(v float64) float64 {
	if v > 1 {
		return 1 / v
	}
	return v
}

func TestAgainstR(t *testing.T) {
	tr := readTruth(t)
	seen := map[string]int{}
	for _, c := range tr.Cases {
		t.Run(c.Name, func(t *testing.T) {
			seen[c.Test]++
			got, err := runCase(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range compare(c, got) {
				t.Error(p)
			}
		})
	}
	for _, m := range Menu {
		if seen[m] == 0 {
			t.Errorf("no R case for %s", m)
		}
	}
}

func runCase(c truthCase) (Result, error) {
	var table [][]float64
	for _, row := range c.Table {
		table = append(table, floats(row))
	}
	x, y := floats(c.X), floats(c.Y)
	if c.Test == MannWhitney && c.Method == "normal" {
		return MannWhitneyTest(x, y, Normal)
	}
	return Run(c.Test, Input{X: x, Y: y, Table: table})
}

// compare lists every figure of got that differs from R's beyond its tolerance.
func compare(c truthCase, got Result) []string {
	var bad []string
	check := func(what string, g, w, rel float64) {
		if !near(g, w, rel) {
			bad = append(bad, fmt.Sprintf("%s = %.12g, R %.12g", what, g, w))
		}
	}
	w := c.Want
	check("p", got.P, float64(w.P), relTol)
	switch {
	case w.Statistic != nil && got.StatisticName == "S":
		// S = (n³-n)(1-ρ)/6 is 0 at ρ = 1, where R's rounding of ρ leaves a residue of
		// order eps times the scale; relative agreement means nothing there.
		n := float64(len(c.X))
		scale := (n*n*n - n) / 6
		if math.Abs(got.Statistic-float64(*w.Statistic)) > relTol*math.Abs(float64(*w.Statistic))+1e-12*scale {
			bad = append(bad, fmt.Sprintf("S = %.12g, R %.12g", got.Statistic, float64(*w.Statistic)))
		}
	case w.Statistic != nil:
		check(got.StatisticName, got.Statistic, float64(*w.Statistic), relTol)
	}
	if w.DF != nil {
		check("df", got.DF, float64(*w.DF), relTol)
	}
	est, ci := got.Effect.Value, got.Effect.CI
	switch {
	case c.Test == WelchT:
		check("mean difference", est, float64(w.Estimate[0]-w.Estimate[1]), relTol)
	case c.Test == Fisher:
		if math.Abs(oddsScale(est)-oddsScale(float64(w.Estimate[0]))) > rootTol {
			bad = append(bad, fmt.Sprintf("odds ratio %g, R %g", est, w.Estimate[0]))
		}
	case c.Test == MannWhitney && strings.Contains(w.Method, "exact"):
		check("hodges-lehmann shift", est, float64(w.Estimate[0]), relTol)
	case c.Test == MannWhitney:
		bad = append(bad, checkPlateau(c, est, float64(w.Estimate[0]))...)
	case w.Estimate != nil:
		check(got.Effect.Name, est, float64(w.Estimate[0]), relTol)
	}
	if w.CramersV != nil {
		check("cramer's v", est, float64(*w.CramersV), relTol)
	}
	if w.RSquared != nil {
		check("r squared", got.Secondary.Value, float64(*w.RSquared), relTol)
	}
	if len(w.CI) == 2 {
		bad = append(bad, compareCI(c, ci, float64(w.CI[0]), float64(w.CI[1]))...)
	}
	if w.ConfLevel != nil && ci != nil {
		check("CI level", ci.Level, float64(*w.ConfLevel), relTol)
	}
	if len(w.CI) == 0 && ci != nil && c.Test == Pearson {
		bad = append(bad, fmt.Sprintf("a CI %+v where R gives none", *ci))
	}
	return bad
}

func compareCI(c truthCase, ci *Interval, lo, hi float64) []string {
	if ci == nil {
		return []string{"no CI; R gives one"}
	}
	var bad []string
	for _, b := range []struct {
		name      string
		got, want float64
	}{{"CI low", ci.Low, lo}, {"CI high", ci.High, hi}} {
		var ok bool
		switch {
		case c.Test == Fisher:
			ok = math.Abs(oddsScale(b.got)-oddsScale(b.want)) <= rootTol
		case c.Test == MannWhitney && !strings.Contains(c.Want.Method, "exact"):
			ok = math.Abs(b.got-b.want) <= rootTol
		default:
			ok = near(b.got, b.want, relTol)
		}
		if !ok {
			bad = append(bad, fmt.Sprintf("%s = %.12g, R %.12g", b.name, b.got, b.want))
		}
	}
	return bad
}

// checkPlateau: in the normal approximation R's estimate is uniroot's root of z(shift) = 0,
// which may be any point where z is 0; ours is the median of the differences. Both must lie
// in the stretch between the two middle differences (one point when their number is odd).
func checkPlateau(c truthCase, got, rEst float64) []string {
	s := newRankSum(floats(c.X), floats(c.Y))
	mn := len(s.x) * len(s.y)
	a, b := s.kth((mn+1)/2), s.kth(mn/2+1)
	var bad []string
	if got < a || got > b {
		bad = append(bad, fmt.Sprintf("shift %g outside the middle differences [%g, %g]", got, a, b))
	}
	if rEst < a-rootTol || rEst > b+rootTol {
		bad = append(bad, fmt.Sprintf("R's shift %g outside the middle differences [%g, %g]", rEst, a, b))
	}
	return bad
}

func TestAdjustBHAgainstR(t *testing.T) {
	for _, c := range readTruth(t).BH {
		got, err := AdjustBH(floats(c.P))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for i, w := range floats(c.Want) {
			if !near(got[i], w, relTol) {
				t.Errorf("%s: adjusted p[%d] = %g, R %g", c.Name, i, got[i], w)
			}
		}
	}
}
