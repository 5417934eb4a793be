package activities

// The lab's data in a session (issue #46): the analyst's turn proposes an analysis of the
// session's datasets for a hypothesis's prediction (ProposeAnalysis), and RunAnalysis runs
// one in the DuckDB sandbox and keeps its record in the session store. The workflow holds
// only what these types carry: ids, digests and the outcome's numbers; the query's text,
// the rows it returned and the statistics' details stay in the store.

import (
	"time"

	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/research"
)

// DatasetRef names one of the session's datasets: the table name analyses query it by and
// the content digest the session store keeps its bytes under (store.PutDataset).
type DatasetRef struct {
	Table  string `json:"table"`
	Digest string `json:"digest"`
}

// ProposeAnalysisInput asks the analyst for an analysis plan: for the hypothesis, the
// testable prediction (the scientist's words, or "" for the analyst to state one from the
// hypothesis), over the datasets named.
type ProposeAnalysisInput struct {
	Turn
	HypothesisID string       `json:"hypothesis_id"`
	Prediction   string       `json:"prediction,omitempty"`
	Datasets     []DatasetRef `json:"datasets"`
}

// ProposeAnalysisResult is the analyst's plan, valid (experiment.Plan.Validate), and its
// digest, which the scientist confirms and the workflow's history then fixes.
type ProposeAnalysisResult struct {
	Plan   experiment.Plan `json:"plan"`
	Digest string          `json:"digest"`
	Usage  research.Usage  `json:"usage"`
}

// RunAnalysisInput runs a plan's analysis on the datasets named. ID is chosen by the
// workflow (deterministically), so a retried or re-run activity writes the same record.
// Kind is the workflow's label for the run (experiment.Classify): pre-registered only for
// the registered plan's first run on its result's data. PlannedAt is when the plan was
// fixed (its history event's time); Experiment the experiment it tests, "" for an
// analysis a turn asked for.
type RunAnalysisInput struct {
	SessionID  string          `json:"session_id"`
	ID         string          `json:"id"`
	Plan       experiment.Plan `json:"plan"`
	Datasets   []DatasetRef    `json:"datasets"`
	Kind       experiment.Kind `json:"kind"`
	PlannedAt  time.Time       `json:"planned_at"`
	Experiment string          `json:"experiment,omitempty"`
}

// RunAnalysisResult is what the workflow keeps of a run: the record's id and the outcome's
// numbers, or why the sandbox or the test refused the analysis (a reason of cosci's own,
// never an engine's raw message); a refusal is an answer, not a failure to retry.
type RunAnalysisResult struct {
	ID      string             `json:"id"`
	Outcome experiment.Outcome `json:"outcome,omitzero"`
	Refused string             `json:"refused,omitempty"`
	// Source is the digest of the analysis's record in the session's audit trail (a
	// store.ToolRecord of the tool AnalysisTool, whose content names analysis:<id>): the
	// result a turn that cites analysis:<id> is given, and the one the citation check
	// reads the quoted numbers back from. Runs recorded before it have none.
	Source string `json:"source,omitempty"`
}

// AnalysisTool is the tool name an analysis's record in the audit trail is kept under;
// the lab's analysis tool a generation, review or evolution turn may call (LabTool) is
// answered with such a record too.
const AnalysisTool = "lab.analysis"

// LabTool is the tool a turn calls to analyse the session's datasets: its arguments are
// an analysis (a read-only query and a test from the menu), run as an exploratory
// analysis, its result the analysis's record (AnalysisTool).
const LabTool = "lab.analyse"
