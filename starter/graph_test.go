package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// fakeGraph answers the calls the graph commands make, from memory. A call it does not
// implement panics (the embedded client is nil), so a test also proves what is not called.
type fakeGraph struct {
	client.Client
	execs    map[string]*workflowpb.WorkflowExecutionInfo   // what Describe answers, by workflow ID
	statuses map[string]workflows.Status                    // what the status query answers
	lists    map[string][]*workflowpb.WorkflowExecutionInfo // what a visibility query finds
	startErr error                                          // what ExecuteWorkflow fails with
	result   string                                         // what a started workflow returns
	started  []startCall
}

type startCall struct {
	opts     client.StartWorkflowOptions
	workflow any
	args     []any
}

// add makes Describe find each of infos that is not nil.
func (f *fakeGraph) add(infos ...*workflowpb.WorkflowExecutionInfo) {
	for _, info := range infos {
		if info != nil {
			f.execs[info.Execution.WorkflowId] = info
		}
	}
}

func (f *fakeGraph) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	info, ok := f.execs[id]
	if !ok {
		return nil, serviceerror.NewNotFound("workflow not found for ID: " + id)
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: info}, nil
}

func (f *fakeGraph) QueryWorkflow(_ context.Context, id, _, name string, _ ...any) (converter.EncodedValue, error) {
	s, ok := f.statuses[id]
	if !ok || name != workflows.QueryStatus {
		return nil, serviceerror.NewQueryFailed("no answer for " + name)
	}
	return jsonValue{s}, nil
}

func (f *fakeGraph) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error) {
	f.started = append(f.started, startCall{opts, workflow, args})
	if f.startErr != nil {
		return nil, f.startErr
	}
	return fakeRun{id: opts.ID, result: f.result}, nil
}

// ListWorkflow answers two executions a page, so that paging is exercised.
func (f *fakeGraph) ListWorkflow(_ context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	all, ok := f.lists[req.Query]
	if rest, among := strings.CutPrefix(req.Query, archivedQuery+" AND WorkflowId IN ("); among {
		// The archives of the sessions named.
		all, ok = nil, true
		for _, e := range f.lists[archivedQuery] {
			if strings.Contains(rest, quote(e.GetExecution().GetWorkflowId())) {
				all = append(all, e)
			}
		}
	}
	if !ok {
		return nil, serviceerror.NewInvalidArgument("unexpected query: " + req.Query)
	}
	from := 0
	if len(req.NextPageToken) > 0 {
		from, _ = strconv.Atoi(string(req.NextPageToken))
	}
	to := min(from+2, len(all))
	resp := &workflowservice.ListWorkflowExecutionsResponse{Executions: all[from:to]}
	if to < len(all) {
		resp.NextPageToken = []byte(strconv.Itoa(to))
	}
	return resp, nil
}

type fakeRun struct {
	client.WorkflowRun
	id, result string
}

func (r fakeRun) GetID() string { return r.id }

func (r fakeRun) Get(_ context.Context, ptr any) error { return jsonValue{r.result}.Get(ptr) }

func payload(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// execution builds what Temporal says about one workflow. d, when set, goes in the
// lineage memo; state, when set, is the SessionStatus search attribute.
func execution(t *testing.T, id, typ string, status enumspb.WorkflowExecutionStatus, started int, d *lineage.Descriptor, state string) *workflowpb.WorkflowExecutionInfo {
	t.Helper()
	info := &workflowpb.WorkflowExecutionInfo{
		Execution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: "run-" + id},
		Type:      &commonpb.WorkflowType{Name: typ},
		Status:    status,
		StartTime: timestamppb.New(time.Date(2026, 1, 1, 0, started, 0, 0, time.UTC)),
	}
	if d != nil {
		info.Memo = &commonpb.Memo{Fields: map[string]*commonpb.Payload{workflows.MemoLineage: payload(t, d)}}
	}
	if state != "" {
		info.SearchAttributes = &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{workflows.AttrSessionStatus: payload(t, state)}}
	}
	return info
}

const (
	wfRunning   = enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	wfCompleted = enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	wfFailed    = enumspb.WORKFLOW_EXECUTION_STATUS_FAILED
)

