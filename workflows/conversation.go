package workflows

// The conversation with the session: the scientist asks (the ask update), the converse
// agent answers from what the session knows (and, in a session with tools, what they
// return: converse) and proposes the commands a request calls for, and nothing changes
// until the scientist confirms a proposal (the confirm update), which then goes through
// the same check and apply as any command. The workflow keeps the messages' ids, who
// wrote them and the proposals' status; the texts are in the store, and this run keeps
// the latest in memory for the conversation query.

import (
	"errors"
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

// versionConversation gates what the conversation changes in the rest of the session:
// the agents' prompts carry the scientist's latest remarks, and a run that continues as
// new reads the latest texts back.
const versionConversation = "conversation"

// versionConverseTools gates the converse agent's tools: in a session with tools, a
// converse turn may call them (converseTools). Answers given before it called none.
const versionConverseTools = "converse-tools"

// Bounds of what the session keeps of its conversation.
const (
	// conversationKept is how many messages the workflow state holds (ids, status); the
	// older ones are in the store only (ConversationBase counts them).
	conversationKept = 200
	// textsKept is how many of the latest messages' texts a run keeps in memory for the
	// conversation query; it reads them back from the store when it continues as new.
	textsKept = 20
	// remarksCarried is how many of the scientist's latest messages the other agents'
	// prompts carry.
	remarksCarried = 3
)

// OldProposalReason is why a proposal of a message older than the session keeps cannot be
// confirmed: the confirm update finds proposals in the session's state.
var OldProposalReason = fmt.Sprintf("too old to confirm: the session keeps its latest %d messages' proposals", conversationKept)

// registerConversation installs the ask and confirm updates and the conversation query.
func (s *supervisor) registerConversation(ctx workflow.Context) error {
	if err := workflow.SetUpdateHandlerWithOptions(ctx, Ask, s.ask, workflow.UpdateHandlerOptions{
		Description: Descriptions[Ask],
		Validator:   func(ctx workflow.Context, req AskRequest) error { return rejected(s.checkAsk(req)) },
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, Confirm, s.confirm, workflow.UpdateHandlerOptions{
		Description: Descriptions[Confirm],
		Validator: func(ctx workflow.Context, req ConfirmRequest) error {
			_, err := s.pending(req.Proposal)
			return rejected(err)
		},
	})
}

// checkAsk says whether the session can take a message now.
func (s *supervisor) checkAsk(req AskRequest) error {
	if err := session.CheckAsk(req.Text); err != nil {
		return err
	}
	if s.Life.State.Terminal() {
		return errors.New(EndedAskRefusal)
	}
	if s.budgets {
		if why := s.budget().Refuses(activities.AgentConverse, s.Usage, s.inFlight, s.expected(activities.AgentConverse)); why != "" {
			return fmt.Errorf("ask: the session cannot answer: %s; raise the budget with set-budget", why)
		}
	}
	return nil
}

// ask keeps the scientist's message and answers it with a converse turn.
func (s *supervisor) ask(ctx workflow.Context, req AskRequest) (AskAnswer, error) {
	by, sig, text := session.CleanBy(req.By), session.CleanSig(req.BySig), strings.TrimSpace(req.Text)
	now := session.Stamp(workflow.Now(ctx))
	history := s.history12()
	q := s.newMessage(session.RoleScientist, by, now, text)
	q.Signed = sig
	asked := session.Event{Kind: session.EventAsk, By: by, Signed: sig, Detail: q.ID + ": " + research.Shorten(text, 200)}
	if q.Update = s.updateID(ctx); q.Update != "" {
		asked.Update, asked.Digest = q.Update, textDigest(text)
	}
	answerID := session.MessageID(s.Messages + 1)
	s.Messages++ // the answer's id is taken now, so a message sent meanwhile gets the next
	s.log(asked)
	in := activities.ConverseInput{
		Turn: s.turnInput("converse-" + q.ID), Message: q.ID, Text: text, By: by, Time: now, Answer: answerID, Signed: sig, Update: q.Update,
		History: history, Earlier: s.Earlier, State: s.stateLine(ctx), Refinements: s.Refinements,
		Top: s.top(activities.MaxConverseTop), Waiting: s.waiting(), Events: s.Events[max(0, len(s.Events)-activities.MaxConverseEvents):],
		Context: s.contextRef(),
	}
	out, err := s.converse(ctx, "answer "+q.ID, in)
	if err != nil {
		s.messageOf(q.ID).Failed = errorText(err)
		return AskAnswer{Question: s.entry(*s.messageOf(q.ID))}, rejected(fmt.Errorf("the session could not answer %s: %s", q.ID, errorText(err)))
	}
	s.keepAnswer(answerID, now, out)
	s.showNeeds(ctx) // a proposal now waits for a confirmation
	return AskAnswer{Question: s.entry(*s.messageOf(q.ID)), Answer: s.entry(*s.messageOf(answerID)), References: out.References, Flagged: out.Flagged}, nil
}

// converse runs a converse turn: like every model turn, within the budget, on the turns
// queue, booked in the agent's statistics. Unlike a round's turns it runs while the
// session is suspended too: the scientist is waiting for the answer. In a session with
// tools (converseTools) it is a tool loop like the research turns', each step and each
// call an activity, except that a call needing the scientist's approval is not made
// (callTools): the scientist waits for this answer, and it does not wait for them.
func (s *supervisor) converse(ctx workflow.Context, summary string, in activities.ConverseInput) (activities.ConverseResult, error) {
	var out activities.ConverseResult
	if s.stat(activities.AgentConverse) == nil {
		s.Agents = append(s.Agents, AgentStat{Agent: activities.AgentConverse})
	}
	release, err := s.reserve(activities.AgentConverse, s.expected(activities.AgentConverse))
	if err != nil {
		s.Refused = "" // an answer refused is the scientist's to see, not a reason to suspend
		return out, err
	}
	defer release() // one reservation for the whole turn, its steps included
	step := func(ctx workflow.Context, _ int, what string, in activities.ConverseInput) (activities.ConverseResult, error) {
		var out activities.ConverseResult
		actx := workflow.WithActivityOptions(ctx, turnOptions(what))
		err := workflow.ExecuteActivity(actx, a.Converse, in).Get(ctx, &out)
		return out, err
	}
	if tools := s.converseTools(ctx); len(tools) > 0 {
		out, err = toolLoop(ctx, s, activities.AgentConverse, summary, in.Turn, "", in, tools, (*activities.ConverseInput).SetLoop, true, step)
	} else {
		out, err = step(ctx, 1, summary, in)
		s.book(ctx, activities.AgentConverse, summary, in.Turn, "", err)
	}
	if err == nil {
		s.spend(activities.AgentConverse, out.Usage)
	}
	return out, err
}

// converseTools is the tools a converse turn may call: the session's, as toolsFor gives
// them (none once its tool budget is spent), for a run past versionConverseTools.
func (s *supervisor) converseTools(ctx workflow.Context) []string {
	if len(s.req.Config.Tools) == 0 && !s.labOffered() || !since(ctx, versionConverseTools) {
		return nil
	}
	return s.toolsFor(activities.AgentConverse, "")
}

// confirm applies the command a proposal carries, as the confirming scientist's.
func (s *supervisor) confirm(ctx workflow.Context, req ConfirmRequest) (ConfirmAnswer, error) {
	p, err := s.pending(req.Proposal)
	if err != nil {
		return ConfirmAnswer{}, rejected(err)
	}
	p.Status = "confirming" // a second confirm while the command is read is refused
	by := session.CleanBy(req.By)
	actx := workflow.WithActivityOptions(ctx, storeOptions("read proposal "+p.ID))
	var proposed research.ProposedCommand
	err = workflow.ExecuteActivity(actx, a.Proposal, activities.ProposalInput{SessionID: s.id, Proposal: p.ID}).Get(ctx, &proposed)
	p = s.proposal(req.Proposal) // the state may have moved while the store was read
	if err != nil {
		p.Status = session.ProposalProposed // the store failed, not the proposal: it can be confirmed again
		return ConfirmAnswer{Proposal: *p}, rejected(fmt.Errorf("confirm %s: cannot read the proposal: %s", p.ID, errorText(err)))
	}
	if req.Digest != "" && req.Digest != digestOf(proposed) {
		// What the scientist read is not what would be applied: nothing is, and the
		// proposal stays open for a confirmation of what it really says.
		p.Status = session.ProposalProposed
		return ConfirmAnswer{Proposal: *p}, rejected(fmt.Errorf("confirm %s: the command shown is not the one proposed; read the proposal again, then confirm it", p.ID))
	}
	sig, update := session.CleanSig(req.BySig), s.updateID(ctx)
	cmd, err := decodeProposal(proposed)
	if err == nil {
		cmd.By, cmd.BySig = by, sig
		if cmd.Update = update; update != "" {
			cmd.Signs = confirmDigest(p.ID, proposed)
		}
		err = s.apply(ctx, cmd, "conversation")
	}
	p.By, p.Signed = by, sig
	if update != "" {
		p.Update, p.At = update, session.Stamp(workflow.Now(ctx))
	}
	defer s.showNeeds(ctx) // the proposal no longer waits
	if err != nil {
		p.Status, p.Reason = session.ProposalRefused, err.Error()
		return ConfirmAnswer{Proposal: *p, Status: s.status()}, rejected(fmt.Errorf("confirm %s: %w", p.ID, err))
	}
	p.Status = session.ProposalConfirmed
	st := s.status()
	st.Detail, s.lastDetail = s.lastDetail, ""
	p.Reason = st.Detail
	return ConfirmAnswer{Proposal: *p, Status: st}, nil
}

// decodeProposal parses a proposal's command as any command is parsed.
//
//workflowcheck:ignore
func decodeProposal(p research.ProposedCommand) (session.Command, error) {
	if !slices.Contains(session.Proposable, p.Command) {
		return session.Command{}, fmt.Errorf("%q is not a command an answer may propose", p.Command)
	}
	return session.ParseCommand(p.Command, p.Args)
}

// digestOf is the digest of a proposal's command (research.ProposedCommand.Digest): JSON
// and a hash, deterministic.
//
//workflowcheck:ignore
func digestOf(p research.ProposedCommand) string { return p.Digest() }

// textDigest is the digest of a question's text (session.TextDigest).
//
//workflowcheck:ignore
func textDigest(text string) string { return session.TextDigest(text) }

// confirmDigest is the digest of a confirmation of proposal id (session.ConfirmDigest).
//
//workflowcheck:ignore
func confirmDigest(id string, p research.ProposedCommand) string {
	return session.ConfirmDigest(id, p.Digest())
}

// pending is the proposal of that id, if it waits for confirmation.
func (s *supervisor) pending(id string) (*session.Proposal, error) {
	p := s.proposal(id)
	switch {
	case p == nil:
		return nil, fmt.Errorf("confirm: the conversation has no proposal %q (see them with the conversation query)", id)
	case p.Status == session.ProposalConfirmed:
		return nil, fmt.Errorf("confirm: proposal %s was confirmed already", id)
	case p.Status == session.ProposalRefused:
		return nil, fmt.Errorf("confirm: proposal %s was refused: %s", id, p.Reason)
	case p.Status != session.ProposalProposed:
		return nil, fmt.Errorf("confirm: proposal %s is being confirmed", id)
	}
	return p, nil
}

// proposal finds a proposal in the conversation the state holds.
func (s *supervisor) proposal(id string) *session.Proposal {
	answer, i, ok := session.ProposalOf(id)
	if !ok {
		return nil
	}
	m := s.messageOf(answer)
	if m == nil || i >= len(m.Proposals) {
		return nil
	}
	return &m.Proposals[i]
}

// newMessage adds a message to the conversation, with the next id.
func (s *supervisor) newMessage(role, by, when, text string) *session.Message {
	s.Messages++
	m := session.Message{ID: session.MessageID(s.Messages), Role: role, By: by, Time: when}
	s.insert(m)
	s.remember(m.ID, text)
	return s.messageOf(m.ID)
}

// keepAnswer adds the session's answer after the message it answers.
func (s *supervisor) keepAnswer(id, when string, out activities.ConverseResult) {
	s.insert(session.Message{ID: id, Role: session.RoleSession, Time: when, Proposals: out.Proposals})
	s.remember(id, out.Text)
	s.log(session.Event{Kind: session.EventAsk, Detail: fmt.Sprintf("%s: answered, %d proposal(s)", id, len(out.Proposals))})
}

// insert keeps the conversation in the order of its ids, and at most conversationKept.
func (s *supervisor) insert(m session.Message) {
	s.Conversation = inserted(s.Conversation, m)
	if n := len(s.Conversation) - conversationKept; n > 0 {
		s.Conversation = slices.Delete(s.Conversation, 0, n)
		s.ConversationBase += n
	}
}

// inserted is list with m in the place of its id: an answer after its question, even when
// another message came in while it was written.
func inserted(list []session.Message, m session.Message) []session.Message {
	i, _ := slices.BinarySearchFunc(list, m.ID, func(x session.Message, id string) int {
		return session.MessageNumber(x.ID) - session.MessageNumber(id)
	})
	return slices.Insert(list, i, m)
}

func (s *supervisor) messageOf(id string) *session.Message {
	i := slices.IndexFunc(s.Conversation, func(m session.Message) bool { return m.ID == id })
	if i < 0 {
		return nil
	}
	return &s.Conversation[i]
}

// remember keeps a message's text for the conversation query, forgetting the oldest.
func (s *supervisor) remember(id, text string) {
	if s.texts == nil {
		s.texts = map[string]string{}
	}
	s.texts[id] = text
	if n := session.MessageNumber(id) - textsKept; n > 0 {
		delete(s.texts, session.MessageID(n))
	}
}

// history12 is the ids of the latest messages, for the converse prompt.
func (s *supervisor) history12() []string {
	var ids []string
	for _, m := range s.Conversation[max(0, len(s.Conversation)-12):] {
		ids = append(ids, m.ID)
	}
	return ids
}

// remarks are the ids of the scientist's latest messages, which the agents' prompts carry.
func (s *supervisor) remarks() []string {
	if !s.remarking {
		return nil
	}
	var ids []string
	for i := len(s.Conversation) - 1; i >= 0 && len(ids) < remarksCarried; i-- {
		if m := s.Conversation[i]; m.Role == session.RoleScientist {
			ids = append([]string{m.ID}, ids...)
		}
	}
	return ids
}

// stateLine is the session's state and counts in one line, for the converse prompt.
func (s *supervisor) stateLine(ctx workflow.Context) string {
	line := fmt.Sprintf("%s, round %d: %d hypotheses of at most %d, %d reviews, %d matches; %s of research",
		s.Life.Effective(), s.Rounds, len(s.Entries), s.req.Config.MaxHypotheses, s.Reviews, s.Matches,
		s.activeTime(ctx).Round(time.Second))
	if s.Reason != "" {
		line += "; " + research.Shorten(s.Reason, 200)
	}
	if b := s.req.Config.TokenBudget; b > 0 {
		line += fmt.Sprintf("; %d of %d tokens spent", s.Usage.PromptTokens+s.Usage.CompletionTokens, b)
	}
	return line
}

// entry is a message as the conversation query shows it.
func (s *supervisor) entry(m session.Message) ConversationEntry {
	text, ok := s.texts[m.ID]
	return ConversationEntry{Message: m, Text: text, TextInStore: !ok && m.Failed == ""}
}

// conversation answers the conversation query: a page of the messages, oldest first,
// numbered across the whole session.
func (s *supervisor) conversation(p Page) ConversationView {
	total := s.ConversationBase + len(s.Conversation)
	lo, hi, limit := p.Bounds(total)
	from, to := max(lo, s.ConversationBase)-s.ConversationBase, max(hi, s.ConversationBase)-s.ConversationBase
	v := ConversationView{Messages: []ConversationEntry{}, Total: total, Offset: lo, Limit: limit, InStore: s.ConversationBase, Earlier: s.Earlier}
	for _, m := range s.Conversation[from:to] {
		v.Messages = append(v.Messages, s.entry(m))
	}
	return v
}

// readTexts reads the latest messages' texts back from the store, for a run that
// continued as new.
func (s *supervisor) readTexts(ctx workflow.Context) {
	var ids []string
	for _, m := range s.Conversation[max(0, len(s.Conversation)-textsKept):] {
		ids = append(ids, m.ID)
	}
	if len(ids) == 0 {
		return
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary: "read the latest messages of the conversation", StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 5},
	})
	var texts []activities.MessageText
	if err := workflow.ExecuteActivity(actx, a.MessageTexts, activities.MessageTextsInput{SessionID: s.id, IDs: ids}).Get(ctx, &texts); err != nil {
		s.note("the conversation's latest texts could not be read back: " + errorText(err))
		return
	}
	for _, t := range texts {
		s.remember(t.ID, t.Text)
	}
}
