package analysis

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/stats"
)

// TestInput: each kind of test reads its columns as the package documents, whatever the
// rows' order; a missing value drops its row; what cannot feed the test is refused.
func TestInput(t *testing.T) {
	grp := [][]any{{"treated", 5.0}, {"control", 1.0}, {"treated", 7.0}, {nil, 3.0}, {"control", 2.0}, {"treated", nil}}
	cases := []struct {
		name    string
		test    string
		names   []string
		rows    [][]any
		feed    []string
		want    stats.Input
		dropped int
		refused string
	}{
		{"groups: the one sorting last is x", "welch-t", []string{"grp", "value"}, grp, []string{"grp", "value"},
			stats.Input{X: []float64{5, 7}, Y: []float64{1, 2}}, 2, ""},
		{"a condition: true is x", "mann-whitney", []string{"is_treated", "v"},
			[][]any{{true, 3.0}, {false, 9.0}, {true, 1.0}}, []string{"IS_TREATED", "v"},
			stats.Input{X: []float64{1, 3}, Y: []float64{9}}, 0, ""},
		{"three groups", "welch-t", []string{"g", "v"}, [][]any{{"a", 1.0}, {"b", 2.0}, {"c", 3.0}}, []string{"g", "v"},
			stats.Input{}, 0, `column "g" has 3 groups`},
		{"text values", "welch-t", []string{"g", "v"}, [][]any{{"a", "1,5"}, {"b", 2.0}}, []string{"g", "v"},
			stats.Input{}, 0, `column "v" holds "1,5", not a number`},
		{"a column the result lacks", "pearson", []string{"a", "b"}, nil, []string{"x", "y"},
			stats.Input{}, 0, `the result has no column "x" (it has a, b)`},
		{"pairs sorted", "pearson", []string{"x", "y"}, [][]any{{3.0, 1.0}, {1.0, 2.0}, {2.0, 5.0}, {1.0, 1.0}}, []string{"x", "y"},
			stats.Input{X: []float64{1, 1, 2, 3}, Y: []float64{1, 2, 5, 1}}, 0, ""},
		{"fisher: last-sorting group and outcome first", "fisher-exact", []string{"g", "o"},
			[][]any{{true, true}, {true, true}, {true, false}, {false, true}, {false, false}, {false, false}, {false, false}}, []string{"g", "o"},
			stats.Input{Table: [][]float64{{2, 1}, {1, 3}}}, 0, ""},
		{"chi-square: r x c", "chi-square", []string{"g", "o"},
			[][]any{{"a", "x"}, {"b", "y"}, {"c", "x"}, {"a", "x"}}, []string{"g", "o"},
			stats.Input{Table: [][]float64{{2, 0}, {0, 1}, {1, 0}}}, 0, ""},
		{"fisher on three outcomes", "fisher-exact", []string{"g", "o"},
			[][]any{{true, "a"}, {false, "b"}, {true, "c"}}, []string{"g", "o"}, stats.Input{}, 0, "Fisher's test needs two groups and two outcomes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, dropped, err := Input(c.test, c.names, c.rows, c.feed)
			if c.refused != "" {
				var r *Refused
				if !errors.As(err, &r) || !strings.Contains(r.Reason, c.refused) {
					t.Fatalf("err %v; want refused %q", err, c.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(in.X, c.want.X) || !slices.Equal(in.Y, c.want.Y) || dropped != c.dropped || !tablesEqual(in.Table, c.want.Table) {
				t.Errorf("input %+v, dropped %d; want %+v, %d", in, dropped, c.want, c.dropped)
			}
		})
	}
}

func tablesEqual(a, b [][]float64) bool {
	return slices.EqualFunc(a, b, func(x, y []float64) bool { return slices.Equal(x, y) })
}

// TestDirection: the sign the conventions promise, checked through the statistics and
// Judge: the group predicted greater, written as a condition, comes out supported, and
// Fisher's odds ratio of a more frequent outcome in the true group is above 1.
func TestDirection(t *testing.T) {
	rows := [][]any{}
	for i := range 10 {
		rows = append(rows, []any{true, 10 + float64(i%3)}, []any{false, float64(i % 3)})
	}
	in, _, err := Input("welch-t", []string{"g", "v"}, rows, []string{"g", "v"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := stats.Run(StatsName("welch-t"), in)
	if err != nil {
		t.Fatal(err)
	}
	plan := experiment.Plan{Prediction: experiment.Prediction{Direction: experiment.Greater}, Analysis: experiment.Analysis{Test: "welch-t"}}
	if v, err := experiment.Judge(plan, Outcome("welch-t", r)); err != nil || v.Standing != "supported" {
		t.Errorf("welch-t of the greater group: %+v, %v (effect %g)", v, err, r.Effect.Value)
	}
	var fr [][]any
	for i := range 20 {
		fr = append(fr, []any{true, i%5 != 0}, []any{false, i%5 == 0})
	}
	in, _, err = Input("fisher-exact", []string{"g", "o"}, fr, []string{"g", "o"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err = stats.Run(StatsName("fisher-exact"), in); err != nil || r.Effect.Value <= 1 {
		t.Errorf("fisher odds ratio %g, %v; want above 1", r.Effect.Value, err)
	}
}

// TestOutcome: infinities become the largest float (JSON has none), and an effect with
// no interval gets V's whole range.
func TestOutcome(t *testing.T) {
	o := Outcome("fisher-exact", stats.Result{N: []int{5, 6}, P: 0.01, Effect: stats.Effect{Value: math.Inf(1), CI: &stats.Interval{Low: 2, High: math.Inf(1)}}})
	if o.N != 11 || o.Effect != math.MaxFloat64 || o.High != math.MaxFloat64 || o.Low != 2 || o.Test != "fisher-exact" {
		t.Errorf("outcome %+v", o)
	}
	o = Outcome("chi-square", stats.Result{N: []int{40}, P: 0.2, Effect: stats.Effect{Value: 0.3}})
	if o.Low != 0 || o.High != 1 || o.Effect != 0.3 || !o.NoCI {
		t.Errorf("outcome %+v", o)
	}
}

// TestOutcomeVerdicts: a chi-square and a Fisher's exact test computed on tables, through
// Outcome, earn Judge's verdict: chi-square's by p (it has no interval), Fisher's by the
// odds ratio's interval, also when a cell is empty and the ratio or a bound is 0 or
// infinite.
func TestOutcomeVerdicts(t *testing.T) {
	for _, c := range []struct {
		name  string
		test  string
		dir   experiment.Direction
		table [][]float64
		want  session.Standing
	}{
		{"chi-square, a clear association", "chi-square", experiment.TwoSided, [][]float64{{30, 10}, {10, 30}}, session.Supported},
		{"chi-square, none", "chi-square", experiment.TwoSided, [][]float64{{20, 20}, {20, 20}}, session.Inconclusive},
		{"chi-square, 2 x 3", "chi-square", experiment.TwoSided, [][]float64{{30, 10, 5}, {10, 30, 20}}, session.Supported},
		{"fisher, odds ratio 0 (an empty cell), greater predicted", "fisher-exact", experiment.Greater, [][]float64{{0, 10}, {10, 10}}, session.Refuted},
		{"fisher, odds ratio 0, less predicted", "fisher-exact", experiment.Less, [][]float64{{0, 10}, {10, 10}}, session.Supported},
		{"fisher, odds ratio infinite, greater predicted", "fisher-exact", experiment.Greater, [][]float64{{10, 0}, {10, 10}}, session.Supported},
		{"fisher, across 1", "fisher-exact", experiment.Greater, [][]float64{{5, 5}, {5, 5}}, session.Inconclusive},
	} {
		r, err := stats.Run(StatsName(c.test), stats.Input{Table: c.table})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		plan := experiment.Plan{Hypothesis: "h-0001", Prediction: experiment.Prediction{Text: "p", Direction: c.dir},
			Analysis: experiment.Analysis{Query: "SELECT a AS grp, b AS outcome FROM t", Test: c.test, Columns: []string{"grp", "outcome"}}}
		v, err := experiment.Judge(plan, Outcome(c.test, r))
		if err != nil || v.Standing != c.want {
			t.Errorf("%s: %+v, %v; want %s", c.name, v, err, c.want)
		}
	}
}
