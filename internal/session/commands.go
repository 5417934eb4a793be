package session

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/user"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

// Command is a scientist's instruction to a running session, decoded from the optional JSON
// object that comes with a signal or an update. Each command uses a few of the fields.
type Command struct {
	Name string `json:"-"`
	// By is the identity that issued the command: the desk sets it from the signed-in
	// identity, the starter from --as or $USER. The session's event log records it with
	// the command. Any command takes it; CleanBy bounds it and strips control characters.
	By string `json:"by,omitempty"`
	// BySig is the desk's signature of the act (internal/vouch): this session, the
	// command, By, the payload's Digest and the update id; the event log records it beside
	// them, and a page marks a By whose signature is not of this act "not signed". Any
	// command takes it; CleanSig bounds it.
	BySig string `json:"by_sig,omitempty"`
	// Update is the id of the Temporal update that carried the command, and Signs the
	// digest of the act a desk's signature covers (Digest, or ConfirmDigest for a command
	// applied from a confirmation): both set by the session, never by the payload.
	Update string `json:"-"`
	Signs  string `json:"-"`
	// suspend, terminate
	Reason string `json:"reason,omitempty"`
	// refine-goal
	Goal  string `json:"goal,omitempty"`
	Focus string `json:"focus,omitempty"`
	// refine-goal, set-budget: the new token budget; set-budget: the new dollar budget
	TokenBudget *int     `json:"token_budget,omitempty"`
	BudgetUSD   *float64 `json:"budget_usd,omitempty"`
	// set-budget: the number of hypotheses the agents make before the session stops
	MaxHypotheses *int `json:"max_hypotheses,omitempty"`
	// add-hypothesis
	Title       string   `json:"title,omitempty"`
	Statement   string   `json:"statement,omitempty"`
	Rationale   string   `json:"rationale,omitempty"`
	Predictions []string `json:"testable_predictions,omitempty"`
	// review
	HypothesisID string   `json:"hypothesis_id,omitempty"`
	Score        *float64 `json:"score,omitempty"`
	Verdict      string   `json:"verdict,omitempty"`
	Critique     string   `json:"critique,omitempty"`
	// feedback
	Toward string `json:"toward,omitempty"`
	Away   string `json:"away,omitempty"`
	// answer-tool: the waiting call, and approve, reject, or the result itself (with the
	// reason, for a refusal)
	Call     string `json:"call,omitempty"`
	Decision string `json:"decision,omitempty"`
	Result   string `json:"result,omitempty"`
	// trust-tool, untrust-tool: the tool ("server.tool") whose calls stop, or start again,
	// waiting for the scientist's approval in this session
	Tool string `json:"tool,omitempty"`
}

// MaxSigLength bounds the signature of a By (BySig), in bytes.
const MaxSigLength = 128

// CleanSig is a signature of By as the session records it: as given when it is at most
// MaxSigLength bytes of the characters a signature is made of, else "" (not signed). The
// session cannot check it (it has no key); a page that shows the By does.
func CleanSig(sig string) string {
	if len(sig) > MaxSigLength || strings.ContainsFunc(sig, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_')
	}) {
		return ""
	}
	return sig
}

// MaxByLength bounds the identity a command names (By), in characters.
const MaxByLength = 120

// CleanBy is an identity as the session records it: control characters (a newline, an
// escape sequence) removed, spaces trimmed, at most MaxByLength characters. It never fails:
// an identity is recorded, not checked (the desk or the namespace's access decides who may
// send a command).
func CleanBy(by string) string {
	by = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(by, ""))
	by = strings.TrimSpace(by)
	if utf8.RuneCountInString(by) > MaxByLength {
		by = string([]rune(by)[:MaxByLength])
	}
	return by
}

// Decisions the scientist may give a tool call that waits for approval: approve it,
// reject it, or give its result themselves ("result", implied by a result).
var Decisions = []string{"approve", "reject", "result"}

// Limits on the free text a command carries into the session.
const (
	MaxReasonLength = 500
	MaxTextLength   = 4000
)

// Spec is one command of the scientist's, as every part of cosci knows it: the workflow's
// signal and update of that name, its parser here, its description in the Web UI, and the
// starter's subcommand.
type Spec struct {
	Name string
	// Fields are the payload's JSON fields, so a typo ("reasn") is refused, not ignored.
	Fields []string
	// Example is a payload, shown in error messages and the Web UI ("{}": none).
	Example string
	// Summary is one line for a list of commands; Help says more, for a command's -h.
	Summary, Help string
	// Description is what the Web UI and `temporal workflow metadata` show.
	Description string
}

