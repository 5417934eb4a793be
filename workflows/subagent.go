package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// Subagents. The meta-review may ask for work to be delegated: a deep verification of a
// promising hypothesis, or an evolution line explored on its own. The supervisor forks a
// subagent for each, as a child workflow, only once the turn that asked has completed
// (a failed turn asks for nothing). The subagent starts from a copy of the session's
// context at a checkpoint (its anchor), works in a session of its own and cannot see what
// the parent does next; when it ends, one result message is merged into the parent's log
// at the fork point. A subagent that fails or is terminated never fails its parent.
//
// Parent close policy: REQUEST_CANCEL. A session waits for its subagents before it
// finishes or continues as new, so the policy only matters when the session is closed
// from outside (`temporal workflow terminate`, a reset): then its subagents are asked to
// stop rather than left spending tokens for a session that will never read their result.

// maxSubagents bounds the subagents a session runs at once, and lineLength the
// hypotheses an evolution line makes.
const (
	maxSubagents = 2
	lineLength   = 3
)

// SubagentInput is what a subagent is forked with: its place in the graph (parent, name,
// anchor checkpoint, intention), the session to copy the context from, and the task.
type SubagentInput struct {
	Lineage lineage.Descriptor `json:"lineage"`
	// From is the session whose checkpoint Lineage.Checkpoint the context is copied from:
	// the parent, or for a heartbeat the foreground session it works for.
	From       string          `json:"from"`
	Task       string          `json:"task"` // research.DelegateVerify or research.DelegateEvolve
	Hypothesis string          `json:"hypothesis_id"`
	Goal       string          `json:"goal"`
	Config     research.Config `json:"config"`
}

// SubagentResult is the one message a subagent sends back.
type SubagentResult struct {
	Session    string `json:"session"`
	Task       string `json:"task"`
	Hypothesis string `json:"hypothesis_id"`
	Message    string `json:"message"`
	// Best is the hypothesis an evolution line found better than where it started, in the
	// subagent's session; the parent imports it into its own tournament. "" if none.
	Best      string         `json:"best,omitempty"`
	BestTitle string         `json:"best_title,omitempty"`
	Score     float64        `json:"score,omitempty"` // a verification's mean score
	Usage     research.Usage `json:"usage"`
}

// SubagentRef is the parent's record of a subagent.
type SubagentRef struct {
	ID         string `json:"id"`
	Task       string `json:"task"`
	Hypothesis string `json:"hypothesis_id"`
	At         int    `json:"at"` // the Seq of the fork event: where the result merges
	Done       bool   `json:"done,omitempty"`
}

