package session

// The conversation between the scientist and the session: what the workflow keeps of it
// (ids, who, when, the proposals and their status; never the text, which is in the store),
// the limits of a message, and the exact effect of each command a proposal carries.

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

// Roles in the conversation.
const (
	RoleScientist = "scientist"
	RoleSession   = "session"
)

// Limits of the conversation.
const (
	// MaxAskLength bounds a scientist's message, in characters.
	MaxAskLength = 4000
	// MaxAnswerLength bounds the session's answer, in characters.
	MaxAnswerLength = 6000
	// MaxProposals bounds the commands one answer proposes.
	MaxProposals = 4
)

// Proposal statuses: proposed until a confirm names it; then confirmed (applied) or
// refused (the command was refused, with the reason; or the session had ended).
const (
	ProposalProposed  = "proposed"
	ProposalConfirmed = "confirmed"
	ProposalRefused   = "refused"
)

// Proposable are the commands an answer may propose: what a scientist asks for in words.
var Proposable = []string{"refine-goal", "feedback", "add-hypothesis", "review", "set-budget", "suspend", "resume", "terminate"}

// Message is one message of the conversation as the session keeps it: its id, who wrote
// it and when, and the proposals an answer made with their status. The text is in the
// store (research.Message), under the same id.
type Message struct {
	ID   string `json:"id"`   // "m-0003", numbered across the whole session
	Role string `json:"role"` // RoleScientist or RoleSession
	By   string `json:"by,omitempty"`
	// Signed is the desk's signature of the question (Command.BySig), "" for a message
	// no desk sent; Update the id of the ask update that carried it.
	Signed string `json:"signed,omitempty"`
	Update string `json:"update,omitempty"`
	Time   string `json:"time"` // RFC 3339, UTC
	// Proposals are the commands a session's answer proposed, in order.
	Proposals []Proposal `json:"proposals,omitempty"`
	// Failed says why the session could not answer a scientist's message ("" otherwise).
	Failed string `json:"failed,omitempty"`
}

// Proposal is a command the session proposed, and what became of it.
type Proposal struct {
	ID      string `json:"id"`      // "m-0004.1": the answer's id and the proposal's number in it
	Command string `json:"command"` // the command's name (Commands)
	Effect  string `json:"effect"`  // what confirming it does, in plain words (Effect)
	Status  string `json:"status"`  // ProposalProposed, ProposalConfirmed or ProposalRefused
	Reason  string `json:"reason,omitempty"`
	By      string `json:"by,omitempty"`     // who confirmed it
	Signed  string `json:"signed,omitempty"` // the desk's signature of the confirmation
	// Update is the id of the confirm update, At when the session took it (RFC 3339).
	Update string `json:"update,omitempty"`
	At     string `json:"at,omitempty"`
}

// MessageID names the n-th message of a session's conversation.
func MessageID(n int) string { return fmt.Sprintf("m-%04d", n) }

// MessageNumber is the n of MessageID(n); 0 for anything else.
func MessageNumber(id string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "m-"))
	if err != nil || !strings.HasPrefix(id, "m-") || n < 1 {
		return 0
	}
	return n
}

// ProposalID names the i-th proposal (from 0) of an answer.
func ProposalID(answer string, i int) string { return fmt.Sprintf("%s.%d", answer, i+1) }

// ProposalOf splits a proposal's id into its answer's id and its index (from 0); ok is
// false for anything that is not a proposal's id.
func ProposalOf(id string) (answer string, i int, ok bool) {
	answer, n, found := strings.Cut(strings.TrimSpace(id), ".")
	k, err := strconv.Atoi(n)
	if !found || err != nil || k < 1 || k > MaxProposals || MessageNumber(answer) == 0 {
		return "", 0, false
	}
	return answer, k - 1, true
}

// CheckAsk refuses a message the session cannot take: empty, or too long.
func CheckAsk(text string) error {
	text = strings.TrimSpace(text)
	switch n := utf8.RuneCountInString(text); {
	case n == 0:
		return fmt.Errorf("ask: the message is empty; write a question or a request")
	case n > MaxAskLength:
		return fmt.Errorf("ask: the message is %d characters; at most %d (say it in two messages)", n, MaxAskLength)
	}
	return nil
}

