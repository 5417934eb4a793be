package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/session"
)

const labPlan = "sha256:0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"

func at(ev int64, hour int) experiment.Mark {
	return experiment.Mark{Event: ev, Time: time.Date(2026, 3, 1, hour, 0, 0, 0, time.UTC)}
}

// labTest is experiment x-0001 on gen/01: its plan fixed at event 12, a result's data
// (digest "d1") arrived at event 20, the registered plan's run at 22 and a subgroup's
// run (another plan) at 25. outcome sets the standing result; withdrawn, when not "",
// moves it to the withdrawn results with that reason.
func labTest(prediction string, standing session.Standing, withdrawn string) LabTest {
	e := experiment.Experiment{ID: "x-0001", Hypothesis: "gen/01", State: experiment.Analysed, Plan: labPlan, Confirmed: at(12, 9)}
	r := experiment.Result{
		Experiment: "x-0001", Hypothesis: "gen/01", Data: "sha256:d1d1d1d1d1d1d1d1", Arrived: at(20, 10),
		Outcome:  experiment.Outcome{Test: "welch_t", Effect: 1.25, Low: 0.5, High: 2, P: 0.0031, N: 40},
		Standing: standing, Why: "the 95% CI [0.5, 2] excludes 0 on the predicted side",
	}
	if withdrawn != "" {
		r.Withdrawal = withdrawn
		e.Withdrawn, e.State = []experiment.Result{r}, experiment.Waiting
	} else {
		e.Result = &r
	}
	return LabTest{
		Experiment: e, Test: "welch_t",
		Prediction:    experiment.Prediction{Text: prediction, Direction: experiment.Greater, MinEffect: 0.2},
		ConfirmUpdate: "confirm-x-0001", ConfirmedRun: "run-a", ConfirmedEvent: 12,
		Runs: []experiment.Run{
			{ID: "x-0001-run-1", Plan: labPlan, Data: r.Data, Ran: at(22, 11)},
			{ID: "x-0001-run-2", Plan: "sha256:ffff", Data: r.Data, Ran: at(25, 12)},
		},
	}
}

// TestTestedInTheLab: each experiment with a result, standing or withdrawn, gets its
// entry with the prediction, the pre-registration (digest, update, run and event, time),
// the result's time, effect, CI and p, the verdict with its reason, the analysis that
// counted cited as analysis:<id> and any other labelled exploratory; an experiment
// without a result gets none, and with none the section is left out.
func TestTestedInTheLab(t *testing.T) {
	planned := LabTest{Experiment: experiment.New("x-0002", "gen/02", labPlan)}
	for _, tt := range []struct {
		name   string
		lab    []LabTest
		want   []string // in this order
		absent []string
	}{
		{"supported", []LabTest{labTest("The treated group responds more.", session.Supported, ""), planned}, []string{
			"## Tested in the lab",
			"over the session's analyses with a p-value: a family of 1 here, so q = p",
			"### x-0001 on gen/01: supported",
			"- **Hypothesis:** `gen/01` Hypothesis 01",
			"- **Prediction:** The treated group responds more. (direction: greater; smallest effect of interest: 0.2)",
			"- **Pre-registered:** `" + labPlan + "` fixed at session event 12, 2026-03-01T09:00:00Z, by update confirm-x-0001 (run run-a, event 12)",
			"- **Result:** `d1d1d1d1d1d1` arrived 2026-03-01T10:00:00Z (session event 20)",
			"- **Effect:** welch_t: 1.25, 95% CI \\[0.5, 2\\], p = 0.0031, q = 0.0031, n = 40",
			"- **Verdict:** supported: the 95% CI \\[0.5, 2\\] excludes 0 on the predicted side",
			"- **Analysis:** `analysis:x-0001-run-1` pre-registered, ran 2026-03-01T11:00:00Z (session event 22)",
			"- **Exploratory analysis:** `analysis:x-0001-run-2` exploratory, counts for nothing: its plan is not the registered plan",
			"## Lineage",
		}, []string{"x-0002", "Withdrawn"}},
		{"withdrawn", []LabTest{labTest("The treated group responds more.", session.Refuted, "the assay's controls failed")}, []string{
			"### x-0001 on gen/01: withdrawn",
			"- **Withdrawn:** the assay's controls failed (it counts for nothing)",
			"- **Verdict:** refuted:",
		}, nil},
		{"no result", []LabTest{planned}, nil, []string{"Tested in the lab", "x-0002"}},
		{"no experiments", nil, nil, []string{"Tested in the lab"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := rich()
			in.Lab = tt.lab
			f := render(t, in)
			got := string(f.Markdown)
			inOrder(t, got, tt.want...)
			for _, a := range tt.absent {
				if strings.Contains(got, a) {
					t.Errorf("report.md holds %q", a)
				}
				if strings.Contains(string(f.HTML), a) {
					t.Errorf("report.html holds %q", a)
				}
			}
			if len(tt.want) > 0 && !bytes.Contains(f.HTML, []byte(`<h2 id="lab">Tested in the lab</h2>`)) {
				t.Error("report.html lacks the section")
			}
			if len(tt.want) > 0 && !bytes.Contains(f.HTML, []byte("<code>analysis:x-0001-run-1</code>")) {
				t.Error("report.html does not cite the analysis")
			}
		})
	}
}

// TestTestedInTheLabEscapes: a prediction and a withdrawal reason holding markup and line
// breaks are shown as the characters they are, on one line in report.md, and as text in
// report.html.
func TestTestedInTheLabEscapes(t *testing.T) {
	pred := "Knockdown <script>alert(1)</script>\n# heading\n- [x](javascript:alert(2)) **bold**"
	reason := "<img src=x onerror=alert(3)>\nfailed"
	for _, tt := range []struct {
		name, withdrawn string
		shown           []string
	}{
		{"standing", "", []string{"Knockdown <script>alert(1)</script> # heading - [x](javascript:alert(2)) **bold**", "<script>alert(4)</script>", "exploratory | x", "welch_t # h"}},
		{"withdrawn", reason, []string{"<img src=x onerror=alert(3)> failed", "analysis:tool`1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := rich()
			in.Lab = []LabTest{labTest(pred, session.Supported, tt.withdrawn)}
			// An analysis a turn asked for, its fields as hostile as a record can hold.
			in.Analyses = []Analysis{{ID: "tool`1", Hypothesis: "<script>alert(4)</script>", Kind: "exploratory | x", Test: "welch_t\n# h", P: pval(0.5)}}
			f := render(t, in)
			for _, doc := range []struct {
				name string
				node *html.Node
			}{{"report.md", viewMarkdown(t, f.Markdown)}, {"report.html", parseHTML(t, f.HTML)}} {
				elements, hrefs, text := pageParts(doc.node)
				for _, bad := range []string{"script", "img[onerror]"} {
					if slices.Contains(elements, bad) {
						t.Errorf("%s renders a <%s> element", doc.name, bad)
					}
				}
				for _, h := range hrefs {
					if !followable(h) {
						t.Errorf("%s links %q", doc.name, h)
					}
				}
				for _, want := range tt.shown {
					if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
						t.Errorf("%s does not show %q as text", doc.name, want)
					}
				}
			}
			for _, line := range strings.Split(string(f.Markdown), "\n") {
				if strings.HasPrefix(line, "# heading") || strings.HasPrefix(line, "failed") {
					t.Errorf("report.md broke a value over lines: %q", line)
				}
			}
		})
	}
}

func parseHTML(t *testing.T, b []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
