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
		e := t.Experiment
		rs := append([]experiment.Result{}, e.Withdrawn...)
		if e.Result != nil {
			rs = append(rs, *e.Result)
		}
		for _, r := range rs {
			out = append(out, v.labSection(t, r))
		}
	}
	return out
}

func (v *view) labSection(t LabTest, r experiment.Result) labSection {
	e := t.Experiment
	verdict := string(r.Standing)
	if verdict == "" {
		verdict = "not analysed"
	}
	if r.Withdrawal != "" {
		verdict = "withdrawn"
	}
	s := labSection{Title: fmt.Sprintf("%s on %s: %s", e.ID, e.Hypothesis, verdict)}
	add := func(name, code, text string) { s.Fields = append(s.Fields, labField{name, code, text}) }
	hyp := ""
	if h, ok := v.in.Hypotheses[e.Hypothesis]; ok {
		hyp = h.Title
	}
	add("Hypothesis", e.Hypothesis, hyp)
	add("Prediction", "", predictionText(t.Prediction))
	add("Pre-registered", e.Plan, fixedText(t))
	add("Result", short12(r.Data), "arrived "+markText(r.Arrived))
	if r.Withdrawal != "" {
		add("Withdrawn", "", r.Withdrawal+" (it counts for nothing)")
	}
	if r.Standing != session.Untested {
		o := r.Outcome
		add("Effect", "", fmt.Sprintf("%s: %s, 95%% CI [%s, %s], p = %s, n = %d", orDash(o.Test), num(o.Effect), num(o.Low), num(o.High), num(o.P), o.N))
		add("Verdict", "", string(r.Standing)+": "+r.Why)
	}
	reg := experiment.Registration{Experiment: e.ID, Plan: e.Plan, Fixed: e.Confirmed}
	for _, l := range experiment.Classify(reg, experiment.Arrival{Data: r.Data, Arrived: r.Arrived}, t.Runs) {
		if l.Run.Data != r.Data {
			continue // a run on another result's data belongs to that result
		}
		if l.Kind == experiment.PreRegistered {
			add("Analysis", "analysis:"+l.Run.ID, "pre-registered, ran "+markText(l.Run.Ran))
		} else {
			add("Exploratory analysis", "analysis:"+l.Run.ID, "exploratory, counts for nothing: "+l.Why)
		}
	}
	return s
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

// labMarkdown writes the "Tested in the lab" section; nothing when no experiment has a
// result.
func labMarkdown(b *bytes.Buffer, v *view) {
	secs := v.labSections()
	if len(secs) == 0 {
		return
	}
	b.WriteString("## Tested in the lab\n\n")
	b.WriteString("Each result of an experiment: the plan was fixed in the session's history before the data arrived, and only its first run on the data counts; any other analysis is exploratory.\n\n")
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
}
