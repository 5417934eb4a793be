package report

// The family of tests the report's q-values adjust over (issue #46): every analysis the
// session ran that has a p-value, pre-registered and exploratory alike, those a turn asked
// for through the lab's tool included, adjusted together by Benjamini-Hochberg
// (stats.AdjustBH, R's p.adjust(method = "BH")). A session that runs many analyses finds
// some small p-values by chance; q says how many of its findings survive a false discovery
// rate, and the family's size says over how many tests. The standing of a hypothesis is
// still judged from its pre-registered analysis's own CI (docs/experiments.md says why):
// the report shows q beside p, and changes nothing the workflow decided.

import (
	"math"

	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/stats"
)

// Analysis is one analysis the session ran, as its record in the session store has it
// (store.AnalysisRecord, analyses/<id>.json): what the report needs to place it in the
// family. P is nil when the analysis has no p-value (the sandbox or the test refused it).
type Analysis struct {
	ID         string   `json:"id"`
	Hypothesis string   `json:"hypothesis,omitempty"`
	Experiment string   `json:"experiment,omitempty"`
	Kind       string   `json:"kind"` // experiment.Kind: pre-registered or exploratory
	Test       string   `json:"test"`
	Ran        string   `json:"ran"` // session.Stamp
	P          *float64 `json:"p,omitempty"`
	Refused    string   `json:"refused,omitempty"`
}

// QMethod names the adjustment in the report's words and in report.json.
const QMethod = "Benjamini-Hochberg"

// familyMember is an analysis of the family with its q-value.
type familyMember struct {
	Analysis
	p, q float64
}

// family is the session's analyses with a p-value, in the order they ran, each with its
// q; refused counts those without a p-value, which are not in it.
type family struct {
	members []familyMember
	byID    map[string]int // index into members
	refused []Analysis
}

// newFamily gathers the family from the store's records and, for a result whose
// analysis the input holds no record of (a report rendered from the workflow's state
// alone), from the outcome the workflow kept: an analysis the session ran is in the family
// whether or not its record was read.
func newFamily(in Input) family {
	f := family{byID: map[string]int{}}
	add := func(a Analysis, p float64) {
		if _, dup := f.byID[a.ID]; dup || math.IsNaN(p) || p < 0 || p > 1 {
			return
		}
		f.byID[a.ID] = len(f.members)
		f.members = append(f.members, familyMember{Analysis: a, p: p})
	}
	for _, a := range in.Analyses {
		if a.P == nil {
			f.refused = append(f.refused, a)
			continue
		}
		add(a, *a.P)
	}
	for _, t := range in.Lab {
		for _, r := range results(t.Experiment) {
			if id := registeredRun(t, r); id != "" && r.Standing != session.Untested {
				add(Analysis{ID: id, Hypothesis: r.Hypothesis, Experiment: r.Experiment, Kind: string(experiment.PreRegistered),
					Test: r.Outcome.Test}, r.Outcome.P)
			}
		}
	}
	ps := make([]float64, len(f.members))
	for i, m := range f.members {
		ps[i] = m.p
	}
	qs, err := stats.AdjustBH(ps)
	if err != nil {
		return family{byID: map[string]int{}} // unreachable: only p-values were added
	}
	for i := range f.members {
		f.members[i].q = qs[i]
	}
	return f
}

// q is an analysis's q-value; false when it is not in the family.
func (f family) q(id string) (float64, bool) {
	i, ok := f.byID[id]
	if !ok {
		return 0, false
	}
	return f.members[i].q, true
}

// p is an analysis's p-value as the family holds it; false when it is not in it.
func (f family) p(id string) (float64, bool) {
	i, ok := f.byID[id]
	if !ok {
		return 0, false
	}
	return f.members[i].p, true
}

// size is how many analyses the family holds: the n of every q.
func (f family) size() int { return len(f.members) }

// results are an experiment's results, withdrawn first and the standing one last (the
// order they arrived in).
func results(e experiment.Experiment) []experiment.Result {
	rs := append([]experiment.Result{}, e.Withdrawn...)
	if e.Result != nil {
		rs = append(rs, *e.Result)
	}
	return rs
}

// labels are the runs on a result's data, each with its kind and why.
func labels(t LabTest, r experiment.Result) []experiment.Label {
	e := t.Experiment
	reg := experiment.Registration{Experiment: e.ID, Plan: e.Plan, Fixed: e.Confirmed}
	var out []experiment.Label
	for _, l := range experiment.Classify(reg, experiment.Arrival{Data: r.Data, Arrived: r.Arrived}, t.Runs) {
		if l.Run.Data == r.Data { // a run on another result's data belongs to that result
			out = append(out, l)
		}
	}
	return out
}

// registeredRun is the id of the analysis that counted for a result: its pre-registered
// run; "" when none did.
func registeredRun(t LabTest, r experiment.Result) string {
	for _, l := range labels(t, r) {
		if l.Kind == experiment.PreRegistered {
			return l.Run.ID
		}
	}
	return ""
}