// Subagent runs one delegated task in a session of its own.
func Subagent(ctx workflow.Context, in SubagentInput) (SubagentResult, error) {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	out := SubagentResult{Session: id, Task: in.Task, Hypothesis: in.Hypothesis}
	steps := []string{}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (map[string]any, error) {
		return map[string]any{"session_id": id, "lineage": in.Lineage, "task": in.Task, "hypothesis_id": in.Hypothesis, "steps": steps}, nil
	}); err != nil {
		return out, err
	}
	if err := in.Lineage.Validate(); err != nil || in.Lineage.Type != lineage.Subagent {
		return out, temporal.NewNonRetryableApplicationError(fmt.Sprintf("invalid subagent: %v", err), "InvalidRequest", err)
	}
	req := research.Request{ResearchGoal: in.Goal, Config: in.Config}.WithDefaults()
	if err := showLineage(ctx, in.Lineage); err != nil {
		return out, err
	}
	// The context, as it was at the anchor.
	var snap session.Snapshot
	actx := workflow.WithActivityOptions(ctx, storeOptions(fmt.Sprintf("copy the context of %s at checkpoint %d", in.From, in.Lineage.Checkpoint)))
	if err := workflow.ExecuteActivity(actx, a.Branch, activities.BranchInput{From: in.From, Checkpoint: in.Lineage.Checkpoint, To: id, Only: []string{in.Hypothesis}}).Get(ctx, &snap); err != nil {
		return out, err
	}
	turn := func(turnID string) activities.Turn {
		return activities.Turn{SessionID: id, TurnID: turnID, Goal: snap.Goal, Provider: req.Config.Provider, Model: req.Config.Model, Seed: req.Config.Seed}
	}
	ref := activities.ContextRef{Plan: snap.Plan != "", MetaReviewRound: snap.Progress.MetaReviews}
	run := func(summary string, fn, arg, result any) error {
		steps = append(steps, summary)
		return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, turnOptions(summary)), fn, arg).Get(ctx, result)
	}

	switch in.Task {
	case research.DelegateVerify:
		// Each check of the hypothesis on its own: its assumptions one by one, then a
		// simulation of the mechanism step by step.
		var scores, failed []string
		total := 0.0
		for _, typ := range []string{research.ReviewDeepVerification, research.ReviewSimulation} {
			var r activities.ReviewResult
			rin := activities.ReviewInput{Turn: turn("verify-" + in.Hypothesis + "-" + typ), HypothesisID: in.Hypothesis, Type: typ, Context: ref}
			if err := run(fmt.Sprintf("%s review of %s", typ, in.Hypothesis), a.Review, rin, &r); err != nil {
				return out, err
			}
			out.Usage = out.Usage.Add(r.Usage)
			total += r.Score
			scores = append(scores, fmt.Sprintf("%s %.1f (%s)", typ, r.Score, r.Verdict))
			if r.FailedAssumptions > 0 {
				failed = append(failed, fmt.Sprintf("%d assumptions failed", r.FailedAssumptions))
			}
		}
		out.Score = total / 2
		out.Message = fmt.Sprintf("verified %s on its own: %s", in.Hypothesis, strings.Join(scores, "; "))
		if len(failed) > 0 {
			out.Message += "; " + strings.Join(failed, ", ")
		}
	case research.DelegateEvolve:
		// A line: evolve the hypothesis, then evolve the result, and so on; then the last
		// of the line meets where it started.
		kinds := []string{research.EvolveGrounding, research.EvolveFeasibility, research.EvolveSimplification}
		// Ids after the anchor's, in the subagent's own session.
		prev, next := in.Hypothesis, snap.NextID
		var line []string
		for i := range lineLength {
			next++
			hid := fmt.Sprintf("h-%04d", next)
			var g activities.GenerateResult
			ein := activities.EvolveInput{Turn: turn("evolve-" + hid), HypothesisID: hid, Kind: kinds[i%len(kinds)], Parents: []string{prev}, Context: ref}
			if err := run(fmt.Sprintf("evolve %s by %s into %s", prev, ein.Kind, hid), a.Evolve, ein, &g); err != nil {
				return out, err
			}
			out.Usage = out.Usage.Add(g.Usage)
			line = append(line, hid)
			prev, out.BestTitle = hid, g.Title
		}
		var c activities.CompareResult
		cin := activities.CompareInput{Turn: turn("match-" + prev + "-" + in.Hypothesis), A: prev, B: in.Hypothesis}
		if err := run(fmt.Sprintf("match %s vs %s", prev, in.Hypothesis), a.Compare, cin, &c); err != nil {
			return out, err
		}
		out.Usage = out.Usage.Add(c.Usage)
		if c.Winner == prev {
			out.Best = prev
			out.Message = fmt.Sprintf("evolved %s along a line (%s); the end of the line beat it: %q", in.Hypothesis, strings.Join(line, " → "), out.BestTitle)
		} else {
			out.BestTitle = ""
			out.Message = fmt.Sprintf("evolved %s along a line (%s); none beat it, so %s stands", in.Hypothesis, strings.Join(line, " → "), in.Hypothesis)
		}
	default:
		return out, temporal.NewNonRetryableApplicationError("unknown subagent task "+in.Task, "InvalidRequest", nil)
	}
	return out, nil
}

