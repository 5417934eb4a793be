package activities

// Tool-using turns. A turn that may call tools is a loop the workflow runs: each model
// step is an activity (Generate, Review, Evolve or Converse with a Loop), and each tool
// call one more (CallTool), on a task queue of the tool's server. The conversation stays in the
// session store: each step's record holds what the model said and the calls it asked for
// (store.Turn.Said) and the results it was given (store.Turn.Given), and every result is a
// record of the audit trail (store.ToolRecord), so what travels through the workflow is
// ids and digests, however long the loop.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/internal/tools"
)

// Toolbox is what the activities need of the worker's tool servers (tools.Box).
type Toolbox interface {
	Catalog(ctx context.Context) []tools.ServerTools
	Specs(ctx context.Context, names []string) ([]research.ToolSpec, error)
	Call(ctx context.Context, name string, args json.RawMessage) (tools.Outcome, error)
}

// ErrUnknownTool: a tool or tool server the workers do not have. No retry finds it.
const ErrUnknownTool = "UnknownTool"

// Loop says where a tool-using turn is: the step to take, the tools it may call, and
// what the previous step's calls gave. A zero Loop is a turn without tools.
type Loop struct {
	Step  int      `json:"step,omitempty"`  // from 1
	Tools []string `json:"tools,omitempty"` // the turn's tools, as the session names them
	// Final says the turn's tool budget is spent: the model must answer at this step.
	Final bool          `json:"final,omitempty"`
	Given []ToolOutcome `json:"given,omitempty"` // the previous step's calls, in order
	// Lab are the session's tables the lab tool (LabTool, among Tools) analyses, for its
	// description.
	Lab []DatasetRef `json:"lab,omitempty"`
}

// On says whether the turn uses tools.
func (l Loop) On() bool { return l.Step > 0 }

