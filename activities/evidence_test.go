package activities

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/stats"
	"github.com/cosci-dev/cosci/internal/store"
)

// labGroups are the simulated lab's group sizes (control, treated), counted from the file
// by encoding/csv: the truth of n, as its maker wrote it.
func labGroups(t *testing.T) (control, treated int) {
	data, _ := labData(t)
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		if r[1] == "treated" {
			treated++
		} else {
			control++
		}
	}
	return control, treated
}

// TestAnalysisSource: a run writes its record's rendering into the audit trail under the
// tool AnalysisTool and returns its digest; a re-run, which finds the record stored, gets
// the same digest; and the citation package reads the rendering as exactly one source,
// analysis:<id>, titled with the test and the hypothesis.
func TestAnalysisSource(t *testing.T) {
	a, runIt, ds := runAnalysisEnv(t)
	res, err := runIt(analysisInput("an-1", labPlan(), ds))
	if err != nil || res.Source == "" {
		t.Fatalf("run: %+v, %v; want a source", res, err)
	}
	a.Sandbox = noSandbox{}
	again, err := runIt(analysisInput("an-1", labPlan(), ds))
	if err != nil || again.Source != res.Source {
		t.Errorf("re-run: source %q, %v; want the first run's %q", again.Source, err, res.Source)
	}
	tr, err := a.Store.ToolRecord(t.Context(), "s-1", res.Source)
	if err != nil || tr.Tool != AnalysisTool {
		t.Fatalf("audit trail: %+v, %v", tr, err)
	}
	recs := citation.Records(tr.Content)
	if len(recs) != 1 || !recs[0].Has("analysis:an-1") || recs[0].Has("analysis:an-10") {
		t.Fatalf("the rendering reads as %d records %+v; want one, analysis:an-1", len(recs), recs)
	}
	if title := recs[0].Details.Title; !strings.Contains(title, "Welch's t test") || !strings.Contains(title, "h-0001") {
		t.Errorf("title %q; want the test and the hypothesis", title)
	}
}

