package research

import "github.com/cosci-dev/cosci/internal/dataset"

// AnalysisRequest asks the analyst (#46) for an analysis plan: a read-only query over
// the session's datasets and a test of the menu, for a hypothesis's testable prediction.
// The menu and how a result feeds its tests come with the request (package analysis
// makes them from experiment.Menu and stats.Describe), since the prompt and the
// simulator cannot import package experiment, whose tests run the simulator.
type AnalysisRequest struct {
	TurnID     string
	Goal       string
	Hypothesis Hypothesis
	// Prediction is the scientist's prediction, which the plan keeps word for word; ""
	// asks the analyst to state one from the hypothesis.
	Prediction  string
	Datasets    []AnalysisDataset
	Menu        []AnalysisTest
	Conventions string
	Prompt      string
	Cache       Cache
	Seed        int64
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

// AnalysisTest is a test of the menu as the analyst reads it: its name, what it reads,
// its effect, when to use it, and the directions a prediction may state for it.
type AnalysisTest struct {
	Name       string
	Reads      string
	Effect     string
	When       string
	Directions []string
}

// AnalysisAnswer is the analyst's answer, which the activity makes an experiment.Plan.
type AnalysisAnswer struct {
	Prediction string   `json:"prediction"`
	Direction  string   `json:"direction"`
	MinEffect  float64  `json:"min_effect"`
	Query      string   `json:"query"`
	Test       string   `json:"test"`
	Columns    []string `json:"columns"`
}

// LabResult is one analysis of the session's lab data as a turn reads it: the analysis's
// record as the audit trail keeps it (Source, its digest; Content, the record itself,
// which a citation of Analysis is checked against), its title and text as the prompt
// shows them, and what the session made of it. Kind is "pre-registered" or
// "exploratory"; Standing the hypothesis's standing the result gave ("" for an
// exploratory run, which gives none).
type LabResult struct {
	Analysis   string // the id a turn cites it by: "analysis:<id>"
	Hypothesis string
	Kind       string
	Standing   string
	Title      string
	Text       string
	Source     string
	Content    string
}
