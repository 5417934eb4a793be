package main

// `starter data add` and `starter experiment ...`: the lab's tables and experiments of a
// session (issue #46). A table is read here (internal/dataset), refused with the reason if
// it cannot be read right, stored in the session store by digest, and only then announced
// to the session, whose history marks its arrival.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

const (
	dataArgs       = "add --session ID (FILE | --from-worker NAME [--lab-data-queue Q]) [--table NAME] [--max-dataset-mb N]"
	experimentArgs = "plan|confirm|result|withdraw|list --session ID [...]"
)

// labFlags are every flag of the lab's commands; each subcommand requires its own.
type labFlags struct {
	sub        string
	session    string
	file       string
	fromWorker string // a file's name in the data folder of a worker (--lab-data)
	labQueue   string
	table      string
	maxMB      int
	hypothesis string
	prediction string
	experiment string
	digest     string
	reason     string
	callOff    bool
}

// parseLab reads `starter data|experiment SUB [flags] [FILE]`.
func parseLab(group string, args []string) (labFlags, error) {
	var f labFlags
	subs := map[string][]string{"data": {"add"}, "experiment": {"plan", "confirm", "result", "withdraw", "list"}}[group]
	if len(args) == 0 || !contains(subs, args[0]) {
		if wantsHelp(args) {
			fmt.Fprintf(stdout, "Usage: starter %s %s\n", group, map[string]string{"data": dataArgs, "experiment": experimentArgs}[group])
			return f, errHelp
		}
		return f, usageErrorf("starter %s needs one session ID and one of %s: starter %s %s", group, strings.Join(subs, ", "), group,
			map[string]string{"data": dataArgs, "experiment": experimentArgs}[group])
	}
	f.sub = args[0]
	fs := newFlagSet(group+" "+f.sub, "--session ID ...", "The lab's tables and experiments of a session.")
	fs.StringVar(&f.session, "session", "", "the session's ID")
	fs.StringVar(&f.table, "table", "", "the table's name in analyses (default: the file's name; for a result, the table the plan's query reads)")
	fs.StringVar(&f.fromWorker, "from-worker", "", "add the file of this name from the data folder of a worker started with --lab-data, instead of a FILE here")
	fs.StringVar(&f.labQueue, "lab-data-queue", activities.LabDataQueue, "the task queue of the worker whose data folder holds --from-worker's file")
	fs.IntVar(&f.maxMB, "max-dataset-mb", dataset.DefaultMaxBytes>>20, "refuse a file larger than this, in MB")
	fs.StringVar(&f.hypothesis, "hypothesis", "", "the hypothesis' id (h-0003)")
	fs.StringVar(&f.prediction, "prediction", "", "the testable prediction, in words (default: the analyst states one)")
	fs.StringVar(&f.experiment, "experiment", "", "the experiment's id (x-0001)")
	fs.StringVar(&f.digest, "digest", "", "the plan's digest, as plan showed it")
	fs.StringVar(&f.reason, "reason", "", "why (a failed assay, ...)")
	fs.BoolVar(&f.callOff, "experiment-off", false, "withdraw the experiment itself, not only its result: the session stops waiting for it")
	rest, err := parse(fs, args[1:])
	if err != nil {
		return f, err
	}
	f.session = strings.TrimSpace(f.session)
	takesFile := (f.sub == "add" || f.sub == "result") && f.fromWorker == ""
	var missing []string
	need := func(v, name string) {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	need(f.session, "--session")
	switch f.sub {
	case "plan":
		need(f.hypothesis, "--hypothesis")
	case "confirm":
		need(f.experiment, "--experiment")
		need(f.digest, "--digest")
	case "result":
		need(f.experiment, "--experiment")
	case "withdraw":
		need(f.experiment, "--experiment")
		need(f.reason, "--reason")
	}
	switch {
	case len(missing) > 0:
		return f, usageErrorf("starter %s %s needs %s", group, f.sub, strings.Join(missing, " and "))
	case takesFile && len(rest) != 1:
		return f, usageErrorf("starter %s %s needs one FILE (CSV, TSV, Parquet or JSON lines)", group, f.sub)
	case !takesFile && len(rest) > 0:
		return f, usageErrorf("starter %s %s takes no arguments (got %q)", group, f.sub, rest[0])
	case f.maxMB < 1:
		return f, usageErrorf("--max-dataset-mb must be at least 1")
	case f.table != "" && !dataset.ValidTableName(f.table):
		return f, usageErrorf("--table %q: letters, digits and _, starting with a letter or _, at most 63", f.table)
	}
	if takesFile {
		f.file = rest[0]
	}
	if f.table == "" && f.sub == "add" && (takesFile || f.fromWorker != "") { // a result's is the plan's (resultTable)
		f.table = dataset.TableName(f.file + f.fromWorker)
	}
	return f, nil
}

var errHelp = &exitError{code: 0}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// storeTable reads the file and stores it in the session's store: a file over the cap, or
// one the reader refuses, is refused with the reason and nothing is written
// (activities.StoreTable, which a worker's data folder shares).
func storeTable(ctx context.Context, st *store.Store, f labFlags) (workflows.DatasetRequest, store.DatasetRecord, error) {
	limit := int64(f.maxMB) << 20
	info, err := os.Stat(f.file)
	if err != nil {
		return workflows.DatasetRequest{}, store.DatasetRecord{}, err
	}
	if info.Size() > limit {
		return workflows.DatasetRequest{}, store.DatasetRecord{}, fmt.Errorf("refused: %s is %d MB, over --max-dataset-mb %d", f.file, info.Size()>>20, f.maxMB)
	}
	data, err := os.ReadFile(f.file)
	if err != nil {
		return workflows.DatasetRequest{}, store.DatasetRecord{}, err
	}
	rec, err := activities.StoreTable(ctx, st, f.session, filepath.Base(f.file), data, limit)
	return datasetRequest(f.table, rec), rec, err
}

func datasetRequest(table string, rec store.DatasetRecord) workflows.DatasetRequest {
	return workflows.DatasetRequest{Table: table, Digest: rec.Digest, Rows: rec.Schema.Rows, Columns: len(rec.Schema.Columns)}
}

// describeTable says how the table was read, column by column.
func describeTable(req workflows.DatasetRequest, rec store.DatasetRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %s: %s, %d rows, %d columns, digest %s\n", req.Table, rec.Schema.Format, rec.Schema.Rows, len(rec.Schema.Columns), rec.Digest)
	for _, c := range rec.Schema.Columns {
		fmt.Fprintf(&b, "  %-24s %-9s %s", c.Name, c.Type, c.Read)
		if c.Missing > 0 {
			fmt.Fprintf(&b, " (%d missing)", c.Missing)
		}
		b.WriteByte('\n')
	}
	for _, n := range rec.Schema.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}

func cmdData(ctx context.Context, args []string) error {
	f, err := parseLab("data", args)
	if err != nil {
		return err
	}
	_, err = addData(ctx, f)
	return err
}

// addData stores the file and announces it to the session; it returns the digest.
func addData(ctx context.Context, f labFlags) (string, error) {
	req, rec, err := takeTable(ctx, f)
	if err != nil {
		return "", err
	}
	fmt.Fprint(stdout, describeTable(req, rec))
	err = withTemporal(nil, func(c client.Client, _ string) error {
		ans, err := labUpdate(ctx, c, f.session, workflows.AddDataset, req)
		if err == nil {
			fmt.Fprintln(stdout, ans.Status.Detail)
		}
		return err
	})
	return req.Digest, err
}

func cmdExperiment(ctx context.Context, args []string) error {
	f, err := parseLab("experiment", args)
	if err != nil {
		return err
	}
	if f.sub == "result" {
		if f.table, err = resultTable(ctx, f); err != nil {
			return err
		}
		digest, err := addData(ctx, f)
		if err != nil {
			return err
		}
		f.digest = digest
	}
	return withTemporal(nil, func(c client.Client, _ string) error {
		if f.sub == "list" {
			var v workflows.ExperimentsView
			if err := query(ctx, c, f.session, workflows.QueryExperiments, &v); err != nil {
				return err
			}
			fmt.Fprint(stdout, renderExperiments(v))
			return nil
		}
		name, arg := labRequest(f)
		ans, err := labUpdate(ctx, c, f.session, name, arg)
		if err != nil {
			return err
		}
		if f.sub == "plan" && ans.Experiment != nil {
			fmt.Fprint(stdout, renderProposal(f.session, *ans.Experiment))
			return nil
		}
		fmt.Fprintln(stdout, ans.Status.Detail)
		return nil
	})
}

// resultTable is the table a result is added as: the one the experiment's plan expects,
// since its registered query reads its tables by name (the session refuses a result under
// another). Asked before the file is stored, so a wrong name stores nothing.
func resultTable(ctx context.Context, f labFlags) (string, error) {
	var v workflows.ExperimentsView
	err := withTemporal(nil, func(c client.Client, _ string) error {
		return query(ctx, c, f.session, workflows.QueryExperiments, &v)
	})
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(v.Experiments, func(e workflows.LabExperiment) bool { return e.ID == f.experiment })
	if i < 0 {
		return "", &exitError{1, fmt.Sprintf("session %s has no experiment %s (starter experiment list)", f.session, f.experiment)}
	}
	return expectedTable(v.Experiments[i].Spec, f)
}

// expectedTable picks a result's table from those a plan expects: the one --table names,
// or the only one; a plan that names none takes the file's name as data add does.
func expectedTable(p experiment.Plan, f labFlags) (string, error) {
	name, names := p.ExpectedTable(f.table)
	switch {
	case name != "":
		return name, nil
	case len(names) == 0:
		return cmp.Or(f.table, dataset.TableName(f.file+f.fromWorker)), nil
	case f.table == "" && len(names) == 1:
		return names[0], nil
	case f.table == "":
		return "", usageErrorf("experiment %s's plan reads %s: say which this result is with --table", f.experiment, strings.Join(names, ", "))
	}
	return "", usageErrorf("--table %s: experiment %s's plan reads %s, so its result must be one of them", f.table, f.experiment, strings.Join(names, ", "))
}

// labRequest is the update a subcommand sends, and its argument.
func labRequest(f labFlags) (string, any) {
	switch f.sub {
	case "plan":
		return workflows.PlanExperiment, workflows.PlanRequest{Hypothesis: f.hypothesis, Prediction: f.prediction}
	case "confirm":
		return workflows.ConfirmExperiment, workflows.ConfirmExperimentRequest{Experiment: f.experiment, Digest: f.digest}
	case "result":
		return workflows.ExperimentResult, workflows.ResultRequest{Experiment: f.experiment, Data: f.digest}
	case "withdraw":
		if f.callOff {
			return workflows.WithdrawExperiment, workflows.WithdrawRequest{Experiment: f.experiment, Reason: f.reason}
		}
		return workflows.WithdrawResult, workflows.WithdrawRequest{Experiment: f.experiment, Reason: f.reason}
	}
	return "", nil
}

// labUpdate sends one of the lab's updates and waits for the session's answer.
func labUpdate(ctx context.Context, c client.Client, id, name string, arg any) (workflows.LabAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, updateTimeout)
	defer cancel()
	var ans workflows.LabAnswer
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: name, WaitForStage: client.WorkflowUpdateStageCompleted, Args: []any{arg}})
	if err == nil {
		err = h.Get(ctx, &ans)
	}
	var rejected *temporal.ApplicationError
	if errors.As(err, &rejected) {
		return ans, &exitError{1, "rejected: " + rejected.Message()}
	}
	return ans, explain(err, id)
}

