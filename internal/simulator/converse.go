package simulator

// The offline converse agent: it answers from what its request says of the session (the
// state, the top of the ranking, the waiting calls), and turns the requests a scientist
// makes in plain words into the matching commands, by simple patterns read in order.

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// Converse answers the scientist's message.
func (o *Offline) Converse(ctx context.Context, req research.ConverseRequest) (research.ConverseAnswer, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentConverse, req.TurnID); err != nil {
		return research.ConverseAnswer{}, research.Usage{}, err
	}
	raw := mustJSON(writeConverse(req))
	ans, err := prompt.ConverseSpec.Parse(req, raw)
	if err != nil {
		return research.ConverseAnswer{}, research.Usage{}, bug(err)
	}
	return ans, usage(req.Prompt, raw), nil
}

type converseAnswer struct {
	Answer     string           `json:"answer"`
	Proposals  []proposalAnswer `json:"proposals"`
	References []citedAnswer    `json:"references"`
}

type proposalAnswer struct {
	Command string `json:"command"`
	Args    string `json:"args"`
}

type citedAnswer struct {
	ID    string `json:"id"`
	Quote string `json:"quote"`
	Claim string `json:"claim"`
}

// request is a pattern of a scientist's request and the command it makes.
type request struct {
	re   *regexp.Regexp
	make func(m []string, req research.ConverseRequest) (command string, args map[string]any, says string)
}

// requests are read in order; the first that matches makes the proposal ("stop at 50
// hypotheses" before "stop").
var requests = []request{
	{regexp.MustCompile(`(?i)\bstop (?:at|after) (\d+) hypothes[ie]s\b`), func(m []string, _ research.ConverseRequest) (string, map[string]any, string) {
		n, _ := strconv.Atoi(m[1])
		return "set-budget", map[string]any{"max_hypotheses": n}, fmt.Sprintf("to stop at %d hypotheses", n)
	}},
	{regexp.MustCompile(`(?i)\b(?:test|try|add) (?:this|my) (?:idea|hypothesis)\s*:\s*(.+)`), func(m []string, _ research.ConverseRequest) (string, map[string]any, string) {
		idea := strings.TrimSpace(m[1])
		title := idea
		if i := strings.IndexAny(title, ".;"); i > 0 {
			title = title[:i]
		}
		return "add-hypothesis", map[string]any{
			"title": research.Shorten(title, 80), "statement": research.Shorten(idea, 2000),
			"testable_predictions": []string{"If it holds, intervening on its mechanism changes the outcome it names."},
		}, "to add your idea as a hypothesis"
	}},
	{regexp.MustCompile(`(?i)\b(h-\d{4})\b.*\b(weak|wrong|flawed|implausible|strong|convincing|promising)\b(.*)`), func(m []string, _ research.ConverseRequest) (string, map[string]any, string) {
		verdict := map[bool]string{true: "accept", false: "revise"}[strings.Contains("strong convincing promising", strings.ToLower(m[2]))]
		return "review", map[string]any{"hypothesis_id": m[1], "verdict": verdict, "critique": research.Shorten(strings.TrimSpace(m[0]), 1000)},
			"to record your review of " + m[1]
	}},
	{regexp.MustCompile(`(?i)\bfocus (?:on|more on) ([^.;!?]+)`), func(m []string, _ research.ConverseRequest) (string, map[string]any, string) {
		return "refine-goal", map[string]any{"focus": strings.TrimSpace(m[1])}, "to focus on " + strings.TrimSpace(m[1])
	}},
	{regexp.MustCompile(`(?i)\b(?:leave|put|set) ([^.;!?]+?) aside\b|\b(?:avoid|drop|no more|less of|stay away from) ([^.;!?]+)`), func(m []string, _ research.ConverseRequest) (string, map[string]any, string) {
		away := strings.TrimSpace(m[1] + m[2])
		return "feedback", map[string]any{"away": away}, "to steer the agents away from " + away
	}},
	{regexp.MustCompile(`(?i)\b(?:explore|more of|look (?:more )?(?:at|into)) ([^.;!?]+)`), func(m []string, _ research.ConverseRequest) (string, map[string]any, string) {
		toward := strings.TrimSpace(m[1])
		return "feedback", map[string]any{"toward": toward}, "to steer the agents toward " + toward
	}},
	{regexp.MustCompile(`(?i)\bbudget (?:of|to) \$?(\d+(?:\.\d+)?) ?(?:dollars|usd)?\b`), func(m []string, _ research.ConverseRequest) (string, map[string]any, string) {
		usd, _ := strconv.ParseFloat(m[1], 64)
		return "set-budget", map[string]any{"budget_usd": usd}, "to set the dollar budget to $" + m[1]
	}},
	{regexp.MustCompile(`(?i)^\s*(?:please )?(?:pause|suspend)\b`), func([]string, research.ConverseRequest) (string, map[string]any, string) {
		return "suspend", map[string]any{"reason": "asked in the conversation"}, "to pause the session"
	}},
	{regexp.MustCompile(`(?i)^\s*(?:please )?(?:resume|continue|carry on)\b`), func([]string, research.ConverseRequest) (string, map[string]any, string) {
		return "resume", map[string]any{}, "to resume the session"
	}},
	{regexp.MustCompile(`(?i)^\s*(?:please )?(?:stop|terminate|end)\b`), func([]string, research.ConverseRequest) (string, map[string]any, string) {
		return "terminate", map[string]any{"reason": "asked in the conversation"}, "to end the session"
	}},
}

