// Package experiment holds a hypothesis's test in the lab as pure data and rules: the
// pre-registered plan and its digest, the standing an outcome gives, which analyses of a
// result count as the pre-registered test and which are exploratory, an experiment's
// states while the session waits for the lab, and how the standings enter the ranking. It
// has no Temporal import: the workflow records what happened (its history's events) and
// asks this package what it means.
package experiment

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Direction is what a prediction says of the effect's sign: greater or less (a group's
// value against another's), positive or negative (an association), or two-sided (an effect
// either way).
type Direction string

const (
	Greater  Direction = "greater"
	Less     Direction = "less"
	Positive Direction = "positive"
	Negative Direction = "negative"
	TwoSided Direction = "two-sided"
)

// sign is +1 for a predicted increase, -1 for a decrease, 0 for either.
func (d Direction) sign() int {
	switch d {
	case Greater, Positive:
		return 1
	case Less, Negative:
		return -1
	}
	return 0
}

// Test is one test of the analyst's menu: its name, the result columns it reads (in
// order), the directions a prediction may state for it, and whether its effect is a ratio
// (an odds ratio: no effect is 1, not 0).
type Test struct {
	Name       string
	Columns    []string // what each result column feeds, in order
	Directions []Direction
	Ratio      bool
}

var (
	groupDirections = []Direction{Greater, Less, TwoSided}
	assocDirections = []Direction{Positive, Negative, TwoSided}
)

// Menu is the analyst's fixed menu of tests; the statistics are computed in Go, never by
// the query. Chi-square's effect (Cramér's V) has no sign, so only two-sided predictions.
var Menu = []Test{
	{"welch-t", []string{"group", "value"}, groupDirections, false},
	{"mann-whitney", []string{"group", "value"}, groupDirections, false},
	{"fisher-exact", []string{"group", "outcome"}, groupDirections, true},
	{"chi-square", []string{"group", "outcome"}, []Direction{TwoSided}, false},
	{"pearson", []string{"x", "y"}, assocDirections, false},
	{"spearman", []string{"x", "y"}, assocDirections, false},
	{"linear-regression", []string{"x", "y"}, assocDirections, false},
}

// Lookup finds a test of the menu by name.
func Lookup(name string) (Test, bool) {
	i := slices.IndexFunc(Menu, func(t Test) bool { return t.Name == name })
	if i < 0 {
		return Test{}, false
	}
	return Menu[i], true
}

// Bounds on a plan's parts: a prediction is a sentence or two, not an essay; a query fits
// on a screen; names are names.
const (
	MaxPrediction = 600
	MaxQuery      = 8000
	MaxName       = 128
	MaxTables     = 16
	MaxColumns    = 64
)

// Plan is an experiment's pre-registered plan: what it predicts, how the result will be
// analysed, and the data expected. Once the scientist confirms it, the workflow records it
// (and its Digest) in its history before any result exists.
type Plan struct {
	Hypothesis string     `json:"hypothesis"`
	Prediction Prediction `json:"prediction"`
	Analysis   Analysis   `json:"analysis"`
	Expected   []Table    `json:"expected"`
}

// Prediction is the testable prediction: in words, its direction, and the smallest effect
// of interest on the test's effect scale (0: none stated). For a ratio effect it is a
// ratio above 1: 1.5 means anything between 1/1.5 and 1.5 is too small to matter.
type Prediction struct {
	Text      string    `json:"text"`
	Direction Direction `json:"direction"`
	MinEffect float64   `json:"min_effect,omitempty"`
}

// Analysis is the analysis plan: a read-only SQL query over the lab's tables, the test of
// the menu it feeds, and which of the query's result columns feed the test's inputs, in
// the test's order (Test.Columns).
type Analysis struct {
	Query   string   `json:"query"`
	Test    string   `json:"test"`
	Columns []string `json:"columns"`
}

