package activities

// The analyst's turn (#46): an analysis plan for a hypothesis's prediction over the
// session's datasets, proposed for the scientist to confirm. Its activity,
// ProposeAnalysis, is in analysis.go beside RunAnalysis.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cosci-dev/cosci/internal/analysis"
	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// AgentAnalyst is the analyst's label.
const AgentAnalyst = prompt.AgentAnalyst

var analyst = declare(agent[ProposeAnalysisInput, research.AnalysisRequest, research.AnalysisAnswer, ProposeAnalysisResult]{
	activity: "ProposeAnalysis", label: AgentAnalyst, prompt: prompt.Analysis, spec: prompt.AnalysisSpec, prepare: prepareAnalysis,
})

type analysisTurn = turn[research.AnalysisRequest, research.AnalysisAnswer, ProposeAnalysisResult]

// prepareAnalysis reads the hypothesis and each dataset's schema and first rows; it keeps
// nothing in the store but the turn's record, which holds the plan (the turn's result):
// the workflow fixes a plan in its history once the scientist confirms it.
func prepareAnalysis(ctx context.Context, a *Activities, in ProposeAnalysisInput, turnID string) (analysisTurn, error) {
	switch {
	case in.HypothesisID == "":
		return analysisTurn{}, invalid("an analysis plan needs a hypothesis")
	case len(in.Datasets) == 0:
		return analysisTurn{}, invalid("an analysis plan for %s needs at least one dataset", in.HypothesisID)
	case len(in.Datasets) > experiment.MaxTables:
		return analysisTurn{}, invalid("an analysis plan reads at most %d datasets, not %d", experiment.MaxTables, len(in.Datasets))
	}
	h, err := a.Store.Hypothesis(ctx, in.SessionID, in.HypothesisID)
	if err != nil {
		return analysisTurn{}, err
	}
	req := research.AnalysisRequest{
		TurnID: turnID, Goal: in.Goal, Hypothesis: h, Prediction: strings.TrimSpace(in.Prediction),
		Menu: analysis.Menu(), Conventions: analysis.Conventions, Seed: in.Seed,
	}
	for _, d := range in.Datasets {
		ds, err := a.analystDataset(ctx, in.SessionID, d)
		if err != nil {
			return analysisTurn{}, err
		}
		req.Datasets = append(req.Datasets, ds)
	}
	keep := func(req research.AnalysisRequest, ans research.AnalysisAnswer, usage research.Usage) (ProposeAnalysisResult, error) {
		plan := planOf(in, ans, req.Datasets)
		if err := plan.Validate(); err != nil {
			return ProposeAnalysisResult{}, malformed(fmt.Errorf("the analysis plan is not valid: %w", err))
		}
		return ProposeAnalysisResult{Plan: plan, Digest: plan.Digest(), Usage: usage}, nil
	}
	return analysisTurn{req: req, keep: keep}, nil
}

// analystDataset is a dataset as the analyst sees it: its record's schema and, for a CSV
// or TSV, its first rows as the sandbox will read them. A dataset the session lacks is an
// invalid input; one whose bytes no longer match fails the turn as the store says.
func (a *Activities) analystDataset(ctx context.Context, sessionID string, d DatasetRef) (research.AnalysisDataset, error) {
	if !validDigest(d.Digest) {
		return research.AnalysisDataset{}, invalid("%.80q is not a dataset's digest (64 hex digits)", d.Digest)
	}
	r, err := a.Store.Dataset(ctx, sessionID, d.Digest)
	if errors.Is(err, fs.ErrNotExist) {
		// A dataset the scientist named wrongly is the input's fault, not the store's.
		return research.AnalysisDataset{}, invalid("the session has no dataset %s", d.Digest[:12])
	}
	if err != nil {
		return research.AnalysisDataset{}, err
	}
	ds := research.AnalysisDataset{Table: d.Table, Name: r.Name, Schema: r.Schema}
	if r.Schema.Format != dataset.CSV && r.Schema.Format != dataset.TSV {
		return ds, nil
	}
	data, err := a.Store.DatasetBytes(ctx, sessionID, d.Digest)
	if err != nil {
		return research.AnalysisDataset{}, err
	}
	t, err := dataset.Read(data, readAgain(r.Schema, len(data)))
	if err != nil {
		return research.AnalysisDataset{}, fmt.Errorf("dataset %s no longer reads: %w", d.Digest[:12], err)
	}
	ds.Preview = t.Preview(prompt.AnalysisPreviewRows)
	return ds, nil
}

// planOf is the analyst's answer as a plan: the hypothesis the input names, and the
// expected tables the datasets given (their columns, the first experiment.MaxColumns,
// or "*" where only the sandbox reads them: Parquet and JSON lines).
func planOf(in ProposeAnalysisInput, ans research.AnalysisAnswer, ds []research.AnalysisDataset) experiment.Plan {
	p := experiment.Plan{
		Hypothesis: in.HypothesisID,
		Prediction: experiment.Prediction{Text: ans.Prediction, Direction: experiment.Direction(ans.Direction), MinEffect: ans.MinEffect},
		Analysis:   experiment.Analysis{Query: ans.Query, Test: ans.Test, Columns: ans.Columns},
	}
	for _, d := range ds {
		t := experiment.Table{Name: d.Table}
		for _, c := range d.Schema.Columns[:min(len(d.Schema.Columns), experiment.MaxColumns)] {
			t.Columns = append(t.Columns, c.Name)
		}
		if len(t.Columns) == 0 {
			t.Columns = []string{"*"}
		}
		p.Expected = append(p.Expected, t)
	}
	return p
}
