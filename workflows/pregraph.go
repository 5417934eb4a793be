package workflows

import "go.temporal.io/sdk/workflow"

// Sessions recorded before the session graph (lineage, continue and fork, continue-as-new,
// subagents, interval checkpoints) replay without it: the workflow asks
// workflow.GetVersion(versionGraph) at start, and a history recorded before it gets
// DefaultVersion, so s.graph is false. Every place that behaves differently then asks one
// of the methods below, and nowhere else reads s.graph. testdata/session-steered.json is
// such a history; when no running session can be that old, delete this file's branches.

// versionGraph gates the session graph for histories recorded before it: every session
// started since runs with it.
const versionGraph = "session-graph"

// Temporal refuses a workflow history past 51,200 events or 50 MB, and a session's grows
// by about 42 MB per 1,000 hypotheses. Before the session graph, a session could not
// continue as new, so it ended gracefully before either limit, and still wrote its
// overview, final checkpoint and report.
const (
	historyEventBudget = 40_000
	historyBytesBudget = 40 << 20
)

// joinGraph gives the session its place in the session graph: lineage, search attributes,
// the memo. Before the graph a session had none.
func (s *supervisor) joinGraph(ctx workflow.Context) error {
	if !s.graph {
		return nil
	}
	return s.placeInGraph(ctx)
}

// historyBudgetSpent says a session before the graph must end: its history is near
// Temporal's limits. Since the graph, a session continues as new instead.
func (s *supervisor) historyBudgetSpent(ctx workflow.Context) bool {
	if s.graph {
		return false
	}
	info := workflow.GetInfo(ctx)
	return info.GetCurrentHistoryLength() >= historyEventBudget || info.GetCurrentHistorySize() >= historyBytesBudget
}

// continueAsNewDue says the run should hand over to a new one; never before the graph.
func (s *supervisor) continueAsNewDue(ctx workflow.Context) bool {
	return s.graph && s.runFull(ctx)
}

// hasSubagents says the session forks subagents when the meta-review asks for them, and
// waits for them before it ends; before the graph it had none.
func (s *supervisor) hasSubagents() bool { return s.graph }

// intervalCheckpointDue says the checkpoint interval has passed; before the graph,
// checkpoints were written at the end of rounds and when asked for only.
func (s *supervisor) intervalCheckpointDue(ctx workflow.Context) bool {
	return s.graph && s.checkpointDue(ctx)
}

// incremental says the next checkpoint may send only what changed since the last one;
// before the graph every checkpoint was whole.
func (s *supervisor) incremental() bool { return s.graph && s.saved != nil }
