package activities

// The analysis path's activities (issue #46): the analyst proposes a plan (ProposeAnalysis,
// analyst.go's turn) and RunAnalysis runs one in the sandbox and keeps its record.

import (
	"context"
	"errors"
)

// ProposeAnalysis runs the analyst's turn: a plan for the hypothesis's prediction over the
// datasets named, valid, with its digest.
func (a *Activities) ProposeAnalysis(ctx context.Context, in ProposeAnalysisInput) (ProposeAnalysisResult, error) {
	return ProposeAnalysisResult{}, errors.New("ProposeAnalysis: not built yet")
}

// RunAnalysis runs a plan's analysis on the datasets in the sandbox and keeps its record.
func (a *Activities) RunAnalysis(ctx context.Context, in RunAnalysisInput) (RunAnalysisResult, error) {
	return RunAnalysisResult{}, errors.New("RunAnalysis: not built yet")
}
