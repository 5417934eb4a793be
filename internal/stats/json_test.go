package stats

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestJSONRoundTrip: results with infinite figures (a zero cell's odds ratio and CI, a
// perfect correlation's t) and ordinary ones survive JSON, the form Temporal and the store
// keep them in, unchanged.
func TestJSONRoundTrip(t *testing.T) {
	for _, c := range []struct {
		test string
		in   Input
		want string // a piece of the JSON
	}{
		{Fisher, Input{Table: [][]float64{{6, 0}, {2, 4}}}, `"value":"Inf"`},
		{Pearson, Input{X: []float64{1, 2, 3, 4, 5}, Y: []float64{2, 4, 6, 8, 10}}, `"statistic":"Inf"`},
		{Pearson, Input{X: []float64{1, 2, 3, 4, 5}, Y: []float64{-2, -4, -6, -8, -10}}, `"statistic":"-Inf"`},
		{WelchT, Input{X: []float64{1, 2, 3}, Y: []float64{4, 5, 7}}, `"name":"hedges g"`},
	} {
		r := mustRun(t, c.test, c.in)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%s: %v", c.test, err)
		}
		if !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %s lacks %s", c.test, b, c.want)
		}
		var back Result
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: reading %s: %v", c.test, b, err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", c.test, back, r)
		}
	}
}
