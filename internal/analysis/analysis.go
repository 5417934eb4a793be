// Package analysis is what lies between the sandbox's answer to an analysis' query and
// the statistics (#46): it reads the result columns a plan names into a test's input
// (stats.Input) and maps the test's result to an experiment's outcome. It has no Temporal
// import and runs nothing: the activity (activities.RunAnalysis) runs the query and the
// test, and keeps the record.
//
// How a result feeds each test of the menu (experiment.Menu), which the analyst's prompt
// says in the same words (Conventions):
//
//   - welch-t, mann-whitney: a group column with exactly two values and a numeric value
//     column. The effect is the group that sorts last minus the group that sorts first
//     (true after false, 1 after 0, "treated" after "control"), so a query that writes
//     the group as a condition (arm = 'treated' AS grp) states the effect's sign itself.
//   - fisher-exact: a group column and an outcome column with two values each: the odds
//     of the outcome that sorts last in the group that sorts last, against the other's.
//   - chi-square: a group column and an outcome column, counted into their table.
//   - pearson, spearman, linear-regression: two numeric columns x and y (regression: x
//     predicts y).
//
// A row with a missing value (NULL) in a column the test reads is dropped, and counted.
// The values are put in a fixed order before the test (groups' values sorted, pairs
// sorted), since a query without ORDER BY may return its rows in any order on two
// threads and floating-point sums depend on the order: the same data gives the same
// numbers, to the last bit.
package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/sandbox"
	"github.com/cosci-dev/cosci/internal/stats"
)

// Conventions says, for the analyst's prompt, how the result columns feed the tests.
const Conventions = `How the query's result feeds the test (name the result columns in "columns", in this order):
- welch-t, mann-whitney: [group, value]. group has exactly two values; value is numeric. The effect is the mean (or shift) of the group that sorts last minus that of the group that sorts first: false < true, 0 < 1, text alphabetically. Write the group as a condition (arm = 'treated' AS grp) so that true is the group the prediction is about.
- fisher-exact: [group, outcome], two values each: the odds ratio of the outcome that sorts last (true, 1) in the group that sorts last against the other group. Write both as conditions.
- chi-square: [group, outcome], any number of values each; Cramer's V has no sign, so the prediction is two-sided.
- pearson, spearman, linear-regression: [x, y], both numeric (regression: x predicts y).
Return one row per observation, not aggregates: the statistics are computed from the rows. Rows with a missing value in those columns are dropped.`

// Refused is an analysis the result or the test refused, with the reason, in cosci's
// words: an answer to record, not a failure to retry.
type Refused struct{ Reason string }

func (r *Refused) Error() string { return "analysis refused: " + r.Reason }

func refuse(format string, args ...any) *Refused {
	return &Refused{Reason: fmt.Sprintf(format, args...)}
}

// StatsName is the stats package's name of a test of experiment.Menu.
func StatsName(test string) string {
	if test == "fisher-exact" {
		return stats.Fisher
	}
	return test
}

// Input reads the input of test from a query's result: its column names and rows, and
// the plan's columns feeding the test, in the test's order. It returns the rows dropped
// for a missing value; a result that cannot feed the test is a *Refused.
func Input(test string, names []string, rows [][]any, feed []string) (stats.Input, int, error) {
	t, ok := experiment.Lookup(test)
	if !ok {
		return stats.Input{}, 0, refuse("unknown test %q", test)
	}
	if len(feed) != len(t.Columns) {
		return stats.Input{}, 0, refuse("%s reads %d columns, the plan names %d", test, len(t.Columns), len(feed))
	}
	idx := make([]int, len(feed))
	for i, name := range feed {
		j, err := column(names, name)
		if err != nil {
			return stats.Input{}, 0, err
		}
		idx[i] = j
	}
	var kept [][2]any
	dropped := 0
	for _, row := range rows {
		a, b := cell(row, idx[0]), cell(row, idx[1])
		if a == nil || b == nil {
			dropped++
			continue
		}
		kept = append(kept, [2]any{a, b})
	}
	var in stats.Input
	var err error
	switch t.Columns[0] {
	case "group":
		if t.Columns[1] == "value" {
			in, err = groups(kept, feed)
		} else {
			in, err = counts(kept, feed, test == "fisher-exact")
		}
	default:
		in, err = pairs(kept, feed)
	}
	return in, dropped, err
}

