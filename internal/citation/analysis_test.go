package citation

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/stats"
)

// Two analyses' records as activities.RunAnalysis writes them into the audit trail (the
// tool lab.analysis), copied from its rendering of Welch's t on analysisData: the second
// is the same data with the groups the other way round.
const (
	analysisRecord1 = `{
  "id": "analysis:x-0001-run-1",
  "title": "Welch's t test of hypothesis h-3, experiment x-0001",
  "text": "Analysis x-0001-run-1 is the pre-registered test of its experiment. It ran Welch's t test on the columns treated, value of the datasets result (9f2c51d0aa41). The plan 4be1c0d2e3f4 was fixed at 2026-11-01T09:00:00Z and the analysis ran at 2026-11-20T14:30:00Z. The query returned 14 rows. The test dropped 2 rows with a missing value. The test read n = 12 observations. The group sizes were 6 and 6. The mean difference was -2.617 (95% CI -5.425 to 0.1916). The hedges g was -1.111. The statistic t was -2.086 with 9.665 degrees of freedom. The p-value was 0.06452.",
  "kind": "pre-registered",
  "hypothesis": "h-3",
  "experiment": "x-0001"
}`
	analysisRecord2 = `{
  "id": "analysis:x-0001-run-12",
  "title": "Welch's t test of hypothesis h-3, experiment x-0001",
  "text": "Analysis x-0001-run-12 is exploratory: it is not the pre-registered test and does not count as one. It ran Welch's t test on the columns treated, value of the datasets result (9f2c51d0aa41). The plan 4be1c0d2e3f4 was fixed at 2026-11-01T09:00:00Z and the analysis ran at 2026-11-20T14:30:00Z. The query returned 14 rows. The test dropped 2 rows with a missing value. The test read n = 12 observations. The group sizes were 6 and 6. The mean difference was 2.617 (95% CI -0.1916 to 5.425). The hedges g was 1.111. The statistic t was 2.086 with 9.665 degrees of freedom. The p-value was 0.06452.",
  "kind": "exploratory",
  "hypothesis": "h-3",
  "experiment": "x-0001"
}`
)

// analysisData are the groups the first record's test read (the second's, swapped).
var analysisData = stats.Input{X: []float64{1, 2, 3, 4, 5.5, 6}, Y: []float64{3, 4, 6, 7, 8, 9.2}}

// TestAnalysisRecords: the reader takes an analysis's record for exactly one source, named
// analysis:<id> whole, titled with its test and hypothesis.
func TestAnalysisRecords(t *testing.T) {
	recs := Records(analysisRecord1)
	if len(recs) != 1 || recs[0].Unsplit {
		t.Fatalf("%d records %+v; want one", len(recs), recs)
	}
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"analysis:x-0001-run-1", true}, {"Analysis: x-0001-run-1.", true},
		{"analysis:x-0001-run-12", false}, {"analysis:x-0001-run", false}, {"x-0001-run-1", false},
	} {
		if got := recs[0].Has(c.id); got != c.want {
			t.Errorf("the record names %q: %v, want %v", c.id, got, c.want)
		}
	}
	if d := recs[0].Details; d.ID != "analysis:x-0001-run-1" || d.Title != "Welch's t test of hypothesis h-3, experiment x-0001" {
		t.Errorf("details %+v", d)
	}
}

