package stats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
)

// fuzzInput reads a test and its input from arbitrary bytes: the first byte picks the test,
// the next two the lengths, then each value is either a small integer (one byte, so ties
// and zero counts are common) or any float64 (eight bytes: NaN, Inf, subnormals, huge).
func fuzzInput(data []byte) (string, Input) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	value := func() float64 {
		if next()%4 != 0 || len(data) < 8 {
			return float64(int8(next())) / 2
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(data))
		data = data[8:]
		return v
	}
	test := Menu[int(next())%len(Menu)]
	nx, ny := int(next()%64), int(next()%64)
	var in Input
	if test == Fisher || test == ChiSquare {
		rows, cols := 2+nx%3, 2+ny%3
		for i := 0; i < rows; i++ {
			row := make([]float64, cols)
			for j := range row {
				row[j] = math.Abs(value())
			}
			in.Table = append(in.Table, row)
		}
		return test, in
	}
	for i := 0; i < nx; i++ {
		in.X = append(in.X, value())
	}
	for i := 0; i < ny; i++ {
		in.Y = append(in.Y, value())
	}
	return test, in
}

// FuzzRun: over arbitrary inputs Run never panics, never changes its input, answers the same
// twice (an analysis on the same data must give the same numbers), refuses only with
// ErrInput, and a result it returns holds no NaN, a p in [0, 1] and CIs whose bounds are in
// order.
func FuzzRun(f *testing.F) {
	f.Add([]byte{0, 5, 5, 1, 2, 1, 4, 1, 6, 1, 8, 1, 3, 1, 9, 1, 1, 1, 7, 1, 2, 1, 2})
	f.Add([]byte{1, 4, 3, 1, 2, 1, 2, 1, 2, 1, 3, 1, 2, 1, 2, 1, 9})
	f.Add([]byte{1, 4, 3, 1, 9, 1, 2, 1, 7, 1, 4, 1, 8, 1, 1, 1, 6}) // unsorted groups
	f.Add([]byte{2, 0, 0, 1, 0, 1, 5, 1, 7, 1, 3})
	f.Add([]byte{3, 1, 2, 1, 10, 1, 20, 1, 0, 1, 5, 1, 6, 1, 7, 1, 8, 1, 9})
	f.Add([]byte{4, 3, 3, 1, 1, 1, 2, 1, 3, 1, 2, 1, 4, 1, 6})
	f.Add([]byte{5, 4, 4, 1, 1, 1, 1, 1, 2, 1, 2, 1, 5, 1, 5, 1, 6, 1, 6})
	f.Add([]byte{6, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 1, 2, 1, 3, 1, 4, 1, 5, 1, 6})
	f.Fuzz(func(t *testing.T, data []byte) {
		test, in := fuzzInput(data)
		before := fmt.Sprint(in)
		r, err := Run(test, in)
		if after := fmt.Sprint(in); after != before {
			t.Fatalf("%s changed its input: %s became %s", test, before, after)
		}
		if again, err2 := Run(test, in); !reflect.DeepEqual(again, r) || fmt.Sprint(err2) != fmt.Sprint(err) {
			t.Fatalf("%s on %+v: two runs differ: %+v, then %+v", test, in, r, again)
		}
		if err != nil {
			if !errors.Is(err, ErrInput) {
				t.Fatalf("%s on %+v: error %v is not a refusal of input", test, in, err)
			}
			return
		}
		if err := r.check(); err != nil {
			t.Fatalf("%s on %+v: %v", test, in, err)
		}
		for _, e := range []*Effect{&r.Effect, r.Secondary} {
			if e != nil && e.CI != nil && !(e.CI.Low <= e.CI.High) {
				t.Fatalf("%s on %+v: %s CI [%g, %g] out of order", test, in, e.Name, e.CI.Low, e.CI.High)
			}
		}
	})
}
