package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

func TestParseLab(t *testing.T) {
	tests := []struct {
		group string
		args  []string
		want  string // "" accepted; else a word of the refusal
		check func(labFlags) bool
	}{
		{"data", []string{"add", "--session", "s1", "Plate reads (v2).csv"}, "", func(f labFlags) bool { return f.table == "Plate_reads_v2" && f.file == "Plate reads (v2).csv" }},
		{"data", []string{"add", "2024.csv", "--session", "s1", "--table", "plates"}, "", func(f labFlags) bool { return f.table == "plates" && f.maxMB == 512 }},
		{"data", []string{"add", "--session", "s1", "2024.csv"}, "", func(f labFlags) bool { return f.table == "t_2024" }},
		{"data", []string{"add", "--session", "s1"}, "one FILE", nil},
		{"data", []string{"add", "x.csv"}, "--session", nil},
		{"data", []string{"add", "--session", "s1", "x.csv", "--table", "1 bad"}, "--table", nil},
		{"data", []string{"add", "--session", "s1", "x.csv", "--max-dataset-mb", "0"}, "--max-dataset-mb", nil},
		{"data", []string{"remove", "--session", "s1"}, "needs one session ID", nil},
		{"experiment", []string{"plan", "--session", "s1", "--hypothesis", "h-0003"}, "", func(f labFlags) bool { return f.hypothesis == "h-0003" }},
		{"experiment", []string{"plan", "--session", "s1"}, "--hypothesis", nil},
		{"experiment", []string{"confirm", "--session", "s1", "--experiment", "x-0001"}, "--digest", nil},
		{"experiment", []string{"result", "--session", "s1", "--experiment", "x-0001"}, "one FILE", nil},
		{"experiment", []string{"result", "--session", "s1", "--experiment", "x-0001", "r.csv"}, "", func(f labFlags) bool { return f.table == "" && f.file == "r.csv" }},
		{"experiment", []string{"withdraw", "--session", "s1", "--experiment", "x-0001"}, "--reason", nil},
		{"experiment", []string{"withdraw", "--session", "s1", "--experiment", "x-0001", "--reason", "a failed assay", "--experiment-off"}, "", func(f labFlags) bool { return f.callOff }},
		{"experiment", []string{"list", "--session", "s1", "extra"}, "no arguments", nil},
	}
	for _, tt := range tests {
		quiet(t)
		f, err := parseLab(tt.group, tt.args)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %q: %v", tt.group, tt.args, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %q: err %v, want one naming %q", tt.group, tt.args, err, tt.want)
		case tt.check != nil && !tt.check(f):
			t.Errorf("%s %q: read %+v", tt.group, tt.args, f)
		}
	}
}

