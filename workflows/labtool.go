package workflows

// The lab's tool in a session (#46): the tool-using turns (generation by literature, full
// and deep-verification reviews, evolution, the conversation) may analyse the session's
// datasets as they search the literature, once the session has a dataset. A call runs an
// exploratory analysis in the sandbox (activities.LabCall), counted against the session's
// tool budgets like any call, and never waits for the scientist: it reads only the
// session's own data.

import (
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
)

// versionLabTool gates the lab tool: runs that passed this point before it offer their
// turns only the session's tool servers' tools, dataset or not.
const versionLabTool = "lab-tool"

// labOffered says whether the session's turns are offered the lab tool: it has a table.
func (s *supervisor) labOffered() bool {
	return s.labTool && len(s.Datasets) > 0
}

// withLab is a turn's tools with the lab tool added when the session offers it.
func (s *supervisor) withLab(tools []string) []string {
	if !s.labOffered() {
		return tools
	}
	return append(append([]string(nil), tools...), activities.LabTool)
}

// labLoop gives a tool loop the session's tables when its tools hold the lab tool.
func (s *supervisor) labLoop(loop *activities.Loop) {
	for _, t := range loop.Tools {
		if t == activities.LabTool {
			loop.Lab = s.datasetRefs(nil)
		}
	}
}

// callLab makes one lab call: the analysis its arguments ask for, run on the session's
// tables as they are now, its plan fixed at the call (the workflow's time). Bad arguments
// and a refused analysis come back as a tool error the model reads; an activity that
// fails past its retries is a call that failed, never a failed turn. The event log shows
// the test and the tables it read.
func (s *supervisor) callLab(ctx workflow.Context, t activities.Turn, step, i int, c activities.PendingCall, hypothesis string) activities.ToolOutcome {
	out := activities.ToolOutcome{CallID: c.ID, Name: c.Name}
	in := activities.LabCallInput{
		ToolCallInput: activities.ToolCallInput{SessionID: s.id, TurnID: t.TurnID, Step: step, Call: i},
		Hypothesis:    hypothesis, Datasets: s.datasetRefs(nil), PlannedAt: workflow.Now(ctx),
	}
	label := toolLabel(c.Name)
	var res activities.LabCallResult
	actx := workflow.WithActivityOptions(ctx, s.computeOptions(label+" for "+t.TurnID))
	if err := workflow.ExecuteActivity(actx, a.LabCall, in).Get(ctx, &res); err != nil {
		s.ToolErrors++
		out.Error = "the analysis failed: " + errorText(err) + "; do without it"
		s.logTool(t, label+" failed: "+errorText(err))
		return out
	}
	if res.Test != "" {
		label += ": " + res.Test + " on " + strings.Join(res.Tables, ", ")
	}
	out.Source, out.IsError = res.Source, res.IsError
	if res.IsError {
		s.ToolErrors++
		s.logTool(t, label+" (tool error: "+res.Note+")")
		return out
	}
	s.logTool(t, label+" (analysis:"+res.Analysis+", exploratory)")
	return out
}
