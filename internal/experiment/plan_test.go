package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func samplePlan() Plan {
	return Plan{
		Hypothesis: "h-0007",
		Prediction: Prediction{
			Text:      "Knocking down KDM5B raises the fraction of persister cells after 72 h of erlotinib.",
			Direction: Greater,
			MinEffect: 0.05,
		},
		Analysis: Analysis{
			Query:   "SELECT arm AS grp, persister_fraction AS value FROM plates WHERE qc = 'pass'",
			Test:    "welch-t",
			Columns: []string{"grp", "value"},
		},
		Expected: []Table{
			{Name: "plates", Columns: []string{"plate", "arm", "persister_fraction", "qc"}},
			{Name: "conditions", Columns: []string{"arm", "drug"}},
		},
	}
}

// TestDigestStable: the same plan has the same digest however it is built: a copy, the
// expected tables or their columns in another order (whose order means nothing). And the
// canonical encoding is the documented one, so anyone can recompute a digest with
// sha256sum from the page's JSON.
func TestDigestStable(t *testing.T) {
	p := samplePlan()
	d := p.Digest()
	if !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
		t.Fatalf("digest %q", d)
	}
	q := samplePlan()
	q.Expected[0], q.Expected[1] = q.Expected[1], q.Expected[0]
	q.Expected[1].Columns = []string{"qc", "plate", "persister_fraction", "arm"}
	if q.Digest() != d {
		t.Error("reordering the expected tables or their columns changed the digest")
	}
	if p.Digest() != d {
		t.Error("the same plan has two digests")
	}
	want := `{"analysis":{"columns":["grp","value"],"query":"SELECT arm AS grp, persister_fraction AS value FROM plates WHERE qc = 'pass'","test":"welch-t"},` +
		`"expected":[{"columns":["arm","drug"],"name":"conditions"},{"columns":["arm","persister_fraction","plate","qc"],"name":"plates"}],` +
		`"hypothesis":"h-0007","prediction":{"direction":"greater","min_effect":0.05,"text":"Knocking down KDM5B raises the fraction of persister cells after 72 h of erlotinib."},"version":1}`
	if got := string(p.Canonical()); got != want {
		t.Errorf("canonical encoding\n got %s\nwant %s", got, want)
	}
	sum := sha256.Sum256([]byte(want))
	if d != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Error("the digest is not the SHA-256 of the canonical encoding")
	}
}