// Commands are the scientist's commands, in the order a person meets them.
var Commands = []Spec{
	{Name: "suspend", Fields: []string{"reason"}, Example: `{"reason": "..."}`,
		Summary:     "pause a session",
		Help:        "Pause a session: no new work starts until it is resumed.",
		Description: "Pause the session: no new model turn starts until resume."},
	{Name: "resume", Example: "{}",
		Summary:     "continue a suspended session",
		Help:        "Continue a suspended session.",
		Description: "Continue a suspended session where it stopped."},
	{Name: "refine-goal", Fields: []string{"goal", "focus", "token_budget"}, Example: `{"goal": "...", "focus": "...", "token_budget": 200000}`,
		Summary:     "change the goal, add a focus or change the token budget",
		Help:        "Change a session's goal, add a focus, change its token budget, or several; the session checkpoints the change.",
		Description: "Refine the goal, add a focus, or change the token budget; applies from the next turn."},
	{Name: "checkpoint", Example: "{}",
		Summary:     "write a snapshot of the session now",
		Help:        "Write a snapshot of the session now.",
		Description: "Write a checkpoint of the session now."},
	{Name: "terminate", Fields: []string{"reason"}, Example: `{"reason": "..."}`,
		Summary:     "end a session gracefully: it finishes, checkpoints and reports",
		Help:        "End a session gracefully: it finishes in-flight work, writes a final checkpoint and report, then completes.",
		Description: "End the session gracefully: in-flight turns finish, then the overview, a final checkpoint and the report."},
	{Name: "add-hypothesis", Fields: []string{"title", "statement", "rationale", "testable_predictions"},
		Example:     `{"title": "...", "statement": "...", "rationale": "...", "testable_predictions": ["..."]}`,
		Summary:     "add your own hypothesis; it enters the tournament",
		Help:        "Add your own hypothesis: it is reviewed and enters the tournament like the agents' ones.",
		Description: "Add your own hypothesis; it is reviewed and competes like any other."},
	{Name: "review", Fields: []string{"hypothesis_id", "score", "verdict", "critique"},
		Example:     `{"hypothesis_id": "h-0003", "score": 7.5, "verdict": "accept", "critique": "..."}`,
		Summary:     "review a hypothesis yourself: score, verdict, critique",
		Help:        "Review a hypothesis yourself: a score from 0 to 10, a verdict, a critique, or several.",
		Description: "Review a hypothesis yourself; your review weighs in its score."},
	{Name: "feedback", Fields: []string{"toward", "away"}, Example: `{"toward": "...", "away": "..."}`,
		Summary:     "steer the agents toward or away from a direction",
		Help:        "Steer the agents: what to explore more (toward) and what to leave (away).",
		Description: "Steer the agents toward or away from a direction."},
	{Name: "set-budget", Fields: []string{"token_budget", "budget_usd", "max_hypotheses"}, Example: `{"token_budget": 500000, "budget_usd": 5, "max_hypotheses": 50}`,
		Summary:     "set the token or dollar budget (0: no cap) or max_hypotheses; resume a session that spent it",
		Help:        "Set the session's token budget, its dollar budget (0: no cap), the number of hypotheses it makes before it stops (max_hypotheses), or several. A session that spent its budget suspends; raise it, then resume.",
		Description: "Set the token or dollar budget (0: no cap) or max_hypotheses; a session suspended for budget can then resume."},
	{Name: "answer-tool", Fields: []string{"call", "decision", "result", "reason"},
		Example:     `{"call": "call-1", "decision": "approve"}`,
		Summary:     "approve or refuse a tool call that waits for you, or give its result",
		Help:        "Answer a tool call that waits for your approval (see status): approve it, reject it (with a reason), or give its result yourself (result). The turn that asked goes on.",
		Description: `Answer a tool call waiting for approval: {"call", "decision": "approve" | "reject"} or {"call", "result": "..."}.`},
	{Name: "trust-tool", Fields: []string{"tool"}, Example: `{"tool": "literature.fetch"}`,
		Summary:     "let a tool's calls run without your approval, in this session",
		Help:        "Trust a tool for this session: its calls no longer wait for your approval, and those waiting now are approved. Undo it with untrust-tool.",
		Description: "Trust a tool for this session: its calls stop waiting for approval (those waiting are approved); untrust-tool undoes it."},
	{Name: "untrust-tool", Fields: []string{"tool"}, Example: `{"tool": "literature.fetch"}`,
		Summary:     "make a trusted tool's calls wait for your approval again",
		Help:        "Undo trust-tool: the tool's calls wait for your approval again, as the session's configuration and the workers' tools file say.",
		Description: "Undo trust-tool: the tool's calls wait for approval again."},
}

