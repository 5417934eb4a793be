package workflows

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/sandbox"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// labSession is the session id of a harness's first run.
const labSession = "default-test-workflow-id"

// countedBox is groupSandbox (experiments_read_test.go: the simulated analyst's group
// query answered from the canonical CSV, with no DuckDB child) that counts its runs.
type countedBox struct {
	mu   sync.Mutex
	runs int
}

func (b *countedBox) Run(ctx context.Context, req sandbox.Request) (sandbox.Result, error) {
	b.mu.Lock()
	b.runs++
	b.mu.Unlock()
	return groupSandbox{}.Run(ctx, req)
}

// badQuery is the offline model with one generation's lab call turned into a write:
// the sandbox's guard refuses it, and the turn must answer all the same.
type badQuery struct {
	*simulator.Offline
	hypothesis string
}

func (m badQuery) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, m, q)
}

func (m badQuery) GenerateStep(ctx context.Context, req research.GenerateRequest) (research.Step[research.Hypothesis], research.Usage, error) {
	st, u, err := m.Offline.GenerateStep(ctx, req)
	for i, c := range st.Calls {
		if c.Name == activities.LabTool && req.HypothesisID == m.hypothesis {
			st.Calls[i].Arguments = json.RawMessage(`{"query": "DELETE FROM plates", "test": "welch-t", "columns": ["grp", "value"]}`)
		}
	}
	return st, u, err
}