func TestParseBranchGood(t *testing.T) {
	quiet(t)
	tests := []struct {
		name string
		cmd  string
		args []string
		id   string // fork: "" means generated
		want research.Request
	}{
		{
			name: "continue with nothing changed sends an empty request",
			cmd:  "continue", args: []string{"s-1"},
		},
		{
			name: "continue changes only what is set",
			cmd:  "continue", args: []string{"--goal", "  Why do cells age?  ", "s-1", "--max-hypotheses", "30", "--token-budget", "2M", "--scientist", " ada ", "--wait"},
			want: research.Request{ResearchGoal: "Why do cells age?", ScientistID: "ada", Config: research.Config{MaxHypotheses: 30, TokenBudget: 2000000}},
		},
		{
			name: "continue takes every config flag",
			cmd:  "continue", args: []string{"s-1", "--time-limit", "2h", "--review-types", "full, tournament", "--safety-level", "strict",
				"--provider", "openai", "--model", "m-1", "--convergence-rounds", "9", "--seed", "7"},
			want: research.Request{Config: research.Config{TimeLimit: research.Duration(2 * time.Hour), ReviewTypes: []string{"full", "tournament"},
				SafetyLevel: "strict", Provider: "openai", Model: "m-1", ConvergenceRounds: 9, Seed: 7}},
		},
		{
			name: "fork from the latest checkpoint",
			cmd:  "fork", args: []string{"s-1"},
			want: research.Request{Lineage: &lineage.Descriptor{Type: lineage.User, Parent: "s-1", Relation: lineage.Fork}},
		},
		{
			name: "fork from a checkpoint, with an id and a goal",
			cmd:  "fork", args: []string{"s-1", "--checkpoint", "3", "--id", "my-fork", "--goal", "g2", "--watch"},
			id:   "my-fork",
			want: research.Request{ResearchGoal: "g2", Lineage: &lineage.Descriptor{Type: lineage.User, Parent: "s-1", Relation: lineage.Fork, Checkpoint: 3}},
		},
		{
			name: "a goal the default screen refuses is left to the parent's level",
			cmd:  "fork", args: []string{"s-1", "--goal", "toxins in shellfish"},
			want: research.Request{ResearchGoal: "toxins in shellfish", Lineage: &lineage.Descriptor{Type: lineage.User, Parent: "s-1", Relation: lineage.Fork}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseBranch(tt.cmd, tt.args)
			if err != nil {
				t.Fatalf("parseBranch: %v", err)
			}
			if o.parent != "s-1" {
				t.Errorf("parent = %q", o.parent)
			}
			if got, want := mustJSON(t, o.req), mustJSON(t, tt.want); got != want {
				t.Errorf("request\n got %s\nwant %s", got, want)
			}
			switch {
			case tt.cmd == "continue" && o.id != "":
				t.Errorf("continue chose an id %q; the parent's conversation does", o.id)
			case tt.cmd == "fork" && tt.id != "" && o.id != tt.id:
				t.Errorf("id = %q, want %q", o.id, tt.id)
			case tt.cmd == "fork" && tt.id == "" && !regexp.MustCompile(`^s-1-fork-[0-9a-f]{8}$`).MatchString(o.id):
				t.Errorf("generated fork id %q does not look like s-1-fork-8hex", o.id)
			}
		})
	}
}

// given is c with fields given, as flags typed give them.
func given(c research.Config, fields ...string) research.Config {
	for _, f := range fields {
		if err := c.Give(f); err != nil {
			panic(err)
		}
	}
	return c
}