// LookupCommand returns the command of that name.
func LookupCommand(name string) (Spec, bool) {
	for _, c := range Commands {
		if c.Name == name {
			return c, true
		}
	}
	return Spec{}, false
}

// Describe is the command's description with its payload, for the Web UI.
func (c Spec) Describe() string {
	if c.Example == "{}" {
		return c.Description
	}
	return c.Description + " " + c.Example
}

func example(name string) string {
	if c, ok := LookupCommand(name); ok {
		return c.Example
	}
	return "{}"
}

// ParseCommand decodes a command's payload. Empty input and JSON null mean "no arguments".
// Anything else must be a JSON object holding only the fields the command takes.
func ParseCommand(name string, payload []byte) (Command, error) {
	spec, ok := LookupCommand(name)
	if !ok {
		return Command{}, fmt.Errorf("unknown command %q", name)
	}
	allowed := spec.Fields
	cmd := Command{Name: name}
	payload = bytes.TrimSpace(payload)
	if len(payload) == 0 || string(payload) == "null" {
		return cmd, cmd.check()
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(payload, &raw); err != nil {
		return cmd, fmt.Errorf("%s takes a JSON object such as %s, not %s", name, example(name), research.Shorten(string(payload), 60))
	}
	// Sorted, so the same bad payload always gets the same answer (this runs in workflow code).
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if k != "by" && k != "by_sig" && !slices.Contains(allowed, k) {
			return cmd, fmt.Errorf("%s does not take %q; it takes %s", name, k, example(name))
		}
	}
	if err := json.Unmarshal(payload, &cmd); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return cmd, fmt.Errorf("%s: %q must be %s", name, typeErr.Field, kindOf(typeErr.Field))
		}
		return cmd, fmt.Errorf("%s: %v", name, err)
	}
	cmd.Name = name
	cmd.trim()
	if name == "answer-tool" && cmd.Result != "" && cmd.Decision == "" {
		cmd.Decision = "result" // a result is the scientist's answer in place of the tool's
	}
	return cmd, cmd.check()
}

func kindOf(field string) string {
	switch field {
	case "token_budget":
		return "a whole number of tokens"
	case "max_hypotheses":
		return "a whole number of hypotheses"
	case "budget_usd":
		return "a number of US dollars"
	case "score":
		return "a number from 0 to 10"
	case "testable_predictions":
		return "a list of strings"
	}
	return "a string"
}