// labHarness is a harness whose session holds the simulated lab's plate, stored and
// added as table "plates" before its first round's generation; version sets the lab
// tool's version (workflow.DefaultVersion: a run from before it).
func labHarness(t *testing.T, model activities.Model, version workflow.Version) (*harness, *countedBox) {
	t.Helper()
	h := newHarness(t, time.Minute, model)
	lab := simulator.Lab(1, 7, simulator.LabDesign{N: 20})
	rec, err := h.store.PutDataset(t.Context(), labSession, "plate.csv", lab.CSV, dataset.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	box := &countedBox{}
	h.acts.Sandbox = box
	h.env.OnGetVersion(versionLabTool, workflow.DefaultVersion, 1).Return(version)
	h.at(time.Second, func() {
		h.env.UpdateWorkflow(AddDataset, "", &labCallback{done: func(_ LabAnswer, err error) {
			if err != nil {
				t.Errorf("add-dataset: %v", err)
			}
		}}, DatasetRequest{Table: "plates", Digest: rec.Digest, Rows: 40, Columns: 4})
	})
	return h, box
}

// TestLabToolInGeneration: a session with a dataset and no tool servers offers its
// generations the lab tool; the offline generation asks it for an analysis, which runs as
// an exploratory analysis planned at the call; the analysis's audit record is what the
// next step is given and what the hypothesis cites; and a write query comes back as a tool
// error (the guard's reason) while its turn still answers.
func TestLabToolInGeneration(t *testing.T) {
	h, box := labHarness(t, badQuery{Offline: &simulator.Offline{}, hypothesis: "h-0002"}, 1)
	res := h.run(goal(4))
	if res.State != session.Completed {
		t.Fatalf("result %+v", res)
	}
	ctx := t.Context()
	var ran, refused []session.Event
	for _, ev := range h.history() {
		switch {
		case ev.Kind != session.EventTool || !strings.HasPrefix(ev.Detail, "analyse lab"):
		case strings.HasPrefix(ev.Detail, "analyse lab: welch-t on plates (analysis:lab-") && strings.HasSuffix(ev.Detail, ", exploratory)"):
			ran = append(ran, ev)
		case strings.Contains(ev.Detail, "(tool error: the sandbox would refuse the query"):
			refused = append(refused, ev)
		default:
			t.Errorf("lab tool event %q", ev.Detail)
		}
	}
	if len(ran) == 0 || len(refused) != 1 || refused[0].Turn != "generate-h-0002" {
		t.Fatalf("lab calls run %d, refused %+v; want some run and generate-h-0002's refused", len(ran), refused)
	}
	if box.runs != len(ran) {
		t.Errorf("the sandbox ran %d queries for %d analyses: the refused write reached it, or a run did not", box.runs, len(ran))
	}

	// The first analysis: exploratory, its plan fixed at the call, its audit record given
	// to the turn's next step and cited by the hypothesis the turn made.
	turn := ran[0].Turn
	id := activities.LabAnalysisID(turn, 1, 0)
	rec, found, err := h.store.FindAnalysis(ctx, labSession, id)
	if err != nil || !found {
		t.Fatalf("analysis %s: found %v, %v", id, found, err)
	}
	if rec.Kind != string(experiment.Exploratory) || rec.Experiment != "" || rec.PlannedAt == "" || rec.Stats == nil || rec.Hypothesis != strings.TrimPrefix(turn, "generate-") {
		t.Errorf("analysis record %+v; want an exploratory run of %s with its plan time and statistics", rec, turn)
	}
	step2, ok, err := h.store.Turn(ctx, labSession, activities.StepID(turn, 2))
	if err != nil || !ok {
		t.Fatalf("step 2 of %s: %v, %v", turn, ok, err)
	}
	var source string
	for _, g := range step2.Given {
		if g.Name == activities.LabTool && !g.IsError {
			source = g.Source
		}
	}
	audit, err := h.store.ToolRecord(ctx, labSession, source)
	if err != nil || audit.Tool != activities.AnalysisTool || !strings.Contains(audit.Content, "analysis:"+id) {
		t.Fatalf("step 2 was given %q: %+v, %v; want the analysis's audit record", source, audit, err)
	}
	hyp, err := h.store.Hypothesis(ctx, labSession, rec.Hypothesis)
	if err != nil {
		t.Fatal(err)
	}
	cites := false
	for _, r := range hyp.References {
		cites = cites || r.ID == "analysis:"+id && r.Source == source
	}
	if !cites {
		t.Errorf("%s does not cite analysis:%s from its record %s: %+v", hyp.ID, id, source, hyp.References)
	}
	// The reviews' citation check reads the quoted numbers back from the record.
	reviews, err := h.store.Reviews(ctx, labSession, hyp.ID)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range reviews {
		for _, c := range r.Citations {
			if c.ID == "analysis:"+id {
				checked++
				if c.Verdict != research.CitationVerified {
					t.Errorf("review %s finds the analysis's quote %s: %s", r.Type, c.Verdict, c.Note)
				}
			}
		}
	}
	if checked == 0 {
		t.Errorf("no review of %s checked its citation of analysis:%s", hyp.ID, id)
	}

	// The refused call's turn answered: its hypothesis is in the session.
	if _, err := h.store.Hypothesis(ctx, labSession, "h-0002"); err != nil {
		t.Errorf("the turn whose lab call was refused made no hypothesis: %v", err)
	}
}

// TestLabToolOffered: the lab tool is offered only to a session with a dataset, and only
// in a run past its version, to the research turns and the conversation's answers;
// without it a session with no tool servers has no tool turns.
func TestLabToolOffered(t *testing.T) {
	offered := func(h *harness) int {
		n := 0
		for _, s := range h.starts {
			if slices.Contains(s.input.Loop.Tools, activities.LabTool) {
				n++
			}
		}
		return n
	}
	h, _ := labHarness(t, nil, 1)
	h.at(3*time.Minute, func() {
		talk(h, Ask, AskRequest{Text: "What does the lab's data say?", By: "ada"}, func(_ AskAnswer, err error) {
			if err != nil {
				t.Errorf("ask: %v", err)
			}
		})
	})
	if res := h.run(goal(4)); res.State != session.Completed || offered(h) == 0 {
		t.Errorf("with a dataset, past the version: %d generation steps offered the lab tool (%+v)", offered(h), res)
	}
	if !slices.ContainsFunc(h.starts, func(s started) bool { return slices.Contains(s.converse.Loop.Tools, activities.LabTool) }) {
		t.Error("the conversation's answer was not offered the lab tool")
	}
	h, box := labHarness(t, nil, workflow.DefaultVersion)
	if res := h.run(goal(4)); res.State != session.Completed || offered(h) != 0 || box.runs != 0 {
		t.Errorf("a run from before the version offered the lab tool %d times and ran %d analyses", offered(h), box.runs)
	}
	h = newHarness(t, time.Minute, nil)
	if res := h.run(goal(4)); res.State != session.Completed || offered(h) != 0 {
		t.Errorf("without a dataset: the lab tool offered %d times", offered(h))
	}
}
