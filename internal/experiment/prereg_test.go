package experiment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// history hands out marks as a workflow history does: event ids that only grow.
type history struct {
	event int64
	t0    time.Time
}

func (h *history) next() Mark {
	h.event++
	return Mark{Event: h.event, Time: h.t0.Add(time.Duration(h.event) * time.Minute)}
}

func TestClassify(t *testing.T) {
	plan := samplePlan().Digest()
	other := func() string { p := samplePlan(); p.Analysis.Query += " AND plate <> 3"; return p.Digest() }()
	m := func(e int64) Mark { return Mark{Event: e, Time: time.Unix(e, 0)} }
	reg := Registration{Experiment: "e-1", Plan: plan, Fixed: m(10)}
	data := Arrival{Data: "sha256:data", Arrived: m(20)}
	for _, c := range []struct {
		name string
		reg  Registration
		runs []Run
		want []Kind // in history order
	}{
		{"the registered run", reg, []Run{{"a", plan, data.Data, m(21)}}, []Kind{PreRegistered}},
		{"a second run is a repeat", reg, []Run{{"b", plan, data.Data, m(30)}, {"a", plan, data.Data, m(21)}}, []Kind{PreRegistered, Exploratory}},
		{"another plan first", reg, []Run{{"a", other, data.Data, m(21)}, {"b", plan, data.Data, m(22)}}, []Kind{Exploratory, PreRegistered}},
		{"other data", reg, []Run{{"a", plan, "sha256:other", m(21)}}, []Kind{Exploratory}},
		{"fixed after the data", Registration{"e-1", plan, m(25)}, []Run{{"a", plan, data.Data, m(26)}}, []Kind{Exploratory}},
		{"fixed with the data", Registration{"e-1", plan, m(20)}, []Run{{"a", plan, data.Data, m(26)}}, []Kind{Exploratory}},
		{"never fixed", Registration{"e-1", plan, Mark{}}, []Run{{"a", plan, data.Data, m(26)}}, []Kind{Exploratory}},
		{"ran before the data", reg, []Run{{"a", plan, data.Data, m(15)}}, []Kind{Exploratory}},
		// A first run that does not count leaves the next proper run the pre-registered one.
		{"early run, then the proper one", reg, []Run{{"a", plan, data.Data, m(15)}, {"b", plan, data.Data, m(21)}}, []Kind{Exploratory, PreRegistered}},
	} {
		labels := Classify(c.reg, data, c.runs)
		var got []Kind
		for _, l := range labels {
			got = append(got, l.Kind)
			if l.Why == "" {
				t.Errorf("%s: run %s labelled without a reason", c.name, l.Run.ID)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v; want %v (%+v)", c.name, got, c.want, labels)
		}
	}
}

// A lab table as the p-hacker sees it: two arms, two measures, four batches and sex, and
// no true effect anywhere, the case where p-hacking does its harm.
type labRow struct {
	treated bool
	value   [2]float64
	batch   int
	female  bool
}

func nullTable(rng *rand.Rand, n int) []labRow {
	rows := make([]labRow, n)
	for i := range rows {
		rows[i] = labRow{treated: i%2 == 1, value: [2]float64{rng.NormFloat64(), rng.NormFloat64()}, batch: rng.IntN(4), female: rng.IntN(2) == 0}
	}
	return rows
}

// attempt is one analysis a p-hacker can make: a measure, a subgroup and a test.
type attempt struct {
	measure  int
	subgroup string // "" for all rows
	test     string
}

func (a attempt) plan() Plan {
	p := samplePlan()
	p.Analysis.Test = a.test
	p.Analysis.Query = fmt.Sprintf("SELECT arm AS grp, measure_%d AS value FROM plates", a.measure+1)
	if a.subgroup != "" {
		p.Analysis.Query += " WHERE " + a.subgroup
	}
	return p
}

func (a attempt) keep(r labRow) bool {
	switch a.subgroup {
	case "":
		return true
	case "sex = 'F'":
		return r.female
	case "sex = 'M'":
		return !r.female
	}
	var b int
	fmt.Sscanf(a.subgroup, "batch = %d", &b)
	return r.batch == b
}

// pValue is a two-sided p of the attempt on rows: Welch's t (or, for "mann-whitney", the
// rank-sum's z) against the standard normal, close enough at these sizes for a helper whose
// numbers only decide when it stops.
func (a attempt) pValue(rows []labRow) float64 {
	var x, y []float64
	for _, r := range rows {
		if !a.keep(r) {
			continue
		}
		if r.treated {
			y = append(y, r.value[a.measure])
		} else {
			x = append(x, r.value[a.measure])
		}
	}
	if len(x) < 3 || len(y) < 3 {
		return 1
	}
	var z float64
	if a.test == "mann-whitney" {
		u := 0.0
		for _, xi := range x {
			for _, yi := range y {
				if yi > xi {
					u++
				}
			}
		}
		nx, ny := float64(len(x)), float64(len(y))
		z = (u - nx*ny/2) / math.Sqrt(nx*ny*(nx+ny+1)/12)
	} else {
		mx, vx := meanVar(x)
		my, vy := meanVar(y)
		z = (my - mx) / math.Sqrt(vx/float64(len(x))+vy/float64(len(y)))
	}
	return math.Erfc(math.Abs(z) / math.Sqrt2)
}

func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// pHacker is the planted analyst: after seeing the data it tries other measures,
// subgroups and tests until one gives p < 0.05, fixing each plan only as it runs it. To
// game the rule it also registers plans of its own before the data arrives, and, once the
// session has run the registered analysis (rerun), starts by re-running it. (Run before
// the session's, the registered analysis would be the pre-registered test, rightly: the
// same plan on the same data gives the same numbers, whoever asks.)
func pHacker(rows []labRow, h *history, data string, rerun bool) (runs []Run, best float64) {
	registered := attempt{0, "", "welch-t"}
	var attempts []attempt
	if rerun {
		attempts = append(attempts, registered)
	}
	for _, test := range []string{"welch-t", "mann-whitney"} {
		for measure := range 2 {
			for _, sub := range []string{"", "sex = 'F'", "sex = 'M'", "batch = 0", "batch = 1", "batch = 2", "batch = 3"} {
				if a := (attempt{measure, sub, test}); a != registered {
					attempts = append(attempts, a)
				}
			}
		}
	}
	best = 1
	for i, a := range attempts {
		h.next() // the plan fixed, after the data was seen
		runs = append(runs, Run{ID: fmt.Sprintf("hack-%d", i), Plan: a.plan().Digest(), Data: data, Ran: h.next()})
		if best = min(best, a.pValue(rows)); best < 0.05 {
			break
		}
	}
	return runs, best
}

// TestPHackerIsExploratory: over many seeds of data with no effect, the planted p-hacker
// finds p < 0.05 far more often than 5%, yet every one of its analyses is labelled
// exploratory, and the run that counts is always the session's own first run of the
// registered plan, whose false-positive rate stays near 5%.
func TestPHackerIsExploratory(t *testing.T) {
	const seeds = 400
	registered := attempt{0, "", "welch-t"}
	hacked, honestHits, hackerRuns := 0, 0, 0
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 46))
		h := &history{t0: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
		reg := Registration{Experiment: "e-1", Plan: registered.plan().Digest(), Fixed: h.next()}
		// The hacker's own plans, fixed before the data too: not the experiment's plan.
		var early []Run
		for _, a := range []attempt{{1, "", "welch-t"}, {0, "sex = 'F'", "welch-t"}} {
			h.next() // fixed in the history, before the data
			early = append(early, Run{Plan: a.plan().Digest()})
		}
		rows := nullTable(rng, 80)
		data := Arrival{Data: fmt.Sprintf("sha256:%016x", seed), Arrived: h.next()}
		// The session runs the registered plan as the data arrives, but an agent's tool
		// call may come first: in odd seeds the p-hacker runs before it.
		var honest Run
		if seed%2 == 0 {
			honest = Run{ID: "session", Plan: reg.Plan, Data: data.Data, Ran: h.next()}
		}
		if registered.pValue(rows) < 0.05 {
			honestHits++
		}
		runs, best := pHacker(rows, h, data.Data, seed%2 == 0)
		if seed%2 == 1 {
			honest = Run{ID: "session", Plan: reg.Plan, Data: data.Data, Ran: h.next()}
		}
		for i := range early {
			early[i].Data, early[i].Ran, early[i].ID = data.Data, h.next(), fmt.Sprintf("early-%d", i)
		}
		runs = append(runs, early...)
		if best < 0.05 {
			hacked++
		}
		hackerRuns += len(runs)
		all := append([]Run{honest}, runs...)
		rand.New(rand.NewPCG(seed, 1)).Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		for _, l := range Classify(reg, data, all) {
			if l.Run.ID != "session" && l.Kind != Exploratory {
				t.Fatalf("seed %d: the p-hacker's run %s labelled %s (%s)", seed, l.Run.ID, l.Kind, l.Why)
			}
		}
		if got, ok := Counted(reg, data, all); !ok || got.ID != "session" {
			t.Fatalf("seed %d: the pre-registered test is %+v, %v; want the session's own run", seed, got, ok)
		}
	}
	t.Logf("%d seeds: the p-hacker reached p < 0.05 in %d (%.0f%%) over %d analyses, all exploratory; the registered test in %d (%.1f%%)",
		seeds, hacked, 100*float64(hacked)/seeds, hackerRuns, honestHits, 100*float64(honestHits)/seeds)
	if hacked < seeds/4 {
		t.Errorf("the p-hacker reached p < 0.05 in only %d of %d seeds: it is too weak to test the labels", hacked, seeds)
	}
	if honestHits > seeds/10 {
		t.Errorf("the registered test reached p < 0.05 in %d of %d null seeds", honestHits, seeds)
	}
}
