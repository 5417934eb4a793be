package stats

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// TestCrosstab: levels sorted, pairs counted; unequal lengths, a missing category and a
// column of 101 distinct values refused.
func TestCrosstab(t *testing.T) {
	a := []string{"treated", "control", "treated", "treated", "control", "control", "treated"}
	b := []string{"yes", "no", "yes", "no", "no", "no", "yes"}
	table, rows, cols, err := Crosstab(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{3, 0}, {1, 3}} // control: no 3, yes 0; treated: no 1, yes 3
	if !reflect.DeepEqual(table, want) || !reflect.DeepEqual(rows, []string{"control", "treated"}) ||
		!reflect.DeepEqual(cols, []string{"no", "yes"}) {
		t.Errorf("got %v %v %v, want %v [control treated] [no yes]", table, rows, cols, want)
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	for _, c := range []struct{ a, b []string }{
		{[]string{"x", "y"}, []string{"x"}},
		{[]string{"x", ""}, []string{"x", "y"}},
		{many, many},
	} {
		if _, _, _, err := Crosstab(c.a, c.b); !errors.Is(err, ErrInput) {
			t.Errorf("Crosstab(%d values, %d values): err %v, want ErrInput", len(c.a), len(c.b), err)
		}
	}
}
