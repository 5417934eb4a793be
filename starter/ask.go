package main

// starter ask and starter chat: the conversation with a session. A question to a session
// that has ended goes to the workflow that answers from its final state
// (workflows.EndedConversation), started with the question.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/converse"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/vouch"
	"github.com/cosci-dev/cosci/workflows"
)

const (
	askArgs  = `<id> "message" [--as NAME] | <id> --confirm PROPOSAL [--as NAME]`
	chatArgs = "<id> [--as NAME]"
	// askTimeout bounds one answer: a model turn, which may take minutes.
	askTimeout = 5 * time.Minute
	// chatHistory is how many of the latest messages chat shows first.
	chatHistory = 20
)

// conversant is a session's conversation as ask and chat use it.
type conversant interface {
	ask(ctx context.Context, text string) (workflows.AskAnswer, error)
	confirm(ctx context.Context, proposal string) (workflows.ConfirmAnswer, error)
	conversation(ctx context.Context, p workflows.Page) (workflows.ConversationView, error)
}

func cmdAsk(ctx context.Context, args []string) error {
	fs := newFlagSet("ask", askArgs, "Ask a session a question, or for a change, in plain words: it answers from what it knows, and proposes the commands a change needs, numbered; nothing changes until you confirm one with --confirm. An ended session answers from its final state.")
	as := fs.String("as", defaultIdentity(), "who asks, for the session's conversation and history (default $USER)")
	confirm := fs.String("confirm", "", "confirm this `proposal` of an earlier answer (e.g. m-0004.1) instead of asking")
	rest, err := parse(fs, args)
	if err == nil {
		switch {
		case len(rest) == 0 || strings.TrimSpace(rest[0]) == "":
			err = usageErrorf(`ask needs one session ID: starter ask <session-id> "message" (find them with: starter list)`)
		case *confirm != "" && len(rest) != 1:
			err = usageErrorf("ask --confirm takes no message")
		case *confirm == "" && len(rest) != 2:
			err = usageErrorf(`ask needs one message, in quotes: starter ask <session-id> "What is the best hypothesis?"`)
		case *confirm == "":
			if e := session.CheckAsk(rest[1]); e != nil {
				err = usageErrorf("%v", e)
			}
		}
	}
	return withTemporal(err, func(c client.Client, _ string) error {
		conv := &temporalConversant{c: c, id: rest[0], by: session.CleanBy(*as)}
		if *confirm != "" {
			ans, err := conv.confirm(ctx, *confirm)
			if err != nil {
				return err
			}
			printConfirmed(stdout, ans)
			return nil
		}
		ans, err := conv.ask(ctx, rest[1])
		if err != nil {
			return err
		}
		printAnswer(stdout, rest[0], ans.Answer)
		return nil
	})
}

func cmdChat(ctx context.Context, args []string) error {
	fs := newFlagSet("chat", chatArgs, "Talk with a session: its conversation so far, then your messages and its answers; for each command it proposes you are asked y/n before it is confirmed. An empty line or end of input ends the chat.")
	as := fs.String("as", defaultIdentity(), "who talks, for the session's conversation and history (default $USER)")
	id, err := sessionArg(fs, args)
	return withTemporal(err, func(c client.Client, _ string) error {
		return chat(ctx, &temporalConversant{c: c, id: id, by: session.CleanBy(*as)}, id, stdin, stdout)
	})
}

// chat shows the latest of the conversation, then reads messages from in, one a line,
// and asks before confirming each proposal. Everything goes to out, which escapes what a
// terminal would act on (run's terminal).
func chat(ctx context.Context, conv conversant, id string, in io.Reader, out io.Writer) error {
	if v, err := conv.conversation(ctx, workflows.Page{Limit: 1}); err == nil && v.Total > 0 {
		v, err = conv.conversation(ctx, workflows.Page{Offset: max(0, v.Total-chatHistory), Limit: chatHistory})
		if err == nil {
			fmt.Fprintf(out, "The conversation so far (%d messages; the latest %d):\n", v.Total, len(v.Messages))
			for _, m := range v.Messages {
				printEntry(out, id, m)
			}
		}
	}
	lines := bufio.NewScanner(in)
	lines.Buffer(make([]byte, 64<<10), 64<<10)
	read := func(prompt string) (string, bool) {
		fmt.Fprint(out, prompt)
		if !lines.Scan() {
			fmt.Fprintln(out)
			return "", false
		}
		return strings.TrimSpace(lines.Text()), true
	}
	for {
		text, ok := read("> ")
		if !ok || text == "" || text == "/quit" {
			return nil
		}
		if err := session.CheckAsk(text); err != nil {
			fmt.Fprintln(out, err)
			continue
		}
		ans, err := conv.ask(ctx, text)
		if err != nil {
			fmt.Fprintln(out, err)
			continue
		}
		printAnswer(out, id, ans.Answer)
		for _, p := range ans.Answer.Proposals {
			if p.Status != session.ProposalProposed {
				continue
			}
			yes, ok := read(fmt.Sprintf("Confirm %s (%s)? [y/N] ", p.ID, p.Command))
			if !ok {
				return nil
			}
			if !strings.EqualFold(yes, "y") && !strings.EqualFold(yes, "yes") {
				fmt.Fprintf(out, "%s not confirmed; nothing changed.\n", p.ID)
				continue
			}
			c, err := conv.confirm(ctx, p.ID)
			if err != nil {
				fmt.Fprintln(out, err)
				continue
			}
			printConfirmed(out, c)
		}
	}
}