// TestStoreTable: a table R wrote is stored by the digest of its bytes and announced with
// the rows and columns R wrote; a file R wrote in Latin-1, and a file over the cap, are
// refused with the reason and nothing is stored.
func TestStoreTable(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lab := filepath.Join("..", "internal", "dataset", "testdata", "lab")
	var truth struct {
		Rows    int               `json:"rows"`
		Columns []json.RawMessage `json:"columns"`
	}
	raw, err := os.ReadFile(filepath.Join(lab, "r-iris.truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	iris := filepath.Join(lab, "r-iris.csv")
	bytes, _ := os.ReadFile(iris)
	sum := sha256.Sum256(bytes)
	req, rec, err := storeTable(ctx, st, labFlags{session: "s1", file: iris, table: "iris", maxMB: 512})
	if err != nil {
		t.Fatal(err)
	}
	if req.Digest != hex.EncodeToString(sum[:]) || req.Rows != truth.Rows || req.Columns != len(truth.Columns) || req.Table != "iris" {
		t.Errorf("announced %+v; want the file's sha256, %d rows, %d columns", req, truth.Rows, len(truth.Columns))
	}
	if got, err := st.Dataset(ctx, "s1", req.Digest); err != nil || got.Digest != req.Digest {
		t.Errorf("stored: %+v, %v", got, err)
	}
	if d := describeTable(req, rec); !strings.Contains(d, "150 rows") || !strings.Contains(d, "Sepal_Length") {
		t.Errorf("described as:\n%s", d)
	}

	big := filepath.Join(t.TempDir(), "big.csv")
	if err := os.WriteFile(big, []byte(strings.Repeat(string(bytes), 1+(1<<20)/len(bytes))), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []labFlags{
		{session: "s2", file: filepath.Join(lab, "r-lab-latin1.csv"), table: "chicks", maxMB: 512},
		{session: "s2", file: big, table: "big", maxMB: 1},
	} {
		_, _, err := storeTable(ctx, st, f)
		if err == nil || !strings.HasPrefix(err.Error(), "refused: ") {
			t.Errorf("%s: %v; want refused with the reason", f.file, err)
		}
	}
	if left, err := st.Datasets(ctx, "s2"); err != nil || len(left) != 0 {
		t.Errorf("refused files left %d datasets (%v)", len(left), err)
	}
}

func TestRenderLab(t *testing.T) {
	p := experiment.Plan{
		Hypothesis: "h-0003",
		Prediction: experiment.Prediction{Text: "treated plates read higher", Direction: experiment.Greater, MinEffect: 0.05},
		Analysis:   experiment.Analysis{Query: "SELECT arm AS grp, value FROM plates", Test: "welch-t", Columns: []string{"grp", "value"}},
		Expected:   []experiment.Table{{Name: "plates", Columns: []string{"arm", "value"}}},
	}
	e := workflows.LabExperiment{Experiment: experiment.New("x-0001", "h-0003", p.Digest()), Spec: p}
	out := renderProposal("s1", e)
	for _, want := range []string{"SELECT arm AS grp, value FROM plates", "welch-t on grp, value", "digest:     " + p.Digest(),
		"starter experiment confirm --session s1 --experiment x-0001 --digest " + p.Digest()} {
		if !strings.Contains(out, want) {
			t.Errorf("the proposal does not show %q:\n%s", want, out)
		}
	}
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	if err := e.Confirm(experiment.Mark{Event: 41, Time: at}); err != nil {
		t.Fatal(err)
	}
	e.ConfirmedAt, e.ConfirmUpdate = workflows.Where{Run: "run-1", Event: 41}, "u-7"
	_ = e.Wait(at)
	_ = e.Receive(experiment.Arrival{Data: "d1", Arrived: experiment.Mark{Event: 90, Time: at.Add(21 * 24 * time.Hour)}})
	_ = e.Analyse(experiment.Outcome{Test: "welch-t", Effect: -0.2, Low: -0.3, High: -0.1, P: 0.001, N: 40}, experiment.Verdict{Standing: session.Refuted})
	e.Change = &experiment.Change{Hypothesis: "h-0003", After: session.Refuted, Moves: []experiment.Move{{Hypothesis: "h-0003", From: 1, To: 9}}}
	list := renderExperiments(workflows.ExperimentsView{Experiments: []workflows.LabExperiment{e}, Why: "waiting for the lab: 1 experiment, since 1 Nov 2026"})
	for _, want := range []string{"waiting for the lab", "pre-registered 2026-11-01T09:00:00Z at event 41 of run run-1 (update u-7)",
		"refuted, effect -0.2, 95% CI [-0.3, -0.1]", "changed: h-0003 untested -> refuted; h-0003 #1 -> #9"} {
		if !strings.Contains(list, want) {
			t.Errorf("the list does not show %q:\n%s", want, list)
		}
	}
}

// TestExpectedTable: a result is added under the table the plan's query reads, so the
// query reads the result and not an earlier table of the session.
func TestExpectedTable(t *testing.T) {
	one := []experiment.Table{{Name: "assay"}}
	two := []experiment.Table{{Name: "assay"}, {Name: "plates"}}
	tests := []struct {
		expected []experiment.Table
		table    string
		want     string // the table, or a word of the refusal
		refused  bool
	}{
		{one, "", "assay", false},
		{one, "ASSAY", "assay", false},
		{one, "result", "must be one of them", true},
		{two, "", "say which", true},
		{two, "plates", "plates", false},
		{nil, "", "r", false},
		{nil, "mine", "mine", false},
	}
	for _, tt := range tests {
		got, err := expectedTable(experiment.Plan{Expected: tt.expected}, labFlags{experiment: "x-0001", table: tt.table, file: "r.csv"})
		switch {
		case tt.refused && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("expected %v, --table %q: %q, %v; want a refusal saying %q", tt.expected, tt.table, got, err, tt.want)
		case !tt.refused && (err != nil || got != tt.want):
			t.Errorf("expected %v, --table %q: %q, %v; want %q", tt.expected, tt.table, got, err, tt.want)
		}
	}
}