// ToolOutcome is what one call gave: the audit record of its result, or why there is
// none (the call was refused, over the budget, or failed past its retries).
type ToolOutcome struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Source  string `json:"source,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	Error   string `json:"error,omitempty"`
}

// PendingCall is a tool call a step asked for, as the workflow sees it: no arguments
// (they stay in the step's record), a short line for summaries; a call that waits for
// the scientist's approval reads its whole arguments (ToolCallArguments).
type PendingCall struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Brief string `json:"brief,omitempty"`
}

// StepID is the id of a tool-using turn's step: the turn's own id with the step's number.
func StepID(turnID string, step int) string { return fmt.Sprintf("%s.step-%d", turnID, step) }

// tooling rebuilds a step's request: the turn's tools, and its conversation from the
// records of the steps before (what each said and asked for, and what its calls gave,
// read back from the audit trail). rec gets this step's part: the results it is given.
func (a *Activities) tooling(ctx context.Context, sessionID, turnID string, l Loop, rec *store.Turn) (research.Tooling, error) {
	t := research.Tooling{Final: l.Final}
	// The lab tool is cosci's own: its spec is built from the session's tables, and a
	// session without tool servers may still offer it.
	servers := slices.DeleteFunc(slices.Clone(l.Tools), func(n string) bool { return n == LabTool })
	if len(servers) > 0 {
		if a.Tools == nil {
			return t, errors.New("this worker has no tool servers (start it with --tools FILE), so it cannot take a turn that calls tools")
		}
		specs, err := a.Tools.Specs(ctx, servers)
		if err != nil {
			return t, toolError(err)
		}
		t.Tools = specs
	}
	if len(servers) < len(l.Tools) {
		spec, err := a.LabSpec(ctx, sessionID, l.Lab)
		if err != nil {
			return t, err
		}
		t.Tools = append(t.Tools, spec)
	}
	records := map[string]store.ToolRecord{}
	results := func(given []ToolOutcome) ([]research.ToolResult, error) {
		out := make([]research.ToolResult, len(given))
		for i, g := range given {
			r := research.ToolResult{CallID: g.CallID, Name: g.Name, IsError: g.IsError || g.Error != "", Source: g.Source, Content: g.Error}
			if g.Source != "" {
				tr, ok := records[g.Source]
				if !ok {
					var err error
					if tr, err = a.Store.ToolRecord(ctx, sessionID, g.Source); err != nil {
						return nil, err
					}
					records[g.Source] = tr
				}
				r.Content = tr.Content
			}
			out[i] = r
		}
		return out, nil
	}
	var said []research.ToolStep
	var given [][]ToolOutcome // given[k]: what step k+1 was given
	for k := 1; k < l.Step; k++ {
		st, ok, err := a.Store.Turn(ctx, sessionID, StepID(turnID, k))
		switch {
		case err != nil:
			return t, err
		case !ok || st.Said == nil:
			return t, &store.DamagedError{SessionID: sessionID, Record: a.Store.Where(sessionID, "turns/"+StepID(turnID, k)+".json"),
				Problem: fmt.Sprintf("step %d of turn %s is missing, so step %d cannot read the conversation", k, turnID, l.Step)}
		}
		said = append(said, *st.Said)
		if k > 1 {
			given = append(given, outcomes(st.Given))
		}
	}
	given = append(given, l.Given)
	for k, s := range said {
		rs, err := results(given[k])
		if err != nil {
			return t, err
		}
		s.Results = rs
		t.Steps = append(t.Steps, s)
	}
	rec.Given = make([]research.ToolResult, len(l.Given))
	for i, g := range l.Given {
		rec.Given[i] = research.ToolResult{CallID: g.CallID, Name: g.Name, IsError: g.IsError || g.Error != "", Source: g.Source, Content: g.Error}
	}
	return t, nil
}

// outcomes turns a step record's Given back into what the workflow gave it.
func outcomes(rs []research.ToolResult) []ToolOutcome {
	out := make([]ToolOutcome, len(rs))
	for i, r := range rs {
		out[i] = ToolOutcome{CallID: r.CallID, Name: r.Name, Source: r.Source, IsError: r.IsError}
		if r.Source == "" {
			out[i].Error = r.Content
		}
	}
	return out
}

// pending records a step that asked for calls in its record, and returns the calls as
// the workflow sees them.
func pending[T any](rec *store.Turn, st research.Step[T]) []PendingCall {
	rec.Said = &research.ToolStep{Text: st.Text, Calls: st.Calls, Results: []research.ToolResult{}, Reasoning: st.Reasoning}
	out := make([]PendingCall, len(st.Calls))
	for i, c := range st.Calls {
		out[i] = PendingCall{ID: c.ID, Name: c.Name, Brief: brief(c.Arguments)}
	}
	return out
}

// answered records a step that answered, so the step records of a turn read to its end.
func answered(rec *store.Turn) {
	if rec != nil {
		rec.Said = &research.ToolStep{Calls: []research.ToolCall{}, Results: []research.ToolResult{}}
	}
}

// brief is a call's main argument in a few words: its query, its id, or its first string.
func brief(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, k := range []string{"query", "q", "id", "doi", "url", "path", "name", "message"} {
		if s, ok := m[k].(string); ok && s != "" {
			return research.Shorten(s, 60)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if s, ok := m[k].(string); ok && s != "" {
			return research.Shorten(s, 60)
		}
	}
	return ""
}

// foundIn lists a conversation's results as the citation package reads them.
func foundIn(t research.Tooling) []citation.Result {
	var out []citation.Result
	for _, r := range t.Results() {
		if r.Source != "" && !r.IsError {
			out = append(out, citation.Result{Source: r.Source, Content: r.Content})
		}
	}
	return out
}

// Pending and Spent let the workflow's loop read any step's result alike.
func (r GenerateResult) Pending() []PendingCall { return r.Calls }
func (r GenerateResult) Spent() research.Usage  { return r.Usage }
func (r ReviewResult) Pending() []PendingCall   { return r.Calls }
func (r ReviewResult) Spent() research.Usage    { return r.Usage }
func (r ConverseResult) Pending() []PendingCall { return r.Calls }
func (r ConverseResult) Spent() research.Usage  { return r.Usage }

// SetLoop tells a step which step it is.
func (in *GenerateInput) SetLoop(l Loop) { in.Loop = l }
func (in *ReviewInput) SetLoop(l Loop)   { in.Loop = l }
func (in *EvolveInput) SetLoop(l Loop)   { in.Loop = l }
func (in *ConverseInput) SetLoop(l Loop) { in.Loop = l }

// SuppliedResult is the result of a call the scientist gave themselves, in place of the
// tool's.
type SuppliedResult struct {
	ToolCallInput
	Content string `json:"content"`
}

// SupplyToolResult keeps the scientist's result for a call in the audit trail, marked as
// theirs, so the model reads it and a citation of it can be checked like any other.
func (a *Activities) SupplyToolResult(ctx context.Context, in SuppliedResult) (ToolCallResult, error) {
	call, err := a.callOf(ctx, in.ToolCallInput)
	if err != nil {
		return ToolCallResult{}, err
	}
	digest, err := a.Store.PutToolRecord(ctx, in.SessionID, store.ToolRecord{Tool: call.Name, Arguments: call.Arguments, Content: in.Content, By: "scientist"})
	if err != nil {
		return ToolCallResult{}, err
	}
	return ToolCallResult{Source: digest, Results: -1}, nil
}

// MaxShownArguments bounds a call's arguments as an approval shows them.
const MaxShownArguments = 4 << 10

// ToolCallArguments is a call's whole arguments as the scientist reads them to approve it
// (ShowArguments): the workflow shows them with the call that waits. They are read from
// the step's record, so only the calls that wait carry them through the workflow.
func (a *Activities) ToolCallArguments(ctx context.Context, in ToolCallInput) (string, error) {
	call, err := a.callOf(ctx, in)
	if err != nil {
		return "", err
	}
	return ShowArguments(call.Arguments), nil
}

// ShowArguments is a call's arguments as a person reads them: indented JSON (the model's
// own text if it is not JSON), cut at MaxShownArguments bytes with the cut named. What
// prints them escapes what a terminal would act on.
func ShowArguments(raw json.RawMessage) string {
	text := strings.TrimSpace(string(raw))
	var b bytes.Buffer
	if json.Indent(&b, []byte(text), "", "  ") == nil {
		text = b.String()
	}
	if text == "" || text == "null" {
		return "{}"
	}
	if len(text) <= MaxShownArguments {
		return text
	}
	n := MaxShownArguments
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return fmt.Sprintf("%s\n[cut: %d of %d bytes shown]", text[:n], n, len(text))
}

// callOf reads the call a step's record asked for.
func (a *Activities) callOf(ctx context.Context, in ToolCallInput) (research.ToolCall, error) {
	st, ok, err := a.Store.Turn(ctx, in.SessionID, StepID(in.TurnID, in.Step))
	switch {
	case err != nil:
		return research.ToolCall{}, err
	case !ok || st.Said == nil || in.Call < 0 || in.Call >= len(st.Said.Calls):
		return research.ToolCall{}, invalid("turn %s has no call %d at step %d", in.TurnID, in.Call, in.Step)
	}
	return st.Said.Calls[in.Call], nil
}

// ToolCallInput names one call of a tool-using turn's step; its arguments are in the
// step's record.
type ToolCallInput struct {
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id"` // the turn's own id
	Step      int    `json:"step"`
	Call      int    `json:"call"` // its index among the step's calls
}