// column finds a result column by name as the sandbox finds the columns it feeds
// (sandbox.FindColumn).
func column(names []string, name string) (int, error) {
	i, err := sandbox.FindColumn(names, name)
	if err != nil {
		return 0, refuse("%s", err.Error())
	}
	return i, nil
}

func cell(row []any, i int) any {
	if i < len(row) {
		return row[i]
	}
	return nil
}

// number reads a value as the sandbox gives it: a JSON number, a boolean (0 or 1), or
// the name of a float JSON has no number for.
func number(v any, col string) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		switch x {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
	}
	return 0, refuse("column %q holds %s, not a number", col, shown(v))
}

// shown is a value as a refusal quotes it: bounded.
func shown(v any) string {
	s := fmt.Sprintf("%q", fmt.Sprint(v))
	if len(s) > 40 {
		s = s[:40] + "…\""
	}
	return s
}

// level is a group's or an outcome's value, ordered: numbers (and booleans, as 0 and 1)
// before text, numbers by value, text by its bytes.
type level struct {
	text bool
	num  float64
	str  string
}

func levelOf(v any) level {
	switch x := v.(type) {
	case float64:
		return level{num: x}
	case bool:
		if x {
			return level{num: 1}
		}
		return level{}
	case string:
		return level{text: true, str: x}
	}
	return level{text: true, str: fmt.Sprint(v)}
}

func (l level) compare(o level) int {
	switch {
	case l.text != o.text:
		if l.text {
			return 1
		}
		return -1
	case l.text:
		return strings.Compare(l.str, o.str)
	}
	return cmp.Compare(l.num, o.num)
}

// levels are the distinct levels of column i of rows, sorted.
func levels(rows [][2]any, i int) []level {
	var ls []level
	for _, r := range rows {
		l := levelOf(r[i])
		if !slices.ContainsFunc(ls, func(m level) bool { return m.compare(l) == 0 }) {
			ls = append(ls, l)
		}
	}
	slices.SortFunc(ls, level.compare)
	return ls
}

func indexOf(ls []level, v any) int {
	l := levelOf(v)
	return slices.IndexFunc(ls, func(m level) bool { return m.compare(l) == 0 })
}

// groups reads [group, value] into the two groups: X the group that sorts last.
func groups(rows [][2]any, feed []string) (stats.Input, error) {
	ls := levels(rows, 0)
	if len(ls) != 2 {
		return stats.Input{}, refuse("column %q has %d groups; the test compares exactly two", feed[0], len(ls))
	}
	// Sized for the larger group: a million rows grown by append cost more than the test.
	in := stats.Input{X: make([]float64, 0, len(rows)), Y: make([]float64, 0, len(rows))}
	last := ls[1]
	for _, r := range rows {
		v, err := number(r[1], feed[1])
		if err != nil {
			return stats.Input{}, err
		}
		if levelOf(r[0]).compare(last) == 0 {
			in.X = append(in.X, v)
		} else {
			in.Y = append(in.Y, v)
		}
	}
	slices.Sort(in.X)
	slices.Sort(in.Y)
	return in, nil
}

