package workflows

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/sandbox"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// BenchmarkClosedLoop: what testing a session's top hypotheses in the lab, and feeding
// the results back into the ranking, does to the final top 3, over real sessions.
//
//	go test ./workflows -run '^$' -bench ClosedLoop -benchtime 1x
//
// Each seed runs one session twice, in the workflow test environment with cosci's real
// workflow and activities and the offline provider generating, reviewing and judging
// (its judges with a persistent error per hypothesis, -closedloop.judge-noise, 2 by
// default: see internal/simulator/judgenoise.go and BENCHMARKS.md for why; without it
// they see quality directly and the tournament is already nearly right). After rounds 2, 3 and 4 the scientist plans an
// experiment for each of the two top-ranked hypotheses not yet tested (E = 6 in all)
// through the real updates: plan-experiment (the offline analyst's plan over the lab's
// pilot plate, a Welch t, treated greater than control), confirm-experiment with the
// digest shown, add-dataset with the simulated lab's table, and experiment-result; the
// real RunAnalysis reads the table from the session store and computes the test (only
// DuckDB is replaced, by projectingSandbox). The lab's true effect follows the tested
// hypothesis' hidden quality plus the lab's noise (simulator.Lab), seeded by the session
// and the hypothesis' statement, so a hypothesis tested in both arms gets the same table.
//
// Without feedback, the same session (same seed, the same draws) plans, confirms and
// runs the same kind of experiments on its own top hypotheses and the lab's tables are
// added, but the results are withheld: never sent, so nothing reaches the ranking; the
// experiments are withdrawn when the rounds are done. The generation's draws of hidden
// quality do not see results (each generation turn that both arms run draws the
// same quality in both, which the benchmark checks), so the gain is what testing and selection add.
//
// Reported: the final top 3's mean hidden quality in both arms, paired over the seeds,
// with the 95% t-interval of the gain. A missed target fails the run: the interval must
// lie above 0, and no refuted hypothesis may end in a top 3.
func BenchmarkClosedLoop(b *testing.B) {
	for range b.N {
		start := time.Now()
		var diffs, with, without []float64
		var refutedInTop, tested, compared int
		counts := map[session.Standing]int{}
		for i := range *loopSeeds {
			seed := int64(1000 + i)
			w := runLoop(b, seed, true)
			wo := runLoop(b, seed, false)
			n, err := sameDraws(w.generated, wo.generated)
			if err != nil {
				b.Fatalf("seed %d: %v", seed, err)
			}
			compared += n
			if len(w.standings) != loopExperiments || wo.results != 0 {
				b.Fatalf("seed %d: %d results with feedback (want %d), %d without (want 0)", seed, len(w.standings), loopExperiments, wo.results)
			}
			with, without = append(with, w.top3), append(without, wo.top3)
			diffs = append(diffs, w.top3-wo.top3)
			refutedInTop += w.refutedInTop
			for _, st := range w.standings {
				counts[st]++
				tested++
			}
		}
		gain, low, high := pairedInterval(diffs)
		b.Logf("%d seeds, E = %d, judge noise %g: final top-3 mean quality %.3f with feedback, %.3f without; gain %+.3f, 95%% CI [%+.3f, %+.3f]; %d experiments: %d supported, %d inconclusive, %d refuted; refuted in a final top 3: %d; generation turns run in both arms with the same strategy: %d, each the same draw in both; %s",
			len(diffs), loopExperiments, *loopJudgeNoise, mean(with), mean(without), gain, low, high, tested,
			counts[session.Supported], counts[session.Inconclusive], counts[session.Refuted], refutedInTop, compared, time.Since(start).Round(time.Second))
		b.ReportMetric(mean(with), "top3-with")
		b.ReportMetric(mean(without), "top3-without")
		b.ReportMetric(gain, "gain")
		b.ReportMetric(low, "gain-ci-low")
		b.ReportMetric(high, "gain-ci-high")
		b.ReportMetric(float64(refutedInTop), "refuted-in-top3")
		if low <= 0 {
			b.Errorf("the gain's 95%% CI [%+.3f, %+.3f] does not lie above 0", low, high)
		}
		if refutedInTop > 0 {
			b.Errorf("%d refuted hypotheses in a final top 3", refutedInTop)
		}
	}
}