// ToolCallResult is what the workflow keeps of a call: its audit record and a count.
type ToolCallResult struct {
	Source  string `json:"source"`
	IsError bool   `json:"is_error,omitempty"`
	// Results is how many results the tool listed (a search's hits); -1 when its result
	// is not a list.
	Results int    `json:"results"`
	Note    string `json:"note,omitempty"` // the first line of a tool error
}

// CallTool makes one tool call a model asked for and keeps its result in the session's
// audit trail. It runs on the task queue of the tool's server, which bounds how fast the
// server is called across every worker. A tool's own error (a bad argument, nothing
// found) is a result for the model to read; a failure to reach the tool is retried by
// Temporal, and once the retries are spent the workflow hands the model the failure.
func (a *Activities) CallTool(ctx context.Context, in ToolCallInput) (ToolCallResult, error) {
	call, err := a.callOf(ctx, in)
	if err != nil {
		return ToolCallResult{}, err
	}
	if a.Tools == nil {
		return ToolCallResult{}, errors.New("this worker has no tool servers (start it with --tools FILE)")
	}
	ctx, end := a.observeTool(ctx, call.Name)
	stop := a.keepAlive(ctx)
	out, err := a.Tools.Call(ctx, call.Name, call.Arguments)
	stop()
	end(out, err)
	if err != nil {
		return ToolCallResult{}, toolError(err)
	}
	digest, err := a.Store.PutToolRecord(ctx, in.SessionID, store.ToolRecord{
		Tool: call.Name, Arguments: call.Arguments, Content: out.Content, Structured: out.Structured, IsError: out.IsError,
	})
	if err != nil {
		return ToolCallResult{}, err
	}
	res := ToolCallResult{Source: digest, IsError: out.IsError, Results: count(out)}
	if out.IsError {
		res.Note = research.Shorten(out.Content, 160)
	}
	return res, nil
}

// count is how many results a tool listed, or -1.
func count(o tools.Outcome) int {
	for _, raw := range []string{string(o.Structured), o.Content} {
		var v struct {
			Results []json.RawMessage `json:"results"`
		}
		if json.Unmarshal([]byte(raw), &v) == nil && v.Results != nil {
			return len(v.Results)
		}
	}
	return -1
}

// toolError classifies a failure to reach a tool: one the workers do not have is not
// retried; anything else (a server that died, a timeout) is.
func toolError(err error) error {
	var unknown *tools.UnknownError
	if errors.As(err, &unknown) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrUnknownTool, err)
	}
	return err
}

// Catalog is every tool server's tools, as the workers offer them.
type Catalog struct {
	Servers []tools.ServerTools `json:"servers"`
	// Worker is the identity of the worker that answered.
	Worker string `json:"worker,omitempty"`
	At     string `json:"at,omitempty"`
}

// ToolCatalog lists the tools of every server this worker connects to. A session that
// names tools runs it first, so a tool that does not exist is refused at start; the
// starter shows it (starter tools).
func (a *Activities) ToolCatalog(ctx context.Context) (Catalog, error) {
	c := Catalog{Servers: []tools.ServerTools{}, At: time.Now().UTC().Format(time.RFC3339)}
	if a.Tools != nil {
		c.Servers = a.Tools.Catalog(ctx)
	}
	return c, nil
}
