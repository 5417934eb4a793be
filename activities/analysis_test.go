package activities

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/sandbox"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// The sandbox's child binary, built once for the tests that run analyses, so that they
// need nothing built beforehand (go build's cache makes it seconds after the first link).
var (
	childOnce sync.Once
	childPath string
	childErr  error
)

func sandboxChild(t testing.TB) sandbox.Runner {
	t.Helper()
	childOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cosci-activities-sandbox-")
		if err != nil {
			childErr = err
			return
		}
		childPath = filepath.Join(dir, "cosci-sandbox")
		out, err := exec.Command("go", "build", "-o", childPath, "github.com/cosci-dev/cosci/sandbox").CombinedOutput()
		if err != nil {
			childErr = fmt.Errorf("building the sandbox's child: %v\n%s", err, out)
		}
	})
	if childErr != nil {
		t.Fatal(childErr)
	}
	return sandbox.Runner{Binary: childPath}
}

// noSandbox fails every run: a re-run that reaches the sandbox fails.
type noSandbox struct{}

func (noSandbox) Run(context.Context, sandbox.Request) (sandbox.Result, error) {
	return sandbox.Result{}, errors.New("the sandbox was run again")
}

// labPlan is a Welch test of the simulated lab's response, treated against control.
func labPlan() experiment.Plan {
	return experiment.Plan{
		Hypothesis: "h-0001",
		Prediction: experiment.Prediction{Text: "The treated arm responds more than the control arm.", Direction: experiment.Greater},
		Analysis: experiment.Analysis{
			Query: "SELECT arm = 'treated' AS treated, response AS value FROM result",
			Test:  "welch-t", Columns: []string{"treated", "value"},
		},
		Expected: []experiment.Table{{Name: "result", Columns: []string{"sample_id", "arm", "batch", "response"}}},
	}
}

// labData is the simulated lab's table for a hypothesis of quality 1, and the mean
// difference treated minus control read from it by encoding/csv: the truth the analysis
// must find, taken from the file as its maker wrote it.
func labData(t *testing.T) ([]byte, float64) {
	lab := simulator.Lab(1, 42, simulator.LabDesign{N: 30})
	rows, err := csv.NewReader(bytes.NewReader(lab.CSV)).ReadAll()
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
	return lab.CSV, sum[1]/float64(n[1]) - sum[0]/float64(n[0])
}

func runAnalysisEnv(t *testing.T) (*Activities, func(RunAnalysisInput) (RunAnalysisResult, error), DatasetRef) {
	t.Helper()
	env, a := newActivities(t, &simulator.Offline{})
	a.Sandbox = sandboxChild(t)
	data, _ := labData(t)
	rec, err := a.Store.PutDataset(t.Context(), "s-1", "plate.csv", data, dataset.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	runIt := func(in RunAnalysisInput) (RunAnalysisResult, error) {
		var res RunAnalysisResult
		err := run(t, env, a.RunAnalysis, in, &res)
		return res, err
	}
	return a, runIt, DatasetRef{Table: "result", Digest: rec.Digest}
}

func analysisInput(id string, plan experiment.Plan, ds ...DatasetRef) RunAnalysisInput {
	return RunAnalysisInput{SessionID: "s-1", ID: id, Plan: plan, Datasets: ds, Kind: experiment.PreRegistered,
		PlannedAt: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), Experiment: "e-1"}
}

// TestRunAnalysisSameNumbers: the same analysis on the same data gives the same numbers
// in two fresh stores, the effect is the treated mean minus the control mean as the file
// holds them, the record keeps what the run read and found, and a re-run of the id
// returns the record, whatever plan it is given.
func TestRunAnalysisSameNumbers(t *testing.T) {
	_, truth := labData(t)
	var outcomes []experiment.Outcome
	for range 2 {
		a, runIt, ds := runAnalysisEnv(t)
		res, err := runIt(analysisInput("an-1", labPlan(), ds))
		if err != nil {
			t.Fatal(err)
		}
		if res.Refused != "" || res.ID != "an-1" {
			t.Fatalf("result %+v", res)
		}
		outcomes = append(outcomes, res.Outcome)
		rec, err := a.Store.Analysis(t.Context(), "s-1", "an-1")
		if err != nil {
			t.Fatal(err)
		}
		if rec.Stats == nil || rec.Stats.P != res.Outcome.P || rec.RowCount != 60 || len(rec.Rows) != 20 || !rec.RowsCut ||
			rec.Inputs[0].Digest != ds.Digest || rec.Plan != labPlan().Digest() || rec.Kind != "pre-registered" ||
			rec.PlannedAt != "2026-11-01T09:00:00Z" || rec.Ran == "" || rec.Experiment != "e-1" {
			t.Errorf("record %+v", rec)
		}
		// The re-run neither runs the sandbox nor the test again: it returns the record.
		a.Sandbox = noSandbox{}
		other := labPlan()
		other.Analysis.Query = "SELECT arm = 'control' AS treated, response AS value FROM result"
		again, err := runIt(analysisInput("an-1", other, ds))
		if err != nil || again != res {
			t.Errorf("re-run of an-1: %+v, %v; want %+v", again, err, res)
		}
	}
	o := outcomes[0]
	if outcomes[1] != o {
		t.Errorf("two runs on the same data: %+v and %+v", outcomes[0], outcomes[1])
	}
	if math.Abs(o.Effect-truth) > 1e-9 || o.N != 60 || !(o.Low < o.Effect && o.Effect < o.High) || o.Test != "welch-t" {
		t.Errorf("outcome %+v; want the effect %g (treated minus control) of 60 samples", o, truth)
	}
}

