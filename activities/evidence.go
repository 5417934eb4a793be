package activities

// An analysis as evidence (issue #46): hypotheses, reviews and answers cite an analysis
// as analysis:<id>, and the citation check reads the numbers they quote back from the
// record, as it reads a paper's. So each analysis record is also kept in the session's
// audit trail (a store.ToolRecord of the tool AnalysisTool), rendered as one source the
// citation package reads: an id, a title, and prose that states every number the record
// holds, each in a sentence of its own, so that a quote of a sentence is verified and a
// quote with a number changed is caught by the same number rules as a paper's.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/stats"
	"github.com/cosci-dev/cosci/internal/store"
)

// AnalysisScheme is the prefix an analysis is cited by: analysis:<id>.
const AnalysisScheme = "analysis:"

// analysisSource is an analysis's record as the audit trail keeps it: one source, whose
// id, title and text the citation package reads (its JSON reader takes "id", "title" and
// "text"). Kind and Hypothesis are for a reader of the trail; the text says them too.
type analysisSource struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Text       string `json:"text"`
	Kind       string `json:"kind,omitempty"`
	Hypothesis string `json:"hypothesis,omitempty"`
	Experiment string `json:"experiment,omitempty"`
}

// analysisEvidence writes an analysis record's rendering into the session's audit trail
// and returns its digest. The rendering is a function of the stored record alone, and
// the trail is content-addressed, so a re-run or a retry writes the same record and gets
// the same digest.
func (a *Activities) analysisEvidence(ctx context.Context, sessionID string, rec store.AnalysisRecord) (string, error) {
	content, err := renderAnalysis(rec)
	if err != nil {
		return "", err
	}
	args, err := json.Marshal(struct {
		ID string `json:"id"`
	}{AnalysisScheme + rec.ID})
	if err != nil {
		return "", err
	}
	return a.Store.PutToolRecord(ctx, sessionID, store.ToolRecord{Tool: AnalysisTool, Arguments: args, Content: content})
}

// renderAnalysis is the record as one citable source, in JSON.
func renderAnalysis(rec store.AnalysisRecord) (string, error) {
	src := analysisSource{
		ID: AnalysisScheme + rec.ID, Kind: orWord(rec.Kind, "unlabelled"),
		Hypothesis: rec.Hypothesis, Experiment: rec.Experiment,
		Title: analysisTitle(rec), Text: analysisText(rec),
	}
	b, err := json.MarshalIndent(src, "", "  ")
	if err != nil {
		return "", fmt.Errorf("render analysis %s: %w", rec.ID, err)
	}
	return string(b), nil
}

// analysisTitle names the test and the hypothesis.
func analysisTitle(rec store.AnalysisRecord) string {
	t := testName(rec.Test) + " of hypothesis " + orWord(rec.Hypothesis, "(none named)")
	if rec.Experiment != "" {
		t += ", experiment " + rec.Experiment
	}
	return t
}

// analysisText states the record's numbers, a sentence each, in the words a quote would
// use. A refused run states its refusal and no numbers.
func analysisText(rec store.AnalysisRecord) string {
	var s []string
	add := func(format string, a ...any) { s = append(s, fmt.Sprintf(format, a...)) }
	add("Analysis %s is %s.", rec.ID, kindWords(rec.Kind))
	add("It ran %s on the columns %s of the datasets %s.", testName(rec.Test), orWord(strings.Join(rec.Columns, ", "), "none"), inputsWords(rec.Inputs))
	add("The plan %s was fixed at %s and the analysis ran at %s.", shortDigest(rec.Plan), orWord(rec.PlannedAt, "an unknown time"), orWord(rec.Ran, "an unknown time"))
	if rec.RowCount > 0 || rec.Stats != nil {
		add("The query returned %d rows.", rec.RowCount)
		if rec.Dropped > 0 {
			add("The test dropped %d rows with a missing value.", rec.Dropped)
		}
	}
	if rec.Refused != "" {
		add("The analysis was refused and gave no numbers: %s", rec.Refused)
		return strings.Join(s, " ")
	}
	if rec.Stats == nil {
		add("The analysis gave no numbers.")
		return strings.Join(s, " ")
	}
	return strings.Join(append(s, statsText(*rec.Stats)...), " ")
}

// statsText states a test's result: n and the group sizes, the effect with its CI, the
// secondary effect, the statistic with its degrees of freedom, and p.
func statsText(r stats.Result) []string {
	var s []string
	add := func(format string, a ...any) { s = append(s, fmt.Sprintf(format, a...)) }
	total := 0
	for _, n := range r.N {
		total += n
	}
	add("The test read n = %d observations.", total)
	if len(r.N) > 1 {
		groups := make([]string, len(r.N))
		for i, n := range r.N {
			groups[i] = strconv.Itoa(n)
		}
		add("The group sizes were %s.", strings.Join(groups, " and "))
	}
	s = append(s, effectText(r.Effect))
	if r.Secondary != nil {
		s = append(s, effectText(*r.Secondary))
	}
	if r.StatisticName != "" {
		stat := fmt.Sprintf("The statistic %s was %s", r.StatisticName, number(r.Statistic))
		if r.DF > 0 {
			stat += fmt.Sprintf(" with %s degrees of freedom", number(r.DF))
		}
		add("%s.", stat)
	}
	add("The p-value was %s.", number(r.P))
	for _, n := range r.Notes {
		add("Note: %s.", strings.TrimSuffix(n, "."))
	}
	return s
}

