package workflows

// The lab in a session (issue #46): the lab's tables added by digest, experiments planned by
// the analyst, confirmed by the scientist (the confirming update's place in the history is
// the pre-registration), results analysed by the registered plan unchanged, and the
// standings they earn fed into the ranking. The session waits for the lab durably
// (experiments_wait.go). Every handler changes plain state only: the bytes of the tables,
// the analyses' records and the query texts' runs stay in the session store.

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/session"
)

// versionLab gates the lab: runs that passed this point before it refuse its updates and
// never wait for the lab (their histories hold neither).
const versionLab = "lab-experiments"

// The lab's updates and query. Each update has a validator; each accepted one is recorded
// in the session's event log with its update id and the digest of what it carried, which a
// desk's signature covers (internal/vouch), as the other commands are.
const (
	AddDataset         = "add-dataset"         // DatasetRequest -> LabAnswer
	PlanExperiment     = "plan-experiment"     // PlanRequest -> LabAnswer
	ConfirmExperiment  = "confirm-experiment"  // ConfirmExperimentRequest -> LabAnswer
	ExperimentResult   = "experiment-result"   // ResultRequest -> LabAnswer
	WithdrawResult     = "withdraw-result"     // WithdrawRequest -> LabAnswer
	WithdrawExperiment = "withdraw-experiment" // WithdrawRequest -> LabAnswer
	QueryExperiments   = "experiments"         // -> ExperimentsView
)

// Bounds that keep the lab's part of the carried state small.
const (
	maxDatasets    = 200
	maxExperiments = 100
	maxLabText     = 2000 // a prediction's or a reason's text, in bytes
)

// DatasetRequest announces a table whose bytes are already in the session store under
// Digest (store.PutDataset): the update's place in the history marks the data's arrival.
type DatasetRequest struct {
	Table   string `json:"table"`
	Digest  string `json:"digest"`
	Rows    int    `json:"rows"`
	Columns int    `json:"columns"`
	By      string `json:"by,omitempty"`
	BySig   string `json:"by_sig,omitempty"`
}

// PlanRequest asks the analyst for an experiment's plan for a hypothesis' prediction ("":
// the analyst states one from the hypothesis).
type PlanRequest struct {
	Hypothesis string `json:"hypothesis"`
	Prediction string `json:"prediction,omitempty"`
	By         string `json:"by,omitempty"`
	BySig      string `json:"by_sig,omitempty"`
}

// ConfirmExperimentRequest confirms an experiment's plan; Digest is the plan's digest the
// scientist was shown: another is refused, so nothing is registered but what was read.
type ConfirmExperimentRequest struct {
	Experiment string `json:"experiment"`
	Digest     string `json:"digest"`
	By         string `json:"by,omitempty"`
	BySig      string `json:"by_sig,omitempty"`
}

// ResultRequest gives an experiment its result: a dataset already added (its digest).
type ResultRequest struct {
	Experiment string `json:"experiment"`
	Data       string `json:"data"`
	By         string `json:"by,omitempty"`
	BySig      string `json:"by_sig,omitempty"`
}

// WithdrawRequest withdraws an experiment's result, or the experiment, for a reason.
type WithdrawRequest struct {
	Experiment string `json:"experiment"`
	Reason     string `json:"reason"`
	By         string `json:"by,omitempty"`
	BySig      string `json:"by_sig,omitempty"`
}

// LabDataset is a table of the session: its name, digest, size, and the history mark of
// its arrival.
type LabDataset struct {
	Table   string          `json:"table"`
	Digest  string          `json:"digest"`
	Rows    int             `json:"rows"`
	Columns int             `json:"columns"`
	Arrived experiment.Mark `json:"arrived"`
	At      Where           `json:"at"`
	Update  string          `json:"update,omitempty"`
}

// LabExperiment is an experiment as the session carries it: its state (experiment.Experiment),
// the plan itself (Spec, which the result's analysis runs unchanged), the analyses run on its
// result data with their labels, and what its latest result changed.
type LabExperiment struct {
	experiment.Experiment
	Spec experiment.Plan `json:"spec"`
	// ConfirmUpdate is the id of the update that confirmed the plan: with Confirmed.Event it
	// names the history event anyone can find with `temporal workflow show`.
	ConfirmUpdate string             `json:"confirm_update,omitempty"`
	ConfirmedAt   Where              `json:"confirmed_at,omitzero"`
	Runs          []experiment.Run   `json:"runs,omitempty"`
	Labels        []experiment.Label `json:"labels,omitempty"`
	Refused       string             `json:"refused,omitempty"` // why the registered analysis could not run
	Change        *experiment.Change `json:"change,omitempty"`
	// Analyses are what the runs' analyses gave, in the runs' order: the next rounds read
	// them (experiments_read.go).
	Analyses []RunAnalysis `json:"analyses,omitempty"`
}

