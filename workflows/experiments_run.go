package workflows

// The experiments' life in a session: planned by the analyst, confirmed (pre-registered),
// given a result that the registered plan analyses unchanged, withdrawn with a reason.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/session"
)

// labDigest is the digest of a lab request without who sent it and the signature (which
// the signature covers on its own), as session.Command.Digest is for the other commands.
//
//workflowcheck:ignore
func labDigest(name string, r any) string {
	b, _ := json.Marshal(r)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	delete(m, "by")
	delete(m, "by_sig")
	b, _ = json.Marshal(m) // a map's JSON has its keys sorted: the same every time
	return session.ActDigest(name, string(b))
}

func (s *supervisor) checkPlan(r PlanRequest) error {
	switch {
	case len(s.Experiments) >= maxExperiments:
		return fmt.Errorf("plan-experiment: the session holds %d experiments, the most it keeps", maxExperiments)
	case len(r.Prediction) > maxLabText:
		return fmt.Errorf("plan-experiment: the prediction is longer than %d bytes", maxLabText)
	}
	if _, ok := s.index[r.Hypothesis]; !ok {
		return fmt.Errorf("plan-experiment: the session has no hypothesis %q (see them with the state query)", clipText(r.Hypothesis, 40))
	}
	return nil
}

// planExperiment asks the analyst for the plan and keeps it, planned: nothing is
// registered until the scientist confirms its digest.
func (s *supervisor) planExperiment(ctx workflow.Context, r PlanRequest, _ string) (LabAnswer, string, error) {
	s.ExperimentSeq++
	id := fmt.Sprintf("x-%04d", s.ExperimentSeq)
	t := activities.Turn{SessionID: s.id, TurnID: "analyst-" + id, Goal: s.Goal, Provider: s.req.Config.Provider, Model: s.req.Config.Model, Seed: s.req.Config.Seed, Round: s.Rounds}
	in := activities.ProposeAnalysisInput{Turn: t, HypothesisID: r.Hypothesis, Prediction: strings.TrimSpace(r.Prediction), Datasets: s.datasetRefs(nil)}
	actx := workflow.WithActivityOptions(ctx, turnOptions("analyst: plan "+id+" for "+r.Hypothesis))
	var out activities.ProposeAnalysisResult
	err := workflow.ExecuteActivity(actx, a.ProposeAnalysis, in).Get(ctx, &out)
	s.spend(activities.AgentAnalyst, out.Usage)
	if err != nil {
		return LabAnswer{}, "", fmt.Errorf("plan-experiment: the analyst proposed no plan: %s", errorText(err))
	}
	// The digest registered is the one the workflow computes from the plan it keeps, never
	// one taken on trust; a proposal whose digest disagrees is refused.
	digest := planDigest(out.Plan)
	if out.Digest != "" && out.Digest != digest {
		return LabAnswer{}, "", errors.New("plan-experiment: the analyst's plan does not match its digest")
	}
	if out.Plan.Hypothesis != r.Hypothesis {
		return LabAnswer{}, "", fmt.Errorf("plan-experiment: the analyst's plan is for %q, not %s", clipText(out.Plan.Hypothesis, 40), r.Hypothesis)
	}
	e := LabExperiment{Experiment: experiment.New(id, r.Hypothesis, digest), Spec: out.Plan}
	s.Experiments = append(s.Experiments, e)
	return LabAnswer{Experiment: &e}, fmt.Sprintf("%s planned for %s: %s on %s; confirm digest %s", id, r.Hypothesis, out.Plan.Analysis.Test, strings.Join(out.Plan.Analysis.Columns, ", "), digest), nil
}

// planDigest is experiment.Plan.Digest: canonical JSON and a hash, deterministic.
//
//workflowcheck:ignore
func planDigest(p experiment.Plan) string { return p.Digest() }

func (s *supervisor) checkConfirm(r ConfirmExperimentRequest) error {
	e, err := s.experiment(r.Experiment)
	if err != nil {
		return err
	}
	if r.Digest != e.Plan {
		return fmt.Errorf("confirm-experiment: the plan of %s is not the one shown (digest %s, not %s): read it again", e.ID, short(e.Plan), clipText(r.Digest, 19))
	}
	if !experiment.CanMove(e.State, experiment.Confirmed) {
		return &experiment.TransitionError{Command: "confirm the plan", Experiment: e.ID, State: e.State}
	}
	return nil
}

// confirmExperiment fixes the plan in the history, and the session starts waiting for
// the lab's result.
func (s *supervisor) confirmExperiment(ctx workflow.Context, r ConfirmExperimentRequest, update string) (LabAnswer, string, error) {
	e, _ := s.experiment(r.Experiment)
	m, at := s.mark(ctx)
	if err := e.Confirm(m); err != nil {
		return LabAnswer{}, "", err
	}
	e.ConfirmUpdate, e.ConfirmedAt = update, at
	if err := e.Wait(m.Time); err != nil {
		return LabAnswer{}, "", err
	}
	c := *e
	return LabAnswer{Experiment: &c}, fmt.Sprintf("%s pre-registered: plan %s fixed at history event %d of run %s (update %s); waiting for the lab", e.ID, e.Plan, at.Event, at.Run, orDefault(update, "-")), nil
}

