package workflows

import "github.com/cosci-dev/cosci/internal/report"

// labTests are the session's experiments as the report shows them ("Tested in the lab"):
// what the workflow's state holds of each (its ids, digests, history marks, outcomes and
// the plan's prediction), passed to the Report activity, which reads the texts of the
// hypotheses from the store.
func (s *supervisor) labTests() []report.LabTest {
	var out []report.LabTest
	for _, e := range s.Experiments {
		out = append(out, report.LabTest{
			Experiment: e.Experiment, Prediction: e.Spec.Prediction, Test: e.Spec.Analysis.Test,
			ConfirmUpdate: e.ConfirmUpdate, ConfirmedRun: e.ConfirmedAt.Run, ConfirmedEvent: e.ConfirmedAt.Event,
			Runs: e.Runs,
		})
	}
	return out
}
