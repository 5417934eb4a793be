package main

// THE CONVERSATION. The session page shows the conversation and the commands its answers
// propose through Conversation; the form "ask" posts to /s/{id}/conversation, and so does
// each proposal's confirm button. temporalConversation is the real one: the ask and
// confirm updates and the conversation query (internal/converse, shared with the
// starter's ask and chat), each with the signed-in identity as "by"; the texts the
// session no longer keeps, and the whole conversation of an ended session, come from the
// store, as the rest of an ended session's page does.

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/converse"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// Conversation is a session's conversation with its scientist, as the desk needs it.
type Conversation interface {
	// Available says whether sessions answer in conversation at all.
	Available() bool
	// Page returns a page of the conversation's turns, oldest first: live is the page a
	// running session answered (the page query's), nil for an ended session, whose
	// conversation (with what was asked since it ended) is read from the store.
	Page(ctx context.Context, id string, live *workflows.ConversationView, p workflows.Page) (ConversationPage, error)
	// Ask sends the scientist's message; the answer arrives in the conversation.
	Ask(ctx context.Context, id, by, message string) error
	// Confirm confirms one of the answer's proposed commands, by its id.
	Confirm(ctx context.Context, id, by, proposal string) error
}

// ConversationPage is one page of a conversation: its turns, the first's place in the
// whole (Offset), and how many there are (Total).
type ConversationPage struct {
	Turns         []ConversationTurn
	Offset, Total int
}

// ConversationTurn is one message: the scientist's, or the session's answer with the
// commands it proposes and the sources it cites. Failed says why the session could not
// answer it.
type ConversationTurn struct {
	ID, From, By, Text, Time, Failed string
	Proposals                        []Proposal
	Citations                        []Citation
}

// Citation is a source an answer cites, with what cosci's check found of its quote.
type Citation struct {
	Reference research.Reference
	Check     research.CitationCheck
	Flagged   bool
	Cite      cite // where its quote is, and the link there
}

// Flagged counts the turn's citations the check flagged.
func (t ConversationTurn) Flagged() int {
	n := 0
	for _, c := range t.Citations {
		if c.Flagged {
			n++
		}
	}
	return n
}

// Proposal is a command an answer proposes, with its exact effect; nothing changes until
// the scientist confirms it. Status is proposed, confirmed or refused (with Reason).
type Proposal struct {
	ID, Command, Effect, Status, Reason, By string
}

// Open says the proposal waits for a confirmation.
func (p Proposal) Open() bool { return p.Status == session.ProposalProposed }

// talker is the conversation's Temporal side (converse.Client); the tests fake it.
type talker interface {
	Ask(ctx context.Context, id string, req workflows.AskRequest) (workflows.AskAnswer, error)
	Confirm(ctx context.Context, id string, req workflows.ConfirmRequest) (workflows.ConfirmAnswer, error)
}

var _ talker = converse.Client{}

// askTimeout bounds one answer: a model turn, which may take minutes.
const askTimeout = 5 * time.Minute

// temporalConversation talks with the sessions through Temporal, and reads the texts
// they no longer keep from the store.
type temporalConversation struct {
	talk talker
	st   *store.Store
}

func (temporalConversation) Available() bool { return true }

