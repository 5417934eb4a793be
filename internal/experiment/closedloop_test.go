package experiment

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// The closed loop at the domain level: sessions simulated without agents' texts or a
// workflow, to measure what testing the top hypotheses in the lab and feeding the
// standings back into the ranking does to the final top 3. The full BenchmarkClosedLoop
// over real sessions is in workflows/closedloop_bench_test.go.
//
//   - Generation: Rounds rounds of PerRound hypotheses, their hidden qualities drawn by
//     simulator.GeneratedLatent, the strategies in turn (feedback's lift after the first
//     round's meta-review), from a stream of their own: the same hypotheses with and
//     without feedback, whatever the results.
//   - Ranking: each hypothesis' rating is its quality plus an error RatingNoise × z / √age
//     on the logit scale (z drawn once at its birth, age in rounds), shown as Elo: a fitted
//     tournament's error, large for a newcomer and shrinking as it plays.
//   - Experiments: from round ExpFrom, 2 a round up to Experiments in all, on the
//     top-ranked untested hypotheses of the session's ranking (with feedback, the
//     ranking with the standings). The simulated lab returns a two-group table (N per arm)
//     for each; a Welch interval on it, judged by Judge against a "greater" prediction
//     with a smallest effect of interest of 2 µg/L (0.2 SD), gives the standing.
//   - Final: the top 3 after the last round, with feedback (session.Top of Apply) and
//     without (session.Top of the tournament's ratings alone), and their mean quality.
type loop struct {
	First                                            uint64 // the first seed
	Seeds, Rounds, PerRound, Experiments, ExpFrom, N int
	RatingNoise                                      float64
	// Rule maps each result's standing before the ranking takes it: the identity for
	// cosci's rule, others for the ways feedback goes wrong.
	Rule func(session.Standing) session.Standing
	// Bonus is what a supported hypothesis gains in the ranking on top of
	// session.SupportedBonus: 0 for cosci's rule, 10,000 for tiers (every supported
	// hypothesis above every untested one).
	Bonus float64
}

// domainLoop is the benchmark's setting. Its seeds, from 1000, are not those the rule was
// chosen on (0 to 399); RatingNoise 1 gives a newcomer's rating the error of a tournament
// at about 2n calls and a hypothesis rated over four rounds that of one at 4n (top-10
// precision 0.43 and 0.63 in BenchmarkRanking; a rating error of 1 and 0.5 gives 0.40 and
// 0.62 by the same measure).
var domainLoop = loop{First: 1000, Seeds: 20, Rounds: 5, PerRound: 8, Experiments: 6, ExpFrom: 2, N: 30, RatingNoise: 1}

type loopSeed struct {
	with, without float64 // the final top 3's mean quality
	refutedInTop  int     // refuted hypotheses in the final top 3 with feedback
	tested        []session.Standing
}

type simHypothesis struct {
	id       string
	latent   float64
	z        float64
	born     int
	standing session.Standing
}

var strategies = []string{research.StrategyLiterature, research.StrategyDebate, research.StrategyAssumptions, research.StrategyFeedback}

func (l loop) run(seed uint64) loopSeed {
	gen, noise := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 2))
	var hs []simHypothesis
	var results []Result
	tested := map[string]bool{}
	entries := func(round int) []session.Entry {
		es := make([]session.Entry, len(hs))
		for i, h := range hs {
			rating := h.latent + l.RatingNoise*h.z/math.Sqrt(float64(round-h.born+1))
			es[i] = session.Entry{ID: h.id, Elo: math.Round(1200 + 400/math.Ln10*rating)}
		}
		return es
	}
	plan := labPlan()
	var out loopSeed
	for round := 1; round <= l.Rounds; round++ {
		for i := range l.PerRound {
			h := simHypothesis{id: fmt.Sprintf("h-%04d", len(hs)+1), born: round}
			h.latent = simulator.GeneratedLatent(gen, strategies[i%len(strategies)], round > 1)
			h.z = noise.NormFloat64()
			hs = append(hs, h)
		}
		if round < l.ExpFrom || len(results) >= l.Experiments {
			continue
		}
		ranked := session.Rank(l.apply(entries(round), results))
		for _, e := range ranked {
			if len(results) >= l.Experiments || len(results) >= 2*(round-l.ExpFrom+1) {
				break
			}
			if tested[e.ID] {
				continue
			}
			tested[e.ID] = true
			h := hs[slices.IndexFunc(hs, func(h simHypothesis) bool { return h.id == e.ID })]
			r := labExperiment(plan, h, seed, l.N)
			results = append(results, r)
			out.tested = append(out.tested, r.Standing)
		}
	}
	final := entries(l.Rounds)
	latent := map[string]float64{}
	for _, h := range hs {
		latent[h.id] = h.latent
	}
	withTop := session.Top(l.apply(final, results), 3)
	out.with, out.without = meanLatent(withTop, latent), meanLatent(session.Top(final, 3), latent)
	st := Standings(results)
	for _, e := range withTop {
		if st[e.ID] == session.Refuted {
			out.refutedInTop++
		}
	}
	return out
}

