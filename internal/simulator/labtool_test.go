package simulator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// labSpec is the lab tool as a step offers it, over the simulated lab's two designs' tables
// (listed as activities.LabSpec lists them).
var labSpec = research.ToolSpec{Name: "lab.analyse",
	Description: "Analyse the lab's data.\n<lab-tables>\n" +
		`table doses (file "doses.csv", csv, 30 rows): subject VARCHAR, dose DOUBLE [mg], response DOUBLE` + "\n" +
		`table plates (file "plate.csv", csv, 40 rows): sample_id VARCHAR, arm VARCHAR, batch BIGINT, response DOUBLE [ug/L]` + "\n</lab-tables>",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"test":{"type":"string"},"columns":{"type":"array"}},"required":["query","test","columns"]}`)}

// labResult is an analysis's record as the audit trail renders it (activities.renderAnalysis).
const labResult = `{
  "id": "analysis:lab-t-s1-c3",
  "title": "Welch's t-test of hypothesis h-0001",
  "text": "Analysis lab-t-s1-c3 is exploratory: it is not the pre-registered test and does not count as one. The query returned 40 rows. The test read n = 40 observations. The mean difference was 4.21 (95% CI 1.1 to 7.32). The p-value was 0.0123.",
  "kind": "exploratory"
}`

// TestGenerateStepAsksTheLab: offered the lab tool, a generation asks it once at its first
// step (here a correlation of the first table's two measures), and cites the analysis it got with a quote of its numbers; its
// hidden quality and its literature citations are those of the same turn without the tool.
func TestGenerateStepAsksTheLab(t *testing.T) {
	ctx := context.Background()
	walk := func(tools ...research.ToolSpec) research.Hypothesis {
		t.Helper()
		o := &Offline{}
		req := research.GenerateRequest{TurnID: "t", HypothesisID: "h-0001", Goal: "Identify druggable mechanisms that slow tau protein propagation",
			Strategy: research.StrategyLiterature, Seed: 1, Tooling: research.Tooling{Tools: tools}}
		for step := 1; step < 5; step++ {
			st, _, err := o.GenerateStep(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Calls) == 0 {
				return st.Answer
			}
			res := research.ToolStep{Calls: st.Calls}
			for _, c := range st.Calls {
				content := map[string]string{"lit.search": hits, "lit.fetch": recordA, "lab.analyse": labResult}[c.Name]
				res.Results = append(res.Results, research.ToolResult{CallID: c.ID, Name: c.Name, Content: content, Source: "src-" + c.ID})
				if c.Name != "lab.analyse" {
					continue
				}
				if step != 1 {
					t.Errorf("the lab asked at step %d; want once, at the first", step)
				}
				var args map[string]any
				if err := json.Unmarshal(c.Arguments, &args); err != nil || args["query"] != `SELECT "dose" AS x, "response" AS y FROM "doses"` || args["test"] != "pearson" {
					t.Errorf("lab call %s", c.Arguments)
				}
			}
			req.Tooling.Steps = append(req.Tooling.Steps, res)
		}
		t.Fatal("no answer after 4 steps")
		return research.Hypothesis{}
	}
	without, with := walk(searchTool, fetchTool), walk(searchTool, fetchTool, labSpec)
	if *with.Latent != *without.Latent {
		t.Errorf("hidden quality %g with the lab tool, %g without: the tool changed the draw", *with.Latent, *without.Latent)
	}
	if len(with.References) != len(without.References)+1 {
		t.Fatalf("references with the lab %+v; without %+v", with.References, without.References)
	}
	ref := with.References[len(with.References)-1]
	if ref.ID != "analysis:lab-t-s1-c3" || ref.Quote != "The mean difference was 4.21 (95% CI 1.1 to 7.32)." || !strings.Contains(with.Statement, ref.Claim) {
		t.Errorf("the analysis cited as %+v; statement %q", ref, with.Statement)
	}
	if with.Statement != without.Statement || with.Rationale != without.Rationale || with.Title != without.Title {
		t.Errorf("the lab tool changed the hypothesis' words: %q / %q", with.Rationale, without.Rationale)
	}
	for i, r := range without.References {
		if with.References[i].ID != r.ID || with.References[i].Quote != r.Quote {
			t.Errorf("literature reference %d: %+v with the lab, %+v without", i, with.References[i], r)
		}
	}
}

// TestLabArguments: a table of two arms gets a Welch t of its response between them; a
// table of identifiers alone gets no call.
func TestLabArguments(t *testing.T) {
	tables := labTables(labSpec.Description)
	if len(tables) != 2 || tables[0].Table != "doses" || len(tables[1].Schema.Columns) != 4 {
		t.Fatalf("tables read %+v", tables)
	}
	args, ok := labArguments(tables[1:])
	if !ok || args["query"] != `SELECT "arm" AS grp, "response" AS value FROM "plates"` || args["test"] != "welch-t" || args["direction"] != "greater" {
		t.Errorf("plates: %v", args)
	}
	if args, ok := labArguments(labTables("table ids (file \"i.csv\", csv, 3 rows): sample_id VARCHAR, batch BIGINT")); ok {
		t.Errorf("a table of identifiers analysed: %v", args)
	}
}

// TestFullReviewAsksTheLab: a full review asks the lab once beside re-reading the sources,
// and cites the analysis for a claim of its critique; another review type does not ask.
func TestFullReviewAsksTheLab(t *testing.T) {
	o := &Offline{}
	ctx := context.Background()
	h := research.Hypothesis{ID: "h-1", Title: "Microglia carry tau", Statement: "s", Predictions: []string{"p"}, References: []research.Reference{{ID: "10.5555/a"}}}
	req := research.ReviewRequest{TurnID: "r", Goal: "g", Type: research.ReviewFull, Hypothesis: h, Tooling: research.Tooling{Tools: []research.ToolSpec{searchTool, fetchTool, labSpec}}}
	st, _, err := o.ReviewStep(ctx, req)
	if err != nil || len(st.Calls) != 2 || st.Calls[1].Name != "lab.analyse" {
		t.Fatalf("review step 1: %+v, %v", st.Calls, err)
	}
	req.Tooling.Steps = []research.ToolStep{{Calls: st.Calls, Results: []research.ToolResult{
		{CallID: st.Calls[0].ID, Name: "lit.fetch", Content: recordA, Source: "s1"}, {CallID: st.Calls[1].ID, Name: "lab.analyse", Content: labResult, Source: "s2"}}}}
	st, _, err = o.ReviewStep(ctx, req)
	if err != nil || len(st.Calls) != 0 {
		t.Fatalf("review step 2: %+v, %v", st.Calls, err)
	}
	if i := len(st.Answer.References) - 1; i < 0 || st.Answer.References[i].ID != "analysis:lab-t-s1-c3" || !strings.Contains(st.Answer.Critique, st.Answer.References[i].Claim) {
		t.Errorf("the review cites %+v; critique %q", st.Answer.References, st.Answer.Critique)
	}
	req.Type, req.Tooling.Steps = research.ReviewDeepVerification, nil
	if st, _, err := o.ReviewStep(ctx, req); err != nil || len(st.Calls) != 1 {
		t.Errorf("deep verification's first calls: %+v, %v; want the re-read alone", st.Calls, err)
	}
}