func (s *supervisor) checkResult(r ResultRequest) error {
	e, err := s.experiment(r.Experiment)
	if err != nil {
		return err
	}
	d, ok := s.dataset(r.Data)
	if !ok {
		return fmt.Errorf("experiment-result: the session has no dataset %s: add it first (starter data add)", clipText(r.Data, 19))
	}
	if err := expectedTable(e.Spec, d.Table); err != nil {
		return err
	}
	probe := e.Experiment
	probe.Withdrawn = append([]experiment.Result(nil), e.Withdrawn...)
	return probe.Receive(experiment.Arrival{Data: r.Data, Arrived: experiment.Mark{Event: 1}})
}

// expectedTable refuses a result under a table the plan does not expect: the registered
// query reads its tables by name, so data added under another name would leave the query
// reading the older table and the run would count, as the pre-registered test, on data
// that is not the result. (A validator: it never runs on replay, so it needs no version.)
func expectedTable(p experiment.Plan, table string) error {
	name, names := p.ExpectedTable(table)
	if name != "" || len(names) == 0 {
		return nil
	}
	return fmt.Errorf("experiment-result: the plan's query reads %s, not %s: add the result under the table it expects (starter data add --table %s)",
		strings.Join(names, ", "), table, names[0])
}

// experimentResult takes the result's data and runs the registered plan on it, unchanged;
// its run counts only if experiment.Classify says it is the pre-registered test, and only
// then does the hypothesis get a standing.
func (s *supervisor) experimentResult(ctx workflow.Context, r ResultRequest, _ string) (LabAnswer, string, error) {
	e, _ := s.experiment(r.Experiment)
	d, _ := s.dataset(r.Data)
	arrival := experiment.Arrival{Data: d.Digest, Arrived: d.Arrived}
	if err := e.Receive(arrival); err != nil {
		return LabAnswer{}, "", err
	}
	ran, _ := s.mark(ctx)
	if ran.Event == arrival.Arrived.Event {
		// The data arrived in this same workflow task (two updates handled at once): a
		// moment's timer puts the run in a later task, after the arrival in the history.
		_ = workflow.Sleep(ctx, time.Second)
		ran, _ = s.mark(ctx)
	}
	run := experiment.Run{ID: fmt.Sprintf("%s-run-%d", e.ID, len(e.Runs)+1), Plan: e.Plan, Data: d.Digest, Ran: ran}
	e.Runs = append(e.Runs, run)
	reg := experiment.Registration{Experiment: e.ID, Plan: e.Plan, Fixed: e.Confirmed}
	e.Labels = experiment.Classify(reg, arrival, e.Runs)
	kind := experiment.Exploratory
	for _, l := range e.Labels {
		if l.Run.ID == run.ID {
			kind = l.Kind
		}
	}
	in := activities.RunAnalysisInput{SessionID: s.id, ID: run.ID, Plan: e.Spec, Datasets: s.datasetRefs(&d), Kind: kind, PlannedAt: e.Confirmed.Time, Experiment: e.ID}
	var out activities.RunAnalysisResult
	id := e.ID
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, s.computeOptions("analyse "+id+"'s result")), a.RunAnalysis, in).Get(ctx, &out)
	e, _ = s.experiment(id) // other updates ran meanwhile: the slice may have moved
	if err == nil {
		e.Analyses = append(e.Analyses, RunAnalysis{Run: run.ID, Source: out.Source, Outcome: out.Outcome, Refused: out.Refused != ""})
	}
	switch {
	case err != nil:
		e.Refused = "the analysis failed: " + errorText(err)
	case out.Refused != "":
		e.Refused = out.Refused
	case kind != experiment.PreRegistered:
		e.Refused = "the run is exploratory and does not count: " + labelWhy(e.Labels, run.ID)
	default:
		v, jerr := experiment.Judge(e.Spec, out.Outcome)
		if jerr != nil {
			e.Refused = "the outcome cannot be judged: " + jerr.Error()
			break
		}
		e.Refused = ""
		if err := e.Analyse(out.Outcome, v); err != nil {
			return LabAnswer{}, "", err
		}
		s.applyStandings()
		ch := s.changeOf(id)
		e, _ = s.experiment(id)
		e.Change = ch
	}
	e, _ = s.experiment(id)
	c := *e
	if e.Refused != "" {
		return LabAnswer{Experiment: &c}, fmt.Sprintf("%s: result %s received (%s run); no standing: %s", id, short(d.Digest), kind, e.Refused), nil
	}
	return LabAnswer{Experiment: &c}, fmt.Sprintf("%s: %s %s (effect %.3g, %s); %s", id, e.Hypothesis, e.Result.Standing, e.Result.Outcome.Effect, e.Result.Outcome.Interval(), describeChange(e.Change)), nil
}

