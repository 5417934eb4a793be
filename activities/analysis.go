package activities

// The analysis path's activities (issue #46): the analyst proposes a plan (ProposeAnalysis,
// whose turn is declared in analyst.go) and RunAnalysis runs one in the sandbox and keeps
// its record. What the result means for the test is package analysis'; this file reads
// the datasets, runs the query and the test, and stores what came of them.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/analysis"
	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/sandbox"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/stats"
	"github.com/cosci-dev/cosci/internal/store"
)

// Sandbox runs a read-only query over datasets: sandbox.Runner, as the worker configures it.
type Sandbox interface {
	Run(ctx context.Context, req sandbox.Request) (sandbox.Result, error)
}

// analysisCaps are the caps of an analysis' answer where the worker's leave them zero:
// the rows its record keeps (store.AnalysisRows, AnalysisRowBytes). The test reads its
// columns of every row from the sandbox's feed (sandbox.Request.Feed), up to the feed's
// own caps, past which the analysis is refused with the cap named.
var analysisCaps = sandbox.Caps{Rows: store.AnalysisRows, Bytes: store.AnalysisRowBytes}

// ProposeAnalysis runs the analyst's turn: a plan for the hypothesis's prediction over the
// datasets named, valid, with its digest.
func (a *Activities) ProposeAnalysis(ctx context.Context, in ProposeAnalysisInput) (ProposeAnalysisResult, error) {
	return runTurn(ctx, a, analyst, in)
}

// RunAnalysis runs a plan's analysis on the datasets in the sandbox and keeps its record
// under in.ID. A run whose record is stored returns it: a retried or re-run activity
// changes nothing. A query the sandbox refuses, a result the test cannot read and a
// dataset that is gone or no longer matches its digest are answers (Refused, recorded);
// a store that cannot be read or written is an error.
func (a *Activities) RunAnalysis(ctx context.Context, in RunAnalysisInput) (RunAnalysisResult, error) {
	if err := checkRun(in); err != nil {
		return RunAnalysisResult{}, err
	}
	if rec, found, err := a.Store.FindAnalysis(ctx, in.SessionID, in.ID); err != nil || found {
		if err != nil {
			return RunAnalysisResult{}, err
		}
		return a.citable(ctx, in, rec)
	}
	stop := a.keepAlive(ctx)
	defer stop()
	rec := store.AnalysisRecord{
		ID: in.ID, Hypothesis: in.Plan.Hypothesis, Experiment: in.Experiment, Kind: string(in.Kind),
		Plan: in.Plan.Digest(), Query: in.Plan.Analysis.Query, Test: in.Plan.Analysis.Test,
		Columns: slices.Clone(in.Plan.Analysis.Columns), PlannedAt: session.Stamp(in.PlannedAt),
	}
	for _, d := range in.Datasets {
		rec.Inputs = append(rec.Inputs, store.AnalysisInput{Table: d.Table, Digest: d.Digest})
	}
	err := a.analyse(ctx, in, &rec)
	var refused *analysis.Refused
	switch {
	case errors.As(err, &refused):
		rec.Refused = refused.Reason
	case err != nil:
		return RunAnalysisResult{}, err
	}
	rec.Ran = session.Stamp(time.Now())
	stored, err := a.Store.PutAnalysis(ctx, in.SessionID, rec)
	if err != nil {
		return RunAnalysisResult{}, err
	}
	return a.citable(ctx, in, stored)
}

// checkRun refuses an input no retry can run: no id, an invalid plan, no datasets or two
// under one table name.
func checkRun(in RunAnalysisInput) error {
	switch {
	case in.SessionID == "" || in.ID == "":
		return invalid("an analysis needs a session and an id")
	case len(in.Datasets) == 0:
		return invalid("analysis %s names no dataset", in.ID)
	}
	if err := in.Plan.Validate(); err != nil {
		return invalid("analysis %s: the plan is not valid: %v", in.ID, err)
	}
	seen := map[string]bool{}
	for _, d := range in.Datasets {
		t := strings.ToLower(d.Table)
		if d.Table == "" || seen[t] {
			return invalid("analysis %s: dataset table names must be given and unique (%q)", in.ID, d.Table)
		}
		seen[t] = true
	}
	return nil
}

// runResult is what the workflow keeps of a record: its id, and its outcome or refusal.
func runResult(plan experiment.Plan, rec store.AnalysisRecord) RunAnalysisResult {
	res := RunAnalysisResult{ID: rec.ID, Refused: rec.Refused}
	if rec.Stats != nil && rec.Refused == "" {
		res.Outcome = analysis.Outcome(plan.Analysis.Test, *rec.Stats)
	}
	return res
}