// TestRunAnalysisRefused: a query the sandbox refuses, a result the test cannot read, a
// dataset the session lacks and one whose bytes no longer match come back Refused with
// the reason, each with a record saying so.
func TestRunAnalysisRefused(t *testing.T) {
	a, runIt, ds := runAnalysisEnv(t)
	plan := func(query string) experiment.Plan {
		p := labPlan()
		p.Analysis.Query = query
		return p
	}
	cases := []struct {
		id, why string
		plan    experiment.Plan
		ds      DatasetRef
	}{
		{"file", "refused the query (file)", plan("SELECT * FROM read_csv('/etc/passwd')"), ds},
		{"three-groups", `has 3 groups`, plan("SELECT batch AS treated, response AS value FROM result"), ds},
		{"no-column", `no column "treated"`, plan("SELECT arm, response AS value FROM result"), ds},
		{"missing", "has no dataset", labPlan(), DatasetRef{Table: "result", Digest: strings.Repeat("0", 64)}},
	}
	for _, c := range cases {
		res, err := runIt(analysisInput(c.id, c.plan, c.ds))
		if err != nil || !strings.Contains(res.Refused, c.why) || res.Outcome != (experiment.Outcome{}) {
			t.Errorf("%s: %+v, %v; want refused for %q", c.id, res, err, c.why)
			continue
		}
		rec, err := a.Store.Analysis(t.Context(), "s-1", c.id)
		if err != nil || rec.Refused != res.Refused || rec.Stats != nil {
			t.Errorf("%s: record %+v, %v", c.id, rec, err)
		}
	}
	// The stored bytes changed: the dataset no longer matches its digest.
	data, _ := labData(t)
	forged := bytes.Replace(data, []byte("control"), []byte("contrOl"), 1)
	if err := a.Store.Backend().Put(t.Context(), "s-1", "datasets/"+ds.Digest+".data", forged, false); err != nil {
		t.Fatal(err)
	}
	res, err := runIt(analysisInput("forged", labPlan(), ds))
	if err != nil || !strings.Contains(res.Refused, "does not match its digest") {
		t.Errorf("a forged dataset: %+v, %v", res, err)
	}
}

// analysing wraps the offline simulator: it counts the analyst's turns, and may answer
// with a plan no validation passes (an odds ratio's smallest effect below 1).
type analysing struct {
	simulator.Offline
	calls    int
	badRatio bool
}

func (m *analysing) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, m, q)
}

func (m *analysing) Analyse(ctx context.Context, req research.AnalysisRequest) (research.AnalysisAnswer, research.Usage, error) {
	m.calls++
	ans, u, err := m.Offline.Analyse(ctx, req)
	if m.badRatio {
		ans.Test, ans.MinEffect = "fisher-exact", 0.5
	}
	return ans, u, err
}