func labelWhy(labels []experiment.Label, run string) string {
	for _, l := range labels {
		if l.Run.ID == run {
			return l.Why
		}
	}
	return ""
}

// results is every result of the session's experiments, standing and withdrawn.
func (s *supervisor) results() []experiment.Result {
	exps := make([]experiment.Experiment, len(s.Experiments))
	for i, e := range s.Experiments {
		exps[i] = e.Experiment
	}
	return experiment.Results(exps)
}

// applyStandings sets every hypothesis' standing afresh from the active results
// (experiment.Apply), which is how a withdrawal undoes a result exactly.
func (s *supervisor) applyStandings() {
	s.Entries = experiment.Apply(s.Entries, s.results())
}

// changeOf is what the experiment's latest result (standing or withdrawn) changed.
func (s *supervisor) changeOf(id string) *experiment.Change {
	rs := s.results()
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Experiment == id && rs[i].Standing != session.Untested {
			c := experiment.Changed(s.Entries, rs, i)
			return &c
		}
	}
	return nil
}

func describeChange(c *experiment.Change) string {
	if c == nil {
		return "nothing changed"
	}
	s := fmt.Sprintf("%s: %s -> %s", c.Hypothesis, orDefault(string(c.Before), "untested"), orDefault(string(c.After), "untested"))
	for i, m := range c.Moves {
		if i == 5 {
			s += fmt.Sprintf(", and %d more moves", len(c.Moves)-5)
			break
		}
		s += fmt.Sprintf("; %s #%d -> #%d", m.Hypothesis, m.From, m.To)
	}
	return s
}

func checkReason(what, reason string) error {
	switch {
	case strings.TrimSpace(reason) == "":
		return fmt.Errorf("%s: say why (a failed assay, ...)", what)
	case len(reason) > maxLabText:
		return fmt.Errorf("%s: the reason is longer than %d bytes", what, maxLabText)
	}
	return nil
}

func (s *supervisor) checkWithdrawResult(r WithdrawRequest) error {
	if err := checkReason(WithdrawResult, r.Reason); err != nil {
		return err
	}
	e, err := s.experiment(r.Experiment)
	if err != nil {
		return err
	}
	if e.Result == nil {
		return &experiment.TransitionError{Command: "withdraw a result", Experiment: e.ID, State: e.State, Hint: "it has none"}
	}
	return nil
}

// withdrawResult undoes a result: the standings are computed afresh without it, and the
// experiment waits for the lab again, its plan still registered.
func (s *supervisor) withdrawResult(ctx workflow.Context, r WithdrawRequest, _ string) (LabAnswer, string, error) {
	e, _ := s.experiment(r.Experiment)
	if err := e.WithdrawResult(strings.TrimSpace(r.Reason), workflow.Now(ctx)); err != nil {
		return LabAnswer{}, "", err
	}
	e.Refused = ""
	ch := s.changeOf(e.ID) // what the result did while it stood, which this undoes
	s.applyStandings()
	e, _ = s.experiment(r.Experiment)
	e.Change = nil
	c := *e
	return LabAnswer{Experiment: &c}, fmt.Sprintf("%s: result withdrawn (%s); undone: %s; waiting for the lab again", e.ID, clipText(r.Reason, 200), describeChange(ch)), nil
}

func (s *supervisor) checkWithdrawExperiment(r WithdrawRequest) error {
	if err := checkReason(WithdrawExperiment, r.Reason); err != nil {
		return err
	}
	e, err := s.experiment(r.Experiment)
	if err != nil {
		return err
	}
	if !experiment.CanMove(e.State, experiment.Withdrawn) {
		return &experiment.TransitionError{Command: "withdraw", Experiment: e.ID, State: e.State, Hint: "it is already withdrawn"}
	}
	return nil
}

// withdrawExperiment calls the experiment off (and its result, if any): the session no
// longer waits for it.
func (s *supervisor) withdrawExperiment(_ workflow.Context, r WithdrawRequest, _ string) (LabAnswer, string, error) {
	e, _ := s.experiment(r.Experiment)
	if err := e.Withdraw(strings.TrimSpace(r.Reason)); err != nil {
		return LabAnswer{}, "", err
	}
	e.Change = nil
	s.applyStandings()
	e, _ = s.experiment(r.Experiment)
	c := *e
	return LabAnswer{Experiment: &c}, fmt.Sprintf("%s withdrawn: %s", e.ID, clipText(r.Reason, 200)), nil
}