// effectText states an effect and its 95% CI, if it has one.
func effectText(e stats.Effect) string {
	t := fmt.Sprintf("The %s was %s", orWord(e.Name, "effect"), number(e.Value))
	if e.CI != nil {
		level := "95%"
		if e.CI.Level > 0 && math.Abs(e.CI.Level-stats.Confidence) > 1e-9 {
			level = number(100*e.CI.Level) + "%"
		}
		t += fmt.Sprintf(" (%s CI %s to %s)", level, number(e.CI.Low), number(e.CI.High))
	}
	return t + "."
}

// number writes a value as a quote would: four significant digits, in plain decimals
// from 0.0001 to a million and as a power of ten beyond ("3.2 × 10^-7"), which the
// citation check reads as values.
func number(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "infinite"
	case math.IsInf(f, -1):
		return "minus infinite"
	case math.IsNaN(f):
		return "not a number"
	case f == 0:
		return "0"
	}
	a := math.Abs(f)
	if a >= 1e-4 && a < 1e6 {
		return strconv.FormatFloat(roundSig(f, 4), 'f', -1, 64)
	}
	exp := int(math.Floor(math.Log10(a)))
	m := roundSig(f/math.Pow(10, float64(exp)), 4)
	if math.Abs(m) >= 10 { // 9.99995 rounds up to 10
		m, exp = m/10, exp+1
	}
	return strconv.FormatFloat(m, 'f', -1, 64) + " × 10^" + strconv.Itoa(exp)
}

// roundSig rounds f to n significant digits.
func roundSig(f float64, n int) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', n, 64), 64)
	if err != nil {
		return f
	}
	return v
}

func kindWords(kind string) string {
	switch kind {
	case "pre-registered":
		return "the pre-registered test of its experiment"
	case "exploratory":
		return "exploratory: it is not the pre-registered test and does not count as one"
	}
	return "unlabelled: neither pre-registered nor exploratory"
}

// testName is the menu's name of a test in words.
func testName(test string) string {
	switch test {
	case stats.WelchT:
		return "Welch's t test"
	case stats.MannWhitney:
		return "the Mann-Whitney U test"
	case stats.Fisher:
		return "Fisher's exact test"
	case stats.ChiSquare:
		return "the chi-square test"
	case stats.Pearson:
		return "Pearson's correlation"
	case stats.Spearman:
		return "Spearman's correlation"
	case stats.LinearRegression:
		return "a simple linear regression"
	}
	return orWord(test, "no test")
}

func inputsWords(in []store.AnalysisInput) string {
	if len(in) == 0 {
		return "none"
	}
	w := make([]string, len(in))
	for i, d := range in {
		w[i] = fmt.Sprintf("%s (%s)", d.Table, shortDigest(d.Digest))
	}
	return strings.Join(w, ", ")
}

func orWord(s, word string) string {
	if strings.TrimSpace(s) == "" {
		return word
	}
	return s
}

// shortDigest is a digest's first 12 digits, as pages show it, without its algorithm's
// name (a plan's digest is "sha256:...").
func shortDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	return d[:min(12, len(d))]
}

// citable is what the workflow keeps of a stored record (runResult), with the digest of
// its rendering in the audit trail, written there first: a run is cited by that.
func (a *Activities) citable(ctx context.Context, in RunAnalysisInput, rec store.AnalysisRecord) (RunAnalysisResult, error) {
	source, err := a.analysisEvidence(ctx, in.SessionID, rec)
	if err != nil {
		return RunAnalysisResult{}, err
	}
	res := runResult(in.Plan, rec)
	res.Source = source
	return res, nil
}

// LabResult is one of the session's results from the lab as the workflow passes it to
// the next rounds' turns: small, the record itself stays in the audit trail under Source.
// Analysis is the run's id (cited as analysis:<id>); Kind pre-registered or exploratory;
// Standing what a pre-registered result made of the hypothesis ("" for an exploratory run).
type LabResult struct {
	Analysis   string             `json:"analysis"`
	Hypothesis string             `json:"hypothesis"`
	Experiment string             `json:"experiment,omitempty"`
	Source     string             `json:"source"`
	Kind       string             `json:"kind"`
	Standing   string             `json:"standing,omitempty"`
	Outcome    experiment.Outcome `json:"outcome,omitzero"`
}

// labResults reads each result's record from the audit trail, as the prompt shows it and
// the citation check reads it. A record the trail no longer holds, or holds changed, is
// left out: what cannot be checked is not shown as evidence.
func (a *Activities) labResults(ctx context.Context, sessionID string, refs []LabResult) ([]research.LabResult, error) {
	if len(refs) > prompt.MaxLabResults {
		refs = refs[len(refs)-prompt.MaxLabResults:]
	}
	var out []research.LabResult
	for _, r := range refs {
		if !validDigest(r.Source) { // a run recorded before analyses had one
			continue
		}
		tr, err := a.Store.ToolRecord(ctx, sessionID, r.Source)
		var damaged *store.DamagedError
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.As(err, &damaged):
			continue
		case err != nil:
			return nil, fmt.Errorf("read the record of analysis %s: %w", r.Analysis, err)
		}
		id := AnalysisScheme + r.Analysis
		rec, ok := citation.FindRecord(tr.Content, id)
		if tr.Tool != AnalysisTool || !ok {
			continue
		}
		out = append(out, research.LabResult{
			Analysis: id, Hypothesis: r.Hypothesis, Kind: r.Kind, Standing: r.Standing,
			Title: rec.Details.Title, Text: rec.Text, Source: r.Source, Content: tr.Content,
		})
	}
	return out, nil
}

// labFound are the lab's results a turn's prompt carried, as the citation package reads
// them: a hypothesis citing analysis:<id> is resolved to its record.
func labFound(c *research.Context) []citation.Result {
	if c == nil {
		return nil
	}
	var out []citation.Result
	for _, r := range c.Lab {
		out = append(out, citation.Result{Source: r.Source, Content: r.Content})
	}
	return out
}