// Table is a table the plan expects the result to hold, with the columns it expects.
type Table struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
}

// ExpectedTable is the plan's name for table among the tables it expects (compared without
// case, as DuckDB compares names), "" when it expects another; names are the tables it
// expects, none when it names none.
func (p Plan) ExpectedTable(table string) (name string, names []string) {
	for _, t := range p.Expected {
		if strings.EqualFold(t.Name, table) {
			name = t.Name
		}
		names = append(names, t.Name)
	}
	return name, names
}

// Validate says what is wrong with a plan, every problem in one error, or nil.
func (p Plan) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if err := checkName("hypothesis id", p.Hypothesis); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, p.Prediction.check()...)
	test, ok := Lookup(p.Analysis.Test)
	switch {
	case p.Analysis.Test == "":
		bad("no test: name one of %s", menuNames())
	case !ok:
		bad("unknown test %q: the menu is %s", clip(p.Analysis.Test), menuNames())
	}
	errs = append(errs, checkText("query", p.Analysis.Query, MaxQuery)...)
	if ok {
		if !slices.Contains(test.Directions, p.Prediction.Direction) && p.Prediction.Direction != "" {
			bad("direction %q does not fit %s: say %s", clip(string(p.Prediction.Direction)), test.Name, joinDirections(test.Directions))
		}
		if len(p.Analysis.Columns) != len(test.Columns) {
			bad("%s reads %d result columns (%s), the plan names %d", test.Name, len(test.Columns), strings.Join(test.Columns, ", "), len(p.Analysis.Columns))
		}
		if test.Ratio && p.Prediction.MinEffect != 0 && p.Prediction.MinEffect <= 1 {
			bad("the smallest effect of interest of %s is a ratio above 1 (1.5: between 1/1.5 and 1.5 is too small to matter), not %g", test.Name, p.Prediction.MinEffect)
		}
	}
	for _, c := range p.Analysis.Columns {
		if err := checkName("result column", c); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, checkTables(p.Expected)...)
	return errors.Join(errs...)
}

func (pr Prediction) check() []error {
	errs := checkText("prediction", pr.Text, MaxPrediction)
	if pr.Direction == "" {
		errs = append(errs, errors.New("no direction: say greater, less, positive, negative or two-sided"))
	} else if pr.Direction.sign() == 0 && pr.Direction != TwoSided {
		errs = append(errs, fmt.Errorf("unknown direction %q: say greater, less, positive, negative or two-sided", clip(string(pr.Direction))))
	}
	if math.IsNaN(pr.MinEffect) || math.IsInf(pr.MinEffect, 0) || pr.MinEffect < 0 {
		errs = append(errs, fmt.Errorf("the smallest effect of interest is %g: give a finite size, 0 or more", pr.MinEffect))
	}
	return errs
}