func (c *Command) trim() {
	c.By, c.BySig = CleanBy(c.By), CleanSig(c.BySig)
	for _, s := range []*string{&c.Reason, &c.Goal, &c.Focus, &c.Title, &c.Statement, &c.Rationale,
		&c.HypothesisID, &c.Verdict, &c.Critique, &c.Toward, &c.Away, &c.Call, &c.Decision, &c.Result, &c.Tool} {
		*s = strings.TrimSpace(*s)
	}
	kept := c.Predictions[:0]
	for _, p := range c.Predictions {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	c.Predictions = kept
}

// check refuses a command whose arguments are incomplete or out of bounds.
func (c Command) check() error {
	if utf8.RuneCountInString(c.Reason) > MaxReasonLength {
		return fmt.Errorf("%s: reason is longer than %d characters", c.Name, MaxReasonLength)
	}
	for _, f := range []struct{ name, text string }{
		{"statement", c.Statement}, {"rationale", c.Rationale}, {"critique", c.Critique}, {"toward", c.Toward}, {"away", c.Away},
	} {
		if utf8.RuneCountInString(f.text) > MaxTextLength {
			return fmt.Errorf("%s: %s is longer than %d characters", c.Name, f.name, MaxTextLength)
		}
	}
	if c.TokenBudget != nil && *c.TokenBudget < 0 {
		return fmt.Errorf("%s: token_budget is %d; it must not be negative (0 means no cap)", c.Name, *c.TokenBudget)
	}
	if c.BudgetUSD != nil && !(*c.BudgetUSD >= 0 && *c.BudgetUSD <= research.MaxBudgetUSD) {
		return fmt.Errorf("%s: budget_usd is %g; it must be from 0 (no cap) to %d US dollars", c.Name, *c.BudgetUSD, research.MaxBudgetUSD)
	}
	switch c.Name {
	case "refine-goal":
		if c.Goal == "" && c.Focus == "" && c.TokenBudget == nil {
			return fmt.Errorf(`refine-goal needs a new "goal", a "focus", a "token_budget", or several`)
		}
		if c.Goal != "" {
			if err := research.ValidateGoal(c.Goal); err != nil {
				return fmt.Errorf("refine-goal: %w", err)
			}
		}
		if n := utf8.RuneCountInString(c.Focus); n > research.MaxFocusLength {
			return fmt.Errorf("refine-goal: focus is %d characters; at most %d", n, research.MaxFocusLength)
		}
	case "set-budget":
		if c.TokenBudget == nil && c.BudgetUSD == nil && c.MaxHypotheses == nil {
			return fmt.Errorf(`set-budget needs "token_budget", "budget_usd", "max_hypotheses" or several, e.g. %s`, example(c.Name))
		}
		if m := c.MaxHypotheses; m != nil && (*m < 1 || *m > research.MaxHypothesesLimit) {
			return fmt.Errorf("set-budget: max_hypotheses is %d; it must be from 1 to %d", *m, research.MaxHypothesesLimit)
		}
	case "add-hypothesis":
		h := research.Hypothesis{Title: c.Title, Statement: c.Statement, Predictions: c.Predictions}
		if err := h.Check(); err != nil {
			return fmt.Errorf("add-hypothesis: %v; send %s", err, example(c.Name))
		}
		if utf8.RuneCountInString(c.Title) > 200 {
			return fmt.Errorf("add-hypothesis: title is longer than 200 characters")
		}
		if len(c.Predictions) > 20 {
			return fmt.Errorf("add-hypothesis: at most 20 testable predictions")
		}
	case "review":
		switch {
		case c.HypothesisID == "":
			return fmt.Errorf(`review needs "hypothesis_id": which hypothesis you reviewed`)
		case c.Score == nil && c.Verdict == "" && c.Critique == "":
			return fmt.Errorf(`review needs a "score", a "verdict" or a "critique"`)
		case c.Score != nil && (*c.Score < 0 || *c.Score > 10):
			return fmt.Errorf("review: score is %g; it goes from 0 to 10", *c.Score)
		case c.Verdict != "" && !slices.Contains(research.Verdicts, c.Verdict):
			return fmt.Errorf("review: verdict %q is not one of %s", c.Verdict, strings.Join(research.Verdicts, ", "))
		}
	case "feedback":
		if c.Toward == "" && c.Away == "" {
			return fmt.Errorf(`feedback needs a direction to steer "toward", one to steer "away" from, or both`)
		}
	case "answer-tool":
		switch {
		case c.Call == "":
			return fmt.Errorf(`answer-tool needs "call": the id of the waiting call (see status), e.g. %s`, example(c.Name))
		case c.Decision != "" && !slices.Contains(Decisions, c.Decision):
			return fmt.Errorf("answer-tool: decision %q is not one of %s", c.Decision, strings.Join(Decisions, ", "))
		case c.Decision == "result" && c.Result == "":
			return fmt.Errorf(`answer-tool: decision "result" needs "result", the call's result as you give it`)
		case c.Result != "" && c.Decision != "" && c.Decision != "result":
			return fmt.Errorf(`answer-tool: a "result" is the call's result; it does not go with decision %q`, c.Decision)
		case c.Decision == "" && c.Result == "":
			return fmt.Errorf(`answer-tool needs a "decision" (approve or reject) or a "result"`)
		case utf8.RuneCountInString(c.Result) > MaxTextLength*4:
			return fmt.Errorf("answer-tool: result is longer than %d characters", MaxTextLength*4)
		}
	case "trust-tool", "untrust-tool":
		if _, tool, err := research.SplitTool(c.Tool); err != nil || tool == "*" {
			return fmt.Errorf(`%s needs "tool": one tool, server.tool, e.g. %s`, c.Name, example(c.Name))
		}
	}
	return nil
}

// LocalName is the user this process runs as: $USER ($USERNAME on Windows), or the
// operating system's account name where the environment names neither (a service, a
// container, a CI job), so that a laptop's desk and starter name the same person.
func LocalName(getenv func(string) string) string {
	if n := cmp.Or(getenv("USER"), getenv("USERNAME")); n != "" {
		return n
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}