// printAnswer prints the session's answer and its proposals, numbered.
func printAnswer(w io.Writer, id string, m workflows.ConversationEntry) {
	fmt.Fprintf(w, "%s %s:\n%s\n", m.ID, m.Role, m.Text)
	for i, p := range m.Proposals {
		fmt.Fprintf(w, "  %d. [%s] %s: %s (%s", i+1, p.ID, p.Command, p.Effect, p.Status)
		if p.Reason != "" {
			fmt.Fprintf(w, ": %s", p.Reason)
		}
		fmt.Fprintln(w, ")")
	}
	for _, p := range m.Proposals {
		if p.Status == session.ProposalProposed {
			fmt.Fprintf(w, "Confirm one with: starter ask %s --confirm %s\n", id, p.ID)
			break
		}
	}
}

// printEntry prints one message of the conversation so far.
func printEntry(w io.Writer, id string, m workflows.ConversationEntry) {
	who := m.Role
	if m.By != "" {
		asked := vouch.Act{Session: id, Kind: vouch.Ask, By: m.By, Payload: session.TextDigest(m.Text), Update: m.Update}
		who += " (" + m.By + signature(asked, m.Signed, m.Time, ", %s") + ")"
	}
	text := m.Text
	switch {
	case m.Failed != "":
		text = "(not answered: " + m.Failed + ")"
	case m.TextInStore:
		text = "(in the session store: conversation/" + m.ID + ".json)"
	}
	fmt.Fprintf(w, "%s %s, %s: %s\n", m.ID, who, m.Time, text)
	for _, p := range m.Proposals {
		fmt.Fprintf(w, "  [%s] %s: %s\n", p.ID, p.Command, p.Status)
	}
}

func printConfirmed(w io.Writer, c workflows.ConfirmAnswer) {
	msg := fmt.Sprintf("%s confirmed: %s; session %s is now %s", c.Proposal.ID, c.Proposal.Command, c.Status.SessionID, stateOf(c.Status))
	if c.Status.Detail != "" {
		msg += " (" + c.Status.Detail + ")"
	}
	fmt.Fprintln(w, msg)
}

// temporalConversant talks with a session through Temporal.
type temporalConversant struct {
	c  client.Client
	id string
	by string
}

func (t *temporalConversant) ask(ctx context.Context, text string) (workflows.AskAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	ans, err := converse.Client{C: t.c}.Ask(ctx, t.id, workflows.AskRequest{Text: text, By: t.by})
	return ans, answered(err, t.id)
}

func (t *temporalConversant) confirm(ctx context.Context, proposal string) (workflows.ConfirmAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, updateTimeout)
	defer cancel()
	ans, err := converse.Client{C: t.c}.Confirm(ctx, t.id, workflows.ConfirmRequest{Proposal: proposal, By: t.by})
	if errors.Is(err, converse.ErrEnded) {
		return ans, &exitError{1, "rejected: " + err.Error()}
	}
	return ans, answered(err, t.id)
}

func (t *temporalConversant) conversation(ctx context.Context, p workflows.Page) (workflows.ConversationView, error) {
	v, err := converse.Client{C: t.c}.Conversation(ctx, t.id, p)
	return v, explain(err, t.id)
}

// answered is an update's error as the scientist reads it.
func answered(err error, id string) error {
	var rejected *temporal.ApplicationError
	if errors.As(err, &rejected) {
		return &exitError{1, "rejected: " + rejected.Message()}
	}
	return explain(err, id)
}