// TestAnalysisQuotes: numbers quoted from an analysis are checked as values, by the rules
// a paper's are: each quote is checked cited as the analysis and, the same text given as a
// paper's abstract, cited as the paper, and both must get the verdict wanted. The numbers
// quoted are the stats package's, computed here from the data (%.4g, as a writer rounds),
// not read from the record under test.
func TestAnalysisQuotes(t *testing.T) {
	r, err := stats.Run(stats.WelchT, analysisData)
	if err != nil {
		t.Fatal(err)
	}
	g := func(f float64) string { return fmt.Sprintf("%.4g", f) }
	effect := func(e, low, high float64) string {
		return fmt.Sprintf("The mean difference was %s (95%% CI %s to %s).", g(e), g(low), g(high))
	}
	e, ci := r.Effect.Value, *r.Effect.CI
	n := r.N[0] + r.N[1]
	cases := []struct {
		name, quote, want string
	}{
		{"effect and CI", effect(e, ci.Low, ci.High), research.CitationVerified},
		{"the effect alone", fmt.Sprintf("mean difference was %s", g(e)), research.CitationVerified},
		{"n", fmt.Sprintf("The test read n = %d observations.", n), research.CitationVerified},
		{"t, df and p", fmt.Sprintf("The statistic t was %s with %s degrees of freedom. The p-value was %s.", g(r.Statistic), g(r.DF), g(r.P)), research.CitationVerified},
		{"effect", effect(e*0.9, ci.Low, ci.High), research.CitationContradicted},
		{"sign", effect(-e, ci.Low, ci.High), research.CitationContradicted},
		{"low bound", effect(e, ci.Low-1, ci.High), research.CitationContradicted},
		{"high bound", effect(e, ci.Low, ci.High+1), research.CitationContradicted},
		{"high bound's sign", effect(e, ci.Low, -ci.High), research.CitationContradicted},
		{"p", fmt.Sprintf("The p-value was %s.", g(r.P/10)), research.CitationContradicted},
		{"n", fmt.Sprintf("The test read n = %d observations.", n+1), research.CitationContradicted},
		{"a group size", fmt.Sprintf("The group sizes were %d and %d.", r.N[0], r.N[1]+4), research.CitationContradicted},
	}
	const paperDOI = "10.5555/cosci.lab.1"
	text := Records(analysisRecord1)[0].Text
	paper := fmt.Sprintf(`{"doi": %q, "title": "A paper", "abstract": %q}`, paperDOI, text)
	results := []Result{{Source: "a1", Content: analysisRecord1}, {Source: "a2", Content: analysisRecord2}, {Source: "p", Content: paper}}
	records := map[string]string{"a1": analysisRecord1, "a2": analysisRecord2, "p": paper}
	for _, c := range cases {
		for _, id := range []string{"analysis:x-0001-run-1", paperDOI} {
			refs := Resolve([]research.Reference{{ID: id, Quote: c.quote}}, results, nil)
			if got := Check(refs, records)[0].Check; got.Verdict != c.want {
				t.Errorf("%s: %q cited as %s is %s (%s); want %s", c.name, c.quote, id, got.Verdict, got.Note, c.want)
			}
		}
	}
}

// TestAnalysisCitedWrong: a citation of an analysis no result holds is invented, a
// cut-short or run-on id included; a quote of one analysis cited as another, which holds
// other numbers, is not verified.
func TestAnalysisCitedWrong(t *testing.T) {
	quote := "The mean difference was -2.617 (95% CI -5.425 to 0.1916)."
	results := []Result{{Source: "a1", Content: analysisRecord1}, {Source: "a2", Content: analysisRecord2}}
	records := map[string]string{"a1": analysisRecord1, "a2": analysisRecord2}
	for _, c := range []struct {
		id, want string
	}{
		{"analysis:x-0001-run-1", research.CitationVerified},
		{"analysis:x-0001-run-2", research.CitationInvented},
		{"analysis:x-0001-run", research.CitationInvented},
		{"analysis:x-0001-run-123", research.CitationInvented},
		{"x-0001-run-1", research.CitationInvented}, // a key, not the analysis
		{"analysis:x-0001-run-12", research.CitationContradicted},
	} {
		refs := Resolve([]research.Reference{{ID: c.id, Quote: quote}}, results, nil)
		got := Check(refs, records)[0].Check
		if got.Verdict != c.want {
			t.Errorf("%q cited as %s is %s (%s); want %s", quote, c.id, got.Verdict, got.Note, c.want)
		}
	}
	// Given only the other analysis's record, the quote cannot be resolved to its own.
	refs := Resolve([]research.Reference{{ID: "analysis:x-0001-run-1", Quote: quote}}, results[1:], nil)
	if got := Check(refs, map[string]string{"a2": analysisRecord2})[0].Check; got.Verdict != research.CitationInvented || strings.Contains(refs[0].Source, "a2") {
		t.Errorf("cited against another analysis's result only: %+v, source %q", got, refs[0].Source)
	}
}