// writeConverse is the simulated converse agent's answer: a proposal for a request it
// recognises, else an answer to the question from the session's state.
func writeConverse(req research.ConverseRequest) converseAnswer {
	msg := strings.TrimSpace(req.Message)
	a := converseAnswer{Proposals: []proposalAnswer{}, References: []citedAnswer{}}
	for _, r := range requests {
		m := r.re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		command, args, says := r.make(m, req)
		b, _ := json.Marshal(args)
		a.Proposals = append(a.Proposals, proposalAnswer{Command: command, Args: string(b)})
		a.Answer = "I propose " + command + " " + says + ". Nothing changes until you confirm it."
		if req.Ended {
			a.Answer += " The session has ended, though: it can no longer change."
		}
		return a
	}
	a.Answer = answerQuestion(msg, req, &a)
	return a
}

// answerQuestion answers from the state the request carries.
func answerQuestion(msg string, req research.ConverseRequest, a *converseAnswer) string {
	lower := strings.ToLower(msg)
	state := "The session is " + strings.TrimSuffix(strings.TrimSpace(req.State), ".") + "."
	if req.Ended {
		state = "The session has ended (" + strings.TrimSuffix(strings.TrimSpace(req.State), ".") + "); I answer from its final state."
	}
	switch {
	case len(req.Top) == 0:
		return state + " It has no ranked hypothesis yet."
	case strings.Contains(lower, "wait") || strings.Contains(lower, "tool call") || strings.Contains(lower, "approv"):
		if len(req.Waiting) == 0 {
			return state + " No tool call waits for you."
		}
		return state + fmt.Sprintf(" %d tool call(s) wait for you: %s.", len(req.Waiting), strings.Join(req.Waiting, "; "))
	}
	best := req.Top[0]
	h := best.Hypothesis
	text := fmt.Sprintf("%s The best hypothesis is %s, %q (Elo %.0f after %d matches).", state, h.ID, h.Title, best.Elo, best.Matches)
	if len(best.Reviews) > 0 {
		r := best.Reviews[len(best.Reviews)-1]
		text += fmt.Sprintf(" Its latest review (%s) says %s.", r.Type, r.Verdict)
	}
	if len(h.References) > 0 {
		ref := h.References[0]
		if len(strings.Fields(ref.Quote)) >= prompt.MinQuoteWords {
			claim := fmt.Sprintf("%s rests on %s.", h.ID, ref.ID)
			text += " " + claim
			a.References = append(a.References, citedAnswer{ID: ref.ID, Quote: ref.Quote, Claim: claim})
		}
	}
	if len(req.Top) > 1 {
		var next []string
		for _, r := range req.Top[1:min(3, len(req.Top))] {
			next = append(next, r.Hypothesis.ID)
		}
		text += " Next come " + strings.Join(next, " and ") + "."
	}
	return text
}
