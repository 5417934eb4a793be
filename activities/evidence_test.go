package activities

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
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

// alteringLab is the offline model, whose generation cites the lab's result it is given;
// with alter set it changes the effect's number in that quote, as a careless model would.
type alteringLab struct {
	simulator.Offline
	alter    bool
	from, to string
}

func (m *alteringLab) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, m, q)
}

func (m *alteringLab) Generate(ctx context.Context, req research.GenerateRequest) (research.Hypothesis, research.Usage, error) {
	h, u, err := m.Offline.Generate(ctx, req)
	for i, r := range h.References {
		if m.alter && strings.HasPrefix(r.ID, "analysis:") {
			h.References[i].Quote = strings.Replace(r.Quote, m.from, m.to, 1)
		}
	}
	return h, u, err
}

// TestGenerateReadsLabResults: a generation turn given the lab's results reads each
// record from the audit trail into its prompt (a record the trail lacks, or a run with no
// record, left out), and the hypothesis citing analysis:<id> is resolved to that record
// and checked against it: the simulator's quote is verified, the same quote with the
// effect changed is contradicted. The effect is the stats package's, computed from the
// data here.
func TestGenerateReadsLabResults(t *testing.T) {
	r, err := stats.Run(stats.WelchT, stats.Input{X: []float64{4.1, 5.2, 6.3, 5.9, 7.4, 6.6}, Y: []float64{3.0, 2.7, 4.4, 3.9, 3.1, 4.0}})
	if err != nil {
		t.Fatal(err)
	}
	effect := fmt.Sprintf("%.4g", r.Effect.Value)
	for _, alter := range []bool{false, true} {
		m := &alteringLab{alter: alter, from: effect, to: fmt.Sprintf("%.4g", r.Effect.Value+1)}
		env, a := newActivities(t, m)
		stored, err := a.Store.PutAnalysis(t.Context(), "s-1", store.AnalysisRecord{ID: "x-0001-run-1", Hypothesis: "h-0001", Kind: "pre-registered", Test: stats.WelchT, RowCount: 12, Stats: &r})
		if err != nil {
			t.Fatal(err)
		}
		src, err := a.analysisEvidence(t.Context(), "s-1", stored)
		if err != nil {
			t.Fatal(err)
		}
		in := generateInput("generate-h-0002")
		in.HypothesisID = "h-0002"
		in.Context.Lab = []LabResult{
			{Analysis: "x-0009-run-1", Hypothesis: "h-0009", Kind: "pre-registered"}, // recorded before analyses had a source
			{Analysis: "x-0008-run-1", Hypothesis: "h-0008", Kind: "exploratory", Source: strings.Repeat("0", 64)},
			{Analysis: "x-0001-run-1", Hypothesis: "h-0001", Kind: "pre-registered", Standing: "supported", Source: src},
		}
		var res GenerateResult
		if err := run(t, env, a.Generate, in, &res); err != nil {
			t.Fatal(err)
		}
		turn, _, err := a.Store.Turn(t.Context(), "s-1", "generate-h-0002")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(turn.Prompt, `<lab_result id="analysis:x-0001-run-1" hypothesis="h-0001" kind="pre-registered" standing="supported">`) ||
			!strings.Contains(turn.Prompt, "The mean difference was "+effect) || strings.Contains(turn.Prompt, "x-0008") || strings.Contains(turn.Prompt, "x-0009") {
			t.Fatalf("the prompt does not carry the one result with a record:\n%s", turn.Prompt)
		}
		h, err := a.Store.Hypothesis(t.Context(), "s-1", "h-0002")
		if err != nil || len(h.References) != 1 || h.References[0].Source != src {
			t.Fatalf("hypothesis %+v, %v; want one reference resolved to the record %s", h.References, err, src)
		}
		if alter && !strings.Contains(h.References[0].Quote, m.to) {
			t.Fatalf("the quote %q was not altered", h.References[0].Quote)
		}
		cited, err := a.cite(t.Context(), "s-1", h.References)
		want := map[bool]string{false: research.CitationVerified, true: research.CitationContradicted}[alter]
		if err != nil || cited[0].Check.Verdict != want {
			t.Errorf("altered %v: %q is %+v, %v; want %s", alter, h.References[0].Quote, cited[0].Check, err, want)
		}
	}
}