// TestProposeAnalysis: offline, the analyst proposes a valid plan for the lab's table
// with its digest, once per turn id (a re-run does not ask the model again), and the plan
// runs: the whole path of an analysis with no model. A plan that fails validation is the
// turn's malformed answer, not retried.
func TestProposeAnalysis(t *testing.T) {
	m := &analysing{}
	env, a := newActivities(t, m)
	a.Sandbox = sandboxChild(t)
	data, _ := labData(t)
	rec, err := a.Store.PutDataset(t.Context(), "s-1", "plate.csv", data, dataset.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h := research.Hypothesis{ID: "h-0001", Title: "The treatment raises the response", Statement: "The treatment raises the response.", Origin: "scientist", Goal: testGoal}
	if err := a.Store.PutHypothesis(t.Context(), "s-1", h); err != nil {
		t.Fatal(err)
	}
	in := ProposeAnalysisInput{Turn: turnOf("analyst-1"), HypothesisID: "h-0001", Datasets: []DatasetRef{{Table: "result", Digest: rec.Digest}}}
	var first, again ProposeAnalysisResult
	must(t, run(t, env, a.ProposeAnalysis, in, &first))
	must(t, run(t, env, a.ProposeAnalysis, in, &again))
	p := first.Plan
	if m.calls != 1 || first.Digest != p.Digest() || again.Digest != first.Digest || p.Validate() != nil {
		t.Fatalf("plans %+v and %+v (%d model calls)", first, again, m.calls)
	}
	if p.Analysis.Test != "welch-t" || p.Hypothesis != "h-0001" || p.Expected[0].Name != "result" || !strings.Contains(p.Analysis.Query, `"response"`) {
		t.Errorf("plan %+v", p)
	}
	turn, ok, _ := a.Store.Turn(t.Context(), "s-1", "analyst-1")
	if !ok || turn.Agent != AgentAnalyst || !strings.Contains(turn.Prompt, `<dataset table="result" file="plate.csv">`) {
		t.Errorf("turn record %+v", turn)
	}
	var res RunAnalysisResult
	must(t, run(t, env, a.RunAnalysis, analysisInput("an-offline", p, in.Datasets[0]), &res))
	if res.Refused != "" || res.Outcome.N != 60 {
		t.Errorf("the proposed plan ran to %+v", res)
	}

	missing := in
	missing.TurnID, missing.Datasets = "analyst-missing", []DatasetRef{{Table: "result", Digest: strings.Repeat("0", 64)}}
	err = run(t, env, a.ProposeAnalysis, missing, nil)
	if typ, retry := errorType(err); typ != ErrInvalidInput || retry || !strings.Contains(err.Error(), "no dataset 000000000000") {
		t.Errorf("a dataset the session lacks: %v (%s, retryable %v)", err, typ, retry)
	}

	m.badRatio = true
	in.TurnID = "analyst-2"
	err = run(t, env, a.ProposeAnalysis, in, nil)
	if typ, retry := errorType(err); typ != ErrMalformedAnswer || retry || !strings.Contains(err.Error(), "ratio above 1") {
		t.Errorf("an invalid plan: %v (%s, retryable %v)", err, typ, retry)
	}
}

// TestOfflineAnalysesOfTheLab: for each of the simulated lab's designs, the offline
// analyst's plan runs on the lab's table and finds the effect the lab drew on the side
// it predicts when the effect is large: the offline path fits the lab's tables. And a
// table in JSON lines, which the sandbox reads itself, runs as its CSV does.
func TestOfflineAnalysesOfTheLab(t *testing.T) {
	env, a := newActivities(t, &simulator.Offline{})
	a.Sandbox = sandboxChild(t)
	h := research.Hypothesis{ID: "h-0001", Title: "The treatment raises the response", Statement: "The treatment raises the response.", Origin: "scientist", Goal: testGoal}
	if err := a.Store.PutHypothesis(t.Context(), "s-1", h); err != nil {
		t.Fatal(err)
	}
	designs := []struct {
		design simulator.LabDesign
		n      int // observations
	}{{simulator.LabDesign{N: 40}, 80}, {simulator.LabDesign{Pairs: true, N: 80}, 80}}
	for i, d := range designs {
		design := d.design
		lab := simulator.Lab(3, 9, design) // quality 3: an effect of about 1.5 standard deviations
		rec, err := a.Store.PutDataset(t.Context(), "s-1", "lab.csv", lab.CSV, dataset.Options{}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		ds := []DatasetRef{{Table: "result", Digest: rec.Digest}}
		var proposed ProposeAnalysisResult
		must(t, run(t, env, a.ProposeAnalysis, ProposeAnalysisInput{Turn: turnOf(fmt.Sprintf("analyst-%d", i)), HypothesisID: "h-0001", Datasets: ds}, &proposed))
		var res RunAnalysisResult
		must(t, run(t, env, a.RunAnalysis, analysisInput(fmt.Sprintf("an-%d", i), proposed.Plan, ds...), &res))
		v, err := experiment.Judge(proposed.Plan, res.Outcome)
		if err != nil || v.Standing != "supported" || res.Outcome.N != d.n {
			t.Errorf("pairs %v: %s on %+v: %+v, %v (the lab's effect %.2f)", design.Pairs, proposed.Plan.Analysis.Test, res, v, err, lab.Effect)
		}
	}
	var lines bytes.Buffer
	for i := range 20 {
		fmt.Fprintf(&lines, `{"arm": %q, "response": %g}`+"\n", map[bool]string{true: "treated", false: "control"}[i%2 == 1], 10+float64(i%2)*5+float64(i%3))
	}
	rec, err := a.Store.PutDataset(t.Context(), "s-1", "lab.jsonl", lines.Bytes(), dataset.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p := labPlan()
	var res RunAnalysisResult
	must(t, run(t, env, a.RunAnalysis, analysisInput("an-jsonl", p, DatasetRef{Table: "result", Digest: rec.Digest}), &res))
	if res.Refused != "" || res.Outcome.N != 20 || math.Abs(res.Outcome.Effect-5) > 0.5 {
		t.Errorf("JSON lines: %+v", res)
	}
}
