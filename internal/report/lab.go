package report

// "Tested in the lab": each experiment's results, with what was predicted, when the plan
// was fixed in the session's history, what the registered analysis found and the verdict.
// One function (labSections) decides what is shown, as plain text; the Markdown keeps each
// value on one line and escapes it, the HTML page's template escapes it.

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/session"
)

// LabTest is one experiment as the session carries it, for the report: the experiment
// (its state, plan digest, the mark that fixed the plan, its standing result and the
// results withdrawn), the plan's prediction and test, where the plan was fixed (the
// confirming update's id and its run and event), and the analyses run on result data.
type LabTest struct {
	Experiment     experiment.Experiment `json:"experiment"`
	Prediction     experiment.Prediction `json:"prediction"`
	Test           string                `json:"test,omitempty"`
	ConfirmUpdate  string                `json:"confirm_update,omitempty"`
	ConfirmedRun   string                `json:"confirmed_run,omitempty"`
	ConfirmedEvent int64                 `json:"confirmed_event,omitempty"` // in ConfirmedRun
	Runs           []experiment.Run      `json:"runs,omitempty"`
}

// labField is one line of a result's entry: a name, an identifier shown as code (a
// digest, an analysis:<id>), and words. Both are plain text until rendered.
type labField struct{ Name, Code, Text string }

// labSection is one result of one experiment: the standing one, or one withdrawn.
type labSection struct {
	Title  string
	Fields []labField
}

// labSections are the report's lab results, in the experiments' order, each experiment's
// withdrawn results first and its standing one last (the order they arrived in).
func (v *view) labSections() []labSection {
	var out []labSection
	for _, t := range v.in.Lab {
		for _, r := range results(t.Experiment) {
			out = append(out, v.labSection(t, r))
		}
	}
	return out
}

func (v *view) labSection(t LabTest, r experiment.Result) labSection {
	e := t.Experiment
	s := labSection{Title: fmt.Sprintf("%s on %s: %s", e.ID, e.Hypothesis, verdictOf(r))}
	add := func(name, code, text string) { s.Fields = append(s.Fields, labField{name, code, text}) }
	add("Hypothesis", e.Hypothesis, v.hypothesisTitle(e.Hypothesis))
	add("Prediction", "", predictionText(t.Prediction))
	add("Pre-registered", e.Plan, fixedText(t))
	add("Result", short12(r.Data), "arrived "+markText(r.Arrived))
	if r.Withdrawal != "" {
		add("Withdrawn", "", r.Withdrawal+" (it counts for nothing)")
	}
	if r.Standing != session.Untested {
		o := r.Outcome
		ci := fmt.Sprintf("95%% CI [%s, %s]", num(o.Low), num(o.High))
		if o.NoCI {
			ci = o.Interval() // chi-square's V has none
		}
		add("Effect", "", fmt.Sprintf("%s: %s, %s, %s, n = %d", orDash(o.Test), num(o.Effect), ci, v.pq(registeredRun(t, r), o.P), o.N))
		add("Verdict", "", string(r.Standing)+": "+r.Why)
	}
	for _, l := range labels(t, r) {
		if l.Kind == experiment.PreRegistered {
			add("Analysis", "analysis:"+l.Run.ID, "pre-registered, ran "+markText(l.Run.Ran))
			continue
		}
		text := "exploratory, counts for nothing: " + l.Why
		if p, ok := v.family.p(l.Run.ID); ok {
			text += " (" + v.pq(l.Run.ID, p) + ")"
		}
		add("Exploratory analysis", "analysis:"+l.Run.ID, text)
	}
	return s
}

// verdictOf is a result's verdict in a word: its standing, "withdrawn", or "not analysed".
func verdictOf(r experiment.Result) string {
	switch {
	case r.Withdrawal != "":
		return "withdrawn"
	case r.Standing == session.Untested:
		return "not analysed"
	}
	return string(r.Standing)
}

func (v *view) hypothesisTitle(id string) string {
	if h, ok := v.in.Hypotheses[id]; ok {
		return h.Title
	}
	return ""
}

// pq is "p = …, q = …" for an analysis: q from the family (family.go); p alone when the
// analysis is not in it.
func (v *view) pq(id string, p float64) string {
	s := "p = " + num(p)
	if q, ok := v.family.q(id); ok {
		s += ", q = " + num(q)
	}
	return s
}

