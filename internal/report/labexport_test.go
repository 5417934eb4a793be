package report

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/session"
)

// labJSON mirrors report.json's "lab" and "analyses" as the schema in export.go documents
// them, field name for field name: a reader of the JSON, written apart from the export.
type labJSON struct {
	Lab []struct {
		Experiment      string `json:"experiment"`
		Hypothesis      string `json:"hypothesis"`
		HypothesisTitle string `json:"hypothesis_title"`
		State           string `json:"state"`
		Test            string `json:"test"`
		PlanDigest      string `json:"plan_digest"`
		Prediction      struct {
			Text      string  `json:"text"`
			Direction string  `json:"direction"`
			MinEffect float64 `json:"min_effect"`
		} `json:"prediction"`
		PreRegistration *struct {
			Update       string `json:"update"`
			Run          string `json:"run"`
			Event        int64  `json:"event"`
			SessionEvent int64  `json:"session_event"`
			Time         string `json:"time"`
		} `json:"pre_registration"`
		Results []struct {
			Data         string `json:"data"`
			Arrived      string `json:"arrived"`
			ArrivedEvent int64  `json:"arrived_event"`
			Withdrawn    string `json:"withdrawn"`
			Verdict      string `json:"verdict"`
			Why          string `json:"why"`
			Outcome      *struct {
				Test   string   `json:"test"`
				Effect float64  `json:"effect"`
				CILow  *float64 `json:"ci_low"`
				CIHigh *float64 `json:"ci_high"`
				P      float64  `json:"p"`
				Q      *float64 `json:"q"`
				N      int      `json:"n"`
			} `json:"outcome"`
			AnalysisID  string `json:"analysis_id"`
			Citation    string `json:"citation"`
			Ran         string `json:"ran"`
			Exploratory []struct {
				AnalysisID string   `json:"analysis_id"`
				Citation   string   `json:"citation"`
				Label      string   `json:"label"`
				Why        string   `json:"why"`
				P          *float64 `json:"p"`
				Q          *float64 `json:"q"`
			} `json:"exploratory"`
		} `json:"results"`
	} `json:"lab"`
	Analyses struct {
		Method     string `json:"q_method"`
		FamilySize int    `json:"family_size"`
		Family     []struct {
			ID string  `json:"id"`
			P  float64 `json:"p"`
			Q  float64 `json:"q"`
		} `json:"family"`
		Refused []struct {
			ID      string `json:"id"`
			Refused string `json:"refused"`
		} `json:"refused"`
	} `json:"analyses"`
}

func readLabJSON(t *testing.T, in Input) labJSON {
	t.Helper()
	var x labJSON
	if err := json.Unmarshal(render(t, in).JSON, &x); err != nil {
		t.Fatal(err)
	}
	return x
}

func pval(p float64) *float64 { return &p }

// labRecords are the store's records of labTest's two runs and of an analysis a turn asked
// for through the lab's tool, on no experiment: a family of three.
func labRecords() []Analysis {
	return []Analysis{
		{ID: "x-0001-run-1", Hypothesis: "gen/01", Experiment: "x-0001", Kind: "pre-registered", Test: "welch_t", P: pval(0.0031)},
		{ID: "x-0001-run-2", Hypothesis: "gen/01", Experiment: "x-0001", Kind: "exploratory", Test: "welch_t", P: pval(0.04)},
		{ID: "tool-gen-01-1", Hypothesis: "gen/01", Kind: "exploratory", Test: "pearson", P: pval(0.5)},
		{ID: "tool-gen-02-1", Kind: "exploratory", Test: "pearson", Refused: "the query reads no loaded table"},
	}
}