// Effect says in plain words what applying cmd does: the line a proposal shows the
// scientist before they confirm it. It is written from the command itself, not by the
// model, so that it is exact.
func Effect(cmd Command) string {
	q := func(s string) string { return strconv.Quote(shorten(s, 120)) }
	switch cmd.Name {
	case "refine-goal":
		var parts []string
		if cmd.Goal != "" {
			parts = append(parts, "replaces the research goal with "+q(cmd.Goal))
		}
		if cmd.Focus != "" {
			parts = append(parts, "adds the focus "+q(cmd.Focus)+", which every later prompt carries")
		}
		if cmd.TokenBudget != nil {
			parts = append(parts, "sets the token budget to "+budget(*cmd.TokenBudget))
		}
		return upper(strings.Join(parts, "; ")) + "; the session checkpoints the change."
	case "feedback":
		var parts []string
		if cmd.Toward != "" {
			parts = append(parts, "steers the agents toward "+q(cmd.Toward))
		}
		if cmd.Away != "" {
			parts = append(parts, "steers the agents away from "+q(cmd.Away))
		}
		return upper(strings.Join(parts, " and ")) + " in every later generation, evolution and review prompt."
	case "add-hypothesis":
		return "Adds your hypothesis " + q(cmd.Title) + " with the next id; it is reviewed next round and competes like any other."
	case "review":
		var parts []string
		if cmd.Score != nil {
			parts = append(parts, fmt.Sprintf("score %.1f", *cmd.Score))
		}
		if cmd.Verdict != "" {
			parts = append(parts, "verdict "+cmd.Verdict)
		}
		if cmd.Critique != "" {
			parts = append(parts, "critique "+q(cmd.Critique))
		}
		return "Records your review of " + cmd.HypothesisID + " (" + strings.Join(parts, ", ") + "); it weighs twice in its score."
	case "set-budget":
		var parts []string
		if cmd.TokenBudget != nil {
			parts = append(parts, "the token budget to "+budget(*cmd.TokenBudget))
		}
		if cmd.BudgetUSD != nil {
			if *cmd.BudgetUSD == 0 {
				parts = append(parts, "the dollar budget to no cap")
			} else {
				parts = append(parts, fmt.Sprintf("the dollar budget to $%.2f", *cmd.BudgetUSD))
			}
		}
		if cmd.MaxHypotheses != nil {
			parts = append(parts, fmt.Sprintf("max_hypotheses to %d: the session stops once its agents have made that many", *cmd.MaxHypotheses))
		}
		return "Sets " + strings.Join(parts, "; ") + "."
	case "suspend":
		return "Pauses the session: no new model turn starts until it is resumed; turns already running finish."
	case "resume":
		return "Resumes the suspended session where it stopped."
	case "terminate":
		return "Ends the session: in-flight turns finish, then the research overview, a final checkpoint and the report. It cannot be undone."
	}
	return "Sends the command " + cmd.Name + "."
}

func budget(n int) string {
	if n == 0 {
		return "no cap"
	}
	return strconv.Itoa(n) + " tokens"
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// shorten cuts s to n characters, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// EndedConversation is an ended session's whole conversation: every message the store
// holds (stored, oldest first), with the ids, who and when, and the proposals' status as
// the session kept them (kept, from its final checkpoint); a message the session never
// kept (one asked after it ended) gets its proposals from the store. A proposal that was
// neither confirmed nor refused is refused with reason, since nothing can apply it now.
// last is the highest message number.
func EndedConversation(kept []Message, stored []research.Message, reason string) (msgs []Message, last int) {
	known := map[string]Message{}
	for _, m := range kept {
		known[m.ID] = m
	}
	for _, m := range stored {
		k, ok := known[m.ID]
		if !ok { // a message of a conversation with the ended session
			k = Message{ID: m.ID, Role: m.Role, By: m.By, Time: m.Time, Signed: m.Signed, Update: m.Update}
			for i, p := range m.Proposals {
				k.Proposals = append(k.Proposals, Proposal{ID: ProposalID(m.ID, i), Command: p.Command, Effect: p.Effect})
			}
		}
		k.Proposals = append([]Proposal(nil), k.Proposals...) // never change kept's
		for i := range k.Proposals {
			if k.Proposals[i].Status != ProposalConfirmed && k.Proposals[i].Status != ProposalRefused {
				k.Proposals[i].Status, k.Proposals[i].Reason = ProposalRefused, reason
			}
		}
		msgs = append(msgs, k)
		last = max(last, MessageNumber(m.ID))
	}
	return msgs, last
}