var (
	loopSeeds      = flag.Int("closedloop.seeds", 20, "BenchmarkClosedLoop: sessions (seeds from 1000)")
	loopJudgeNoise = flag.Float64("closedloop.judge-noise", 2, "BenchmarkClosedLoop: the simulated judges' persistent error per hypothesis (simulator.Offline.JudgeNoise)")
)

// The benchmark's sessions: 24 hypotheses (6 rounds of the offline provider), experiments
// after rounds 2, 3 and 4, two each, N samples per arm of the lab's plate.
const (
	loopHypotheses  = 24
	loopExperiments = 6
	loopPerRound    = 2
	loopFirstRound  = 2
	loopN           = 30
	loopSession     = "default-test-workflow-id" // the test environment's workflow id
)

// loopArm is what one arm of a seed found.
type loopArm struct {
	top3         float64 // the final top 3's mean hidden quality
	refutedInTop int
	standings    []session.Standing // the results' standings, in arrival order
	results      int                // results sent
	generated    map[string]draw    // the generation turns' draws, by the hypothesis each made
}

// loopRun is one session of the benchmark: its harness, the lab's state and the arm.
type loopRun struct {
	b        testing.TB
	h        *harness
	l        *lab
	seed     int64
	feedback bool
	tested   map[string]bool
	refuted  map[string]bool // the hypotheses the lab's results refuted
	planned  []string        // experiment ids
	batches  int
	arm      loopArm
	failed   error
}

func runLoop(b testing.TB, seed int64, feedback bool) loopArm {
	h := newHarness(b, time.Minute, &simulator.Offline{JudgeNoise: *loopJudgeNoise})
	h.acts.Sandbox = projectingSandbox{}
	// Forty sessions back to back on a shared machine: a workflow task can wait over the
	// SDK's default second for a core without being stuck, and a false deadlock would
	// fail the run. A minute still catches a real one.
	h.env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{activities.Classifier()}, DeadlockDetectionTimeout: time.Minute})
	r := &loopRun{b: b, h: h, l: newLab(h), seed: seed, feedback: feedback, tested: map[string]bool{}, refuted: map[string]bool{}}
	req := goal(loopHypotheses)
	req.Config.Seed = seed
	res := h.runEach(req, func() {
		h.env.SetCurrentHistoryLength(r.l.events)
		h.at(time.Second, r.pilot)
		// Turns take a minute each, so every turn ends on a whole minute of the session's
		// clock; the scientist looks in between, at the half minutes, so that no update
		// lands at the instant a turn ends, where which comes first would be a race and
		// the run would not repeat.
		h.at(30*time.Second, r.tick)
	})
	if r.failed != nil {
		b.Fatalf("seed %d: %v", seed, r.failed)
	}
	if res.State != session.Completed || len(res.Top) < 3 {
		b.Fatalf("seed %d: the session ended %s (%s) with a top of %d", seed, res.State, res.StopReason, len(res.Top))
	}
	ids := make([]string, 0, loopHypotheses)
	for _, e := range query[StateView](h, QueryState, Page{Limit: 100}).Hypotheses {
		ids = append(ids, e.ID)
	}
	hs, err := h.store.Hypotheses(context.Background(), loopSession, ids)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range res.Top[:3] {
		r.arm.top3 += latentOf(b, hs[e.ID]) / 3
		if r.refuted[e.ID] { // as the results said, whatever standing the ranking shows
			r.arm.refutedInTop++
		}
	}
	r.arm.generated = map[string]draw{}
	for _, id := range ids {
		if hs[id].Origin == "generation" {
			r.arm.generated[id] = draw{hs[id].Strategy, latentOf(b, hs[id])}
		}
	}
	return r.arm
}