// TestDigestChanges: every change to what the plan predicts, how it is analysed or what
// data it expects gives another digest, including changes a reader would miss (a space in
// the query, the columns fed to the test swapped).
func TestDigestChanges(t *testing.T) {
	base := samplePlan().Digest()
	for _, c := range []struct {
		name string
		f    func(*Plan)
	}{
		{"query", func(p *Plan) { p.Analysis.Query = strings.Replace(p.Analysis.Query, "'pass'", "'ok'", 1) }},
		{"query whitespace", func(p *Plan) { p.Analysis.Query += " " }},
		{"test", func(p *Plan) { p.Analysis.Test = "mann-whitney" }},
		{"columns", func(p *Plan) { p.Analysis.Columns[1] = "fraction" }},
		{"columns swapped", func(p *Plan) {
			p.Analysis.Columns[0], p.Analysis.Columns[1] = p.Analysis.Columns[1], p.Analysis.Columns[0]
		}},
		{"direction", func(p *Plan) { p.Prediction.Direction = TwoSided }},
		{"smallest effect", func(p *Plan) { p.Prediction.MinEffect = 0.1 }},
		{"no smallest effect", func(p *Plan) { p.Prediction.MinEffect = 0 }},
		{"prediction text", func(p *Plan) { p.Prediction.Text = strings.Replace(p.Prediction.Text, "72", "48", 1) }},
		{"hypothesis", func(p *Plan) { p.Hypothesis = "h-0008" }},
		{"expected table", func(p *Plan) { p.Expected[1].Name = "arms" }},
		{"expected column", func(p *Plan) { p.Expected[0].Columns = append(p.Expected[0].Columns, "well") }},
		{"expected table dropped", func(p *Plan) { p.Expected = p.Expected[:1] }},
		// Moving a column between tables keeps every name but not the plan.
		{"column moved", func(p *Plan) {
			p.Expected[0].Columns = p.Expected[0].Columns[:3]
			p.Expected[1].Columns = append(p.Expected[1].Columns, "qc")
		}},
	} {
		p := samplePlan()
		c.f(&p)
		if p.Digest() == base {
			t.Errorf("%s: the digest did not change", c.name)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := samplePlan().Validate(); err != nil {
		t.Fatalf("the sample plan: %v", err)
	}
	for _, c := range []struct {
		name string
		f    func(*Plan)
		want string
	}{
		{"unknown test", func(p *Plan) { p.Analysis.Test = "t-test" }, `unknown test "t-test": the menu is welch-t, mann-whitney`},
		{"no test", func(p *Plan) { p.Analysis.Test = "" }, "no test: name one of welch-t"},
		{"empty query", func(p *Plan) { p.Analysis.Query = " \n\t" }, "empty query"},
		{"query too long", func(p *Plan) { p.Analysis.Query = strings.Repeat("x", MaxQuery+1) }, "the query is 8001 characters: at most 8000"},
		{"query NUL", func(p *Plan) { p.Analysis.Query += "\x00" }, "the query is not printable text"},
		{"prediction too long", func(p *Plan) { p.Prediction.Text = strings.Repeat("é", MaxPrediction+1) }, "the prediction is 601 characters: at most 600"},
		{"empty prediction", func(p *Plan) { p.Prediction.Text = "" }, "empty prediction"},
		{"no direction", func(p *Plan) { p.Prediction.Direction = "" }, "no direction"},
		{"unknown direction", func(p *Plan) { p.Prediction.Direction = "up" }, `unknown direction "up"`},
		{"direction unfit", func(p *Plan) { p.Prediction.Direction = Positive }, `direction "positive" does not fit welch-t: say greater, less, two-sided`},
		{"chi-square one-sided", func(p *Plan) { p.Analysis.Test = "chi-square" }, `direction "greater" does not fit chi-square: say two-sided`},
		{"too few columns", func(p *Plan) { p.Analysis.Columns = p.Analysis.Columns[:1] }, "welch-t reads 2 result columns (group, value), the plan names 1"},
		{"empty column", func(p *Plan) { p.Analysis.Columns[0] = "" }, "empty result column"},
		{"negative smallest effect", func(p *Plan) { p.Prediction.MinEffect = -0.1 }, "the smallest effect of interest is -0.1"},
		{"NaN smallest effect", func(p *Plan) { p.Prediction.MinEffect = math.NaN() }, "the smallest effect of interest is NaN"},
		{"ratio smallest effect", func(p *Plan) { p.Analysis.Test = "fisher-exact"; p.Prediction.MinEffect = 0.5 }, "a ratio above 1"},
		{"no hypothesis", func(p *Plan) { p.Hypothesis = "" }, "empty hypothesis id"},
		{"no expected data", func(p *Plan) { p.Expected = nil }, "no expected data"},
		{"table twice", func(p *Plan) { p.Expected[1].Name = "plates" }, `table "plates" expected twice`},
		{"table without columns", func(p *Plan) { p.Expected[1].Columns = nil }, `table "conditions": 0 expected columns`},
		{"multi-line name", func(p *Plan) { p.Expected[0].Columns[0] = "a\nb" }, "is not one line of text"},
	} {
		p := samplePlan()
		c.f(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v; want it to say %q", c.name, err, c.want)
		}
	}
	// Every problem in one error: the scientist fixes them at once.
	p := samplePlan()
	p.Analysis.Test, p.Analysis.Query = "anova", ""
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "unknown test") || !strings.Contains(err.Error(), "empty query") {
		t.Errorf("two problems, Validate = %v", err)
	}
}

// TestDigestSurvivesJSON: a plan goes through Temporal's payloads and the store as JSON;
// read back, it has the digest it had, absent and empty lists alike.
func TestDigestSurvivesJSON(t *testing.T) {
	for _, p := range []Plan{samplePlan(), {Hypothesis: "h-1", Prediction: Prediction{Text: "x <b>&</b>", Direction: TwoSided, MinEffect: 0.1 + 0.2}}} {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q Plan
		if err := json.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		if q.Digest() != p.Digest() {
			t.Errorf("the digest changed through JSON: %s", b)
		}
	}
}

// FuzzPlan: whatever a plan holds, Validate answers without panicking, and Canonical is
// JSON that reads back to the same encoding.
func FuzzPlan(f *testing.F) {
	f.Add("h-1", "x rises", "greater", 0.2, "SELECT 1", "welch-t", "g", "t", "c")
	f.Add("", "\x00", "up", math.Inf(1), "", "anova", "", "\n", "")
	f.Fuzz(func(t *testing.T, h, text, dir string, m float64, query, test, col, table, tcol string) {
		p := Plan{h, Prediction{text, Direction(dir), m}, Analysis{query, test, []string{col}}, []Table{{table, []string{tcol}}}}
		_ = p.Validate()
		var v map[string]any
		c := p.Canonical()
		if err := json.Unmarshal(c, &v); err != nil {
			t.Fatalf("canonical encoding is not JSON: %v: %s", err, c)
		}
	})
}
