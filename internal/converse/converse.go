// Package converse is the client side of the conversation with a session, as both the
// starter (ask, chat) and the desk use it: the ask update, which an ended session's
// EndedConversation workflow takes instead (started with the question), the confirm
// update and the conversation query. Errors come back as the SDK returns them, for each
// program to put in its own words; Ended says which mean the session has ended.
package converse

import (
	"context"
	"errors"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/workflows"
)

// Client talks with sessions through Temporal.
type Client struct{ C client.Client }

// Ask sends the scientist's message to session id and waits for the answer. A session
// that has ended answers from its final state, through the EndedConversation workflow.
func (c Client) Ask(ctx context.Context, id string, req workflows.AskRequest) (workflows.AskAnswer, error) {
	ans, err := update[workflows.AskAnswer](ctx, c.C, id, workflows.Ask, req.UpdateID, req)
	if !Ended(err) {
		return ans, err
	}
	// The session has ended: the workflow that answers from its final state takes it.
	start := c.C.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: workflows.EndedConversationID(id), TaskQueue: workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, workflows.EndedConversationWorkflow, workflows.EndedConversationInput{SessionID: id})
	uh, err := c.C.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions:          client.UpdateWorkflowOptions{UpdateID: req.UpdateID, UpdateName: workflows.Ask, Args: []any{req}, WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	if err == nil {
		err = uh.Get(ctx, &ans)
	}
	return ans, err
}

// ErrEnded is Confirm's error for a session that has ended: what the EndedConversation
// workflow answers to every confirmation.
var ErrEnded = errors.New(workflows.EndedConfirmRefusal)

// Confirm applies one proposal of an answer as req.By's command. It returns ErrEnded if
// the session has ended.
func (c Client) Confirm(ctx context.Context, id string, req workflows.ConfirmRequest) (workflows.ConfirmAnswer, error) {
	ans, err := update[workflows.ConfirmAnswer](ctx, c.C, id, workflows.Confirm, req.UpdateID, req)
	if Ended(err) {
		return ans, ErrEnded
	}
	return ans, err
}

// update sends session id the update name with arg, as the update updateID ("" lets
// Temporal choose), and waits for its answer.
func update[T any](ctx context.Context, c client.Client, id, name, updateID string, arg any) (T, error) {
	var ans T
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateID: updateID, UpdateName: name, Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, &ans)
	}
	return ans, err
}

// Conversation runs the conversation query: a page of the messages, oldest first.
func (c Client) Conversation(ctx context.Context, id string, p workflows.Page) (workflows.ConversationView, error) {
	var v workflows.ConversationView
	res, err := c.C.QueryWorkflow(ctx, id, "", workflows.QueryConversation, p)
	if err == nil {
		err = res.Get(&v)
	}
	return v, err
}

// Ended says the session's workflow has closed (the server's words for an update to a
// closed workflow: "workflow execution already completed"), or its run refused a message
// because the session has ended (workflows.EndedAskRefusal).
func Ended(err error) bool {
	var notFound *serviceerror.NotFound
	var app *temporal.ApplicationError
	return errors.As(err, &notFound) && strings.Contains(notFound.Message, "already completed") ||
		errors.As(err, &app) && strings.Contains(app.Message(), workflows.EndedAskRefusal)
}