func (t temporalConversation) Page(ctx context.Context, id string, live *workflows.ConversationView, p workflows.Page) (ConversationPage, error) {
	var v workflows.ConversationView
	var err error
	switch {
	case live != nil && live.Offset >= live.InStore:
		v = *live
	case live != nil:
		// A page reaching back before the messages the session keeps: those are in the
		// store, their proposals as its latest checkpoint has them.
		v = *live
		var old workflows.ConversationView
		upTo := min(live.Offset+live.Limit, live.InStore)
		old, err = t.stored(ctx, id, workflows.Page{Offset: live.Offset, Limit: upTo - live.Offset}, workflows.OldProposalReason)
		v.Messages = append(old.Messages, live.Messages...)
	default:
		// An ended session, or one Temporal no longer keeps: its final checkpoint has the
		// proposals' status, the store every message (those asked since it ended too).
		v, err = t.stored(ctx, id, p, activities.EndedReason)
	}
	if err != nil {
		return ConversationPage{}, err
	}
	// The store has what the session's state does not: old messages' texts, and every
	// answer's citations with what the check found.
	var want []string
	for _, m := range v.Messages {
		if m.TextInStore || m.Role == session.RoleSession {
			want = append(want, m.ID)
		}
	}
	stored, err := t.st.Messages(ctx, id, want)
	if err != nil {
		return ConversationPage{}, err
	}
	byID := make(map[string]research.Message, len(stored))
	for _, m := range stored {
		byID[m.ID] = m
	}
	page := ConversationPage{Total: v.Total, Offset: v.Offset}
	for _, m := range v.Messages {
		s, found := byID[m.ID]
		text := m.Text
		switch {
		case !m.TextInStore:
		case found:
			text = s.Text
		default:
			text = "(not in the session store)"
		}
		turn := ConversationTurn{ID: m.ID, From: m.Role, By: m.By, Text: text, Time: m.Time, Failed: m.Failed, Citations: cited(s)}
		for _, pr := range m.Proposals {
			turn.Proposals = append(turn.Proposals, Proposal{ID: pr.ID, Command: pr.Command, Effect: pr.Effect, Status: pr.Status, Reason: pr.Reason, By: pr.By})
		}
		page.Turns = append(page.Turns, turn)
	}
	return page, nil
}

// cited is an answer's citations, each with what the check found.
func cited(m research.Message) []Citation {
	checks := make(map[string]research.CitationCheck, len(m.Citations))
	for _, c := range m.Citations {
		checks[c.ID] = c
	}
	var out []Citation
	for _, r := range m.References {
		c, ok := checks[r.ID]
		if !ok {
			c.Verdict = "unchecked"
		}
		out = append(out, Citation{Reference: r, Check: c, Flagged: ok && c.Flagged()})
	}
	return out
}

// stored is a page of a session's conversation from the store.
func (t temporalConversation) stored(ctx context.Context, id string, p workflows.Page, reason string) (workflows.ConversationView, error) {
	snap, err := t.st.LatestCheckpoint(ctx, id)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return workflows.ConversationView{}, err
	}
	msgs, err := t.st.Conversation(ctx, id)
	if err != nil {
		return workflows.ConversationView{}, err
	}
	return workflows.StoredConversation(snap, msgs, p, reason), nil
}

func (t temporalConversation) Ask(ctx context.Context, id, by, message string) error {
	if err := session.CheckAsk(message); err != nil {
		return &refused{err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	_, err := t.talk.Ask(ctx, id, workflows.AskRequest{Text: message, By: by})
	return updated(err, id)
}

func (t temporalConversation) Confirm(ctx context.Context, id, by, proposal string) error {
	ctx, cancel := context.WithTimeout(ctx, updateTimeout)
	defer cancel()
	_, err := t.talk.Confirm(ctx, id, workflows.ConfirmRequest{Proposal: proposal, By: by})
	if errors.Is(err, converse.ErrEnded) {
		return &refused{err.Error()}
	}
	return updated(err, id)
}

// updated is an update's error as the desk shows it: the session's refusal in its words.
func updated(err error, id string) error {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return &refused{app.Message()}
	}
	return explain(err, id)
}

// noConversation is the desk without Temporal's conversation (none is wired).
type noConversation struct{}

// errNoConversation is every answer of noConversation.
var errNoConversation = errors.New("this desk's sessions do not converse")

func (noConversation) Available() bool { return false }
func (noConversation) Page(context.Context, string, *workflows.ConversationView, workflows.Page) (ConversationPage, error) {
	return ConversationPage{}, errNoConversation
}
func (noConversation) Ask(context.Context, string, string, string) error { return errNoConversation }
func (noConversation) Confirm(context.Context, string, string, string) error {
	return errNoConversation
}

// ask posts a message or a confirmation to the conversation (steering: it may propose, and
// a confirmation applies, a command).
func (d *desk) ask(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	who, _, ok := d.allowed(w, r, id, access.ActSteer)
	if !ok {
		return
	}
	var err error
	if p := r.PostFormValue("confirm"); p != "" {
		err = d.conv.Confirm(r.Context(), id, who.ID, p)
	} else {
		err = d.conv.Ask(r.Context(), id, who.ID, r.PostFormValue("message"))
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/s/"+id+"#conversation", http.StatusSeeOther)
}