// RunAnalysis is what a run's analysis gave: the digest of its record in the audit trail
// (activities.RunAnalysisResult.Source; "" for runs recorded before records had one), its
// outcome, and whether it was refused.
type RunAnalysis struct {
	Run     string             `json:"run"`
	Source  string             `json:"source,omitempty"`
	Outcome experiment.Outcome `json:"outcome,omitzero"`
	Refused bool               `json:"refused,omitempty"`
}

// LabAnswer answers the lab's updates: the experiment concerned (none for add-dataset)
// and the session's status.
type LabAnswer struct {
	Experiment *LabExperiment `json:"experiment,omitempty"`
	Dataset    *LabDataset    `json:"dataset,omitempty"`
	Status     Status         `json:"status"`
}

// ExperimentsView answers the experiments query.
type ExperimentsView struct {
	Experiments []LabExperiment    `json:"experiments"`
	Datasets    []LabDataset       `json:"datasets"`
	Waiting     experiment.LabWait `json:"waiting"`
	Why         string             `json:"why,omitempty"` // "waiting for the lab: ..."
}

var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// registerLab installs the lab's updates and query.
func (s *supervisor) registerLab(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryExperiments, func() (ExperimentsView, error) { return s.experimentsView(), nil }); err != nil {
		return err
	}
	if err := labUpdate(ctx, s, AddDataset, "Add a lab table already in the session store: {\"table\", \"digest\", \"rows\", \"columns\"}.", s.checkDataset, s.addDataset); err != nil {
		return err
	}
	if err := labUpdate(ctx, s, PlanExperiment, "Ask the analyst for an experiment's plan: {\"hypothesis\", \"prediction\"}.", s.checkPlan, s.planExperiment); err != nil {
		return err
	}
	if err := labUpdate(ctx, s, ConfirmExperiment, "Confirm an experiment's plan, pre-registering it: {\"experiment\", \"digest\"}.", s.checkConfirm, s.confirmExperiment); err != nil {
		return err
	}
	if err := labUpdate(ctx, s, ExperimentResult, "Give an experiment its result, a dataset added: {\"experiment\", \"data\"}.", s.checkResult, s.experimentResult); err != nil {
		return err
	}
	if err := labUpdate(ctx, s, WithdrawResult, "Withdraw an experiment's result, undoing its effect: {\"experiment\", \"reason\"}.", s.checkWithdrawResult, s.withdrawResult); err != nil {
		return err
	}
	return labUpdate(ctx, s, WithdrawExperiment, "Call an experiment off: {\"experiment\", \"reason\"}.", s.checkWithdrawExperiment, s.withdrawExperiment)
}

// labUpdate installs one of the lab's updates: check validates (and runs again in the
// handler, since the state may have moved between), do applies; both the accepted and the
// refused are recorded with who sent them and the update's id.
func labUpdate[Req any](ctx workflow.Context, s *supervisor, name, desc string,
	check func(Req) error, do func(workflow.Context, Req, string) (LabAnswer, string, error)) error {
	signer := func(r Req) (string, string) { return actor(any(r)) }
	return workflow.SetUpdateHandlerWithOptions(ctx, name,
		func(ctx workflow.Context, r Req) (LabAnswer, error) {
			by, sig := signer(r)
			cmd := session.Command{Name: name, By: session.CleanBy(by), BySig: sig}
			if info := workflow.GetCurrentUpdateInfo(ctx); info != nil {
				cmd.Update = info.ID
			}
			cmd.Signs = labDigest(name, r)
			err := s.labAllowed(name)
			if err == nil {
				err = check(r)
			}
			var ans LabAnswer
			detail := ""
			if err == nil {
				ans, detail, err = do(ctx, r, cmd.Update)
			}
			if err != nil {
				s.logCommand(cmd, "update", false, err.Error())
				return LabAnswer{}, rejected(err)
			}
			s.logCommand(cmd, "update", true, detail)
			s.labMoves++
			s.showNeeds(ctx)
			ans.Status = s.status()
			ans.Status.Detail = detail
			return ans, nil
		},
		workflow.UpdateHandlerOptions{Description: desc, Validator: func(ctx workflow.Context, r Req) error {
			if err := s.labAllowed(name); err != nil {
				return rejected(err)
			}
			return rejected(check(r))
		}})
}

// actor is who sent a lab request and the desk's signature of it.
func actor(r any) (string, string) {
	switch r := r.(type) {
	case DatasetRequest:
		return r.By, r.BySig
	case PlanRequest:
		return r.By, r.BySig
	case ConfirmExperimentRequest:
		return r.By, r.BySig
	case ResultRequest:
		return r.By, r.BySig
	case WithdrawRequest:
		return r.By, r.BySig
	}
	return "", ""
}