func (l loop) apply(es []session.Entry, results []Result) []session.Entry {
	out := Apply(es, l.mapped(results))
	if l.Bonus > 0 {
		for i := range out {
			if out[i].Standing == session.Supported {
				out[i].Elo += l.Bonus
			}
		}
	}
	return out
}

func (l loop) mapped(results []Result) []Result {
	if l.Rule == nil {
		return results
	}
	out := slices.Clone(results)
	for i := range out {
		out[i].Standing = l.Rule(out[i].Standing)
	}
	return out
}

func meanLatent(top []session.Entry, latent map[string]float64) float64 {
	var s float64
	for _, e := range top {
		s += latent[e.ID]
	}
	return s / float64(len(top))
}

func labPlan() Plan {
	p := samplePlan()
	p.Analysis.Query = `SELECT arm AS grp, "response (ug/L)" AS value FROM result`
	p.Prediction.MinEffect = 2
	p.Expected = []Table{{Name: "result", Columns: []string{"sample_id", "arm", "batch", "response (ug/L)"}}}
	return p
}

// labExperiment runs the simulated lab on h (seeded by the session's seed and the
// hypothesis, so both arms of the benchmark get the same table) and judges a Welch
// interval on the treated minus control difference.
func labExperiment(plan Plan, h simHypothesis, seed uint64, n int) Result {
	lab := simulator.Lab(h.latent, seed*0x9E3779B97F4A7C15^hashID(h.id), simulator.LabDesign{N: n})
	rows, err := csv.NewReader(bytes.NewReader(lab.CSV)).ReadAll()
	if err != nil {
		panic(err)
	}
	var control, treated []float64
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[3], 64)
		if err != nil {
			panic(err)
		}
		if r[1] == "treated" {
			treated = append(treated, v)
		} else {
			control = append(control, v)
		}
	}
	o := welch(control, treated)
	v, err := Judge(plan, o)
	if err != nil {
		panic(err)
	}
	return Result{Experiment: "e-" + h.id, Hypothesis: h.id, Data: "lab", Arrived: Mark{Event: 1}, Outcome: o, Standing: v.Standing}
}

func hashID(id string) uint64 {
	var h uint64 = 14695981039346656037
	for i := range len(id) {
		h = (h ^ uint64(id[i])) * 1099511628211
	}
	return h
}

// welch is Welch's interval for mean(y) - mean(x), written here because the statistics
// package is not yet merged; its p is left out (Judge does not read it).
func welch(x, y []float64) Outcome {
	mx, vx := meanVar(x)
	my, vy := meanVar(y)
	ax, ay := vx/float64(len(x)), vy/float64(len(y))
	se := math.Sqrt(ax + ay)
	df := (ax + ay) * (ax + ay) / (ax*ax/float64(len(x)-1) + ay*ay/float64(len(y)-1))
	h := t975(df) * se
	return Outcome{Test: "welch-t", Effect: my - mx, Low: my - mx - h, High: my - mx + h, N: len(x) + len(y)}
}

// t975 is Student's t's 97.5th percentile with df degrees of freedom, by the
// Cornish-Fisher expansion about the normal's (Abramowitz and Stegun 26.7.5): within
// 1e-3 from 5 degrees of freedom up.
func t975(df float64) float64 {
	z := 1.959963984540054
	z2 := z * z
	g1 := z * (z2 + 1) / 4
	g2 := z * ((5*z2+16)*z2 + 3) / 96
	g3 := z * (((3*z2+19)*z2+17)*z2 - 15) / 384
	g4 := z * ((((79*z2+776)*z2+1482)*z2-1920)*z2 - 945) / 92160
	return z + g1/df + g2/(df*df) + g3/math.Pow(df, 3) + g4/math.Pow(df, 4)
}

// pairedCI is the mean of the paired differences with its 95% t-interval.
func pairedCI(d []float64) (mean, low, high float64) {
	m, v := meanVar(d)
	h := t975(float64(len(d)-1)) * math.Sqrt(v/float64(len(d)))
	return m, m - h, m + h
}

type loopReport struct {
	with, without, gain, low, high float64
	refutedInTop, tested           int
	counts                         map[session.Standing]int
}

