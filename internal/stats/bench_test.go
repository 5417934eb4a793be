package stats

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkRunMillion runs each two-column test on a million rows (half a million a group
// for the two-sample tests), the size issue #46's sandbox must analyse in 5 s with DuckDB's
// part included. Values are rounded to two decimals so that ties are many, as in lab data.
//
//	go test -run '^$' -bench BenchmarkRunMillion -benchtime 3x ./internal/stats
func BenchmarkRunMillion(b *testing.B) {
	rng := rand.New(rand.NewPCG(46, 1))
	const n = 1_000_000
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(int(rng.NormFloat64()*1000)) / 100
		y[i] = x[i]*0.3 + float64(int(rng.NormFloat64()*1000))/100
	}
	for _, test := range []string{WelchT, MannWhitney, Pearson, Spearman, LinearRegression} {
		in := Input{X: x, Y: y}
		if test == WelchT || test == MannWhitney {
			in = Input{X: x[:n/2], Y: y[n/2:]}
		}
		b.Run(test, func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(test, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