// TestTypedZerosReachTheRequest: a configuration flag typed as 0 is a value the scientist
// gave, not "not given": `starter fork S --token-budget 0` sends "token_budget": 0, which
// the workflow puts over the parent's budget. Every field of research.Config has its flag,
// and each, typed as its zero, reaches the request as the workflow decodes it.
func TestTypedZerosReachTheRequest(t *testing.T) {
	quiet(t)
	o, err := parseBranch("fork", []string{"s-1", "--token-budget", "0", "--time-limit", "0", "--debate-share", "0", "--max-hypotheses", "30"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"research_goal":"","scientist_id":"","config":{"max_hypotheses":30,"time_limit":"0s","token_budget":0,"debate_share":0},` +
		`"lineage":{"type":"user","parent_session_id":"s-1","relation":"fork"}}`
	if got := mustJSON(t, o.req); got != want {
		t.Errorf("request\n got %s\nwant %s", got, want)
	}
	if got := overridesText(o.req.Config); got != ", with --max-hypotheses 30 --time-limit 0s --token-budget 0 --debate-share 0" {
		t.Errorf("the Web UI's details say the configuration is the parent's%s", got)
	}
	over := o.req.Config.Over(research.Config{MaxHypotheses: 12, TokenBudget: 500_000, TimeLimit: research.Duration(time.Hour), DebateShare: 0.25, Seed: 4})
	if over.TokenBudget != 0 || over.TimeLimit != 0 || over.DebateShare != 0 || over.MaxHypotheses != 30 || over.Seed != 4 {
		t.Errorf("over the parent's: %+v", over)
	}

	for _, field := range research.ConfigFields() {
		t.Run(field, func(t *testing.T) {
			flagName := strings.ReplaceAll(field, "_", "-")
			// How the field's zero is typed: as JSON writes it, unquoted; a list is "".
			var zero map[string]any
			if err := json.Unmarshal([]byte(mustJSON(t, given(research.Config{}, field))), &zero); err != nil {
				t.Fatal(err)
			}
			typed := fmt.Sprint(zero[field])
			if _, list := zero[field].([]any); list {
				typed = ""
			}
			for _, cmd := range []string{"continue", "fork"} {
				o, err := parseBranch(cmd, []string{"s-1", "--" + flagName + "=" + typed})
				if err != nil {
					t.Fatalf("%s --%s=%s: %v (every config field needs a flag)", cmd, flagName, typed, err)
				}
				// Through Temporal's data converter, as the workflow receives it.
				p, err := converter.GetDefaultDataConverter().ToPayload(o.req)
				if err != nil {
					t.Fatal(err)
				}
				var got research.Request
				if err := converter.GetDefaultDataConverter().FromPayload(p, &got); err != nil {
					t.Fatal(err)
				}
				if !got.Config.Given(field) {
					t.Errorf("%s --%s=%s: the workflow reads %s as not given (payload %s)", cmd, flagName, typed, field, p.Data)
				}
			}
		})
	}
}

func TestParseBranchRefusesBeforeTheNetwork(t *testing.T) {
	tests := []struct {
		cmd  string
		args []string
		want string // what the message must say ("": the flag package explains)
	}{
		{"continue", nil, "needs one session ID"},
		{"fork", []string{"s-1", "s-2"}, "needs one session ID"},
		{"continue", []string{"s-1", "--goal", "  "}, "--goal is empty"},
		{"continue", []string{"s-1", "--goal", longText(research.MaxGoalLength + 1)}, "research_goal"},
		{"fork", []string{"s-1", "--goal", "Build a bioweapon"}, "safety screen"},
		{"fork", []string{"s-1", "--goal", "toxins in shellfish", "--safety-level", "strict"}, "safety screen"},
		{"continue", []string{"s-1", "--scientist", longText(research.MaxScientistIDLength + 1)}, "--scientist"},
		{"continue", []string{"s-1", "--max-hypotheses", "-1"}, "--max-hypotheses"},
		{"fork", []string{"s-1", "--time-limit", "-1h"}, "--time-limit"},
		{"continue", []string{"s-1", "--review-types", "vibes"}, "--review-types"},
		{"continue", []string{"s-1", "--safety-level", "lax"}, "--safety-level"},
		{"fork", []string{"s-1", "--provider", "nope"}, "--provider"},
		{"continue", []string{"s-1", "--token-budget", "-1"}, "--token-budget"},
		{"continue", []string{"s-1", "--convergence-rounds", "-2"}, "--convergence-rounds"},
		{"fork", []string{"s-1", "--checkpoint", "-1"}, "--checkpoint is -1"},
		{"fork", []string{"s-1", "--id", "my fork"}, "--id"},
		{"continue", []string{"s-1", "--checkpoint", "2"}, ""}, // only fork takes a checkpoint
		{"continue", []string{"s-1", "--id", "x"}, ""},         // continue's id is the conversation's
		{"fork", []string{"s-1", "--token-budget", "plenty"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.cmd+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			wantUsageError(t, tt.cmd, tt.args, func(args []string) error {
				_, err := parseBranch(tt.cmd, args)
				return err
			}, tt.want)
		})
	}
}

func TestGraphCommandsHelp(t *testing.T) {
	for cmd, flags := range map[string][]string{
		"continue":  {"Usage: starter continue", "-goal", "-max-hypotheses", "-token-budget", "-scientist", "-wait", "-watch", "the parent session's"},
		"fork":      {"Usage: starter fork", "-checkpoint", "-id", "-goal", "-review-types", "-watch"},
		"tree":      {"Usage: starter tree", "*"},
		"archive":   {"Usage: starter archive", "-reason"},
		"heartbeat": {"Usage: starter heartbeat", "-top"},
	} {
		wantHelp(t, cmd, flags...)
	}
}

func TestContinueRequest(t *testing.T) {
	quiet(t)
	o, err := parseBranch("continue", []string{"s-1", "--goal", "g2", "--max-hypotheses", "5"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		parent string
		d      lineage.Descriptor
		id     string
		want   lineage.Descriptor
	}{
		{"a root session starts its own conversation", "s-1", lineage.Descriptor{}, "s-1.2",
			lineage.Descriptor{Type: lineage.User, Conversation: "s-1", Seq: 2, Parent: "s-1", Relation: lineage.Continue}},
		{"a continued session stays in its conversation", "s-1.3", lineage.Descriptor{Type: lineage.User, Conversation: "s-1", Seq: 3, Parent: "s-1.2", Relation: lineage.Continue}, "s-1.4",
			lineage.Descriptor{Type: lineage.User, Conversation: "s-1", Seq: 4, Parent: "s-1.3", Relation: lineage.Continue}},
		{"a fork is the first of its conversation", "s-1-fork-0a0b0c0d", lineage.Descriptor{Type: lineage.User, Parent: "s-1", Relation: lineage.Fork}, "s-1-fork-0a0b0c0d.2",
			lineage.Descriptor{Type: lineage.User, Conversation: "s-1-fork-0a0b0c0d", Seq: 2, Parent: "s-1-fork-0a0b0c0d", Relation: lineage.Continue}},
		{"continuing a cron session makes a user session", "review-1-2026", lineage.Descriptor{Type: lineage.Cron, Schedule: "review-1"}, "review-1-2026.2",
			lineage.Descriptor{Type: lineage.User, Conversation: "review-1-2026", Seq: 2, Parent: "review-1-2026", Relation: lineage.Continue}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, req := continueRequest(o, tt.parent, tt.d)
			if id != tt.id {
				t.Errorf("id = %q, want %q", id, tt.id)
			}
			if req.Lineage == nil || *req.Lineage != tt.want {
				t.Errorf("lineage = %+v, want %+v", req.Lineage, tt.want)
			}
			if err := req.Lineage.Validate(); err != nil {
				t.Errorf("the session would refuse its lineage: %v", err)
			}
			if req.ResearchGoal != "g2" || req.Config.MaxHypotheses != 5 || req.Config.Provider != "" || req.ScientistID != "" {
				t.Errorf("request %+v: want the goal and max hypotheses set, the rest the parent's", req)
			}
		})
	}
	if o.req.Lineage != nil {
		t.Error("continueRequest changed the parsed options")
	}
}

func TestBranchStartOptions(t *testing.T) {
	req := research.Request{ResearchGoal: "g2", Config: research.Config{MaxHypotheses: 5},
		Lineage: &lineage.Descriptor{Type: lineage.User, Parent: "s-1", Relation: lineage.Fork, Checkpoint: 3}}
	opts := branchStartOptions("f-1", req, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
	if opts.ID != "f-1" || opts.TaskQueue != workflows.TaskQueue || opts.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE ||
		opts.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL || !opts.WorkflowExecutionErrorWhenAlreadyStarted {
		t.Errorf("options %+v", opts)
	}
	want := lineage.Descriptor{Type: lineage.User, Conversation: "f-1", Seq: 1, Parent: "s-1", Relation: lineage.Fork, Checkpoint: 3}
	if got := opts.Memo[workflows.MemoLineage]; got != want {
		t.Errorf("memo lineage %+v, want %+v", got, want)
	}
	var attrs []string
	for k, v := range opts.TypedSearchAttributes.GetUntypedValues() {
		attrs = append(attrs, k.GetName()+"="+strings.Trim(mustJSON(t, v), `"`))
	}
	slices.Sort(attrs)
	if want := []string{"ConversationId=f-1", "ParentSession=s-1", "SessionStatus=initializing", "SessionType=user", "SourceCheckpoint=3"}; !slices.Equal(attrs, want) {
		t.Errorf("search attributes %v, want %v", attrs, want)
	}
	for _, want := range []string{"Forked from** s-1 (checkpoint 3)", "g2", "--max-hypotheses 5", "**Scientist:** the parent session's"} {
		if !strings.Contains(opts.StaticDetails, want) {
			t.Errorf("details do not say %q:\n%s", want, opts.StaticDetails)
		}
	}
	if opts.StaticSummary != "fork of s-1 from checkpoint 3: g2" {
		t.Errorf("summary %q", opts.StaticSummary)
	}
}