// familyNote says what q is, and over how many analyses.
func (v *view) familyNote() string {
	n := v.family.size()
	if n == 0 {
		return ""
	}
	s := fmt.Sprintf("q is the p-value adjusted by %s over the family of the session's %d analyses with a p-value, pre-registered and exploratory alike", QMethod, n)
	if n == 1 {
		s = "q is the p-value adjusted by " + QMethod + " over the session's analyses with a p-value: a family of 1 here, so q = p"
	}
	if k := len(v.family.refused); k > 0 {
		s += fmt.Sprintf(" (%d more were refused and have none)", k)
	}
	return s + "; a standing is judged from its pre-registered analysis's own CI, not from q."
}

// familyRow is one analysis of the family as the report's table shows it.
type familyRow struct {
	ID, Kind, Hypothesis, Test, P, Q string
}

// familyRows are the family, in the order the analyses ran.
func (v *view) familyRows() []familyRow {
	var out []familyRow
	for _, m := range v.family.members {
		out = append(out, familyRow{ID: "analysis:" + m.ID, Kind: orDash(m.Kind), Hypothesis: orDash(m.Hypothesis), Test: orDash(m.Test), P: num(m.p), Q: num(m.q)})
	}
	return out
}

func predictionText(p experiment.Prediction) string {
	s := orDash(p.Text)
	if p.Direction != "" {
		s += " (direction: " + string(p.Direction)
		if p.MinEffect > 0 {
			s += "; smallest effect of interest: " + num(p.MinEffect)
		}
		s += ")"
	}
	return s
}

// fixedText says where the plan was fixed: the update, its run and event, the session's
// event count and the time, so `temporal workflow show` can find it.
func fixedText(t LabTest) string {
	m := t.Experiment.Confirmed
	if m.Event <= 0 {
		return "not fixed in the history"
	}
	s := "fixed at session event " + strconv.FormatInt(m.Event, 10) + ", " + session.Stamp(m.Time)
	if t.ConfirmUpdate != "" {
		s += ", by update " + t.ConfirmUpdate
	}
	if t.ConfirmedRun != "" {
		s += fmt.Sprintf(" (run %s, event %d)", t.ConfirmedRun, t.ConfirmedEvent)
	}
	return s
}

func markText(m experiment.Mark) string {
	if m.Event <= 0 {
		return "(not recorded)"
	}
	return session.Stamp(m.Time) + " (session event " + strconv.FormatInt(m.Event, 10) + ")"
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

// short12 is a digest's first 12 characters after its "sha256:", as the starter shows it.
func short12(d string) string {
	const p = "sha256:"
	if len(d) > len(p) && d[:len(p)] == p {
		d = d[len(p):]
	}
	return d[:min(len(d), 12)]
}

// labMarkdown writes the "Tested in the lab" section: each experiment's results, then the
// family of analyses the q-values adjust over; nothing when the session has neither.
func labMarkdown(b *bytes.Buffer, v *view) {
	secs := v.labSections()
	rows := v.familyRows()
	if len(secs) == 0 && len(rows) == 0 {
		return
	}
	b.WriteString("## Tested in the lab\n\n")
	b.WriteString(labIntro + "\n\n")
	if note := v.familyNote(); note != "" {
		b.WriteString(mdText(note) + "\n\n")
	}
	for _, s := range secs {
		fmt.Fprintf(b, "### %s\n\n", mdText(s.Title))
		for _, f := range s.Fields {
			val := mdText(f.Text)
			if f.Code != "" {
				val = strings.TrimSpace(code(f.Code) + " " + val)
			}
			fmt.Fprintf(b, "- **%s:** %s\n", f.Name, orDash(val))
		}
		b.WriteString("\n")
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "### %s\n\n", familyHeading)
	b.WriteString("| Analysis | Kind | Hypothesis | Test | p | q |\n|---|---|---|---|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", code(r.ID), cell(r.Kind), cell(r.Hypothesis), cell(r.Test), r.P, r.Q)
	}
	b.WriteString("\n")
}

const (
	labIntro      = "Each result of an experiment: the plan was fixed in the session's history before the data arrived, and only its first run on the data counts; any other analysis is exploratory."
	familyHeading = "Every analysis with a p-value"
)
