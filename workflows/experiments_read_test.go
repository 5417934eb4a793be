package workflows

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/sandbox"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// groupSandbox stands in for DuckDB in a workflow test: it answers the simulated analyst's
// group query (SELECT g AS grp, v AS value FROM t) by reading the canonical CSV it is
// given with encoding/csv, so RunAnalysis runs whole (the stored bytes, the test, the
// record and its rendering in the audit trail) with no child built.
type groupSandbox struct{}

var groupQuery = regexp.MustCompile(`^SELECT "?(\w+)"? AS grp, "?(\w+)"? AS value FROM "?(\w+)"?$`)

func (groupSandbox) Run(_ context.Context, req sandbox.Request) (sandbox.Result, error) {
	m := groupQuery.FindStringSubmatch(req.Query)
	if m == nil {
		return sandbox.Result{}, fmt.Errorf("groupSandbox: no answer to %q", req.Query)
	}
	for _, in := range req.Inputs {
		if in.Table != m[3] {
			continue
		}
		rows, err := csv.NewReader(bytes.NewReader(in.Data)).ReadAll()
		if err != nil {
			return sandbox.Result{}, err
		}
		g, v := slices.Index(rows[0], m[1]), slices.Index(rows[0], m[2])
		res := sandbox.Result{Columns: []sandbox.Column{{Name: "grp", Type: "VARCHAR"}, {Name: "value", Type: "DOUBLE"}}}
		for _, r := range rows[1:] {
			x, err := strconv.ParseFloat(r[v], 64)
			if err != nil {
				return sandbox.Result{}, err
			}
			res.Rows = append(res.Rows, []any{r[g], x})
		}
		return res, nil
	}
	return sandbox.Result{}, fmt.Errorf("groupSandbox: no table %s", m[3])
}

// treatedMinusControl is the mean difference of a simulated lab's table, read by
// encoding/csv from the file as the lab wrote it: the truth an analysis must find.
func treatedMinusControl(t *testing.T, data []byte) float64 {
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var sum [2]float64
	var n [2]int
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		if r[1] == "treated" {
			i = 1
		}
		sum[i] += v
		n[i]++
	}
	return sum[1]/float64(n[1]) - sum[0]/float64(n[0])
}

// carelessLab is the offline model, except that it changes the effect's number in its
// quote of the lab's result for the hypotheses with an even number, as a careless model
// would; it notes which it changed.
type carelessLab struct {
	simulator.Offline
	from, to string
	mu       sync.Mutex
	altered  map[string]bool
}

func (m *carelessLab) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, m, q)
}

func (m *carelessLab) Generate(ctx context.Context, req research.GenerateRequest) (research.Hypothesis, research.Usage, error) {
	h, u, err := m.Offline.Generate(ctx, req)
	n, _ := strconv.Atoi(strings.TrimPrefix(req.HypothesisID, "h-"))
	for i, r := range h.References {
		if strings.HasPrefix(r.ID, "analysis:") && n%2 == 0 && strings.Contains(r.Quote, m.from) {
			h.References[i].Quote = strings.Replace(r.Quote, m.from, m.to, 1)
			m.mu.Lock()
			m.altered[req.HypothesisID] = true
			m.mu.Unlock()
		}
	}
	return h, u, err
}