// wantRefused checks that err says refusal and makes starter exit with code.
func wantRefused(t *testing.T, err error, refusal string, code int) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), refusal) {
		t.Fatalf("error %v, want one that says %q", err, refusal)
	}
	if got := exitCode(err); got != code {
		t.Errorf("exit code %d, want %d", got, code)
	}
}

func TestContinueSession(t *testing.T) {
	conv := &lineage.Descriptor{Type: lineage.User, Conversation: "s-1", Seq: 2, Parent: "s-1", Relation: lineage.Continue}
	tests := []struct {
		name     string
		parent   *workflowpb.WorkflowExecutionInfo
		status   session.State
		after    session.State
		archive  *workflowpb.WorkflowExecutionInfo
		startErr error
		id       string // the session started; "" when refused
		refusal  string
	}{
		{name: "a completed root session", parent: execution(t, "s-1", workflows.WorkflowType, wfCompleted, 0, nil, "completed"), id: "s-1.2"},
		{name: "a completed continued session", parent: execution(t, "s-1.2", workflows.WorkflowType, wfCompleted, 0, conv, "completed"), id: "s-1.3"},
		{name: "a failed session", parent: execution(t, "s-1", workflows.WorkflowType, wfFailed, 0, nil, "active"), id: "s-1.2"},
		{name: "a suspended session hands over", parent: execution(t, "s-1", workflows.WorkflowType, wfRunning, 0, nil, "suspended"), status: session.Suspended, id: "s-1.2"},
		{name: "a session checkpointing before it suspends", parent: execution(t, "s-1", workflows.WorkflowType, wfRunning, 0, nil, "checkpointing"),
			status: session.Checkpointing, after: session.Suspended, id: "s-1.2"},
		{name: "an active session", parent: execution(t, "s-1", workflows.WorkflowType, wfRunning, 0, nil, "active"), status: session.Active,
			refusal: "session s-1 is active: suspend it first (starter suspend s-1) or fork it (starter fork s-1)"},
		{name: "a checkpointing session that stays active", parent: execution(t, "s-1", workflows.WorkflowType, wfRunning, 0, nil, "checkpointing"),
			status: session.Checkpointing, after: session.Active, refusal: "is active"},
		{name: "an archived session", parent: execution(t, "s-1", workflows.WorkflowType, wfCompleted, 0, nil, "completed"),
			archive: execution(t, "archive:s-1", workflows.ArchiveWorkflow, wfCompleted, 5, nil, ""), refusal: "session s-1 is archived; fork it instead"},
		{name: "a session whose archive failed is not archived", parent: execution(t, "s-1", workflows.WorkflowType, wfCompleted, 0, nil, "completed"),
			archive: execution(t, "archive:s-1", workflows.ArchiveWorkflow, wfFailed, 5, nil, ""), id: "s-1.2"},
		{name: "a session continued already", parent: execution(t, "s-1", workflows.WorkflowType, wfCompleted, 0, nil, "completed"),
			startErr: serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", ""),
			refusal:  "session s-1 was already continued as s-1.2: continue that one, or fork s-1 (starter fork s-1)"},
		{name: "no such session", refusal: "no session s-1: list them with: starter list"},
		{name: "not a session", parent: execution(t, "s-1", workflows.HeartbeatWorkflow, wfCompleted, 0, nil, ""), refusal: "s-1 is not a research session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			quiet(t)
			f := &fakeGraph{execs: map[string]*workflowpb.WorkflowExecutionInfo{}, statuses: map[string]workflows.Status{}, startErr: tt.startErr}
			f.add(tt.parent, tt.archive)
			parentID := "s-1"
			if tt.parent != nil {
				parentID = tt.parent.Execution.WorkflowId
				f.statuses[parentID] = workflows.Status{SessionID: parentID, State: tt.status, After: tt.after}
			}
			o, err := parseBranch("continue", []string{parentID, "--goal", "g2"})
			if err != nil {
				t.Fatal(err)
			}
			id, err := continueSession(context.Background(), f, o)
			if tt.refusal != "" {
				wantRefused(t, err, tt.refusal, 1)
				if tt.startErr == nil && len(f.started) > 0 {
					t.Errorf("a refused continue started %v", f.started)
				}
				return
			}
			if err != nil {
				t.Fatalf("continue: %v", err)
			}
			if id != tt.id || len(f.started) != 1 {
				t.Fatalf("continued as %q (started %d), want %q", id, len(f.started), tt.id)
			}
			s := f.started[0]
			if s.opts.ID != tt.id || s.workflow != workflows.WorkflowType || s.opts.TaskQueue != workflows.TaskQueue ||
				s.opts.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY ||
				s.opts.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL {
				t.Errorf("started %+v", s)
			}
			req := s.args[0].(research.Request)
			if req.ResearchGoal != "g2" || req.Lineage.Parent != parentID || req.Lineage.Relation != lineage.Continue {
				t.Errorf("request %+v, lineage %+v", req, req.Lineage)
			}
		})
	}
}