// TestLabJSON: report.json holds each experiment's facts as fields, the same as the
// Markdown shows them: a reader finds the analysis that counted and the verdict, and every
// value given comes back as it went in.
func TestLabJSON(t *testing.T) {
	planned := LabTest{Experiment: experiment.New("x-0002", "gen/02", labPlan)}
	for _, tt := range []struct {
		name      string
		lab       []LabTest
		analyses  []Analysis
		verdict   string
		withdrawn string
		q, exP    *float64 // the result's q; the exploratory run's p (nil: not in the family)
		family    int
	}{
		{"supported, family of one", []LabTest{labTest("More.", session.Supported, ""), planned}, nil, "supported", "", pval(0.0031), nil, 1},
		{"with the store's records", []LabTest{labTest("More.", session.Supported, "")}, labRecords(), "supported", "", pval(0.0093), pval(0.04), 3},
		{"withdrawn", []LabTest{labTest("More.", session.Refuted, "the assay's controls failed")}, nil, "refuted", "the assay's controls failed", pval(0.0031), nil, 1},
		{"planned only", []LabTest{planned}, nil, "", "", nil, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := rich()
			in.Lab, in.Analyses = tt.lab, tt.analyses
			x := readLabJSON(t, in)
			if len(x.Lab) != len(tt.lab) {
				t.Fatalf("lab holds %d experiments, want %d", len(x.Lab), len(tt.lab))
			}
			if x.Analyses.Method != QMethod || x.Analyses.FamilySize != tt.family || len(x.Analyses.Family) != tt.family {
				t.Errorf("analyses = %s, %d (%d listed), want %s over %d", x.Analyses.Method, x.Analyses.FamilySize, len(x.Analyses.Family), QMethod, tt.family)
			}
			last := x.Lab[len(x.Lab)-1]
			if tt.verdict == "" {
				if last.PreRegistration != nil || len(last.Results) != 0 || last.State != string(experiment.Planned) || last.PlanDigest != labPlan {
					t.Errorf("a planned experiment: %+v", last)
				}
				return
			}
			e := x.Lab[0]
			want := tt.lab[0]
			if e.Experiment != "x-0001" || e.Hypothesis != "gen/01" || e.HypothesisTitle != "Hypothesis 01" || e.PlanDigest != labPlan || e.Test != "welch_t" {
				t.Errorf("experiment = %s on %s (%q), plan %s, test %s", e.Experiment, e.Hypothesis, e.HypothesisTitle, e.PlanDigest, e.Test)
			}
			if p := e.Prediction; p.Text != "More." || p.Direction != "greater" || p.MinEffect != 0.2 {
				t.Errorf("prediction = %+v", p)
			}
			if r := e.PreRegistration; r == nil || r.Update != "confirm-x-0001" || r.Run != "run-a" || r.Event != 12 || r.SessionEvent != 12 || r.Time != "2026-03-01T09:00:00Z" {
				t.Errorf("pre-registration = %+v", r)
			}
			if len(e.Results) != 1 {
				t.Fatalf("%d results, want 1", len(e.Results))
			}
			r := e.Results[0]
			o := want.Experiment.Result
			if o == nil {
				o = &want.Experiment.Withdrawn[0]
			}
			if r.Verdict != tt.verdict || r.Withdrawn != tt.withdrawn || r.Why != o.Why || r.Data != o.Data || r.Arrived != "2026-03-01T10:00:00Z" || r.ArrivedEvent != 20 {
				t.Errorf("result = %+v", r)
			}
			if r.AnalysisID != "x-0001-run-1" || r.Citation != "analysis:x-0001-run-1" || r.Ran != "2026-03-01T11:00:00Z" {
				t.Errorf("the analysis that counted = %q (%q, ran %s), want x-0001-run-1", r.AnalysisID, r.Citation, r.Ran)
			}
			got := r.Outcome
			if got == nil || got.Test != o.Outcome.Test || got.Effect != o.Outcome.Effect || !sameP(got.CILow, &o.Outcome.Low) || !sameP(got.CIHigh, &o.Outcome.High) || got.P != o.Outcome.P || got.N != o.Outcome.N {
				t.Fatalf("outcome = %+v, want %+v", got, o.Outcome)
			}
			if !sameP(got.Q, tt.q) {
				t.Errorf("q = %v, want %v", deref(got.Q), deref(tt.q))
			}
			if len(r.Exploratory) != 1 {
				t.Fatalf("exploratory = %+v, want x-0001-run-2", r.Exploratory)
			}
			ex := r.Exploratory[0]
			if ex.AnalysisID != "x-0001-run-2" || ex.Citation != "analysis:x-0001-run-2" || ex.Label != "exploratory" || !strings.Contains(ex.Why, "not the registered plan") || !sameP(ex.P, tt.exP) {
				t.Errorf("exploratory = %+v (p %v), want x-0001-run-2 with p %v", ex, deref(ex.P), deref(tt.exP))
			}
		})
	}
}

