package main

// What the desk asks of Temporal, behind a small interface (Backend) so that the handler
// tests run without a server: the queries, the commands, starting a session, the list and
// the workers' tools. temporalBackend is the real one; a session Temporal no longer keeps
// is answered from the session store, as `starter status` does.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// Backend is the sessions as the desk reads and steers them.
type Backend interface {
	// Owner is the session's scientist as Temporal's visibility (its ScientistId) or the
	// store has it, asked without running anything of the session: the access check of a
	// session nobody has shared. errNoSession when neither knows it.
	Owner(ctx context.Context, id string) (string, error)
	Status(ctx context.Context, id string) (workflows.Status, error)
	Progress(ctx context.Context, id string) (session.Progress, error)
	State(ctx context.Context, id string, p workflows.Page) (workflows.StateView, error)
	// Page is what a session's page shows, in one query (workflows.QueryPage); an ended
	// session's comes from the store, with its conversation left to Conversation.
	Page(ctx context.Context, id string, r workflows.PageRequest) (workflows.PageView, error)
	History(ctx context.Context, id string, p workflows.Page) (workflows.HistoryView, error)
	// Command sends a scientist's command as the update updateID (which its signature
	// covers) and returns the new status; a refusal is a *refused.
	Command(ctx context.Context, id, name, updateID string, payload map[string]any) (workflows.Status, error)
	Start(ctx context.Context, id string, req research.Request) error
	// List returns the newest sessions (at most limit), in Temporal and in the store.
	List(ctx context.Context, limit int) ([]Row, error)
	Tools(ctx context.Context) (workflows.Catalog, error)
	// Experiments is the session's lab: its datasets and experiments
	// (workflows.QueryExperiments); an empty view for a session of a build before the lab.
	Experiments(ctx context.Context, id string) (workflows.ExperimentsView, error)
	// Lab sends one of the lab's updates (workflows.AddDataset, PlanExperiment, ...) as the
	// update updateID, which its signature covers; a refusal is a *refused.
	Lab(ctx context.Context, id, name, updateID string, req any) (workflows.LabAnswer, error)
}

// Row is one session in a list. Parent and Relation say where it started from, if it
// started from another session (lineage.Descriptor).
type Row struct {
	ID, Scientist, Goal, Status string
	Started                     time.Time
	Hypotheses                  int64
	Parent                      string
	Relation                    lineage.Relation
	// Needs is what the session waits for its scientist for (its memo, MemoNeeds).
	Needs session.Needs
}

// refused is a command the session refused, with its reason.
type refused struct{ msg string }

func (r *refused) Error() string { return r.msg }

// errNoSession is a session neither Temporal nor the store knows.
var errNoSession = errors.New("no such session")

// How long the desk waits for Temporal before it says so. A query's is over twice the
// sticky queue's 5 s: the SDK gives the call half of it, and the server, when the worker
// that holds the session does not take the query within 5 s, sends it to the session's
// task queue, where any worker answers, only with time left.
const (
	rpcTimeout    = 15 * time.Second
	queryTimeout  = 20 * time.Second
	updateTimeout = 20 * time.Second
	// labTimeout is a lab update's: a plan is the analyst's model turn, a result the
	// registered analysis in the sandbox, both inside the update. Under the server's
	// WriteTimeout (httpguard), so the page still says what happened.
	labTimeout = 90 * time.Second
)

type temporalBackend struct {
	c     client.Client
	st    *store.Store
	memos converter.DataConverter
}

func (b *temporalBackend) query(ctx context.Context, id, name string, out any, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := b.c.QueryWorkflow(ctx, id, "", name, args...)
	if err != nil {
		return explain(err, id)
	}
	return v.Get(out)
}

// stored answers from the store's latest checkpoint when Temporal does not know id.
func stored[T any](ctx context.Context, b *temporalBackend, id string, err error, answer func(session.Snapshot) T) (T, error) {
	var zero T
	if !errors.Is(err, errNoSession) {
		return zero, err
	}
	snap, serr := b.st.LatestCheckpoint(ctx, id)
	if errors.Is(serr, fs.ErrNotExist) {
		return zero, errNoSession
	}
	if serr != nil {
		return zero, serr
	}
	return answer(snap), nil
}

