package activities

// The converse agent's turn: the session's answer to the scientist's message. Its turn
// keeps the message and the answer in the store (the conversation's texts), checks the
// answer's citations like any other, and returns the answer with the commands it proposes,
// which change nothing until the scientist confirms one (the workflow's confirm update).
//
// In a session with tools it may call them, as the generation, reflection and evolution
// agents do: each step is an activity and each call one more (the workflow runs the loop,
// counting the calls against the turn's and the session's tool budgets), and the sources
// they return become citable, checked like the hypotheses' own. One difference: the
// scientist is the one waiting for this answer, in an update, so a call that would need
// their approval is not made and does not wait (a turn that waits could hold the answer
// for hours); the model reads instead that the call needs an approval a conversation does
// not wait for, and answers with what it has, or proposes that the agents look into it.
// The approval path is the research turns'. Without tools, or once the session's tool
// budget is spent, it answers in one step from what the session already has (the
// hypotheses, their reviews and sources).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// AgentConverse is the converse agent, in turn records, metrics and the Web UI.
const AgentConverse = "converse"

// ConverseInput asks for the session's answer to one message of the scientist's. It
// carries what the workflow knows (ids, counts, short lines); the turn reads the texts.
type ConverseInput struct {
	Turn
	Message string `json:"message"` // the scientist's message's id
	Text    string `json:"text"`    // the message (at most session.MaxAskLength characters); the turn stores it
	By      string `json:"by,omitempty"`
	Time    string `json:"time"`
	Answer  string `json:"answer"` // the id the answer gets
	// Signed and Update are the message's signature and update id, stored with it.
	Signed string `json:"signed,omitempty"`
	Update string `json:"update,omitempty"`
	// History is the earlier messages' ids, oldest first (at most prompt.MaxConverseHistory);
	// Earlier, a session this one continues, whose last messages come before them.
	History []string `json:"history,omitempty"`
	Earlier string   `json:"earlier,omitempty"`
	// State is the session's state and counts, one line.
	State       string                `json:"state"`
	Refinements []session.Refinement  `json:"refinements,omitempty"`
	Top         []session.Entry       `json:"top,omitempty"` // the best, best first (at most MaxConverseTop)
	Waiting     []session.WaitingCall `json:"waiting,omitempty"`
	Events      []session.Event       `json:"events,omitempty"` // the latest (at most MaxConverseEvents)
	// Ended says the session has ended: every proposal is refused at once.
	Ended   bool       `json:"ended,omitempty"`
	Context ContextRef `json:"context"`
	Loop    Loop       `json:"loop,omitzero"` // a turn that may call tools: the step to take
}

// Bounds of what a converse turn is given.
const (
	MaxConverseTop    = 5
	MaxConverseEvents = 10
)

// ConverseResult is the session's answer: its id and text, and the commands it proposes.
type ConverseResult struct {
	Answer    string             `json:"answer"`
	Text      string             `json:"text"`
	Proposals []session.Proposal `json:"proposals,omitempty"`
	// References counts the sources the answer cites, Flagged those the check flagged.
	References int            `json:"references,omitempty"`
	Flagged    int            `json:"flagged,omitempty"`
	Usage      research.Usage `json:"usage"`
	// Calls are, at a step of a tool-using turn, the calls the model asked for instead of
	// answering.
	Calls []PendingCall `json:"calls,omitempty"`
}

// EndedReason is why a proposal of an ended session's answer is refused.
const EndedReason = "the session has ended"

// Converse runs the converse agent's turn.
func (a *Activities) Converse(ctx context.Context, in ConverseInput) (ConverseResult, error) {
	return runTurn(ctx, a, conversing, in)
}

var conversing = declare(agent[ConverseInput, research.ConverseRequest, research.ConverseAnswer, ConverseResult]{
	activity: "Converse", label: AgentConverse, prompt: prompt.Converse, spec: prompt.ConverseSpec, prepare: prepareConverse,
	loop: ConverseInput.loop, refs: answerRefs,
})

func (in ConverseInput) loop() Loop { return in.Loop }

// answerRefs are the references an answer cites.
func answerRefs(a *research.ConverseAnswer) *[]research.Reference { return &a.References }

type converseTurn = turn[research.ConverseRequest, research.ConverseAnswer, ConverseResult]

