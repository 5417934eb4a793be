package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// Lister is the part of the Temporal client that finds sessions: visibility.
type Lister interface {
	ListWorkflow(ctx context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error)
}

// ForegroundQuery finds the running foreground sessions (the scientist's own, type user).
const ForegroundQuery = "WorkflowType = 'ResearchSession' AND SessionType = 'user' AND ExecutionStatus = 'Running'"

// Foreground resolves the most recent foreground session: the running user session that
// started last. It returns "" when none runs. Visibility is eventually consistent, so a
// session started a moment ago may not be seen yet; the sender records where its message
// went.
func (a *Activities) Foreground(ctx context.Context) (string, error) {
	if a.Sessions == nil {
		return "", temporal.NewNonRetryableApplicationError("this worker has no Temporal client to find sessions with", ErrInvalidInput, nil)
	}
	var best string
	var bestStart int64
	var token []byte
	for {
		resp, err := a.Sessions.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: activity.GetInfo(ctx).WorkflowNamespace, Query: ForegroundQuery, NextPageToken: token,
		})
		if err != nil {
			return "", fmt.Errorf("list foreground sessions: %w", err)
		}
		for _, ex := range resp.GetExecutions() {
			if t := ex.GetStartTime().AsTime().UnixNano(); best == "" || t > bestStart {
				best, bestStart = ex.GetExecution().GetWorkflowId(), t
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return best, nil
		}
		if err := ctx.Err(); err != nil {
			return "", errors.Join(err, fmt.Errorf("stopped looking for the foreground session"))
		}
	}
}

// LeadsInput asks for the leads of a session.
type LeadsInput struct {
	SessionID string `json:"session_id"`
	Top       int    `json:"top"`
}

// LeadsResult is a session's best competing hypotheses at its latest checkpoint.
type LeadsResult struct {
	Checkpoint int             `json:"checkpoint"`
	Goal       string          `json:"goal"`
	Config     research.Config `json:"config"`
	Leads      []session.Entry `json:"leads"`
}

// Leads reads a session's latest checkpoint and returns its top competing hypotheses.
func (a *Activities) Leads(ctx context.Context, in LeadsInput) (LeadsResult, error) {
	snap, err := a.Store.LatestCheckpoint(ctx, in.SessionID)
	if errors.Is(err, fs.ErrNotExist) {
		return LeadsResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("session %s has no checkpoint yet", in.SessionID), ErrNoCheckpoint, err)
	}
	if err != nil {
		return LeadsResult{}, err
	}
	out := LeadsResult{Checkpoint: snap.Seq, Goal: snap.Goal, Config: snap.Config}
	for _, e := range snap.Hypotheses { // ranked, excluded last
		if e.Excluded == "" && len(out.Leads) < in.Top {
			out.Leads = append(out.Leads, e)
		}
	}
	return out, nil
}
