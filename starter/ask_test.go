package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// scripted is a conversation whose answers are written in advance.
type scripted struct {
	history   []workflows.ConversationEntry
	answers   map[string]workflows.ConversationEntry // message -> answer
	asked     []string
	confirmed []string
}

func (s *scripted) ask(_ context.Context, text string) (workflows.AskAnswer, error) {
	s.asked = append(s.asked, text)
	return workflows.AskAnswer{Answer: s.answers[text]}, nil
}

func (s *scripted) confirm(_ context.Context, id string) (workflows.ConfirmAnswer, error) {
	s.confirmed = append(s.confirmed, id)
	return workflows.ConfirmAnswer{Proposal: session.Proposal{ID: id, Command: "refine-goal", Status: session.ProposalConfirmed},
		Status: workflows.Status{SessionID: "s-1", State: session.Active}}, nil
}

func (s *scripted) conversation(_ context.Context, p workflows.Page) (workflows.ConversationView, error) {
	lo := min(p.Offset, len(s.history))
	return workflows.ConversationView{Messages: s.history[lo:min(lo+p.Limit, len(s.history))], Total: len(s.history), Offset: lo, Limit: p.Limit}, nil
}

func answer(id, text string, commands ...string) workflows.ConversationEntry {
	e := workflows.ConversationEntry{Message: session.Message{ID: id, Role: session.RoleSession}, Text: text}
	for i, c := range commands {
		e.Proposals = append(e.Proposals, session.Proposal{ID: session.ProposalID(id, i), Command: c, Effect: "does " + c, Status: session.ProposalProposed})
	}
	return e
}

// TestChat feeds chat its input: history first, then each answer, and a proposal is
// confirmed only on y; what the session says is escaped on the terminal.
func TestChat(t *testing.T) {
	for _, tt := range []struct {
		name          string
		input         string
		wantConfirmed []string
		wantOut       []string
	}{
		{"yes", "focus on microglia\ny\n", []string{"m-0004.1"}, []string{"m-0001 scientist (ada, not signed)", "earlier", "m-0004 session:", "1. [m-0004.1] refine-goal: does refine-goal (proposed)", "m-0004.1 confirmed"}},
		{"no", "focus on microglia\nn\n", nil, []string{"m-0004.1 not confirmed; nothing changed."}},
		{"end of input at the question", "focus on microglia\n", nil, []string{"Confirm m-0004.1 (refine-goal)? [y/N]"}},
		{"a question", "what is best?\n\n", nil, []string{`h-0003 \x1b[2J is best`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conv := &scripted{
				history: []workflows.ConversationEntry{{Message: session.Message{ID: "m-0001", Role: session.RoleScientist, By: "ada"}, Text: "earlier"}},
				answers: map[string]workflows.ConversationEntry{
					"focus on microglia": answer("m-0004", "I propose refine-goal.", "refine-goal"),
					"what is best?":      answer("m-0006", "h-0003 \x1b[2J is best"),
				},
			}
			var buf bytes.Buffer
			term := newTerminal(&buf)
			if err := chat(context.Background(), conv, "s-1", strings.NewReader(tt.input), term); err != nil {
				t.Fatal(err)
			}
			term.Flush()
			out := buf.String()
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "\x1b") {
				t.Errorf("an escape reached the terminal:\n%q", out)
			}
			if strings.Join(conv.confirmed, ",") != strings.Join(tt.wantConfirmed, ",") {
				t.Errorf("confirmed %v; want %v", conv.confirmed, tt.wantConfirmed)
			}
		})
	}
}

// TestAskCommandLine: ask's command line is checked before anything is sent.
func TestAskCommandLine(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"ask"}, "ask needs one session ID"},
		{[]string{"ask", "s-1"}, "ask needs one message"},
		{[]string{"ask", "s-1", "   "}, "the message is empty"},
		{[]string{"ask", "s-1", strings.Repeat("x", 4001)}, "at most 4000"},
		{[]string{"ask", "s-1", "--confirm", "m-0002.1", "and a message"}, "takes no message"},
	} {
		_, errOut := quiet(t)
		if code := run(tt.args); code != 2 || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("starter %s: exit %d, %q; want 2 with %q", strings.Join(tt.args, " ")[:min(40, len(strings.Join(tt.args, " ")))], code, errOut.String(), tt.want)
		}
	}
}
