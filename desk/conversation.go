package main

// THE CONVERSATION. The session page shows the conversation and the commands its answers
// propose through Conversation; the form "ask" posts to /s/{id}/conversation, and so does
// each proposal's confirm button. temporalConversation is the real one: the ask and
// confirm updates and the conversation query (internal/converse, shared with the
// starter's ask and chat), each with the signed-in identity as "by"; the texts the
// session no longer keeps, and the whole conversation of an ended session, come from the
// store, as the rest of an ended session's page does.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/converse"
	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/internal/vouch"
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
	Ask(ctx context.Context, id string, by signedBy, message string) error
	// Confirm confirms one of the answer's proposed commands, by its id and the digest of
	// the command the scientist was shown (research.ProposedCommand.Digest).
	Confirm(ctx context.Context, id string, by signedBy, proposal, digest string) error
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
	// Sig is the signature the session recorded beside By, Update the id of the update
	// that carried the message; Unsigned says no desk with this desk's key signed this
	// question (the page marks the By "not signed").
	Sig, Update string
	Unsigned    bool
}

// Citation is a source an answer cites, with what cosci's check found of its quote (the
// one citation.Cited), and Source, the same in the words the report shows it in
// (report.Show, laid out by the template "source"); the desk links its place (AtLink).
type Citation struct {
	citation.Cited
	Flagged bool
	Source  report.Source
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

// Proposal is a command an answer proposes, with its exact effect and every argument it
// will be applied with; nothing changes until the scientist confirms it, and the
// confirmation carries the Digest of what was shown. Status is proposed, confirmed or
// refused (with Reason); By confirmed it, with Sig (Unsigned when no desk signed it).
type Proposal struct {
	ID, Command, Effect, Status, Reason, By string
	Args                                    []Argument
	Digest, Sig                             string
	// Update and At are the confirm update's id and when the session took it, which the
	// signature covers and is checked against.
	Update, At string
	Unsigned   bool
}

// Argument is one argument of a proposed command, whole; Long ones show folded.
type Argument struct {
	Name, Value string
	Long        bool
}

// longArgument is where an argument starts to show folded (expandable, never cut).
const longArgument = 160

// arguments are a proposed command's arguments as it will be applied, in the order of
// the command's fields, each whole.
func arguments(p research.ProposedCommand) []Argument {
	var args map[string]any
	if len(p.Args) == 0 || json.Unmarshal(p.Args, &args) != nil {
		if len(p.Args) > 0 {
			return []Argument{{Name: "arguments", Value: string(p.Args), Long: len(p.Args) > longArgument}}
		}
		return nil
	}
	spec, _ := session.LookupCommand(p.Command)
	names := slices.Collect(maps.Keys(args))
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := slices.Index(spec.Fields, a), slices.Index(spec.Fields, b)
		if ia < 0 {
			ia = len(spec.Fields)
		}
		if ib < 0 {
			ib = len(spec.Fields)
		}
		return cmp.Or(cmp.Compare(ia, ib), cmp.Compare(a, b))
	})
	var out []Argument
	for _, n := range names {
		v := argumentText(args[n])
		out = append(out, Argument{Name: n, Value: v, Long: utf8.RuneCountInString(v) > longArgument || strings.Contains(v, "\n")})
	}
	return out
}

// argumentText is an argument's value as a person reads it.
func argumentText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var lines []string
		for _, e := range v {
			lines = append(lines, argumentText(e))
		}
		return strings.Join(lines, "\n")
	case nil:
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
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
		v, err = t.stored(ctx, id, p, workflows.EndedReason)
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
		turn := ConversationTurn{ID: m.ID, From: m.Role, By: m.By, Sig: m.Signed, Update: m.Update, Text: text, Time: m.Time, Failed: m.Failed, Citations: cited(s)}
		for i, pr := range m.Proposals {
			p := Proposal{ID: pr.ID, Command: pr.Command, Effect: pr.Effect, Status: pr.Status, Reason: pr.Reason, By: pr.By, Sig: pr.Signed, Update: pr.Update, At: pr.At}
			if found && i < len(s.Proposals) && s.Proposals[i].Command == pr.Command {
				p.Args, p.Digest = arguments(s.Proposals[i]), s.Proposals[i].Digest()
			}
			turn.Proposals = append(turn.Proposals, p)
		}
		page.Turns = append(page.Turns, turn)
	}
	return page, nil
}

// cited is an answer's citations, each with what the check found (citation.Join, the
// rule the hypothesis page and the report pair them by).
func cited(m research.Message) []Citation {
	var out []Citation
	for _, c := range citation.Join(m.References, m.Citations) {
		checked := c.Checked()
		if !checked {
			c.Check.Verdict = report.Unchecked
		}
		out = append(out, Citation{Cited: c, Flagged: checked && c.Check.Flagged(), Source: report.Show(c)})
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

func (t temporalConversation) Ask(ctx context.Context, id string, by signedBy, message string) error {
	if err := session.CheckAsk(message); err != nil {
		return &refused{err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	_, err := t.talk.Ask(ctx, id, workflows.AskRequest{Text: message, By: by.ID, BySig: by.Sig, UpdateID: by.Update})
	return updated(err, id)
}

func (t temporalConversation) Confirm(ctx context.Context, id string, by signedBy, proposal, digest string) error {
	ctx, cancel := context.WithTimeout(ctx, updateTimeout)
	defer cancel()
	_, err := t.talk.Confirm(ctx, id, workflows.ConfirmRequest{Proposal: proposal, By: by.ID, BySig: by.Sig, Digest: digest, UpdateID: by.Update})
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
func (noConversation) Ask(context.Context, string, signedBy, string) error { return errNoConversation }
func (noConversation) Confirm(context.Context, string, signedBy, string, string) error {
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
		// A confirmation at the desk names what it was shown: the session applies the
		// proposal only if it is that command (the starter, which prints it whole, may
		// leave the digest out).
		digest := strings.TrimSpace(r.PostFormValue("digest"))
		if digest == "" {
			d.fail(w, r, &refused{"confirm " + p + ": the form names no command (its digest); reload the page, read the proposal, and confirm it there"})
			return
		}
		err = d.conv.Confirm(r.Context(), id, d.sign(id, vouch.Confirm, session.ConfirmDigest(p, digest), who.ID), p, digest)
	} else {
		if wait, ok := d.questions.allow(who.ID); !ok {
			tooMany(w, wait, fmt.Sprintf("at most %d questions a minute for one person (each is a model turn)", d.questions.limit))
			return
		}
		message := strings.TrimSpace(r.PostFormValue("message")) // as the session keeps it, and its signature covers it
		err = d.conv.Ask(r.Context(), id, d.sign(id, vouch.Ask, session.TextDigest(message), who.ID), message)
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/s/"+id+"#conversation", http.StatusSeeOther)
}