// labAllowed refuses the lab's updates in a run from before the lab and once the session
// cannot be steered.
func (s *supervisor) labAllowed(name string) error {
	if !s.lab {
		return fmt.Errorf("cannot %s: this session started before the lab's experiments", name)
	}
	return s.Life.CanSteer(name)
}

// mark is where the update being handled stands in the session's history: the id of the
// workflow task's started event, which precedes the update's accepted event in the same
// task (so `temporal workflow show --run-id RUN` finds the update's id just after it),
// counted on from the events of the session's earlier runs (HistoryBase), and the
// workflow time. Event ids only grow, so marks order what the history recorded, across
// continue-as-new too. Where says which run and event to look at.
func (s *supervisor) mark(ctx workflow.Context) (experiment.Mark, Where) {
	info := workflow.GetInfo(ctx)
	ev := int64(info.GetCurrentHistoryLength())
	return experiment.Mark{Event: s.HistoryBase + ev, Time: workflow.Now(ctx)}, Where{Run: info.WorkflowExecution.RunID, Event: ev}
}

// Where is a place in one run's history: what `temporal workflow show --workflow-id
// SESSION --run-id RUN` lists, the task's started event with the update accepted after it.
type Where struct {
	Run   string `json:"run"`
	Event int64  `json:"event"`
}

func (s *supervisor) dataset(digest string) (LabDataset, bool) {
	i := slices.IndexFunc(s.Datasets, func(d LabDataset) bool { return d.Digest == digest })
	if i < 0 {
		return LabDataset{}, false
	}
	return s.Datasets[i], true
}

func (s *supervisor) experiment(id string) (*LabExperiment, error) {
	i := slices.IndexFunc(s.Experiments, func(e LabExperiment) bool { return e.ID == id })
	if i < 0 {
		return nil, fmt.Errorf("the session has no experiment %q (see them with starter experiment list)", clipText(id, 40))
	}
	return &s.Experiments[i], nil
}

func (s *supervisor) checkDataset(r DatasetRequest) error {
	switch {
	case !tableName.MatchString(r.Table):
		return fmt.Errorf("add-dataset: table name %q is not a name (letters, digits and _, at most 63)", clipText(r.Table, 70))
	case !digestLike(r.Digest):
		return errors.New("add-dataset: the digest is not a content digest")
	case r.Rows < 0 || r.Columns < 0:
		return errors.New("add-dataset: rows and columns cannot be negative")
	case len(s.Datasets) >= maxDatasets:
		return fmt.Errorf("add-dataset: the session holds %d datasets, the most it keeps", maxDatasets)
	}
	return nil
}

func digestLike(d string) bool {
	return len(d) >= 8 && len(d) <= 100 && strings.IndexFunc(d, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == ':' || r == '-')
	}) < 0
}

// addDataset records the table; the same digest under the same name again is the same
// data and is accepted without a second arrival (a client that retries loses nothing).
func (s *supervisor) addDataset(ctx workflow.Context, r DatasetRequest, update string) (LabAnswer, string, error) {
	if d, ok := s.dataset(r.Digest); ok && d.Table == r.Table {
		return LabAnswer{Dataset: &d}, fmt.Sprintf("%s already added (%s), arrived at event %d", r.Table, short(r.Digest), d.Arrived.Event), nil
	}
	m, at := s.mark(ctx)
	d := LabDataset{Table: r.Table, Digest: r.Digest, Rows: r.Rows, Columns: r.Columns, Arrived: m, At: at, Update: update}
	s.Datasets = append(s.Datasets, d)
	return LabAnswer{Dataset: &d}, fmt.Sprintf("%s added: %d rows, %d columns, %s, arrived at event %d of run %s", d.Table, d.Rows, d.Columns, short(d.Digest), at.Event, at.Run), nil
}

// datasetRefs is the session's tables as analyses see them: the latest dataset of each
// name, with over (a result's data) in place of its name's.
func (s *supervisor) datasetRefs(over *LabDataset) []activities.DatasetRef {
	var refs []activities.DatasetRef
	seen := map[string]bool{}
	if over != nil {
		refs, seen[over.Table] = append(refs, activities.DatasetRef{Table: over.Table, Digest: over.Digest}), true
	}
	for i := len(s.Datasets) - 1; i >= 0; i-- {
		if d := s.Datasets[i]; !seen[d.Table] {
			seen[d.Table] = true
			refs = append(refs, activities.DatasetRef{Table: d.Table, Digest: d.Digest})
		}
	}
	slices.SortFunc(refs, func(a, b activities.DatasetRef) int { return strings.Compare(a.Table, b.Table) })
	return refs
}

func short(d string) string { return clipText(d, 19) }

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

func (s *supervisor) experimentsView() ExperimentsView {
	v := ExperimentsView{Experiments: slices.Clone(s.Experiments), Datasets: slices.Clone(s.Datasets)}
	v.Waiting = s.labWait()
	v.Why = v.Waiting.Why()
	return v
}