func TestForkSession(t *testing.T) {
	quiet(t)
	f := &fakeGraph{execs: map[string]*workflowpb.WorkflowExecutionInfo{
		"s-1": execution(t, "s-1", workflows.WorkflowType, wfRunning, 0, nil, "active"), // a running session may be forked
	}}
	o, err := parseBranch("fork", []string{"s-1", "--checkpoint", "2", "--id", "f-1"})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := forkSession(context.Background(), f, o); err != nil || id != "f-1" {
		t.Fatalf("fork = %q, %v", id, err)
	}
	s := f.started[0]
	if s.opts.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE || s.workflow != workflows.WorkflowType {
		t.Errorf("started %+v", s)
	}
	if d := s.args[0].(research.Request).Lineage; *d != (lineage.Descriptor{Type: lineage.User, Parent: "s-1", Relation: lineage.Fork, Checkpoint: 2}) {
		t.Errorf("lineage %+v: the conversation is left for the workflow to default", d)
	}

	f.startErr = serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", "")
	if _, err := forkSession(context.Background(), f, o); err == nil || !strings.Contains(err.Error(), "session f-1 already exists: pick another --id") {
		t.Errorf("fork onto an existing id: %v", err)
	}
	o.parent = "nope"
	if _, err := forkSession(context.Background(), f, o); err == nil || !strings.Contains(err.Error(), "no session nope") {
		t.Errorf("fork of a missing session: %v", err)
	}
}

