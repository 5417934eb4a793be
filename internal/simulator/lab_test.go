package simulator

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// readLab reads a lab table with encoding/csv, as any reader of a lab's export would:
// the header, then each row's column col as a number, split by the arm when there is one.
func readLab(t *testing.T, data []byte, col int) (header []string, control, treated, x []float64) {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("the lab's table does not parse as CSV: %v", err)
	}
	header = rows[0]
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[col], 64)
		if err != nil {
			t.Fatalf("row %v: %v", r, err)
		}
		switch r[1] {
		case "control":
			control = append(control, v)
		case "treated":
			treated = append(treated, v)
		default:
			x = append(x, mustFloat(t, r[1]))
			treated = append(treated, v)
		}
	}
	return header, control, treated, x
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func labMeanSD(xs []float64) (m, sd float64) {
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		sd += (x - m) * (x - m)
	}
	return m, math.Sqrt(sd / float64(len(xs)-1))
}

func TestLabDeterministic(t *testing.T) {
	a := Lab(0.8, 7, LabDesign{N: 20})
	if b := Lab(0.8, 7, LabDesign{N: 20}); !bytes.Equal(a.CSV, b.CSV) || a.Effect != b.Effect {
		t.Error("the same latent, seed and design gave two tables")
	}
	if c := Lab(0.8, 8, LabDesign{N: 20}); bytes.Equal(a.CSV, c.CSV) {
		t.Error("another seed gave the same table")
	}
	header, control, treated, _ := readLab(t, a.CSV, 3)
	if len(header) != 4 || header[3] != "response (ug/L)" || len(control) != 20 || len(treated) != 20 {
		t.Errorf("header %q, %d control and %d treated rows; want 4 columns, 20 and 20", header, len(control), len(treated))
	}
}

// TestLabFollowsLatent: over many seeds, the true effect follows the hidden quality
// (slope LabSlope, scatter LabNoise), and the effect measured in the exported table
// follows the true one within its sampling error, for groups and for pairs.
func TestLabFollowsLatent(t *testing.T) {
	const seeds = 300
	rng := rand.New(rand.NewPCG(46, 2))
	var sxy, sxx, dm, dd, rm, rr float64
	for seed := range uint64(seeds) {
		latent := rng.NormFloat64()
		g := Lab(latent, seed, LabDesign{N: 100})
		sxy += latent * g.Effect
		sxx += latent * latent
		_, control, treated, _ := readLab(t, g.CSV, 3)
		mc, sc := labMeanSD(control)
		mt, st := labMeanSD(treated)
		dm += (mt - mc) / math.Sqrt((sc*sc+st*st)/2) * g.Effect
		dd += g.Effect * g.Effect

		p := Lab(latent, seed, LabDesign{Pairs: true, N: 200})
		_, _, y, x := readLab(t, p.CSV, 2)
		r := p.Effect / math.Sqrt(p.Effect*p.Effect+4)
		rm += labPearson(x, y) * r
		rr += r * r
	}
	if slope := sxy / sxx; math.Abs(slope-LabSlope) > 0.05 {
		t.Errorf("the true effect's slope on the hidden quality is %.3f; want %.2f", slope, LabSlope)
	}
	// The measured effects, regressed on the true ones, have a slope of 1: per seed the
	// measured d has a standard error of about 0.14 and r of 0.07, so over 300 seeds the
	// slopes' are about 0.03.
	if slope := dm / dd; math.Abs(slope-1) > 0.1 {
		t.Errorf("the groups' measured d has a slope of %.3f on the true effect; want 1", slope)
	}
	if slope := rm / rr; math.Abs(slope-1) > 0.1 {
		t.Errorf("the pairs' measured r has a slope of %.3f on the true one; want 1", slope)
	}
}

func labPearson(x, y []float64) float64 {
	mx, sx := labMeanSD(x)
	my, sy := labMeanSD(y)
	var s float64
	for i := range x {
		s += (x[i] - mx) * (y[i] - my)
	}
	return s / float64(len(x)-1) / (sx * sy)
}

func TestGeneratedLatent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var sum float64
	for range 4000 {
		sum += GeneratedLatent(rng, "feedback", true)
	}
	if m := sum / 4000; math.Abs(m-0.2) > 0.05 {
		t.Errorf("feedback after a meta-review: mean %.3f; want 0.2 as Generate draws", m)
	}
}