// TestAnalysisCitations: a quote of an analysis's numbers, cited as analysis:<id>, is
// resolved to the analysis's record in the audit trail and checked against it as a
// paper's quote is. The numbers quoted are the truth: the effect and n read from the lab's
// file by encoding/csv, the CI, p and statistic as the stats package computed them from
// the data (the stored record), each written at four significant digits as a writer
// would (%.4g), not in the renderer's own words for numbers. Each number changed is
// contradicted, the verdict a paper's changed number gets; an analysis no result holds
// is invented; a quote of one analysis cited as another's is not verified.
func TestAnalysisCitations(t *testing.T) {
	a, runIt, ds := runAnalysisEnv(t)
	_, effect := labData(t)
	control, treated := labGroups(t)
	res, err := runIt(analysisInput("an-1", labPlan(), ds))
	if err != nil || res.Refused != "" {
		t.Fatalf("run: %+v, %v", res, err)
	}
	// The same data, the arms the other way round: another analysis, its effect negated.
	flipped := labPlan()
	flipped.Analysis.Query = "SELECT arm = 'control' AS treated, response AS value FROM result"
	other, err := runIt(analysisInput("an-2", flipped, ds))
	if err != nil || other.Refused != "" {
		t.Fatalf("run: %+v, %v", other, err)
	}
	rec, err := a.Store.Analysis(t.Context(), "s-1", "an-1")
	if err != nil || rec.Stats == nil || rec.Stats.Effect.CI == nil {
		t.Fatalf("record: %+v, %v", rec, err)
	}
	st := *rec.Stats
	ci := *st.Effect.CI
	g := func(f float64) string { return fmt.Sprintf("%.4g", f) }
	effectQuote := func(e, low, high float64) string {
		return fmt.Sprintf("The mean difference was %s (95%% CI %s to %s).", g(e), g(low), g(high))
	}
	cases := []struct {
		name, id, quote, want string
	}{
		{"effect and CI", "analysis:an-1", effectQuote(effect, ci.Low, ci.High), research.CitationVerified},
		{"n", "analysis:an-1", fmt.Sprintf("The test read n = %d observations.", control+treated), research.CitationVerified},
		{"groups", "analysis:an-1", fmt.Sprintf("The group sizes were %d and %d.", control, treated), research.CitationVerified},
		{"statistic", "analysis:an-1", fmt.Sprintf("The statistic t was %s with %s degrees of freedom.", g(st.Statistic), g(st.DF)), research.CitationVerified},
		{"p", "analysis:an-1", fmt.Sprintf("The p-value was %s.", g(st.P)), research.CitationVerified},
		{"effect changed", "analysis:an-1", effectQuote(effect*1.2, ci.Low, ci.High), research.CitationContradicted},
		{"sign changed", "analysis:an-1", effectQuote(-effect, ci.Low, ci.High), research.CitationContradicted},
		{"low bound changed", "analysis:an-1", effectQuote(effect, ci.Low*0.8, ci.High), research.CitationContradicted},
		{"high bound changed", "analysis:an-1", effectQuote(effect, ci.Low, ci.High*1.2), research.CitationContradicted},
		{"p changed", "analysis:an-1", fmt.Sprintf("The p-value was %s.", g(st.P*3)), research.CitationContradicted},
		{"n changed", "analysis:an-1", fmt.Sprintf("The test read n = %d observations.", control+treated+2), research.CitationContradicted},
		{"no such analysis", "analysis:an-3", effectQuote(effect, ci.Low, ci.High), research.CitationInvented},
		{"a cut-short id", "analysis:an", effectQuote(effect, ci.Low, ci.High), research.CitationInvented},
		{"another analysis's numbers", "analysis:an-2", effectQuote(effect, ci.Low, ci.High), research.CitationContradicted},
	}
	results := []citation.Result{{Source: res.Source}, {Source: other.Source}}
	records := map[string]string{}
	for i, r := range results {
		tr, err := a.Store.ToolRecord(t.Context(), "s-1", r.Source)
		if err != nil {
			t.Fatal(err)
		}
		results[i].Content, records[r.Source] = tr.Content, tr.Content
	}
	for _, c := range cases {
		refs := citation.Resolve([]research.Reference{{ID: c.id, Quote: c.quote, Claim: "the treated arm responds more"}}, results, nil)
		got := citation.Check(refs, records)[0].Check
		if got.Verdict != c.want {
			t.Errorf("%s: %q cited as %s is %s (%s); want %s", c.name, c.quote, c.id, got.Verdict, got.Note, c.want)
		}
	}
}

// TestRenderAnalysisRefused: a refused run's rendering states its refusal and no numbers
// a quote could take for a result.
func TestRenderAnalysisRefused(t *testing.T) {
	content, err := renderAnalysis(store.AnalysisRecord{ID: "an-9", Hypothesis: "h-2", Kind: "exploratory", Test: stats.WelchT,
		Refused: "the sandbox refused the query (file): it reads a file"})
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := citation.FindRecord(content, "analysis:an-9")
	if !ok || !strings.Contains(rec.Text, "refused") || !strings.Contains(rec.Text, "reads a file") ||
		strings.Contains(rec.Text, "p-value") || !strings.Contains(rec.Text, "exploratory") {
		t.Errorf("refused run reads as %+v, %v", rec, ok)
	}
}

// TestNumber: values as the rendering writes them, four significant digits, powers of
// ten beyond plain decimals.
func TestNumber(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0"}, {1.23456, "1.235"}, {-0.000123456, "-0.0001235"}, {0.0000123456, "1.235 × 10^-5"},
		{2.5e-12, "2.5 × 10^-12"}, {9.99996e-7, "1 × 10^-6"}, {123456789, "1.235 × 10^8"}, {60, "60"},
	} {
		if got := number(c.in); got != c.want {
			t.Errorf("number(%g) = %q; want %q", c.in, got, c.want)
		}
	}
}
