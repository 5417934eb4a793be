package report

// report.json's lab: the facts of "Tested in the lab" (lab.go) as fields, for tools, and
// the family of analyses the q-values adjust over (family.go). The same decisions as the
// Markdown's: which run counted (experiment.Classify), the q of an analysis; only the
// form differs. See the schema in export.go.

import (
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/session"
)

// exportLab is one experiment, planned ones included (their results are empty).
type exportLab struct {
	Experiment      string           `json:"experiment"`
	Hypothesis      string           `json:"hypothesis"`
	HypothesisTitle string           `json:"hypothesis_title"`
	State           string           `json:"state"`
	Prediction      exportPrediction `json:"prediction"`
	Test            string           `json:"test"`
	PlanDigest      string           `json:"plan_digest"`
	// PreRegistration is where the plan was fixed; null until it was confirmed.
	PreRegistration *exportPreRegistration `json:"pre_registration"`
	CalledOff       string                 `json:"called_off"` // why the experiment was withdrawn; "" if it was not
	Results         []exportLabResult      `json:"results"`
}

type exportPrediction struct {
	Text      string  `json:"text"`
	Direction string  `json:"direction"`
	MinEffect float64 `json:"min_effect"`
}

// exportPreRegistration names the history event that fixed the plan: the confirming
// update's id, the run and the event in it (`temporal workflow show` finds it), and the
// session's own event count and time.
type exportPreRegistration struct {
	Update       string `json:"update"`
	Run          string `json:"run"`
	Event        int64  `json:"event"`
	SessionEvent int64  `json:"session_event"`
	Time         string `json:"time"`
}

// exportLabResult is one result of an experiment: the standing one, or one withdrawn.
type exportLabResult struct {
	Data         string `json:"data"` // the result dataset's content digest
	Arrived      string `json:"arrived"`
	ArrivedEvent int64  `json:"arrived_event"`
	Withdrawn    string `json:"withdrawn"` // the reason; "" while the result stands
	// Verdict is the standing the result earned (supported, refuted, inconclusive), or ""
	// when it was not analysed; a withdrawn result keeps the one it had.
	Verdict string `json:"verdict"`
	Why     string `json:"why"`
	// Outcome is the registered analysis's figures; null when it was not analysed.
	Outcome *exportOutcome `json:"outcome"`
	// AnalysisID is the analysis that counted (its pre-registered run), Citation the
	// same as cited in texts (analysis:<id>); both "" when none ran.
	AnalysisID  string              `json:"analysis_id"`
	Citation    string              `json:"citation"`
	Ran         string              `json:"ran"`
	Exploratory []exportExploratory `json:"exploratory"`
}

type exportOutcome struct {
	Test   string  `json:"test"`
	Effect float64 `json:"effect"`
	// CILow and CIHigh are the effect's 95% interval, null for a test that has none
	// (chi-square's Cramér's V).
	CILow  *float64 `json:"ci_low"`
	CIHigh *float64 `json:"ci_high"`
	P      float64  `json:"p"`
	// Q is P adjusted over the session's analyses (Benjamini-Hochberg); null when the
	// analysis is not in the family.
	Q *float64 `json:"q"`
	N int      `json:"n"`
}

// exportExploratory is another run on a result's data: it counts for nothing, and says why.
type exportExploratory struct {
	AnalysisID string   `json:"analysis_id"`
	Citation   string   `json:"citation"`
	Label      string   `json:"label"` // "exploratory"
	Why        string   `json:"why"`
	Ran        string   `json:"ran"`
	P          *float64 `json:"p"` // null when the family does not hold it
	Q          *float64 `json:"q"`
}

// exportAnalyses is the family q adjusts over, and the analyses outside it.
type exportAnalyses struct {
	Method     string                  `json:"q_method"`
	FamilySize int                     `json:"family_size"`
	Family     []exportFamilyMember    `json:"family"`
	Refused    []exportRefusedAnalysis `json:"refused"`
}