func (b *temporalBackend) Owner(ctx context.Context, id string) (string, error) {
	dctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	resp, err := b.c.DescribeWorkflowExecution(dctx, id, "")
	if err := explain(err, id); !errors.Is(err, errNoSession) {
		if err != nil {
			return "", err
		}
		var owner string
		decode(resp.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()[workflows.AttrScientistID], &owner)
		return owner, nil
	}
	snap, err := b.st.LatestCheckpoint(ctx, id) // Temporal's retention deleted it
	if errors.Is(err, fs.ErrNotExist) {
		return "", errNoSession
	}
	return snap.ScientistID, err
}

func (b *temporalBackend) Status(ctx context.Context, id string) (workflows.Status, error) {
	var s workflows.Status
	if err := b.query(ctx, id, workflows.QueryStatus, &s); err != nil {
		return stored(ctx, b, id, err, workflows.StoredStatus)
	}
	return s, nil
}

func (b *temporalBackend) Progress(ctx context.Context, id string) (session.Progress, error) {
	var p session.Progress
	if err := b.query(ctx, id, workflows.QueryProgress, &p); err != nil {
		return stored(ctx, b, id, err, workflows.StoredProgress)
	}
	return p, nil
}

func (b *temporalBackend) State(ctx context.Context, id string, p workflows.Page) (workflows.StateView, error) {
	var v workflows.StateView
	if err := b.query(ctx, id, workflows.QueryState, &v, p); err != nil {
		return stored(ctx, b, id, err, func(s session.Snapshot) workflows.StateView { return workflows.StoredState(s, p) })
	}
	return v, nil
}

func (b *temporalBackend) Page(ctx context.Context, id string, r workflows.PageRequest) (workflows.PageView, error) {
	var v workflows.PageView
	err := b.query(ctx, id, workflows.QueryPage, &v, r)
	var failed *serviceerror.QueryFailed
	if errors.As(err, &failed) && strings.Contains(failed.Message, "unknown queryType") {
		return b.pageByParts(ctx, id, r) // a worker of a build before the page query
	}
	if err != nil {
		return stored(ctx, b, id, err, func(s session.Snapshot) workflows.PageView {
			return workflows.PageView{Status: workflows.StoredStatus(s), Progress: workflows.StoredProgress(s), State: workflows.StoredState(s, r.Ranking)}
		})
	}
	return v, nil
}

// pageByParts asks the page's four queries one by one.
func (b *temporalBackend) pageByParts(ctx context.Context, id string, r workflows.PageRequest) (v workflows.PageView, err error) {
	if v.Status, err = b.Status(ctx, id); err != nil {
		return v, err
	}
	if v.Progress, err = b.Progress(ctx, id); err != nil {
		return v, err
	}
	if v.State, err = b.State(ctx, id, r.Ranking); err != nil {
		return v, err
	}
	if !v.Status.State.Terminal() {
		err = b.query(ctx, id, workflows.QueryConversation, &v.Conversation, r.Conversation)
	}
	return v, err
}

func (b *temporalBackend) History(ctx context.Context, id string, p workflows.Page) (workflows.HistoryView, error) {
	var v workflows.HistoryView
	err := b.query(ctx, id, workflows.QueryHistory, &v, p)
	if errors.Is(err, errNoSession) {
		events, serr := b.st.Events(ctx, id)
		if serr != nil || len(events) == 0 {
			return v, errNoSession
		}
		return workflows.StoredHistory(events, p), nil
	}
	return v, err
}

func (b *temporalBackend) Command(ctx context.Context, id, name, updateID string, payload map[string]any) (workflows.Status, error) {
	var args []any
	if payload != nil {
		args = []any{payload}
	}
	return update[workflows.Status](ctx, b, id, name, updateID, args, updateTimeout)
}

// update sends the update name with args as updateID and waits for its answer; a refusal
// (the validator's or the handler's) is a *refused with the session's reason.
func update[T any](ctx context.Context, b *temporalBackend, id, name, updateID string, args []any, wait time.Duration) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var out T
	h, err := b.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateID: updateID, UpdateName: name,
		WaitForStage: client.WorkflowUpdateStageCompleted, Args: args})
	if err == nil {
		err = h.Get(ctx, &out)
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return out, &refused{app.Message()}
	}
	return out, explain(err, id)
}

func (b *temporalBackend) Start(ctx context.Context, id string, req research.Request) error {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	_, err := b.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                workflows.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            "research: " + research.Shorten(req.ResearchGoal, 80),
		Memo:                                     map[string]any{workflows.MemoGoal: req.ResearchGoal},
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(workflows.AttrSessionStatus).ValueSet(string(session.Initializing)),
			temporal.NewSearchAttributeKeyKeyword(workflows.AttrScientistID).ValueSet(req.ScientistID)),
	}, workflows.WorkflowType, req)
	return explain(err, id)
}