// analyse reads the datasets, runs the query and the test, and fills rec in; a refusal
// is an *analysis.Refused.
func (a *Activities) analyse(ctx context.Context, in RunAnalysisInput, rec *store.AnalysisRecord) error {
	var inputs []sandbox.Input
	for _, d := range in.Datasets {
		input, err := a.sandboxInput(ctx, in.SessionID, d)
		if err != nil {
			return err
		}
		inputs = append(inputs, input)
	}
	box := a.Sandbox
	if box == nil {
		box = sandbox.Runner{}
	}
	// The test reads its columns of every row from the feed, beyond the answer's caps; the
	// answer's rows are what the record keeps and shows.
	feed := in.Plan.Analysis.Columns
	res, err := box.Run(ctx, sandbox.Request{Mode: sandbox.ModeQuery, Inputs: inputs, Query: in.Plan.Analysis.Query, Caps: a.analysisCaps(), Feed: feed})
	var refusal *sandbox.Refusal
	switch {
	case errors.As(err, &refusal):
		return &analysis.Refused{Reason: fmt.Sprintf("the sandbox refused the query (%s): %s", refusal.Reason, refusal.Detail)}
	case err != nil:
		return fmt.Errorf("run analysis %s in the sandbox: %w", in.ID, err)
	}
	for _, c := range res.Columns {
		rec.ResultColumns = append(rec.ResultColumns, c.Name)
	}
	if res.Feed == nil {
		return fmt.Errorf("run analysis %s: the sandbox answered without the test's columns", in.ID)
	}
	rec.Rows, rec.RowCount, rec.RowsCut = res.Rows, res.Feed.Rows, res.Truncated
	test := in.Plan.Analysis.Test
	input, dropped, err := analysis.Input(test, res.Feed.Columns, res.Feed.Values, feed)
	rec.Dropped = dropped
	if err != nil {
		return err
	}
	r, err := stats.Run(analysis.StatsName(test), input)
	if errors.Is(err, stats.ErrInput) {
		return &analysis.Refused{Reason: "the test refused its input: " + strings.TrimPrefix(err.Error(), stats.ErrInput.Error()+": ")}
	}
	if err != nil {
		return &analysis.Refused{Reason: "the test gave no number: " + err.Error()}
	}
	rec.Stats = &r
	return nil
}

// analysisCaps are the worker's caps, with analysisCaps where they leave a field zero.
func (a *Activities) analysisCaps() sandbox.Caps {
	c := a.SandboxCaps
	if c.Rows <= 0 {
		c.Rows = analysisCaps.Rows
	}
	if c.Bytes <= 0 {
		c.Bytes = analysisCaps.Bytes
	}
	return c
}

// sandboxInput reads a dataset from the store as the sandbox loads it: a CSV or TSV in
// its canonical form with its columns' types, Parquet and JSON lines as they are. It is
// read again as it was when stored (its format, delimiter and encoding), and must read
// to the same columns: evidence read differently is not the evidence that was shown.
func (a *Activities) sandboxInput(ctx context.Context, sessionID string, d DatasetRef) (sandbox.Input, error) {
	short := d.Digest[:min(12, len(d.Digest))]
	gone := func(err error) error {
		var damaged *store.DamagedError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return &analysis.Refused{Reason: fmt.Sprintf("the session has no dataset %s (table %s)", short, d.Table)}
		case errors.As(err, &damaged):
			return &analysis.Refused{Reason: fmt.Sprintf("dataset %s (table %s) is damaged in the store: %s", short, d.Table, damaged.Problem)}
		}
		return err
	}
	if !validDigest(d.Digest) {
		return sandbox.Input{}, &analysis.Refused{Reason: fmt.Sprintf("%q is not a dataset's digest", short)}
	}
	r, err := a.Store.Dataset(ctx, sessionID, d.Digest)
	if err != nil {
		return sandbox.Input{}, gone(err)
	}
	data, err := a.Store.DatasetBytes(ctx, sessionID, d.Digest)
	if err != nil {
		return sandbox.Input{}, gone(err)
	}
	t, err := dataset.Read(data, readAgain(r.Schema, len(data)))
	var refused *dataset.Refused
	if errors.As(err, &refused) {
		return sandbox.Input{}, &analysis.Refused{Reason: fmt.Sprintf("dataset %s (table %s) no longer reads: %s", short, d.Table, refused.Reason)}
	}
	if err != nil {
		return sandbox.Input{}, err
	}
	if !slices.Equal(t.Columns, r.Schema.Columns) {
		return sandbox.Input{}, &analysis.Refused{Reason: fmt.Sprintf("dataset %s (table %s) reads to other columns than its stored schema", short, d.Table)}
	}
	switch t.Format {
	case dataset.Parquet:
		return sandbox.Input{Table: d.Table, Format: sandbox.Parquet, Data: data}, nil
	case dataset.JSONL:
		return sandbox.Input{Table: d.Table, Format: sandbox.JSONL, Data: data}, nil
	}
	var b bytes.Buffer
	if err := t.Canonical(&b); err != nil {
		return sandbox.Input{}, err
	}
	in := sandbox.Input{Table: d.Table, Format: sandbox.CSV, Data: b.Bytes()}
	for _, c := range t.Columns {
		in.Columns = append(in.Columns, sandbox.Column{Name: c.Name, Type: c.Type})
	}
	return in, nil
}

// readAgain are the options a stored dataset was read with, as its schema tells them.
func readAgain(s dataset.Schema, size int) dataset.Options {
	opt := dataset.Options{Format: s.Format, MaxBytes: int64(size) + 1}
	if s.Delimiter != "" {
		opt.Delimiter = []rune(s.Delimiter)[0]
	}
	if slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, "from Windows-1252") }) {
		opt.Encoding = "windows-1252"
	}
	return opt
}

func validDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	for _, c := range d {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
