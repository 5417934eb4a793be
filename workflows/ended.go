package workflows

// The conversation with an ended session. A closed workflow takes no updates, so a
// question to a session that has ended goes to a short workflow of its own, started with
// the question (client.UpdateWithStartWorkflow, workflow id EndedConversationID): it reads
// the session's final state from the store, answers each question with one converse turn
// over it, appends to the same conversation in the store, and ends once nobody has asked
// anything for a while. It does no new research: every command its answers propose is
// refused, "the session has ended".

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/session"
)

// EndedConversationWorkflow is the type of the workflow that answers questions to an ended session.
const EndedConversationWorkflow = "EndedConversation"

// EndedConversationID is the id of that workflow for a session: one at a time per session,
// so that its messages are numbered one after another.
func EndedConversationID(sessionID string) string { return "conversation:" + sessionID }

// EndedConversationInput names the ended session.
type EndedConversationInput struct {
	SessionID string `json:"session_id"`
}

// endedIdle is how long the workflow waits for another question before it ends.
const endedIdle = 10 * time.Minute

// endedChat is the conversation with an ended session: its final state, and the
// conversation (ids and status; texts of this run in memory, the rest in the store).
type endedChat struct {
	id     string
	ended  activities.EndedSession
	err    error // the final state could not be read
	loaded bool
	asks   int
	texts  map[string]string
}

// EndedConversation answers questions about an ended session from its final state.
func EndedConversation(ctx workflow.Context, in EndedConversationInput) error {
	c := &endedChat{id: in.SessionID, texts: map[string]string{}}
	if err := workflow.SetQueryHandlerWithOptions(ctx, QueryConversation, func(p Page) (ConversationView, error) { return c.view(p), nil },
		workflow.QueryHandlerOptions{Description: Descriptions[QueryConversation]}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, Ask, c.ask, workflow.UpdateHandlerOptions{
		Description: Descriptions[Ask],
		Validator:   func(ctx workflow.Context, req AskRequest) error { return rejected(session.CheckAsk(req.Text)) },
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, Confirm, func(workflow.Context, ConfirmRequest) (ConfirmAnswer, error) {
		return ConfirmAnswer{}, rejected(errors.New(EndedConfirmRefusal))
	}, workflow.UpdateHandlerOptions{Description: Descriptions[Confirm]}); err != nil {
		return err
	}
	actx := workflow.WithActivityOptions(ctx, storeOptions("read the ended session's final state"))
	c.err = workflow.ExecuteActivity(actx, a.ReadEndedSession, in.SessionID).Get(ctx, &c.ended)
	c.loaded = true
	for {
		seen := c.asks
		asked, err := workflow.AwaitWithTimeout(ctx, endedIdle, func() bool { return c.asks != seen })
		if err != nil || !asked && workflow.AllHandlersFinished(ctx) {
			break
		}
	}
	return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
}

// ask answers one question from the session's final state.
func (c *endedChat) ask(ctx workflow.Context, req AskRequest) (AskAnswer, error) {
	c.asks++
	if err := workflow.Await(ctx, func() bool { return c.loaded }); err != nil {
		return AskAnswer{}, err
	}
	if c.err != nil {
		return AskAnswer{}, rejected(fmt.Errorf("ask: cannot read session %s's final state: %s", c.id, errorText(c.err)))
	}
	e := &c.ended
	by, text, now := session.CleanBy(req.By), strings.TrimSpace(req.Text), session.Stamp(workflow.Now(ctx))
	var history []string
	for _, m := range e.Conversation[max(0, len(e.Conversation)-12):] {
		history = append(history, m.ID)
	}
	q := session.Message{ID: session.MessageID(e.Messages + 1), Role: session.RoleScientist, By: by, Time: now}
	if info := workflow.GetCurrentUpdateInfo(ctx); info != nil && since(ctx, versionSignedActs) {
		q.Signed, q.Update = session.CleanSig(req.BySig), info.ID // a desk's signature, checked where shown
	}
	answerID := session.MessageID(e.Messages + 2)
	e.Messages += 2
	e.Conversation = inserted(e.Conversation, q)
	c.texts[q.ID] = text
	cfg := e.Config
	in := activities.ConverseInput{
		Turn:    activities.Turn{SessionID: c.id, TurnID: "converse-" + q.ID, Goal: e.Goal, Provider: cfg.Provider, Model: cfg.Model, Seed: cfg.Seed},
		Message: q.ID, Text: text, By: by, Time: now, Answer: answerID, History: history, Signed: q.Signed, Update: q.Update,
		State: e.State, Refinements: e.Refinements, Top: e.Top, Ended: true, Context: e.Context,
	}
	actx := workflow.WithActivityOptions(ctx, turnOptions("answer "+q.ID+" from the final state"))
	var out activities.ConverseResult
	if err := workflow.ExecuteActivity(actx, a.Converse, in).Get(ctx, &out); err != nil {
		if i := slices.IndexFunc(e.Conversation, func(m session.Message) bool { return m.ID == q.ID }); i >= 0 {
			e.Conversation[i].Failed = errorText(err)
		}
		return AskAnswer{}, rejected(fmt.Errorf("the session could not answer %s: %s", q.ID, errorText(err)))
	}
	answer := session.Message{ID: answerID, Role: session.RoleSession, Time: now, Proposals: out.Proposals}
	e.Conversation = inserted(e.Conversation, answer)
	c.texts[answerID] = out.Text
	return AskAnswer{Question: c.entry(q), Answer: c.entry(answer), References: out.References, Flagged: out.Flagged}, nil
}

func (c *endedChat) entry(m session.Message) ConversationEntry {
	text, ok := c.texts[m.ID]
	return ConversationEntry{Message: m, Text: text, TextInStore: !ok && m.Failed == ""}
}

// view is a page of the conversation, as the session's own query gives it.
func (c *endedChat) view(p Page) ConversationView {
	msgs := c.ended.Conversation
	lo, hi, limit := p.Bounds(len(msgs))
	v := ConversationView{Messages: []ConversationEntry{}, Total: len(msgs), Offset: lo, Limit: limit}
	for _, m := range msgs[lo:hi] {
		v.Messages = append(v.Messages, c.entry(m))
	}
	return v
}