// delegate forks a subagent for each delegation the meta-review asked for, within
// maxSubagents at once and at most one per hypothesis and task. It runs after the
// round's checkpoint, which is the anchor the subagents copy their context from.
func (s *supervisor) delegate(ctx workflow.Context, asked []research.Delegation) {
	for _, d := range asked {
		if s.running() >= maxSubagents || s.Life.Effective() != session.Active || s.Checkpoints == 0 {
			return
		}
		i, known := s.index[d.Hypothesis]
		if !known || s.Entries[i].Excluded != "" || slices.Contains(s.Delegated, delegated(d.Task, d.Hypothesis)) || slices.ContainsFunc(s.Subagents, func(r SubagentRef) bool {
			return r.Hypothesis == d.Hypothesis && r.Task == d.Task
		}) {
			continue
		}
		if s.exactCap && d.Task == research.DelegateEvolve && s.full() {
			// The line's hypothesis could never come in: spend nothing on it.
			s.note(fmt.Sprintf("no evolution line from %s: this session has its %d hypotheses", d.Hypothesis, s.req.Config.MaxHypotheses))
			continue
		}
		// A subagent spends from the session's budget: what its calls are expected to
		// cost is reserved until its result is merged.
		release, err := s.reserve("subagent", s.subagentEstimate(d.Task))
		if err != nil {
			return
		}
		s.fork(ctx, d, release)
	}
}

// delegated names a task done on a hypothesis, as Delegated keeps it.
func delegated(task, hypothesis string) string { return task + " " + hypothesis }

// forgetFinished keeps, of the subagents that have finished, only what delegate needs:
// which task each did on which hypothesis. Continue-as-new calls it, so what a run carries
// does not grow by a record per subagent.
func (s *supervisor) forgetFinished() {
	for _, r := range s.Subagents {
		if r.Done {
			s.Delegated = append(s.Delegated, delegated(r.Task, r.Hypothesis))
		}
	}
	s.Subagents = slices.DeleteFunc(s.Subagents, func(r SubagentRef) bool { return r.Done })
}

func (s *supervisor) running() int {
	n := 0
	for _, r := range s.Subagents {
		if !r.Done {
			n++
		}
	}
	return n
}

// fork starts one subagent and a coroutine that merges its result when it ends.
func (s *supervisor) fork(ctx workflow.Context, d research.Delegation, release func()) {
	s.Forks++
	id := lineage.ForkID(s.id, strconv.Itoa(s.Forks))
	name := d.Task + " " + d.Hypothesis
	in := SubagentInput{
		Lineage: lineage.Descriptor{
			Type: lineage.Subagent, Conversation: s.lineage.Conversation, Seq: 1, Parent: s.id, Relation: lineage.Spawn,
			Checkpoint: s.Checkpoints, Name: name,
			Intention: &lineage.Intention{
				NextSteps:      d.Reason,
				ContextSummary: fmt.Sprintf("round %d of %q: %d hypotheses, %s has Elo %.0f", s.Rounds, s.Goal, len(s.Entries), d.Hypothesis, s.Entries[s.index[d.Hypothesis]].Elo),
				OnComplete:     "merge one result message into the parent's log at the fork point",
			},
		},
		From: s.id, Task: d.Task, Hypothesis: d.Hypothesis, Goal: s.Goal, Config: s.req.Config,
	}
	s.log(session.Event{Kind: session.EventSubagent, Session: id, Hypothesis: d.Hypothesis,
		Detail: fmt.Sprintf("forked %s to %s from checkpoint %d: %s", id, name, s.Checkpoints, d.Reason)})
	ref := SubagentRef{ID: id, Task: d.Task, Hypothesis: d.Hypothesis, At: s.EventBase + len(s.Events)}
	s.Subagents = append(s.Subagents, ref)
	future := workflow.ExecuteChildWorkflow(childOptions(ctx, id, fmt.Sprintf("subagent of %s: %s", s.id, name)), SubagentWorkflow, in)
	workflow.Go(ctx, func(ctx workflow.Context) {
		var res SubagentResult
		err := future.Get(ctx, &res)
		release()
		s.merge(ref, res, err)
	})
}

