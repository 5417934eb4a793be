package workflows

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/experiment"
)

// TestLabReport: a session whose experiment got its result, supported, and then was
// terminated while another waits, writes a report whose "Tested in the lab" holds the
// experiment: the prediction (markup shown as text, on one line), the plan's digest with
// the update and event that fixed it, the verdict and the analysis cited.
func TestLabReport(t *testing.T) {
	h := newHarness(t, time.Minute, nil)
	l := newLab(h)
	l.outcome = func(activities.RunAnalysisInput) experiment.Outcome {
		return experiment.Outcome{Test: "welch-t", Effect: 2, Low: 1, High: 3, P: 0.001, N: 40}
	}
	const prediction = "treated <b>higher</b>\n# not a heading"
	const data = "sha256:" + "2b2b2b2b2b2b"
	var x LabExperiment
	must := func(what string) func(LabAnswer, error) {
		return func(_ LabAnswer, err error) {
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		}
	}
	res := h.runEach(goal(4), func() {
		l.mock()
		h.at(4*time.Minute, func() {
			st := query[StateView](h, QueryState, Page{Limit: 2})
			l.send(PlanExperiment, PlanRequest{Hypothesis: st.Hypotheses[0].ID, Prediction: prediction}, func(a LabAnswer, err error) {
				if err != nil {
					t.Fatalf("plan: %v", err)
				}
				x = *a.Experiment
				l.send(ConfirmExperiment, ConfirmExperimentRequest{Experiment: x.ID, Digest: x.Plan}, must("confirm"))
			})
			// A second experiment, never given a result, holds the session open.
			l.send(PlanExperiment, PlanRequest{Hypothesis: st.Hypotheses[1].ID}, func(a LabAnswer, err error) {
				if err != nil {
					t.Fatalf("plan: %v", err)
				}
				l.send(ConfirmExperiment, ConfirmExperimentRequest{Experiment: a.Experiment.ID, Digest: a.Experiment.Plan}, must("confirm the other"))
			})
		})
		h.at(6*time.Minute, func() {
			l.send(AddDataset, DatasetRequest{Table: "plates", Digest: data, Rows: 40, Columns: 2}, func(_ LabAnswer, err error) {
				must("add")(LabAnswer{}, err)
				l.send(ExperimentResult, ResultRequest{Experiment: x.ID, Data: data}, must("result"))
			})
		})
		h.at(24*time.Hour, func() { h.mustUpdate(Terminate, map[string]string{"reason": "the lab closed"}) })
	})
	if res.ReportPath == "" {
		t.Fatalf("no report: %+v", res)
	}
	b, err := os.ReadFile(res.ReportPath)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"## Tested in the lab",
		"### " + x.ID + " on " + x.Hypothesis + ": supported",
		"- **Prediction:** treated &lt;b&gt;higher&lt;/b&gt; \\# not a heading (direction: greater)",
		"- **Pre-registered:** `" + x.Plan + "` fixed at session event",
		"- **Verdict:** supported:",
		"- **Analysis:** `analysis:" + x.ID + "-run-1` pre-registered",
	} {
		if !strings.Contains(md, want) {
			i := strings.Index(md, "## Tested in the lab")
			t.Errorf("the report lacks %q; its lab section:\n%s", want, md[max(i, 0):])
		}
	}
	if strings.Count(md, "## Tested in the lab") != 1 || strings.Contains(md, "### x-0002") {
		t.Error("the report shows the experiment without a result, or the section twice")
	}
}