// sameDraws compares the generation's draws of hidden quality in the two arms, turn by
// turn: a generation turn (named for the hypothesis it makes) that both arms ran with the
// same strategy must have drawn the same quality, whatever results one of them had seen.
// Which turns there are differs between the arms once their evolution (whose parents the
// ranking picks) makes more or fewer hypotheses; it returns the turns compared.
func sameDraws(a, b map[string]draw) (int, error) {
	n := 0
	for _, id := range slices.Sorted(maps.Keys(a)) {
		if d, ok := b[id]; ok && d.strategy == a[id].strategy {
			if d.latent != a[id].latent {
				return n, fmt.Errorf("generation turn %s (%s) drew %.4f with feedback, %.4f without", id, d.strategy, a[id].latent, d.latent)
			}
			n++
		}
	}
	return n, nil
}

// draw is a generation turn's draw: its strategy and the quality drawn.
type draw struct {
	strategy string
	latent   float64
}

func latentOf(b testing.TB, h research.Hypothesis) float64 {
	if h.Latent == nil {
		b.Fatalf("%s has no hidden quality", h.ID)
	}
	return *h.Latent
}

func (r *loopRun) fail(err error) {
	if err != nil && r.failed == nil {
		r.failed = err
	}
}

// pilot adds the lab's pilot plate (a hypothesis-free run of the assay), which the
// analyst plans its analyses over.
func (r *loopRun) pilot() {
	r.addPlate(simulator.Lab(0, uint64(r.seed), simulator.LabDesign{N: loopN}).CSV, func(string) {})
}

// addPlate stores a plate's table in the session store and adds it to the session as the
// table "plates"; then calls done with its digest.
func (r *loopRun) addPlate(csv []byte, done func(digest string)) {
	rec, err := r.h.store.PutDataset(context.Background(), loopSession, "plate.csv", csv, dataset.Options{}, r.h.env.Now())
	if err != nil {
		r.fail(err)
		return
	}
	req := DatasetRequest{Table: "plates", Digest: rec.Digest, Rows: rec.Schema.Rows, Columns: len(rec.Schema.Columns)}
	r.l.send(AddDataset, req, func(_ LabAnswer, err error) {
		if err != nil {
			r.fail(fmt.Errorf("add-dataset: %w", err))
			return
		}
		done(rec.Digest)
	})
}

// tick looks at the session every minute of the workflow clock, at the half minutes: after each of the
// experimenting rounds it plans the next experiments; once the rounds are done and the
// session waits for the lab, the arm without feedback withdraws its experiments.
func (r *loopRun) tick() {
	if r.failed != nil {
		return
	}
	p := query[session.Progress](r.h, QueryProgress)
	if r.batches < loopExperiments/loopPerRound && p.Rounds >= loopFirstRound+r.batches {
		r.batches++
		r.planTop()
	}
	if st := query[Status](r.h, QueryStatus); !r.feedback && strings.HasPrefix(st.Reason, "waiting for the lab") {
		for _, id := range r.planned {
			r.l.send(WithdrawExperiment, WithdrawRequest{Experiment: id, Reason: "withheld: the benchmark's arm without feedback"}, func(_ LabAnswer, err error) { r.fail(err) })
		}
		r.planned = nil
	}
	r.h.at(time.Minute, r.tick)
}

// planTop plans, confirms and runs in the lab an experiment for each of the top-ranked
// hypotheses not yet tested (the ranking as the session shows it, standings and all).
func (r *loopRun) planTop() {
	n := 0
	for _, e := range query[StateView](r.h, QueryState, Page{Limit: 100}).Hypotheses {
		if n == loopPerRound {
			break
		}
		if r.tested[e.ID] || e.Standing == session.Refuted {
			continue
		}
		r.tested[e.ID], n = true, n+1
		r.l.send(PlanExperiment, PlanRequest{Hypothesis: e.ID, By: "ada"}, func(a LabAnswer, err error) {
			if err != nil {
				r.fail(fmt.Errorf("plan %s: %w", e.ID, err))
				return
			}
			x := a.Experiment
			r.planned = append(r.planned, x.ID)
			r.l.send(ConfirmExperiment, ConfirmExperimentRequest{Experiment: x.ID, Digest: x.Plan, By: "ada"}, func(_ LabAnswer, err error) {
				if err != nil {
					r.fail(fmt.Errorf("confirm %s: %w", x.ID, err))
					return
				}
				r.runLab(x.ID, e.ID)
			})
		})
	}
}