// merge records a subagent's one result at its fork point; a failure is recorded too,
// and the session goes on either way. An evolution line's winner joins the tournament at
// the start of the next round.
func (s *supervisor) merge(ref SubagentRef, res SubagentResult, err error) {
	for i := range s.Subagents {
		if s.Subagents[i].ID == ref.ID {
			s.Subagents[i].Done = true
		}
	}
	ev := session.Event{Kind: session.EventSubagent, Session: ref.ID, Hypothesis: ref.Hypothesis, At: ref.At}
	if err != nil {
		ev.Detail = "subagent " + ref.ID + " ended without a result: " + subagentError(err)
		s.log(ev)
		return
	}
	s.Usage = s.Usage.Add(res.Usage) // the subagent worked for this session: its tokens count
	ev.Detail = "result of " + ref.ID + ": " + res.Message
	s.log(ev)
	if res.Best != "" {
		s.Imports = append(s.Imports, Import{From: ref.ID, FromID: res.Best, Title: res.BestTitle, Parent: ref.Hypothesis})
	}
}

func subagentError(err error) string {
	var canceled *temporal.CanceledError
	var terminated *temporal.TerminatedError
	switch {
	case errors.As(err, &terminated):
		return "terminated"
	case errors.As(err, &canceled):
		return "cancelled"
	}
	return errorText(err)
}

// Import is a hypothesis a subagent made that joins the session's tournament.
type Import struct {
	From   string `json:"from"`
	FromID string `json:"from_id"`
	Title  string `json:"title"`
	Parent string `json:"parent"`
}

// storeImports copies the subagents' hypotheses into the session; like the scientist's,
// they enter the tournament at 1200 and compete.
func (s *supervisor) storeImports(ctx workflow.Context) []string {
	var ids []string
	for len(s.Imports) > 0 {
		im := s.Imports[0]
		s.Imports = s.Imports[1:]
		if s.full() {
			// Subagents' hypotheses count against max_hypotheses like the agents' own.
			s.note(fmt.Sprintf("%s of %s stays in %s's session: this session has its %d hypotheses", im.FromID, im.From, im.From, s.req.Config.MaxHypotheses))
			continue
		}
		id := s.newID()
		in := activities.ImportInput{From: im.From, FromID: im.FromID, To: s.id, ToID: id, Parents: []string{im.Parent}}
		var out activities.GenerateResult
		actx := workflow.WithActivityOptions(ctx, storeOptions(fmt.Sprintf("import %s from %s as %s", im.FromID, im.From, id)))
		if err := workflow.ExecuteActivity(actx, a.ImportHypothesis, in).Get(ctx, &out); err != nil {
			s.note(fmt.Sprintf("%s of %s could not be imported: %s", im.FromID, im.From, errorText(err)))
			continue
		}
		s.add(session.Entry{ID: id, Title: out.Title, Origin: "subagent", Strategy: "evolution line", Parents: []string{im.Parent}, Round: s.Rounds, Elo: tournament.InitialElo})
		s.Evolved++
		ids = append(ids, id)
	}
	return ids
}

// awaitSubagents waits for the running subagents: a session finishes or continues as new
// only once every result is merged, since a child's result reaches only the run that
// started it.
func (s *supervisor) awaitSubagents(ctx workflow.Context) {
	s.wait(ctx, func() bool { return s.running() == 0 })
}

// childOptions start a subagent (see the parent close policy above).
func childOptions(ctx workflow.Context, id, summary string) workflow.Context {
	return workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		TaskQueue:             TaskQueue,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		StaticSummary:         summary,
	})
}