func sameP(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return math.Abs(*a-*b) <= 1e-12*math.Abs(*b)
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestFamilyAgainstR: the q of every analysis is R's p.adjust(p, method = "BH") over the
// session's analyses with a p-value (the truth internal/stats is tested on, written by R);
// an analysis refused, without a p-value, is not in the family.
func TestFamilyAgainstR(t *testing.T) {
	b, err := os.ReadFile("../stats/testdata/r-truth.json")
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		BH []struct {
			Name string    `json:"name"`
			P    []float64 `json:"p"`
			Want []float64 `json:"want"`
		} `json:"bh"`
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	if len(truth.BH) < 3 {
		t.Fatalf("r-truth.json holds %d BH cases, want 3 (make stats-truth)", len(truth.BH))
	}
	for _, c := range truth.BH {
		t.Run(c.Name, func(t *testing.T) {
			in := rich()
			in.Analyses = []Analysis{{ID: "refused-first", Kind: "exploratory", Refused: "the test needs two groups"}}
			for i, p := range c.P {
				in.Analyses = append(in.Analyses, Analysis{ID: "a-" + string(rune('a'+i)), Kind: "exploratory", P: pval(p)})
			}
			x := readLabJSON(t, in)
			a := x.Analyses
			if a.FamilySize != len(c.P) || len(a.Family) != len(c.P) || len(a.Refused) != 1 || a.Refused[0].ID != "refused-first" {
				t.Fatalf("family of %d (%d listed), refused %+v; want %d and the refused one apart", a.FamilySize, len(a.Family), a.Refused, len(c.P))
			}
			for i, m := range a.Family {
				if m.P != c.P[i] || !sameP(&m.Q, &c.Want[i]) {
					t.Errorf("%s: p %g, q %g; R: p %g, q %g", m.ID, m.P, m.Q, c.P[i], c.Want[i])
				}
			}
		})
	}
}

// TestFamilyShown: q stands beside p wherever the report shows p, in report.md and
// report.html, with the family's size; the family's table lists an analysis a turn asked
// for through the lab's tool, on no experiment.
func TestFamilyShown(t *testing.T) {
	in := rich()
	in.Lab, in.Analyses = []LabTest{labTest("More.", session.Supported, "")}, labRecords()
	f := render(t, in)
	for _, doc := range []struct {
		name string
		text string
	}{{"report.md", string(f.Markdown)}, {"report.html", string(f.HTML)}} {
		for _, want := range []string{
			"p = 0.0031, q = 0.0093, n = 40",
			"(p = 0.04, q = 0.06)",
			"over the family of the session&#39;s 3 analyses with a p-value",
			"(1 more were refused and have none)",
			"Every analysis with a p-value",
			"analysis:tool-gen-01-1",
		} {
			if doc.name == "report.md" {
				want = strings.ReplaceAll(want, "&#39;", "'")
			}
			if !strings.Contains(doc.text, want) {
				t.Errorf("%s lacks %q", doc.name, want)
			}
		}
	}
	inOrder(t, string(f.Markdown), "| `analysis:x-0001-run-1` | pre-registered | gen/01 | welch_t | 0.0031 | 0.0093 |",
		"| `analysis:x-0001-run-2` | exploratory | gen/01 | welch_t | 0.04 | 0.06 |",
		"| `analysis:tool-gen-01-1` | exploratory | gen/01 | pearson | 0.5 | 0.5 |")

	// Analyses and no experiment: the section holds the family alone.
	in.Lab = nil
	f = render(t, in)
	inOrder(t, string(f.Markdown), "## Tested in the lab", "### Every analysis with a p-value", "analysis:tool-gen-01-1")
}

// TestNoInterval: a test with no interval on its effect (chi-square's Cramér's V) is
// shown with "no CI", never as an interval of zeros, and report.json's bounds are null.
func TestNoInterval(t *testing.T) {
	lt := labTest("Exposure and outcome are associated.", session.Supported, "")
	lt.Test = "chi-square"
	lt.Experiment.Result.Outcome = experiment.Outcome{Test: "chi-square", Effect: 0.31, P: 0.002, N: 120, NoCI: true}
	in := rich()
	in.Lab = []LabTest{lt}
	f := render(t, in)
	if md := string(f.Markdown); !strings.Contains(md, "chi-square: 0.31, no CI, p = 0.002") || strings.Contains(md, "CI \\[0, 0\\]") {
		t.Errorf("report.md's effect line for a test with no interval:\n%s", md)
	}
	x := readLabJSON(t, in)
	o := x.Lab[0].Results[0].Outcome
	if o == nil || o.CILow != nil || o.CIHigh != nil || o.Effect != 0.31 {
		t.Errorf("report.json's outcome %+v; want null bounds", o)
	}
}