// TestNextRoundsCiteTheLab: a session with the lab's table plans an experiment after its
// first round, confirms it, and gets its result; the registered analysis runs (the real
// activity, its query answered without DuckDB) and its record goes into the audit trail.
// The rounds after it give the generation the result, and its hypotheses cite
// analysis:<id>: each quote of the effect the data give (read from the file, not from the
// record) is verified by the citation check against the record, each planted with the
// effect changed is contradicted, and the reviews' checks say the same. Generations
// before the result were given none, and the meta-review after it names its standing.
func TestNextRoundsCiteTheLab(t *testing.T) {
	const sid = "default-test-workflow-id"
	pilot := simulator.Lab(0.5, 1, simulator.LabDesign{N: 12}).CSV
	result := simulator.Lab(0.5, 2, simulator.LabDesign{N: 30}).CSV
	effect := treatedMinusControl(t, result)
	m := &carelessLab{from: fmt.Sprintf("%.4g", effect), to: fmt.Sprintf("%.4g", effect+1), altered: map[string]bool{}}
	h := newHarness(t, time.Minute, m)
	h.acts.Sandbox = groupSandbox{}
	add := func(data []byte) DatasetRequest {
		rec, err := h.store.PutDataset(t.Context(), sid, "plate.csv", data, dataset.Options{}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return DatasetRequest{Table: "result", Digest: rec.Digest, Rows: rec.Schema.Rows, Columns: len(rec.Schema.Columns)}
	}
	pilotReq, resultReq := add(pilot), add(result)
	l := newLab(h)
	h.at(30*time.Second, func() { l.send(AddDataset, pilotReq, func(_ LabAnswer, err error) { must(t, "add the pilot", err) }) })
	h.at(4*time.Minute, func() {
		hyp := query[StateView](h, QueryState, Page{Limit: 1}).Hypotheses[0].ID
		l.send(PlanExperiment, PlanRequest{Hypothesis: hyp, By: "ada"}, func(a LabAnswer, err error) {
			must(t, "plan", err)
			l.send(ConfirmExperiment, ConfirmExperimentRequest{Experiment: a.Experiment.ID, Digest: a.Experiment.Plan}, func(_ LabAnswer, err error) {
				must(t, "confirm", err)
				l.send(AddDataset, resultReq, func(_ LabAnswer, err error) {
					must(t, "add the result", err)
					l.send(ExperimentResult, ResultRequest{Experiment: a.Experiment.ID, Data: resultReq.Digest}, func(a LabAnswer, err error) {
						must(t, "result", err)
						if err == nil && (a.Experiment.Result == nil || a.Experiment.Result.Standing == "") {
							t.Errorf("the result gave no standing: %s", a.Experiment.Refused)
						}
					})
				})
			})
		})
	})
	res := h.runEach(goal(12), func() { h.env.SetCurrentHistoryLength(l.events) })
	exps := query[ExperimentsView](h, QueryExperiments).Experiments
	if len(exps) != 1 || len(exps[0].Analyses) != 1 || exps[0].Analyses[0].Source == "" {
		t.Fatalf("experiments %+v; want one, its analysis recorded with its source", exps)
	}
	run := exps[0].Analyses[0]
	want := activities.LabResult{Analysis: run.Run, Hypothesis: exps[0].Hypothesis, Experiment: exps[0].ID, Source: run.Source,
		Kind: "pre-registered", Standing: string(exps[0].Result.Standing), Outcome: run.Outcome}
	tr, err := h.store.ToolRecord(t.Context(), res.SessionID, run.Source)
	if err != nil || tr.Tool != activities.AnalysisTool {
		t.Fatalf("the analysis's record in the audit trail: %+v, %v", tr, err)
	}
	records := map[string]string{run.Source: tr.Content}

	var given, before int
	verified, contradicted := 0, 0
	for _, s := range h.starts {
		if s.activity != "Generate" {
			continue
		}
		if len(s.input.Context.Lab) == 0 {
			before++
			continue
		}
		given++
		if !slices.Equal(s.input.Context.Lab, []activities.LabResult{want}) {
			t.Errorf("%s was given %+v; want %+v", s.input.HypothesisID, s.input.Context.Lab, want)
		}
		hyp, err := h.store.Hypothesis(t.Context(), res.SessionID, s.input.HypothesisID)
		if err != nil {
			continue // a turn the session's end cut short
		}
		i := slices.IndexFunc(hyp.References, func(r research.Reference) bool { return r.ID == citation.ParseID("analysis:"+run.Run).String() })
		if i < 0 || hyp.References[i].Source != run.Source {
			t.Errorf("%s cites %+v; want analysis:%s resolved to its record", hyp.ID, hyp.References, run.Run)
			continue
		}
		verdict := citation.Check(hyp.References[i:i+1], records)[0].Check.Verdict
		wantVerdict := research.CitationVerified
		if m.altered[hyp.ID] {
			wantVerdict = research.CitationContradicted
		} else if !strings.Contains(hyp.References[i].Quote, m.from) {
			t.Errorf("%s quotes %q; want the effect the data give, %s", hyp.ID, hyp.References[i].Quote, m.from)
		}
		if verdict != wantVerdict {
			t.Errorf("%s's quote %q is %s; want %s", hyp.ID, hyp.References[i].Quote, verdict, wantVerdict)
		}
		switch verdict {
		case research.CitationVerified:
			verified++
		case research.CitationContradicted:
			contradicted++
		}
		reviews, err := h.store.Reviews(t.Context(), res.SessionID, hyp.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reviews {
			j := slices.IndexFunc(r.Citations, func(c research.CitationCheck) bool { return citation.SameID(c.ID, hyp.References[i].ID) })
			if j < 0 || r.Citations[j].Verdict != wantVerdict {
				t.Errorf("%s's %s review checks its analysis citation as %+v; want %s", hyp.ID, r.Type, r.Citations, wantVerdict)
			}
		}
	}
	named := false
	for round := 1; round <= 20; round++ { // more rounds than a session of 12 hypotheses runs
		if mr, err := h.store.MetaReview(t.Context(), res.SessionID, round); err == nil {
			named = named || strings.Contains(mr.Feedback, "analysis:"+run.Run+" left hypothesis "+exps[0].Hypothesis)
		}
	}
	if !named {
		t.Error("no meta-review after the result names it")
	}
	if before == 0 || given == 0 || verified == 0 || contradicted == 0 {
		t.Errorf("generations: %d before the result, %d given it; citations %d verified, %d contradicted; want some of each", before, given, verified, contradicted)
	}
}

func must(t *testing.T, what string, err error) {
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// TestLabResults: what the next rounds are given of the session's experiments: the
// analyses of the results that stand, in the order they ran, labelled with their kind
// (the pre-registered one with the standing its result gave), the latest maxLabRead;
// never a withdrawn result's or a withdrawn experiment's, a refused analysis, one with
// no record, or a run on data other than the standing result's.
func TestLabResults(t *testing.T) {
	exp := func(id, hyp string, state experiment.State, result *experiment.Result, runs ...string) LabExperiment {
		e := LabExperiment{Experiment: experiment.Experiment{ID: id, Hypothesis: hyp, State: state, Result: result}}
		for i, r := range runs { // "kind/data/source/refused", ran in the order given
			f := strings.Split(r, "/")
			run := experiment.Run{ID: fmt.Sprintf("%s-run-%d", id, i+1), Data: f[1], Ran: experiment.Mark{Event: int64(100*len(id) + i)}}
			e.Runs = append(e.Runs, run)
			e.Labels = append(e.Labels, experiment.Label{Run: run, Kind: experiment.Kind(f[0])})
			e.Analyses = append(e.Analyses, RunAnalysis{Run: run.ID, Source: f[2], Refused: f[3] == "refused", Outcome: experiment.Outcome{Effect: float64(i)}})
		}
		return e
	}
	stands := func(data string) *experiment.Result {
		return &experiment.Result{Data: data, Standing: session.Supported}
	}
	ids := func(rs []activities.LabResult) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Analysis+":"+r.Kind+":"+r.Standing)
		}
		return out
	}
	cases := []struct {
		name string
		exps []LabExperiment
		want []string
	}{
		{"none", nil, nil},
		{"pre-registered and exploratory", []LabExperiment{exp("x-1", "h-1", experiment.Analysed, stands("d1"),
			"pre-registered/d1/s1/", "exploratory/d1/s2/")}, []string{"x-1-run-1:pre-registered:supported", "x-1-run-2:exploratory:"}},
		{"refused, no record, other data", []LabExperiment{exp("x-1", "h-1", experiment.Analysed, stands("d1"),
			"exploratory/d0/s0/", "pre-registered/d1/s1/refused", "exploratory/d1//", "exploratory/d1/s3/")}, []string{"x-1-run-4:exploratory:"}},
		{"withdrawn result", []LabExperiment{exp("x-1", "h-1", experiment.Waiting, nil, "pre-registered/d1/s1/")}, nil},
		{"result withdrawn but kept", []LabExperiment{exp("x-1", "h-1", experiment.Analysed, &experiment.Result{Data: "d1", Standing: session.Refuted, Withdrawal: "failed assay"}, "pre-registered/d1/s1/")}, nil},
		{"withdrawn experiment", []LabExperiment{exp("x-1", "h-1", experiment.Withdrawn, stands("d1"), "pre-registered/d1/s1/")}, nil},
		{"the latest, in the order they ran", []LabExperiment{
			exp("x-22", "h-2", experiment.Analysed, stands("d2"), "pre-registered/d2/s/", "exploratory/d2/s/", "exploratory/d2/s/", "exploratory/d2/s/"),
			exp("x-1", "h-1", experiment.Analysed, stands("d1"), "pre-registered/d1/s/", "exploratory/d1/s/", "exploratory/d1/s/"),
		}, []string{"x-1-run-2:exploratory:", "x-1-run-3:exploratory:", "x-22-run-1:pre-registered:supported", "x-22-run-2:exploratory:", "x-22-run-3:exploratory:", "x-22-run-4:exploratory:"}},
	}
	for _, c := range cases {
		s := &supervisor{}
		s.Experiments = c.exps
		if got := ids(s.labResults()); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v; want %v", c.name, got, c.want)
		}
	}
}