func checkTables(ts []Table) []error {
	var errs []error
	if len(ts) == 0 {
		errs = append(errs, errors.New("no expected data: name the tables (and their columns) the result will hold"))
	}
	if len(ts) > MaxTables {
		errs = append(errs, fmt.Errorf("%d expected tables: at most %d", len(ts), MaxTables))
	}
	seen := map[string]bool{}
	for _, t := range ts {
		if err := checkName("table", t.Name); err != nil {
			errs = append(errs, err)
		} else if seen[t.Name] {
			errs = append(errs, fmt.Errorf("table %q expected twice", t.Name))
		}
		seen[t.Name] = true
		if len(t.Columns) == 0 || len(t.Columns) > MaxColumns {
			errs = append(errs, fmt.Errorf("table %q: %d expected columns, want 1 to %d", clip(t.Name), len(t.Columns), MaxColumns))
		}
		for _, c := range t.Columns {
			if err := checkName("column of "+clip(t.Name), c); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// checkText refuses an empty, overlong or unprintable text (invalid UTF-8 or a NUL, which
// no query or sentence needs and which a display would mangle).
func checkText(what, s string, limit int) []error {
	switch {
	case strings.TrimSpace(s) == "":
		return []error{fmt.Errorf("empty %s", what)}
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return []error{fmt.Errorf("the %s is not printable text (invalid UTF-8 or a NUL byte)", what)}
	case utf8.RuneCountInString(s) > limit:
		return []error{fmt.Errorf("the %s is %d characters: at most %d", what, utf8.RuneCountInString(s), limit)}
	}
	return nil
}

// checkName refuses an empty, overlong or multi-line name.
func checkName(what, s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("empty %s", what)
	case !utf8.ValidString(s) || strings.ContainsAny(s, "\x00\n\r"):
		return fmt.Errorf("the %s %q is not one line of text", what, clip(s))
	case utf8.RuneCountInString(s) > MaxName:
		return fmt.Errorf("the %s is %d characters: at most %d", what, utf8.RuneCountInString(s), MaxName)
	}
	return nil
}

// clip bounds what an error quotes of bad input.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	return string([]rune(s)[:40]) + "…"
}

func menuNames() string {
	var names []string
	for _, t := range Menu {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

func joinDirections(ds []Direction) string {
	var s []string
	for _, d := range ds {
		s = append(s, string(d))
	}
	return strings.Join(s, ", ")
}

// Canonical is the plan's canonical encoding, what Digest hashes: JSON with the keys in
// sorted order, no spaces and no HTML escaping (`jq -cS` prints the same for a plan whose
// smallest effect is a plain decimal), a version number, the expected tables
// sorted by name and each table's columns sorted, since their order means nothing. The
// analysis' columns keep their order, which says what feeds what; the texts are kept
// byte for byte, since the query that runs is the query registered. Only a valid plan is
// recorded; an infinite or NaN smallest effect (which Validate refuses) is encoded as -1.
func (p Plan) Canonical() []byte {
	tables := make([]Table, len(p.Expected))
	for i, t := range p.Expected {
		tables[i] = Table{t.Name, slices.Sorted(slices.Values(t.Columns))}
	}
	slices.SortFunc(tables, func(a, b Table) int { return strings.Compare(a.Name, b.Name) })
	type table struct {
		Columns []string `json:"columns"`
		Name    string   `json:"name"`
	}
	canon := struct {
		Analysis struct {
			Columns []string `json:"columns"`
			Query   string   `json:"query"`
			Test    string   `json:"test"`
		} `json:"analysis"`
		Expected   []table `json:"expected"`
		Hypothesis string  `json:"hypothesis"`
		Prediction struct {
			Direction Direction `json:"direction"`
			MinEffect float64   `json:"min_effect"`
			Text      string    `json:"text"`
		} `json:"prediction"`
		Version int `json:"version"`
	}{Hypothesis: p.Hypothesis, Version: 1, Expected: []table{}}
	canon.Analysis.Columns = append([]string{}, p.Analysis.Columns...)
	canon.Analysis.Query, canon.Analysis.Test = p.Analysis.Query, p.Analysis.Test
	canon.Prediction.Direction, canon.Prediction.MinEffect, canon.Prediction.Text = p.Prediction.Direction, p.Prediction.MinEffect, p.Prediction.Text
	if math.IsNaN(p.Prediction.MinEffect) || math.IsInf(p.Prediction.MinEffect, 0) {
		canon.Prediction.MinEffect = -1
	}
	for _, t := range tables {
		canon.Expected = append(canon.Expected, table{append([]string{}, t.Columns...), t.Name})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(canon); err != nil { // strings and finite numbers only
		panic("experiment: canonical plan: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Digest is "sha256:" and the hex SHA-256 of Canonical: the same plan always has the same
// digest, and any change to what it predicts or how it is analysed changes it.
func (p Plan) Digest() string {
	sum := sha256.Sum256(p.Canonical())
	return "sha256:" + hex.EncodeToString(sum[:])
}
