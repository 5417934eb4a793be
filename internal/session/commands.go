package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

// Command is a scientist's instruction to a running session, decoded from the optional JSON
// object that comes with a signal or an update. Each command uses a few of the fields.
type Command struct {
	Name string `json:"-"`
	// suspend, terminate
	Reason string `json:"reason,omitempty"`
	// refine-goal
	Goal  string `json:"goal,omitempty"`
	Focus string `json:"focus,omitempty"`
	// refine-goal, set-budget: the new token budget
	TokenBudget *int `json:"token_budget,omitempty"`
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
}

// Limits on the free text a command carries into the session.
const (
	MaxReasonLength = 500
	MaxTextLength   = 4000
)

// fields lists what each command accepts, so a typo ("reasn") is refused, not ignored.
var fields = map[string][]string{
	"suspend":        {"reason"},
	"resume":         {},
	"refine-goal":    {"goal", "focus", "token_budget"},
	"checkpoint":     {},
	"terminate":      {"reason"},
	"add-hypothesis": {"title", "statement", "rationale", "testable_predictions"},
	"review":         {"hypothesis_id", "score", "verdict", "critique"},
	"feedback":       {"toward", "away"},
	"set-budget":     {"token_budget"},
}

// examples show each command's payload in error messages.
var examples = map[string]string{
	"suspend":        `{"reason": "..."}`,
	"terminate":      `{"reason": "..."}`,
	"refine-goal":    `{"goal": "...", "focus": "...", "token_budget": 200000}`,
	"add-hypothesis": `{"title": "...", "statement": "...", "rationale": "...", "testable_predictions": ["..."]}`,
	"review":         `{"hypothesis_id": "h-0003", "score": 7.5, "verdict": "accept", "critique": "..."}`,
	"feedback":       `{"toward": "...", "away": "..."}`,
	"set-budget":     `{"token_budget": 500000}`,
}

func example(name string) string {
	if e, ok := examples[name]; ok {
		return e
	}
	return "{}"
}

// ParseCommand decodes a command's payload. Empty input and JSON null mean "no arguments".
// Anything else must be a JSON object holding only the fields the command takes.
func ParseCommand(name string, payload []byte) (Command, error) {
	allowed, ok := fields[name]
	if !ok {
		return Command{}, fmt.Errorf("unknown command %q", name)
	}
	cmd := Command{Name: name}
	payload = bytes.TrimSpace(payload)
	if len(payload) == 0 || string(payload) == "null" {
		return cmd, cmd.check()
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(payload, &raw); err != nil {
		return cmd, fmt.Errorf("%s takes a JSON object such as %s, not %s", name, example(name), abbreviate(string(payload), 60))
	}
	// Sorted, so the same bad payload always gets the same answer (this runs in workflow code).
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains(allowed, k) {
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
	return cmd, cmd.check()
}

func kindOf(field string) string {
	switch field {
	case "token_budget":
		return "a whole number of tokens"
	case "score":
		return "a number from 0 to 10"
	case "testable_predictions":
		return "a list of strings"
	}
	return "a string"
}

func (c *Command) trim() {
	for _, s := range []*string{&c.Reason, &c.Goal, &c.Focus, &c.Title, &c.Statement, &c.Rationale,
		&c.HypothesisID, &c.Verdict, &c.Critique, &c.Toward, &c.Away} {
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
		if c.TokenBudget == nil {
			return fmt.Errorf(`set-budget needs "token_budget", e.g. %s`, example(c.Name))
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
	}
	return nil
}

func abbreviate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