// renderProposal shows the analyst's plan and how to confirm it: nothing is registered
// until the scientist confirms this digest.
func renderProposal(session string, e workflows.LabExperiment) string {
	p := e.Spec
	var b strings.Builder
	fmt.Fprintf(&b, "experiment %s for %s (planned, not registered yet)\n", e.ID, e.Hypothesis)
	fmt.Fprintf(&b, "  prediction: %s (%s", p.Prediction.Text, p.Prediction.Direction)
	if p.Prediction.MinEffect > 0 {
		fmt.Fprintf(&b, ", smallest effect of interest %g", p.Prediction.MinEffect)
	}
	fmt.Fprintf(&b, ")\n  query:      %s\n  test:       %s on %s\n", p.Analysis.Query, p.Analysis.Test, strings.Join(p.Analysis.Columns, ", "))
	for _, t := range p.Expected {
		fmt.Fprintf(&b, "  expects:    %s (%s)\n", t.Name, strings.Join(t.Columns, ", "))
	}
	fmt.Fprintf(&b, "  digest:     %s\nConfirm it (pre-registration) with:\n  starter experiment confirm --session %s --experiment %s --digest %s\n", e.Plan, session, e.ID, e.Plan)
	return b.String()
}

// renderExperiments lists a session's experiments: plan digest, the history event that
// registered it, state, standing with effect and CI, and what the result changed.
func renderExperiments(v workflows.ExperimentsView) string {
	var b strings.Builder
	if v.Why != "" {
		fmt.Fprintln(&b, v.Why)
	}
	if len(v.Experiments) == 0 {
		fmt.Fprintln(&b, "no experiments; plan one with: starter experiment plan --session ID --hypothesis H")
	}
	for _, e := range v.Experiments {
		fmt.Fprintf(&b, "%s  %-8s %-9s plan %s\n", e.ID, e.Hypothesis, e.State, e.Plan)
		if e.Confirmed.Event > 0 {
			fmt.Fprintf(&b, "    pre-registered %s at event %d of run %s (update %s)\n", e.Confirmed.Time.UTC().Format(time.RFC3339), e.ConfirmedAt.Event, e.ConfirmedAt.Run, e.ConfirmUpdate)
		}
		if r := e.Result; r != nil {
			fmt.Fprintf(&b, "    result %s arrived %s", r.Data, r.Arrived.Time.UTC().Format(time.RFC3339))
			if r.Standing != "" {
				fmt.Fprintf(&b, ": %s, %s", r.Standing, r.Outcome.Figures())
			}
			b.WriteByte('\n')
		}
		for _, l := range e.Labels {
			fmt.Fprintf(&b, "    run %s: %s (%s)\n", l.Run.ID, l.Kind, l.Why)
		}
		if e.Refused != "" {
			fmt.Fprintf(&b, "    no standing: %s\n", e.Refused)
		}
		if c := e.Change; c != nil {
			fmt.Fprintf(&b, "    changed: %s %s -> %s", c.Hypothesis, orNone(string(c.Before)), orNone(string(c.After)))
			for _, m := range c.Moves {
				fmt.Fprintf(&b, "; %s #%d -> #%d", m.Hypothesis, m.From, m.To)
			}
			b.WriteByte('\n')
		}
		for _, w := range e.Withdrawn {
			fmt.Fprintf(&b, "    withdrawn result %s: %s\n", w.Data, w.Withdrawal)
		}
		if e.Reason != "" {
			fmt.Fprintf(&b, "    withdrawn: %s\n", e.Reason)
		}
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "untested"
	}
	return s
}