// prepareConverse keeps the scientist's message, and reads what the answer needs: the
// conversation so far, the best hypotheses with their reviews, the shared context. Each
// step of a tool-using turn does it again: the message is stored again as it was.
func prepareConverse(ctx context.Context, a *Activities, in ConverseInput, turnID string) (converseTurn, error) {
	if session.MessageNumber(in.Message) == 0 || session.MessageNumber(in.Answer) == 0 {
		return converseTurn{}, invalid("a converse turn needs the message's and the answer's ids (m-NNNN); got %q and %q", in.Message, in.Answer)
	}
	if err := session.CheckAsk(in.Text); err != nil {
		return converseTurn{}, invalid("%v", err)
	}
	question := research.Message{ID: in.Message, Role: session.RoleScientist, By: in.By, Time: in.Time, Text: strings.TrimSpace(in.Text), Signed: in.Signed, Update: in.Update}
	if err := a.Store.PutMessage(ctx, in.SessionID, question); err != nil {
		return converseTurn{}, err
	}
	var history []research.Message
	if in.Earlier != "" {
		earlier, err := a.Store.Conversation(ctx, in.Earlier)
		if err != nil {
			return converseTurn{}, err
		}
		history = earlier[max(0, len(earlier)-prompt.MaxConverseHistory/2):]
	}
	mine, err := a.Store.Messages(ctx, in.SessionID, in.History)
	if err != nil {
		return converseTurn{}, err
	}
	history = append(history, mine...)
	top, inherited, err := a.ranked(ctx, in.SessionID, in.Top)
	if err != nil {
		return converseTurn{}, err
	}
	c, err := a.context(ctx, in.SessionID, in.Context)
	if err != nil {
		return converseTurn{}, err
	}
	req := research.ConverseRequest{
		TurnID: turnID, Goal: in.Goal, Message: question.Text, By: in.By, State: in.State,
		Top: top, Waiting: waitingLines(in.Waiting), Events: eventLines(in.Events), History: history,
		Ended: in.Ended, Context: c, Seed: in.Seed,
	}
	for _, r := range in.Refinements {
		req.Refinements = append(req.Refinements, strings.TrimSpace(strings.Join([]string{labelled("goal", r.Goal), labelled("focus", r.Focus)}, " ")))
	}
	keep := func(_ research.ConverseRequest, ans research.ConverseAnswer, usage research.Usage) (ConverseResult, error) {
		// The answer may cite what the hypotheses it was shown cite, and what its tools
		// returned in this turn: each reference is tied to that source's record and
		// checked against it, as a review checks them. A step of a tool-using turn had
		// them resolved already, against both (runTurn).
		proposals, dropped := checkProposals(ans.Proposals)
		ans.Proposals, ans.Dropped = proposals, append(ans.Dropped, dropped...)
		refs := ans.References
		if !in.Loop.On() {
			refs = citation.Resolve(refs, nil, inherited)
		}
		cited, err := a.cite(ctx, in.SessionID, refs)
		if err != nil {
			return ConverseResult{}, err
		}
		answer := research.Message{
			ID: in.Answer, Role: session.RoleSession, Time: in.Time, Text: ans.Text, Answers: in.Message, Turn: turnID,
			Proposals: ans.Proposals, References: refs, Citations: citation.Checks(cited), Dropped: ans.Dropped,
		}
		if err := a.Store.PutMessage(ctx, in.SessionID, answer); err != nil {
			return ConverseResult{}, err
		}
		stored, err := a.Store.Message(ctx, in.SessionID, in.Answer)
		if err != nil {
			return ConverseResult{}, err
		}
		return answerResult(stored, in.Ended, usage), nil
	}
	asked := func(calls []PendingCall, u research.Usage) ConverseResult {
		return ConverseResult{Answer: in.Answer, Calls: calls, Usage: u}
	}
	return converseTurn{req: req, keep: keep, asked: asked, inherited: inherited}, nil
}

// checkProposals checks each proposed command as the session checks the command
// (session.ParseCommand), keeps it as parsed, and writes its exact effect
// (session.Effect); one the session would refuse is dropped with the reason.
func checkProposals(proposed []research.ProposedCommand) (kept []research.ProposedCommand, dropped []string) {
	for i, p := range proposed {
		cmd, err := session.ParseCommand(p.Command, p.Args)
		if err == nil && cmd.By != "" {
			err = fmt.Errorf("%s: \"by\" is the confirming scientist's, not the proposal's", p.Command)
		}
		if err == nil && !slices.Contains(session.Proposable, p.Command) {
			err = fmt.Errorf("%q is not a command an answer may propose", p.Command)
		}
		if err != nil {
			dropped = append(dropped, fmt.Sprintf("proposal %d: %s", i+1, research.Shorten(err.Error(), 300)))
			continue
		}
		args, _ := json.Marshal(cmd) // the command's own fields, as it takes them
		kept = append(kept, research.ProposedCommand{Command: p.Command, Args: args, Effect: session.Effect(cmd)})
	}
	return kept, dropped
}