// counts reads [group, outcome] into their table of counts; for Fisher's test it must be
// 2 x 2, its first row and column the levels that sort last.
func counts(rows [][2]any, feed []string, twoByTwo bool) (stats.Input, error) {
	gs, os := levels(rows, 0), levels(rows, 1)
	if twoByTwo && (len(gs) != 2 || len(os) != 2) {
		return stats.Input{}, refuse("Fisher's test needs two groups and two outcomes; %q has %d values and %q %d", feed[0], len(gs), feed[1], len(os))
	}
	if twoByTwo {
		slices.Reverse(gs)
		slices.Reverse(os)
	}
	table := make([][]float64, len(gs))
	for i := range table {
		table[i] = make([]float64, len(os))
	}
	for _, r := range rows {
		table[indexOf(gs, r[0])][indexOf(os, r[1])]++
	}
	return stats.Input{Table: table}, nil
}

// pairs reads [x, y] as pairs, sorted by x, then y.
func pairs(rows [][2]any, feed []string) (stats.Input, error) {
	ps := make([][2]float64, 0, len(rows))
	for _, r := range rows {
		x, err := number(r[0], feed[0])
		if err != nil {
			return stats.Input{}, err
		}
		y, err := number(r[1], feed[1])
		if err != nil {
			return stats.Input{}, err
		}
		ps = append(ps, [2]float64{x, y})
	}
	// By x, then y; the second comparison only on a tie (cmp.Or would make both each time,
	// a third of a million-row analysis' sort).
	slices.SortFunc(ps, func(a, b [2]float64) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	in := stats.Input{X: make([]float64, len(ps)), Y: make([]float64, len(ps))}
	for i, p := range ps {
		in.X[i], in.Y[i] = p[0], p[1]
	}
	return in, nil
}

// Outcome is a test's result as an experiment's outcome: its effect, the effect's 95% CI,
// p and the observations counted. JSON (the workflow's history) has no infinity, so an
// infinite bound (an odds ratio with an empty cell) is the largest float, which Judge
// reads the same way; and a ratio's bound (or estimate) of 0 (the other empty cell) is
// the smallest positive float, since a ratio's interval must lie above 0 for Judge to
// read it on the log scale, where that bound is as good as minus infinity. An effect
// without an interval (chi-square's Cramér's V) is marked NoCI and gets its whole range,
// [0, 1], as bounds: nothing is claimed about it that was not computed, and Judge reads
// p and the effect instead.
func Outcome(test string, r stats.Result) experiment.Outcome {
	o := experiment.Outcome{Test: test, Effect: finite(r.Effect.Value), P: r.P}
	for _, n := range r.N {
		o.N += n
	}
	if ci := r.Effect.CI; ci != nil {
		o.Low, o.High = finite(ci.Low), finite(ci.High)
	} else {
		o.Low, o.High, o.NoCI = min(0, o.Effect), max(1, o.Effect), true
	}
	if t, ok := experiment.Lookup(test); ok && t.Ratio {
		o.Effect, o.Low, o.High = aboveZero(o.Effect), aboveZero(o.Low), aboveZero(o.High)
	}
	return o
}

// aboveZero is a ratio's value with 0 made the smallest positive float.
func aboveZero(f float64) float64 {
	if f == 0 {
		return math.SmallestNonzeroFloat64
	}
	return f
}

func finite(f float64) float64 {
	switch {
	case math.IsInf(f, 1):
		return math.MaxFloat64
	case math.IsInf(f, -1):
		return -math.MaxFloat64
	}
	return f
}

// Menu is the menu as the analyst's request carries it: experiment.Menu's tests, each
// with what stats.Describe says of it and the directions a prediction may state.
func Menu() []research.AnalysisTest {
	descriptions := stats.Describe()
	var menu []research.AnalysisTest
	for _, t := range experiment.Menu {
		at := research.AnalysisTest{Name: t.Name}
		for _, d := range descriptions {
			if d.Name == StatsName(t.Name) {
				at.Reads, at.Effect, at.When = d.Reads, d.Effect, d.When
			}
		}
		for _, dir := range t.Directions {
			at.Directions = append(at.Directions, string(dir))
		}
		menu = append(menu, at)
	}
	return menu
}
