package workflows

import (
	"fmt"
	"strconv"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
)

// Session types besides the scientist's own: the heartbeat (one batch session that
// launches subagents), cron sessions (started by a Temporal Schedule) and archiving.

// HeartbeatResult is what a heartbeat run did.
type HeartbeatResult struct {
	Foreground string           `json:"foreground,omitempty"` // the session it worked for
	Checkpoint int              `json:"checkpoint,omitempty"` // that session's checkpoint it started from
	Results    []SubagentResult `json:"results,omitempty"`
	Failed     []string         `json:"failed,omitempty"`
	Message    string           `json:"message"` // the digest it sent
}

// Heartbeat is the single batch session: it finds the most recent foreground session,
// forks a verification subagent for each of its leads (from its latest checkpoint), and
// sends that session one digest message. Its subagents' messages come to it, their parent;
// having no parent itself, it sends the digest to the foreground session.
func Heartbeat(ctx workflow.Context, in HeartbeatInput) (HeartbeatResult, error) {
	info := workflow.GetInfo(ctx)
	d := lineage.Descriptor{Type: lineage.Heartbeat}.WithDefaults(info.WorkflowExecution.ID)
	if err := showLineage(ctx, d); err != nil {
		return HeartbeatResult{}, err
	}
	top := in.Top
	if top <= 0 {
		top = 3
	}
	top = min(top, 10)
	var out HeartbeatResult
	fg, err := foreground(ctx)
	if err != nil || fg == "" {
		out.Message = "no foreground session is running: nothing to do"
		return out, err
	}
	out.Foreground = fg
	var leads activities.LeadsResult
	lctx := workflow.WithActivityOptions(ctx, storeOptions("read the leads of "+fg))
	if err := workflow.ExecuteActivity(lctx, a.Leads, activities.LeadsInput{SessionID: fg, Top: top}).Get(ctx, &leads); err != nil {
		out.Message = "cannot read the leads of " + fg + ": " + errorText(err)
		return out, nil
	}
	out.Checkpoint = leads.Checkpoint

	// The batch: one verification subagent per lead, all at once.
	futures := make([]workflow.ChildWorkflowFuture, len(leads.Leads))
	for i, e := range leads.Leads {
		// The heartbeat's id repeats from run to run, so the run id keys its forks.
		id := lineage.ForkID(d.Conversation, info.WorkflowExecution.RunID+"/"+strconv.Itoa(i+1))
		name := research.DelegateVerify + " " + e.ID
		sub := SubagentInput{
			Lineage: lineage.Descriptor{Type: lineage.Subagent, Conversation: d.Conversation, Seq: 1, Parent: d.Conversation,
				Relation: lineage.Spawn, Checkpoint: leads.Checkpoint, Name: name,
				Intention: &lineage.Intention{
					NextSteps:      fmt.Sprintf("verify %s, a lead of %s, on its own", e.ID, fg),
					ContextSummary: fmt.Sprintf("%s ranks %d of the leads of %q with Elo %.0f", e.ID, i+1, leads.Goal, e.Elo),
					OnComplete:     "report to the heartbeat, which sends the digest to " + fg,
				}},
			From: fg, Task: research.DelegateVerify, Hypothesis: e.ID, Goal: leads.Goal, Config: leads.Config,
		}
		futures[i] = workflow.ExecuteChildWorkflow(childOptions(ctx, id, "heartbeat subagent: "+name+" of "+fg), SubagentWorkflow, sub)
	}
	var lines []string
	for i, f := range futures {
		var r SubagentResult
		if err := f.Get(ctx, &r); err != nil {
			out.Failed = append(out.Failed, leads.Leads[i].ID)
			lines = append(lines, leads.Leads[i].ID+": no result ("+subagentError(err)+")")
			continue
		}
		out.Results = append(out.Results, r)
		lines = append(lines, r.Message)
	}
	out.Message = fmt.Sprintf("heartbeat verified %d leads of checkpoint %d: %s", len(leads.Leads), leads.Checkpoint, strings.Join(lines, " | "))
	if len(lines) > 0 {
		send(ctx, fg, SessionMessage{From: d.Conversation, Type: lineage.Heartbeat, Text: out.Message})
	}
	return out, nil
}

// foreground resolves the most recent foreground session through visibility.
func foreground(ctx workflow.Context) (string, error) {
	var id string
	actx := workflow.WithActivityOptions(ctx, storeOptions("find the most recent foreground session"))
	err := workflow.ExecuteActivity(actx, a.Foreground).Get(ctx, &id)
	return id, err
}

// send delivers a message to a session; a session that has ended cannot hear it, which
// the sender logs and lives with.
func send(ctx workflow.Context, to string, m SessionMessage) error {
	err := workflow.SignalExternalWorkflow(ctx, to, "", Message, m).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Warn("message not delivered", "to", to, "error", err)
	}
	return err
}

// tellForeground: a session with no parent to report to (a cron session's recurring
// review) sends its closing summary to the most recent foreground session.
func (s *supervisor) tellForeground(ctx workflow.Context) {
	if s.lineage.Type != lineage.Cron {
		return
	}
	fg, err := foreground(ctx)
	if err != nil || fg == "" || fg == s.id {
		s.note("no foreground session to send the summary to")
		return
	}
	var top []string
	for _, e := range s.top(3) {
		top = append(top, fmt.Sprintf("%s %q (Elo %.0f)", e.ID, e.Title, e.Elo))
	}
	text := fmt.Sprintf("recurring review %s finished (%s) with %d hypotheses; its leads: %s", s.id, s.StopReason, len(s.Entries), strings.Join(top, "; "))
	if err := send(ctx, fg, SessionMessage{From: s.id, Type: lineage.Cron, Text: text}); err != nil {
		s.note("the summary could not reach " + fg + ": " + errorText(err))
		return
	}
	s.log(sessionMessageSent(fg, text))
}