type exportFamilyMember struct {
	ID         string  `json:"id"`
	Kind       string  `json:"kind"`
	Hypothesis string  `json:"hypothesis"`
	Experiment string  `json:"experiment"`
	Test       string  `json:"test"`
	Ran        string  `json:"ran"`
	P          float64 `json:"p"`
	Q          float64 `json:"q"`
}

type exportRefusedAnalysis struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Refused string `json:"refused"`
}

func (v *view) exportLab() []exportLab {
	out := []exportLab{}
	for _, t := range v.in.Lab {
		e := t.Experiment
		x := exportLab{
			Experiment: e.ID, Hypothesis: e.Hypothesis, HypothesisTitle: v.hypothesisTitle(e.Hypothesis), State: string(e.State),
			Prediction: exportPrediction{Text: t.Prediction.Text, Direction: string(t.Prediction.Direction), MinEffect: t.Prediction.MinEffect},
			Test:       t.Test, PlanDigest: e.Plan, CalledOff: e.Reason, Results: []exportLabResult{},
		}
		if e.Confirmed.Event > 0 {
			x.PreRegistration = &exportPreRegistration{Update: t.ConfirmUpdate, Run: t.ConfirmedRun, Event: t.ConfirmedEvent,
				SessionEvent: e.Confirmed.Event, Time: markTime(e.Confirmed)}
		}
		for _, r := range results(e) {
			x.Results = append(x.Results, v.exportLabResult(t, r))
		}
		out = append(out, x)
	}
	return out
}

func (v *view) exportLabResult(t LabTest, r experiment.Result) exportLabResult {
	x := exportLabResult{Data: r.Data, Arrived: markTime(r.Arrived), ArrivedEvent: r.Arrived.Event, Withdrawn: r.Withdrawal,
		Verdict: string(r.Standing), Why: r.Why, Exploratory: []exportExploratory{}}
	if r.Standing != session.Untested {
		o := r.Outcome
		x.Outcome = &exportOutcome{Test: o.Test, Effect: o.Effect, P: o.P, N: o.N, Q: v.qOf(registeredRun(t, r))}
		if !o.NoCI {
			x.Outcome.CILow, x.Outcome.CIHigh = &o.Low, &o.High
		}
	}
	for _, l := range labels(t, r) {
		if l.Kind == experiment.PreRegistered {
			x.AnalysisID, x.Citation, x.Ran = l.Run.ID, "analysis:"+l.Run.ID, markTime(l.Run.Ran)
			continue
		}
		ex := exportExploratory{AnalysisID: l.Run.ID, Citation: "analysis:" + l.Run.ID, Label: string(l.Kind), Why: l.Why,
			Ran: markTime(l.Run.Ran), Q: v.qOf(l.Run.ID)}
		if p, ok := v.family.p(l.Run.ID); ok {
			ex.P = &p
		}
		x.Exploratory = append(x.Exploratory, ex)
	}
	return x
}

// qOf is an analysis's q, or nil when the family does not hold it.
func (v *view) qOf(id string) *float64 {
	if q, ok := v.family.q(id); ok {
		return &q
	}
	return nil
}

func (v *view) exportAnalyses() exportAnalyses {
	f := v.family
	x := exportAnalyses{Method: QMethod, FamilySize: f.size(), Family: []exportFamilyMember{}, Refused: []exportRefusedAnalysis{}}
	for _, m := range f.members {
		x.Family = append(x.Family, exportFamilyMember{ID: m.ID, Kind: m.Kind, Hypothesis: m.Hypothesis, Experiment: m.Experiment,
			Test: m.Test, Ran: m.Ran, P: m.p, Q: m.q})
	}
	for _, a := range f.refused {
		x.Refused = append(x.Refused, exportRefusedAnalysis{ID: a.ID, Kind: a.Kind, Refused: a.Refused})
	}
	return x
}

// markTime is a history mark's time as the report stamps times; "" when it was never
// recorded.
func markTime(m experiment.Mark) string {
	if m.Event <= 0 {
		return ""
	}
	return session.Stamp(m.Time)
}
