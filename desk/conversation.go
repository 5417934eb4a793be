package main

// THE CONVERSATION: a placeholder, to be wired when the conversation's branch (wt-converse:
// the ask and confirm updates, the paged conversation query, the converse agent) is merged.
//
// The session page shows the conversation and its proposals through Conversation, and
// the form "ask" posts to /s/{id}/conversation. Until the session has the updates,
// noConversation says so on the page, and the form is not shown. Wiring it is one type:
// a temporalConversation whose Page runs the "conversation" query (paged like history),
// whose Ask sends the "ask" update and whose Confirm sends "confirm" naming a proposal,
// each with the signed-in identity as "by"; then newDesk sets d.conv to it.

import (
	"context"
	"errors"
	"net/http"

	"github.com/cosci-dev/cosci/internal/access"
)

// Conversation is a session's conversation with its scientist, as the desk needs it.
type Conversation interface {
	// Available says whether sessions answer in conversation at all.
	Available() bool
	// Page returns the conversation's turns, oldest first, from offset.
	Page(ctx context.Context, id string, offset, limit int) (ConversationPage, error)
	// Ask sends the scientist's message; the answer arrives in the conversation.
	Ask(ctx context.Context, id, by, message string) error
	// Confirm confirms one of the answer's proposed commands, by its id.
	Confirm(ctx context.Context, id, by, proposal string) error
}

// ConversationPage is one page of a conversation.
type ConversationPage struct {
	Turns []ConversationTurn
	Total int
}

// ConversationTurn is one message: the scientist's, or the session's answer with the
// commands it proposes.
type ConversationTurn struct {
	From, Text, Time string
	Proposals        []Proposal
}

// Proposal is a command an answer proposes, with its exact effect; nothing changes until
// the scientist confirms it.
type Proposal struct {
	ID, Command, Effect string
	Confirmed           bool
}

// errNoConversation is every answer of noConversation.
var errNoConversation = errors.New("this desk's sessions do not converse yet: the conversation arrives with the ask and confirm updates (issue #31, part 1)")

type noConversation struct{}

func (noConversation) Available() bool { return false }
func (noConversation) Page(context.Context, string, int, int) (ConversationPage, error) {
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
		d.fail(w, r, &refused{err.Error()})
		return
	}
	http.Redirect(w, r, "/s/"+id+"#conversation", http.StatusSeeOther)
}
