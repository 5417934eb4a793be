package research

import "github.com/cosci-dev/cosci/internal/dataset"

// AnalysisRequest asks the analyst (#46) for an analysis plan: a read-only query over
// the session's datasets and a test of the menu, for a hypothesis's testable prediction.
// The answer is an experiment.Plan (package experiment imports this one, so the answer
// type is named there).
type AnalysisRequest struct {
	TurnID     string
	Goal       string
	Hypothesis Hypothesis
	// Prediction is the scientist's prediction, which the plan keeps word for word; ""
	// asks the analyst to state one from the hypothesis.
	Prediction string
	Datasets   []AnalysisDataset
	Prompt     string
	Cache      Cache
	Seed       int64
}

// AnalysisDataset is a dataset as the analyst sees it: the table name its query reads,
// the file's name, its schema as read, and at most a few rows (dataset.Preview), never
// the whole table. Everything in it but Table came from the lab's file: it is data.
type AnalysisDataset struct {
	Table   string
	Name    string
	Schema  dataset.Schema
	Preview [][]string
}