// answerResult is what the workflow keeps of a stored answer.
func answerResult(m research.Message, ended bool, usage research.Usage) ConverseResult {
	res := ConverseResult{Answer: m.ID, Text: m.Text, References: len(m.References), Usage: usage}
	for _, c := range m.Citations {
		if c.Flagged() {
			res.Flagged++
		}
	}
	for i, p := range m.Proposals {
		pr := session.Proposal{ID: session.ProposalID(m.ID, i), Command: p.Command, Effect: research.Shorten(p.Effect, 400), Status: session.ProposalProposed}
		if ended {
			pr.Status, pr.Reason = session.ProposalRefused, EndedReason
		}
		res.Proposals = append(res.Proposals, pr)
	}
	return res
}

func labelled(label, s string) string {
	if s == "" {
		return ""
	}
	return label + ": " + s
}

// ranked reads the best hypotheses and their reviews, and the references they cite.
func (a *Activities) ranked(ctx context.Context, sessionID string, top []session.Entry) ([]research.Ranked, []research.Reference, error) {
	var out []research.Ranked
	var refs []research.Reference
	for i, e := range top[:min(len(top), MaxConverseTop)] {
		h, err := a.Store.Hypothesis(ctx, sessionID, e.ID)
		if err != nil {
			return nil, nil, err
		}
		reviews, err := a.Store.Reviews(ctx, sessionID, e.ID)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, research.Ranked{Rank: i + 1, Hypothesis: h, Elo: e.Elo, Matches: e.Wins + e.Losses, Reviews: reviews[max(0, len(reviews)-3):]})
		refs = append(refs, h.References...)
	}
	return out, refs, nil
}

// cite checks references against the session's audit trail of tool results: each
// reference whole, with its check (citation.Cited), in order.
func (a *Activities) cite(ctx context.Context, sessionID string, refs []research.Reference) ([]citation.Cited, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	records := map[string]string{}
	for _, ref := range refs {
		if _, done := records[ref.Source]; ref.Source == "" || done {
			continue
		}
		tr, err := a.Store.ToolRecord(ctx, sessionID, ref.Source)
		if errors.Is(err, fs.ErrNotExist) {
			continue // not in the trail: the check finds the reference invented
		}
		if err != nil {
			return nil, err
		}
		records[ref.Source] = tr.Content
	}
	return citation.Check(refs, records), nil
}

func waitingLines(calls []session.WaitingCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, fmt.Sprintf("%s: %s %s (waiting since %s)", c.ID, c.Tool, research.Shorten(c.Brief, 200), c.Since))
	}
	return out
}

func eventLines(events []session.Event) []string {
	var out []string
	for _, e := range events[max(0, len(events)-MaxConverseEvents):] {
		line := e.Kind
		for _, f := range []string{e.Command, e.Hypothesis, research.Shorten(e.Detail, 200)} {
			if f != "" {
				line += " " + f
			}
		}
		if e.By != "" {
			line += " (by " + e.By + ")"
		}
		out = append(out, line)
	}
	return out
}

// ProposalInput names a proposal of a session's answer.
type ProposalInput struct {
	SessionID string `json:"session_id"`
	Proposal  string `json:"proposal"` // "m-0004.1"
}

// Proposal reads the command a proposal carries from the stored answer: its name and
// payload, which the workflow parses as it parses any command.
func (a *Activities) Proposal(ctx context.Context, in ProposalInput) (research.ProposedCommand, error) {
	answer, i, ok := session.ProposalOf(in.Proposal)
	if !ok {
		return research.ProposedCommand{}, invalid("%q is not a proposal's id (m-NNNN.N)", in.Proposal)
	}
	m, err := a.Store.Message(ctx, in.SessionID, answer)
	if err != nil {
		return research.ProposedCommand{}, err
	}
	if i >= len(m.Proposals) {
		return research.ProposedCommand{}, invalid("answer %s has %d proposals; there is no %s", answer, len(m.Proposals), in.Proposal)
	}
	return m.Proposals[i], nil
}

// MessageTextsInput names messages of a session's conversation.
type MessageTextsInput struct {
	SessionID string   `json:"session_id"`
	IDs       []string `json:"ids"`
}

// MessageText is one message's text.
type MessageText struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// MessageTexts reads messages' texts back from the store (those it holds), for a run
// that continued as new and answers the conversation query.
func (a *Activities) MessageTexts(ctx context.Context, in MessageTextsInput) ([]MessageText, error) {
	msgs, err := a.Store.Messages(ctx, in.SessionID, in.IDs)
	if err != nil {
		return nil, err
	}
	out := make([]MessageText, len(msgs))
	for i, m := range msgs {
		out[i] = MessageText{ID: m.ID, Text: m.Text}
	}
	return out, nil
}
