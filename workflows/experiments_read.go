package workflows

// The lab's results read by the next rounds (#46): the generation, evolution and
// meta-review turns are given the session's latest results, each by its analysis's
// record in the audit trail, which their prompts carry as data and their hypotheses may
// cite as analysis:<id> (the citation check reads the numbers back from the record).
// What is passed is small (ids, digests, labels, the outcome's numbers) and bounded.

import (
	"cmp"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/experiment"
)

// versionLabRead gates the reading: runs that passed a round's turns before it gave them
// no results, and replay so.
const versionLabRead = "lab-results-read"

// maxLabRead is how many results the turns are given: the latest (prompt.MaxLabResults).
const maxLabRead = 6

// labRead is the results a round's turns read: none before there are any, and none in a
// run that passed this point before the reading was built.
func (s *supervisor) labRead(ctx workflow.Context) []activities.LabResult {
	rs := s.labResults()
	if len(rs) == 0 || workflow.GetVersion(ctx, versionLabRead, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	return rs
}

// withLab is a turn's context with the lab's results.
func withLab(c activities.ContextRef, lab []activities.LabResult) activities.ContextRef {
	c.Lab = lab
	return c
}

// labResults are the analyses of the results that stand, in the order they ran, the
// latest maxLabRead: a withdrawn result's, or a withdrawn experiment's, are left out, as
// is a refused analysis or one with no record. A pre-registered run carries the standing
// its result gave; an exploratory run is labelled so and gives none.
func (s *supervisor) labResults() []activities.LabResult {
	type ran struct {
		event int64
		r     activities.LabResult
	}
	var all []ran
	for _, e := range s.Experiments {
		if e.State == experiment.Withdrawn || e.Result == nil || e.Result.Withdrawal != "" {
			continue
		}
		for _, l := range e.Labels {
			i := slices.IndexFunc(e.Analyses, func(a RunAnalysis) bool { return a.Run == l.Run.ID })
			if l.Run.Data != e.Result.Data || i < 0 || e.Analyses[i].Source == "" || e.Analyses[i].Refused {
				continue
			}
			an := e.Analyses[i]
			r := activities.LabResult{Analysis: l.Run.ID, Hypothesis: e.Hypothesis, Experiment: e.ID, Source: an.Source, Kind: string(l.Kind), Outcome: an.Outcome}
			if l.Kind == experiment.PreRegistered {
				r.Standing = string(e.Result.Standing)
			}
			all = append(all, ran{l.Run.Ran.Event, r})
		}
	}
	slices.SortStableFunc(all, func(a, b ran) int { return cmp.Compare(a.event, b.event) })
	if len(all) > maxLabRead {
		all = all[len(all)-maxLabRead:]
	}
	out := make([]activities.LabResult, len(all))
	for i, a := range all {
		out[i] = a.r
	}
	return out
}