func (l loop) measure() loopReport {
	r := loopReport{counts: map[session.Standing]int{}}
	var diffs []float64
	for seed := l.First; seed < l.First+uint64(l.Seeds); seed++ {
		s := l.run(seed)
		r.with += s.with / float64(l.Seeds)
		r.without += s.without / float64(l.Seeds)
		diffs = append(diffs, s.with-s.without)
		r.refutedInTop += s.refutedInTop
		for _, st := range s.tested {
			r.counts[st]++
			r.tested++
		}
	}
	r.gain, r.low, r.high = pairedCI(diffs)
	return r
}

func (r loopReport) String() string {
	return fmt.Sprintf("final top-3 mean quality %.3f with feedback, %.3f without; gain %+.3f, 95%% CI [%+.3f, %+.3f]; %d experiments: %d supported, %d inconclusive, %d refuted; refuted in a final top 3: %d",
		r.with, r.without, r.gain, r.low, r.high, r.tested, r.counts[session.Supported], r.counts[session.Inconclusive], r.counts[session.Refuted], r.refutedInTop)
}

func TestT975(t *testing.T) {
	for _, c := range []struct{ df, want float64 }{{5, 2.570582}, {19, 2.093024}, {58, 2.001717}, {1000, 1.962339}} {
		if got := t975(c.df); math.Abs(got-c.want) > 1e-3 {
			t.Errorf("t975(%g) = %.6f; want %.6f", c.df, got, c.want)
		}
	}
}

// TestClosedLoopDomain: no refuted hypothesis ends in a final top 3, and over 400 seeds
// (2000 to 2399, apart from the benchmark's and the ones the rule was chosen on) the
// paired gain's 95% CI lies above 0. The figure, on 20 seeds, is the benchmark's
// to report: at 20 seeds this model's gain is too small for its CI to clear 0 reliably
// (BENCHMARKS.md).
func TestClosedLoopDomain(t *testing.T) {
	l := domainLoop
	l.First, l.Seeds = 2000, 400
	r := l.measure()
	t.Log(r)
	if r.low <= 0 {
		t.Errorf("over 400 seeds the gain's CI [%+.3f, %+.3f] does not lie above 0", r.low, r.high)
	}
	if r.refutedInTop > 0 {
		t.Errorf("%d refuted hypotheses in a final top 3", r.refutedInTop)
	}
	if r.tested != l.Seeds*l.Experiments {
		t.Errorf("%d experiments; want %d", r.tested, l.Seeds*l.Experiments)
	}
}

// variants are the ways feedback can be done, for the benchmark's comparison.
var variants = []struct {
	name  string
	rule  func(session.Standing) session.Standing
	bonus float64
}{
	{"cosci: refuted last, supported +100 Elo", nil, 0},
	{"tiers: every supported above every untested", nil, 1e4},
	{"ignoring refutations", func(s session.Standing) session.Standing {
		if s == session.Refuted {
			return session.Untested
		}
		return s
	}, 0},
	{"inconclusive taken as support", func(s session.Standing) session.Standing {
		if s == session.Inconclusive {
			return session.Supported
		}
		return s
	}, 0},
}

// BenchmarkClosedLoopDomain reports the figure BENCHMARKS.md records: per variant, the
// 20 seeds from 1000 with the gain's CI, 400 seeds from 2000, and the share of the twenty
// 20-seed blocks of those whose CI lies above 0; for two schedules of the experiments.
func BenchmarkClosedLoopDomain(b *testing.B) {
	for range b.N {
		for _, from := range []int{2, 3} {
			for _, v := range variants {
				l := domainLoop
				l.Rule, l.Bonus, l.ExpFrom = v.rule, v.bonus, from
				r := l.measure()
				l.First, l.Seeds = 2000, 400
				wide := l.measure()
				above := 0
				for block := range 20 {
					l.First, l.Seeds = 2000+uint64(20*block), 20
					if l.measure().low > 0 {
						above++
					}
				}
				b.Logf("experiments from round %d, %s:\n\t20 seeds: %v\n\t400 seeds: gain %+.3f [%+.3f, %+.3f], refuted in a top 3: %d; CI above 0 in %d of 20 blocks of 20",
					from, v.name, r, wide.gain, wide.low, wide.high, wide.refutedInTop, above)
				if from == domainLoop.ExpFrom && v.rule == nil && v.bonus == 0 {
					b.ReportMetric(r.with, "top3-with")
					b.ReportMetric(r.without, "top3-without")
					b.ReportMetric(r.gain, "gain")
					b.ReportMetric(r.low, "gain-ci-low")
					b.ReportMetric(r.high, "gain-ci-high")
				}
			}
		}
	}
}
