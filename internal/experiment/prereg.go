package experiment

import (
	"cmp"
	"slices"
	"time"
)

// Mark is a point in the session's workflow history: the event that recorded something
// and its time. Event ids only grow, and the history is the record nobody can rewrite, so
// order is read from the event ids; times are for people.
type Mark struct {
	Event int64     `json:"event"`
	Time  time.Time `json:"time"`
}

// Before reports whether m was recorded before n. A zero mark was never recorded.
func (m Mark) Before(n Mark) bool { return m.Event > 0 && n.Event > 0 && m.Event < n.Event }

// Registration is an experiment's confirmed plan: its digest and the history event that
// fixed it.
type Registration struct {
	Experiment string `json:"experiment"`
	Plan       string `json:"plan"` // Plan.Digest
	Fixed      Mark   `json:"fixed"`
}

// Arrival is a result's data reaching the session: its content digest and when.
type Arrival struct {
	Data    string `json:"data"` // the dataset's content digest
	Arrived Mark   `json:"arrived"`
}

// Run is one analysis run: the digest of the plan it ran (its query, test, columns and
// prediction, whoever wrote them and whenever they were fixed), the data it ran on, and
// the event that recorded it.
type Run struct {
	ID   string `json:"id"`
	Plan string `json:"plan"`
	Data string `json:"data"`
	Ran  Mark   `json:"ran"`
}

// Kind says whether a run is the pre-registered test or exploratory.
type Kind string

const (
	PreRegistered Kind = "pre-registered"
	Exploratory   Kind = "exploratory"
)

// Label is a run's kind with the reason, for the pages that show it.
type Label struct {
	Run  Run    `json:"run"`
	Kind Kind   `json:"kind"`
	Why  string `json:"why"`
}

// Classify labels every run of an experiment's result data. A run is the pre-registered
// test only if all of these hold:
//
//   - its plan's digest is the registered plan's (the same query, test, columns and
//     prediction, byte for byte);
//   - the plan was fixed in the history before the result data arrived;
//   - it ran on the data that arrived (its digest), after it arrived;
//   - it is the first run of that plan on that data, in history order.
//
// Every other run is exploratory, and says why: another plan (a subgroup, another column,
// another test chosen after seeing the data), a plan fixed too late, other data, or a
// repeat. At most one run is pre-registered, whatever the runs and their order in runs;
// the labels come in history order.
func Classify(reg Registration, data Arrival, runs []Run) []Label {
	order := slices.Clone(runs)
	slices.SortStableFunc(order, func(a, b Run) int { return cmp.Compare(a.Ran.Event, b.Ran.Event) })
	labels := make([]Label, 0, len(runs))
	counted := false
	for _, r := range order {
		why := ""
		switch {
		case r.Data != data.Data:
			why = "it ran on other data than the result"
		case r.Plan != reg.Plan:
			why = "its plan is not the registered plan"
		case !reg.Fixed.Before(data.Arrived):
			why = "the plan was not fixed before the data arrived"
		case !data.Arrived.Before(r.Ran):
			why = "it ran before the data arrived"
		case counted:
			why = "a repeat: the registered plan already ran on this data"
		}
		if why != "" {
			labels = append(labels, Label{r, Exploratory, why})
			continue
		}
		counted = true
		labels = append(labels, Label{r, PreRegistered, "the registered plan, fixed before the data arrived, its first run on the data"})
	}
	return labels
}

// Counted is the run that counts as the experiment's pre-registered test, if any.
func Counted(reg Registration, data Arrival, runs []Run) (Run, bool) {
	for _, l := range Classify(reg, data, runs) {
		if l.Kind == PreRegistered {
			return l.Run, true
		}
	}
	return Run{}, false
}