func (b *temporalBackend) List(ctx context.Context, limit int) ([]Row, error) {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	resp, err := b.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		PageSize: int32(limit),
		Query:    fmt.Sprintf("WorkflowType='%s' AND ExecutionStatus!='ContinuedAsNew'", workflows.WorkflowType),
	})
	if err != nil {
		return nil, fmt.Errorf("cannot list sessions: %w", explain(err, ""))
	}
	known := map[string]bool{}
	var rows []Row
	for _, e := range resp.GetExecutions() {
		f := e.GetSearchAttributes().GetIndexedFields()
		r := Row{ID: e.GetExecution().GetWorkflowId(), Started: e.GetStartTime().AsTime()}
		var status string
		decode(f[workflows.AttrSessionStatus], &status)
		decode(f[workflows.AttrScientistID], &r.Scientist)
		decode(f[workflows.AttrHypothesisCount], &r.Hypotheses)
		r.Status = status
		if e.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && e.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED || status == "" {
			r.Status = strings.ToLower(strings.TrimPrefix(e.GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_"))
		}
		if p := e.GetMemo().GetFields()[workflows.MemoGoal]; p != nil {
			_ = b.memos.FromPayload(p, &r.Goal) // "" when it cannot be read (no key)
		}
		var from lineage.Descriptor
		if p := e.GetMemo().GetFields()[workflows.MemoLineage]; p != nil && b.memos.FromPayload(p, &from) == nil {
			r.Parent, r.Relation = from.Parent, from.Relation
		}
		if p := e.GetMemo().GetFields()[workflows.MemoNeeds]; p != nil && e.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			_ = b.memos.FromPayload(p, &r.Needs) // nothing when it cannot be read (no key)
		}
		known[r.ID] = true
		rows = append(rows, r)
	}
	// Sessions Temporal's retention deleted are still in the session index.
	if sums, err := b.st.Sessions(ctx); err == nil {
		for _, s := range sums {
			if known[s.SessionID] || len(rows) >= limit {
				continue
			}
			started, _ := time.Parse(time.RFC3339Nano, s.Created)
			rows = append(rows, Row{ID: s.SessionID, Scientist: s.ScientistID, Goal: s.Goal, Status: string(s.Status) + ", store only",
				Started: started, Hypotheses: int64(s.Hypotheses), Parent: s.Parent, Relation: s.Relation})
		}
	}
	return rows, nil
}

func decode(p *commonpb.Payload, out any) {
	if p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, out)
	}
}

// Tools asks a worker for the tools it offers, through a short ToolCatalog workflow, as
// `starter tools` does.
func (b *temporalBackend) Tools(ctx context.Context) (workflows.Catalog, error) {
	var n [4]byte
	_, _ = rand.Read(n[:])
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	run, err := b.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "tool-catalog-" + hex.EncodeToString(n[:]), TaskQueue: workflows.TaskQueue,
		StaticSummary: "list the workers' tools", WorkflowExecutionTimeout: 30 * time.Second,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, workflows.ToolCatalogWorkflow)
	var cat workflows.Catalog
	if err == nil {
		err = run.Get(ctx, &cat)
	}
	if err != nil {
		return cat, fmt.Errorf("the workers did not list their tools: %w", explain(err, ""))
	}
	return cat, nil
}

// explain turns Temporal's errors into the desk's: errNoSession for a session Temporal
// does not know, and words for a worker that does not answer.
func explain(err error, id string) error {
	var notFound *serviceerror.NotFound
	var exists *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case err == nil:
		return nil
	case errors.As(err, &notFound):
		if strings.Contains(notFound.Message, "already completed") {
			return &refused{fmt.Sprintf("session %s has ended and takes no more commands", id)}
		}
		return errNoSession
	case errors.As(err, &exists):
		return &refused{fmt.Sprintf("session %s already exists", id)}
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "no poller seen"):
		return &notAnswering{id: id, err: err}
	}
	return err
}

// notAnswering is a session that did not answer in time: the page says so in the desk's
// words, and the log has err.
type notAnswering struct {
	id  string
	err error
}

func (e *notAnswering) Error() string {
	return fmt.Sprintf("session %s did not answer in time: no worker is taking its tasks, or the workers are too busy", e.id)
}

func (e *notAnswering) Unwrap() error { return e.err }