func TestLineageOf(t *testing.T) {
	d := &lineage.Descriptor{Type: lineage.Subagent, Conversation: "s-1", Seq: 1, Parent: "s-1", Relation: lineage.Spawn, Name: "verify h-0007"}
	if got := lineageOf(execution(t, "s-1-fork-1", workflows.SubagentWorkflow, wfRunning, 0, d, "")); got != *d {
		t.Errorf("from the memo: %+v", got)
	}
	if got := lineageOf(execution(t, "s-1", workflows.WorkflowType, wfRunning, 0, nil, "")); got != (lineage.Descriptor{Type: lineage.User, Conversation: "s-1", Seq: 1}) {
		t.Errorf("no lineage: %+v; want a root user session", got)
	}
	info := execution(t, "f-1", workflows.WorkflowType, wfRunning, 0, nil, "")
	info.SearchAttributes = &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{
		workflows.AttrParentSession: payload(t, "s-1"), workflows.AttrSourceCheckpoint: payload(t, 4), workflows.AttrSessionType: payload(t, "cron"),
	}}
	if got := lineageOf(info); got.Parent != "s-1" || got.Checkpoint != 4 || got.Type != lineage.Cron || got.Conversation != "f-1" {
		t.Errorf("from search attributes: %+v", got)
	}
}
