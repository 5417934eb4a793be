package workflows

// Tool-using turns: the loop of model steps and tool calls, each an activity, so a worker
// killed mid-loop resumes at the last completed step and never pays twice for a model
// call that succeeded. The loop is bounded by a budget of calls per turn and per session;
// a call the session config marks for approval waits for the scientist, while the rest
// of the session carries on (except in a conversation's answer, which the scientist is
// waiting for: there it is not made).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// versionToolTrust gates the tools file's approval: a session reads at its start which of
// its servers want every call approved (an external server, by default), and a call that
// waits shows the scientist its whole arguments. Sessions started before it approved
// only what their approve_tools named, and showed a call's main argument.
const versionToolTrust = "tool-trust"

// maxExtraSteps bounds a tool-using turn's steps beyond its call budget: a model that
// answers each result with one more call still ends.
const maxExtraSteps = 2

// Waiting is a tool call waiting for the scientist's answer (the answer-tool command).
type Waiting struct {
	ID    string `json:"id"` // what the answer names: "call-3"
	Turn  string `json:"turn"`
	Tool  string `json:"tool"`
	Brief string `json:"brief,omitempty"` // the call's main argument
	// Arguments are the call's whole arguments, indented and bounded
	// (activities.ShowArguments), for the scientist to read before approving.
	Arguments string    `json:"arguments,omitempty"`
	Since     time.Time `json:"since"`
	// The answer, once given: "approve", "reject" or "result" (the scientist's own result).
	Decision string `json:"decision,omitempty"`
	Result   string `json:"result,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// toolsFor is the tools a turn of the agent may call: the session's, and the lab tool
// once the session has a dataset (labtool.go), for generation by literature exploration,
// full reviews and deep verifications, evolution and the conversation's answers; none
// once the session's tool budget is spent.
func (s *supervisor) toolsFor(agent, kind string) []string {
	tools := s.req.Config.Tools
	if len(tools) == 0 && !s.labOffered() {
		return nil
	}
	switch {
	case agent == activities.AgentGeneration && kind == research.StrategyLiterature:
	case agent == activities.AgentReflection && (kind == research.ReviewFull || kind == research.ReviewDeepVerification):
	case agent == activities.AgentEvolution:
	case agent == activities.AgentConverse:
	default:
		return nil
	}
	if s.ToolCalls >= s.req.Config.ToolSessionBudget() {
		if !s.ToolsSpent {
			s.ToolsSpent = true
			s.note(fmt.Sprintf("the session's tool budget is spent (%d calls): the agents go on without tools", s.ToolCalls))
		}
		return nil
	}
	return s.withLab(tools)
}

// stepResult is what any step of a tool-using turn returns: the calls it asked for (none:
// it answered) and what its model call spent.
type stepResult interface {
	Pending() []activities.PendingCall
	Spent() research.Usage
}

// toolTurn runs a turn that may call tools: a model step (the activity fn, told its step
// by setLoop), then the calls it asked for, then the next step with their results, until
// the model answers. A turn without tools is one step, as turn runs it. The turn is
// booked once, as a whole.
func toolTurn[In any, Out stepResult](ctx workflow.Context, s *supervisor, agent, summary string, t activities.Turn, hypothesis string,
	fn func(context.Context, In) (Out, error), in In, tools []string, setLoop func(*In, activities.Loop)) (Out, error) {
	if len(tools) == 0 {
		return turn(ctx, s, agent, summary, t, hypothesis, fn, in)
	}
	s.toolTurns++
	defer func() { s.toolTurns-- }()
	step := func(ctx workflow.Context, n int, what string, in In) (Out, error) {
		if n > 1 && !s.mayStart(ctx) {
			var out Out
			return out, temporal.NewApplicationError("cut short: the session is ending", "CutShort")
		}
		return runTurnActivity(ctx, s, agent, what, fn, in)
	}
	return toolLoop(ctx, s, agent, summary, t, hypothesis, in, tools, setLoop, false, step)
}

// toolLoop is the loop of a tool-using turn: step runs its model step n (what is its
// summary), and the calls it asks for are made (callTools; conversing: a converse turn's,
// whose scientist is waiting for the answer) until it answers or its budget is spent.
// Each step's usage is spent as it comes; the answer's is the caller's to add. The turn
// is booked once, when it ends.
func toolLoop[In any, Out stepResult](ctx workflow.Context, s *supervisor, agent, summary string, t activities.Turn, hypothesis string,
	in In, tools []string, setLoop func(*In, activities.Loop), conversing bool,
	step func(ctx workflow.Context, n int, what string, in In) (Out, error)) (Out, error) {
	budget := s.req.Config.ToolTurnBudget()
	loop := activities.Loop{Tools: tools}
	s.labLoop(&loop)
	used, read := 0, ""
	for n := 1; ; n++ {
		loop.Step = n
		loop.Final = used >= budget || n > budget+maxExtraSteps || s.ToolCalls >= s.req.Config.ToolSessionBudget()
		setLoop(&in, loop)
		what := summary
		if n > 1 {
			what = fmt.Sprintf("%s, step %d%s", summary, n, read)
		}
		out, err := step(ctx, n, what, in)
		calls := out.Pending()
		if err != nil || len(calls) == 0 {
			s.book(ctx, agent, summary, t, hypothesis, err)
			return out, err
		}
		s.spend(agent, out.Spent()) // the answer's usage is the caller's to add
		loop.Given, read = s.callTools(ctx, t, n, calls, tools, &used, budget, conversing, hypothesis)
	}
}

// noApproval is what a converse turn's model reads of a call that needs the scientist's
// approval: the scientist is waiting for the answer, so the call is not made.
const noApproval = "this call needs the scientist's approval, which a conversation does not wait for: it was not made; answer with what you have, or propose a review or feedback for the agents to look into it"

// callTools makes a step's calls at once and returns what each gave, in the calls' order,
// and a few words on what was read for the next step's summary. A call the session does
// not allow, or one over the budget, is not made: the model reads why. So is, in a
// conversation (conversing), a call that needs the scientist's approval: the scientist
// waits for the answer, and the answer does not wait for them.
func (s *supervisor) callTools(ctx workflow.Context, t activities.Turn, step int, calls []activities.PendingCall, tools []string, used *int, budget int, conversing bool, hypothesis string) ([]activities.ToolOutcome, string) {
	outcomes := make([]activities.ToolOutcome, len(calls))
	counts := make([]int, len(calls))
	done := 0
	for i, c := range calls {
		outcomes[i] = activities.ToolOutcome{CallID: c.ID, Name: c.Name}
		counts[i] = -1
		switch {
		case !allows(tools, c.Name):
			outcomes[i].Error = fmt.Sprintf("this session does not let you call %q; call one of %s", c.Name, strings.Join(tools, ", "))
			done++
			continue
		case conversing && s.needsApproval(c.Name):
			outcomes[i].Error = noApproval
			s.logTool(t, toolLabel(c.Name)+" not made: it needs the scientist's approval, which a conversation does not wait for")
			done++
			continue
		case *used >= budget || s.ToolCalls >= s.req.Config.ToolSessionBudget():
			outcomes[i].Error = "the tool budget is spent; answer with what the tools have returned"
			done++
			continue
		}
		*used++
		s.ToolCalls++
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer func() { done++ }()
			if c.Name == activities.LabTool {
				outcomes[i] = s.callLab(ctx, t, step, i, c, hypothesis)
				return
			}
			outcomes[i], counts[i] = s.callTool(ctx, t, step, i, c)
		})
	}
	s.wait(ctx, func() bool { return done == len(calls) })
	var read []string
	for i, c := range calls {
		if counts[i] >= 0 {
			read = append(read, fmt.Sprintf("%d results of %s", counts[i], toolLabel(c.Name)))
		}
	}
	if len(read) == 0 {
		return outcomes, ""
	}
	return outcomes, ": read " + strings.Join(read, ", ")
}

// allows says whether the turn's tools (names, or server.*) cover the call.
func allows(tools []string, name string) bool {
	server, _, _ := strings.Cut(name, ".")
	return slices.Contains(tools, name) || slices.Contains(tools, server+".*")
}

// toolLabel names a tool as a summary reads: "search literature" for literature.search.
func toolLabel(name string) string {
	server, tool, ok := strings.Cut(name, ".")
	if !ok {
		return name
	}
	return tool + " " + server
}

// callTool makes one call, after the scientist's approval if the session asks for it,
// and books it in the event log. Its outcome is the result's audit record, or what went
// wrong, for the model to read: a tool that fails past its retries fails the call, not
// the turn.
func (s *supervisor) callTool(ctx workflow.Context, t activities.Turn, step, i int, c activities.PendingCall) (activities.ToolOutcome, int) {
	out := activities.ToolOutcome{CallID: c.ID, Name: c.Name}
	label := toolLabel(c.Name)
	if c.Brief != "" {
		label += ": " + c.Brief
	}
	in := activities.ToolCallInput{SessionID: s.id, TurnID: t.TurnID, Step: step, Call: i}
	if s.needsApproval(c.Name) {
		w := s.askScientist(ctx, t, c, in)
		switch w.Decision {
		case "approve":
		case "result":
			var res activities.ToolCallResult
			actx := workflow.WithActivityOptions(ctx, storeOptions("the scientist's result for "+label))
			if err := workflow.ExecuteActivity(actx, a.SupplyToolResult, activities.SuppliedResult{ToolCallInput: in, Content: w.Result}).Get(ctx, &res); err != nil {
				out.Error = "the scientist's result could not be stored: " + errorText(err)
				s.ToolErrors++
				return out, -1
			}
			s.logTool(t, label+" (the scientist's result)")
			out.Source = res.Source
			return out, -1
		default:
			out.Error = "the scientist refused this call"
			if w.Reason != "" {
				out.Error += ": " + w.Reason
			}
			out.Error += "; do without it"
			s.logTool(t, label+" refused: "+orDefault(w.Reason, "no reason given"))
			return out, -1
		}
	}
	var res activities.ToolCallResult
	actx := workflow.WithActivityOptions(ctx, toolOptions(c.Name, label))
	err := workflow.ExecuteActivity(actx, a.CallTool, in).Get(ctx, &res)
	if err != nil {
		s.ToolErrors++
		out.Error = "the tool failed: " + errorText(err) + "; do without it, or try another call"
		s.logTool(t, label+" failed: "+errorText(err))
		return out, -1
	}
	out.Source, out.IsError = res.Source, res.IsError
	switch {
	case res.IsError:
		s.ToolErrors++
		s.logTool(t, label+" (tool error: "+res.Note+")")
	case res.Results >= 0:
		s.logTool(t, fmt.Sprintf("%s (%d results)", label, res.Results))
	default:
		s.logTool(t, label)
	}
	return out, res.Results
}

func (s *supervisor) logTool(t activities.Turn, detail string) {
	s.log(session.Event{Kind: session.EventTool, Turn: t.TurnID, Detail: detail})
}

// toolOptions: a call runs on its server's task queue, whose rate limit holds across
// every worker; the server's own timeout bounds each attempt (the worker enforces it),
// and a dead worker is noticed by the heartbeat. A few retries, then the model is told.
func toolOptions(name, summary string) workflow.ActivityOptions {
	server, _, _ := strings.Cut(name, ".")
	return workflow.ActivityOptions{
		TaskQueue:           ToolQueue(server),
		Summary:             summary,
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        10 * time.Second,
			MaximumAttempts:        3,
			NonRetryableErrorTypes: []string{activities.ErrUnknownTool, activities.ErrInvalidInput},
		},
	}
}

// askScientist waits for the scientist's answer to a call that needs approval: approve,
// refuse, or give the result themselves (the answer-tool command). The turn waits; the
// round goes on without it (see parallel), and so does the session. An answer that does
// not come within the session's approval timeout, or a session that ends first, refuses
// the call.
func (s *supervisor) askScientist(ctx workflow.Context, t activities.Turn, c activities.PendingCall, in activities.ToolCallInput) Waiting {
	s.CallSeq++
	w := Waiting{ID: fmt.Sprintf("call-%d", s.CallSeq), Turn: t.TurnID, Tool: c.Name, Brief: c.Brief, Since: workflow.Now(ctx)}
	if since(ctx, versionToolTrust) {
		// The scientist approves what they can read: the whole call, not a line of it.
		actx := workflow.WithActivityOptions(ctx, storeOptions("read the arguments of "+toolLabel(c.Name)+" for the scientist"))
		if err := workflow.ExecuteActivity(actx, a.ToolCallArguments, in).Get(ctx, &w.Arguments); err != nil {
			w.Arguments = "(the arguments could not be read: " + errorText(err) + ")"
		}
	}
	s.Waiting = append(s.Waiting, w)
	s.logTool(t, fmt.Sprintf("%s waits for the scientist's approval: answer-tool {\"call\": %q, \"decision\": \"approve\"}", toolLabel(c.Name), w.ID))
	s.show(ctx)
	if g := groupOf(ctx); g != nil {
		g.parked++
		defer func() { g.parked-- }()
	}
	answered := func() bool {
		i := slices.IndexFunc(s.Waiting, func(x Waiting) bool { return x.ID == w.ID })
		return i < 0 || s.Waiting[i].Decision != "" || s.closingTools
	}
	ok, _ := workflow.AwaitWithTimeout(ctx, s.req.Config.ApprovalWait(), answered)
	i := slices.IndexFunc(s.Waiting, func(x Waiting) bool { return x.ID == w.ID })
	if i >= 0 {
		w = s.Waiting[i]
		s.Waiting = slices.Delete(s.Waiting, i, i+1)
	}
	switch {
	case w.Decision != "":
	case !ok:
		w.Decision, w.Reason = "reject", fmt.Sprintf("no answer within %s", research.Duration(s.req.Config.ApprovalWait()))
	default:
		w.Decision, w.Reason = "reject", "the session is ending"
	}
	s.show(ctx)
	return w
}

// needsApproval says whether a call waits for the scientist: the session's approve_tools
// name it, or its server's configuration asks for every call (ApproveServers).
func (s *supervisor) needsApproval(name string) bool {
	if name == activities.LabTool {
		return false // it reads only the session's own data, in the sandbox
	}
	server, _, _ := strings.Cut(name, ".")
	return (s.req.Config.NeedsApproval(name) || slices.Contains(s.ApproveServers, server)) && s.trusted(name) < 0
}

// trusted is the index of a tool in the session's trusted tools, or -1.
func (s *supervisor) trusted(tool string) int {
	return slices.IndexFunc(s.Trusted, func(t session.Trust) bool { return t.Tool == tool })
}

// checkTrust refuses a trust-tool of a tool that is not the session's, is trusted already
// or whose calls do not wait, and an untrust-tool of a tool that is not trusted.
func (s *supervisor) checkTrust(cmd session.Command) error {
	label := toolLabel(cmd.Tool)
	switch {
	case cmd.Name == UntrustTool && s.trusted(cmd.Tool) < 0:
		return fmt.Errorf("cannot untrust-tool: %s is not trusted in this session", label)
	case cmd.Name == UntrustTool:
		return nil
	case !s.req.Config.Allows(cmd.Tool):
		return fmt.Errorf("cannot trust-tool: %s is not among the session's tools", label)
	case s.trusted(cmd.Tool) >= 0:
		return fmt.Errorf("cannot trust-tool: %s is trusted already", label)
	case !s.needsApproval(cmd.Tool):
		return fmt.Errorf("cannot trust-tool: the calls of %s do not wait for approval", label)
	}
	return nil
}

// trust applies trust-tool and untrust-tool (checked by checkTrust). Trusting a tool
// approves its calls that wait now, as the scientist would one by one; untrusting makes
// its next calls wait again.
func (s *supervisor) trust(cmd session.Command, now time.Time) string {
	label := toolLabel(cmd.Tool)
	if cmd.Name == UntrustTool {
		s.Trusted = slices.Delete(s.Trusted, s.trusted(cmd.Tool), s.trusted(cmd.Tool)+1)
		return label + ": its calls wait for the scientist's approval again"
	}
	t := session.Trust{Tool: cmd.Tool, By: cmd.By, Time: session.Stamp(now)}
	if cmd.Update != "" { // what the line "trusted by" is checked against
		t.Signed, t.Update, t.Digest = cmd.BySig, cmd.Update, cmd.Signs
	}
	s.Trusted = append(s.Trusted, t)
	approved := 0
	for i := range s.Waiting {
		if w := &s.Waiting[i]; w.Tool == cmd.Tool && w.Decision == "" {
			w.Decision, w.Reason = "approve", "the scientist trusted "+label+" for the session"
			approved++
		}
	}
	return fmt.Sprintf("%s: its calls no longer wait for approval (%d waiting approved)", label, approved)
}

// answerTool applies the scientist's answer to a waiting call.
func (s *supervisor) answerTool(cmd session.Command) (string, error) {
	i := slices.IndexFunc(s.Waiting, func(x Waiting) bool { return x.ID == cmd.Call && x.Decision == "" })
	if i < 0 {
		return "", s.noSuchCall(cmd.Call)
	}
	w := &s.Waiting[i]
	w.Decision, w.Reason, w.Result = cmd.Decision, cmd.Reason, cmd.Result
	return fmt.Sprintf("%s %s: %s", w.ID, toolLabel(w.Tool), w.Decision), nil
}

// noSuchCall is the error for an answer to a call that is not waiting.
func (s *supervisor) noSuchCall(id string) error {
	var ids []string
	for _, w := range s.Waiting {
		if w.Decision == "" {
			ids = append(ids, w.ID)
		}
	}
	if len(ids) == 0 {
		return fmt.Errorf("cannot answer %q: no tool call is waiting for an answer", id)
	}
	return fmt.Errorf("cannot answer %q: it is not waiting; waiting: %s", id, strings.Join(ids, ", "))
}

// waiting is the calls waiting for the scientist, as status and progress show them.
func (s *supervisor) waiting() []session.WaitingCall {
	var out []session.WaitingCall
	for _, w := range s.Waiting {
		if w.Decision == "" {
			out = append(out, session.WaitingCall{ID: w.ID, Tool: w.Tool, Brief: w.Brief, Arguments: w.Arguments, Turn: w.Turn, Since: session.Stamp(w.Since)})
		}
	}
	return out
}

// group is one parallel step of a round: its coroutines, those done, and those parked
// waiting for the scientist, which the step does not wait for.
type group struct {
	n, done, parked int
	over            bool // the step moved on; its parked coroutines finish late
}

type groupKey struct{}

// groupOf is the parallel step a coroutine runs in, or nil.
func groupOf(ctx workflow.Context) *group {
	g, _ := ctx.Value(groupKey{}).(*group)
	return g
}

// late says whether the coroutine's parallel step has moved on without it: a turn that
// waited for the scientist finishes after its round's step.
func late(ctx workflow.Context) bool {
	g := groupOf(ctx)
	return g != nil && g.over
}