// runLab runs the simulated lab on the hypothesis, adds its table, and (with feedback)
// sends it as the experiment's result.
func (r *loopRun) runLab(experimentID, hypothesisID string) {
	hyp, err := r.h.store.Hypothesis(context.Background(), loopSession, hypothesisID)
	if err != nil {
		r.fail(err)
		return
	}
	lab := simulator.Lab(latentOf(r.b, hyp), uint64(r.seed)^hashString(hyp.Statement), simulator.LabDesign{N: loopN})
	r.addPlate(lab.CSV, func(digest string) {
		if !r.feedback {
			return // withheld
		}
		r.arm.results++
		r.l.send(ExperimentResult, ResultRequest{Experiment: experimentID, Data: digest, By: "ada"}, func(a LabAnswer, err error) {
			switch {
			case err != nil:
				r.fail(fmt.Errorf("result of %s: %w", experimentID, err))
			case a.Experiment.Result == nil:
				r.fail(fmt.Errorf("result of %s: no standing (%s)", experimentID, a.Experiment.Refused))
			default:
				r.arm.standings = append(r.arm.standings, a.Experiment.Result.Standing)
				r.refuted[hypothesisID] = a.Experiment.Result.Standing == session.Refuted
			}
		})
	})
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// pairedInterval is the mean of the paired differences with its 95% t-interval.
func pairedInterval(d []float64) (m, low, high float64) {
	m = mean(d)
	var ss float64
	for _, x := range d {
		ss += (x - m) * (x - m)
	}
	n := float64(len(d))
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975) * math.Sqrt(ss/(n-1)/n)
	return m, m - half, m + half
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// projectingSandbox stands in for the DuckDB child in the benchmark: it runs only the
// analyst's projection, SELECT "a" AS x, "b" AS y FROM "t", over a canonical CSV input,
// and refuses anything else, so every other step of RunAnalysis (the dataset read back
// from the store and checked against its schema, the test's input, the statistics, the
// record) is cosci's own.
type projectingSandbox struct{}

var projection = regexp.MustCompile(`^SELECT ("(?:[^"]|"")+") AS (\w+), ("(?:[^"]|"")+") AS (\w+) FROM ("(?:[^"]|"")+")$`)

func (projectingSandbox) Run(_ context.Context, req sandbox.Request) (sandbox.Result, error) {
	m := projection.FindStringSubmatch(req.Query)
	if m == nil {
		return sandbox.Result{}, fmt.Errorf("the benchmark's sandbox runs only a projection, not %q", req.Query)
	}
	unquote := func(s string) string { return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`) }
	i := slices.IndexFunc(req.Inputs, func(in sandbox.Input) bool { return in.Table == unquote(m[5]) })
	if i < 0 {
		return sandbox.Result{}, errors.New("no such table")
	}
	in := req.Inputs[i]
	rows, err := csv.NewReader(bytes.NewReader(in.Data)).ReadAll()
	if err != nil || len(rows) == 0 {
		return sandbox.Result{}, fmt.Errorf("the input does not read: %v", err)
	}
	var cols []int
	var out sandbox.Result
	for _, c := range []struct{ from, as string }{{unquote(m[1]), m[2]}, {unquote(m[3]), m[4]}} {
		j := slices.Index(rows[0], c.from)
		if j < 0 {
			return sandbox.Result{}, fmt.Errorf("no column %q", c.from)
		}
		cols = append(cols, j)
		out.Columns = append(out.Columns, sandbox.Column{Name: c.as, Type: in.Columns[j].Type})
	}
	for _, row := range rows[1:] {
		var vs []any
		for k, j := range cols {
			v := any(row[j])
			switch {
			case row[j] == "":
				v = nil
			case out.Columns[k].Type == "DOUBLE" || out.Columns[k].Type == "BIGINT":
				f, err := strconv.ParseFloat(row[j], 64)
				if err != nil {
					return sandbox.Result{}, err
				}
				v = f
			}
			vs = append(vs, v)
		}
		out.Rows = append(out.Rows, vs)
	}
	return out, nil
}

var _ activities.Sandbox = projectingSandbox{}
