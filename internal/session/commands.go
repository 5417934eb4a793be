package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

// Command is a scientist's instruction to a running session, decoded from the optional JSON
// object that comes with a signal or an update.
type Command struct {
	Name   string `json:"-"`
	Reason string `json:"reason,omitempty"`
	Goal   string `json:"goal,omitempty"`
	Focus  string `json:"focus,omitempty"`
}

// MaxReasonLength bounds the free text a command carries into the event log.
const MaxReasonLength = 500

// fields lists what each command accepts, so a typo ("reasn") is refused, not ignored.
var fields = map[string][]string{
	"suspend":     {"reason"},
	"resume":      {},
	"refine-goal": {"goal", "focus"},
	"checkpoint":  {},
	"terminate":   {"reason"},
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
		v := raw[k]
		if !slices.Contains(allowed, k) {
			return cmd, fmt.Errorf("%s does not take %q; it takes %s", name, k, example(name))
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return cmd, fmt.Errorf("%s: %q must be a string", name, k)
		}
		switch k {
		case "reason":
			cmd.Reason = strings.TrimSpace(s)
		case "goal":
			cmd.Goal = strings.TrimSpace(s)
		case "focus":
			cmd.Focus = strings.TrimSpace(s)
		}
	}
	return cmd, cmd.check()
}

func (c Command) check() error {
	if utf8.RuneCountInString(c.Reason) > MaxReasonLength {
		return fmt.Errorf("%s: reason is longer than %d characters", c.Name, MaxReasonLength)
	}
	if c.Name == "refine-goal" {
		if c.Goal == "" && c.Focus == "" {
			return fmt.Errorf(`refine-goal needs a new "goal", a "focus", or both`)
		}
		if c.Goal != "" {
			if err := research.ValidateGoal(c.Goal); err != nil {
				return fmt.Errorf("refine-goal: %w", err)
			}
		}
		if n := utf8.RuneCountInString(c.Focus); n > research.MaxFocusLength {
			return fmt.Errorf("refine-goal: focus is %d characters; at most %d", n, research.MaxFocusLength)
		}
	}
	return nil
}

func example(name string) string {
	switch name {
	case "suspend", "terminate":
		return `{"reason": "..."}`
	case "refine-goal":
		return `{"goal": "...", "focus": "..."}`
	}
	return "{}"
}

func abbreviate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
