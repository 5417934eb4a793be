package research

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Tools: an agent turn may call tools (a literature search, a fetch by id) served by the
// MCP servers the workers connect to. A turn that may is a loop of steps: the model
// answers, or asks for tool calls whose results it reads at the next step, until it
// answers or its tool budget is spent and it must.

// A tool's name, as a session names it, is its server's name and the server's own name of
// the tool, joined by a dot: "literature.search". Server names are lower-case letters,
// digits, "_" and "-"; tool names are what the server says.
var (
	serverNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)
	toolNameRE   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.\-/]{0,99}$`)
)

// CheckServerName refuses a name a tool server cannot have.
func CheckServerName(name string) error {
	if !serverNameRE.MatchString(name) {
		return fmt.Errorf("tool server name %q: use lower-case letters, digits, '_' and '-' (at most 40, starting with a letter or digit)", name)
	}
	return nil
}

// SplitTool splits "server.tool" into its server and the server's tool name. "server.*"
// names every tool of the server (tool "*").
func SplitTool(name string) (server, tool string, err error) {
	server, tool, ok := strings.Cut(name, ".")
	switch {
	case !ok || tool == "":
		return "", "", fmt.Errorf("%q is not a tool name: write server.tool, e.g. literature.search (or literature.* for every tool of a server)", name)
	case CheckServerName(server) != nil:
		return "", "", fmt.Errorf("%q: %v", name, CheckServerName(server))
	case tool != "*" && !toolNameRE.MatchString(tool):
		return "", "", fmt.Errorf("%q: the tool's name after the server's may hold letters, digits, '_', '-', '.' and '/'", name)
	}
	return server, tool, nil
}

// ToolSpec is a tool as a model is offered it.
type ToolSpec struct {
	Name        string          `json:"name"` // server.tool
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"` // a JSON schema object
	// MaxResultBytes is how much of one of the tool's results the model reads (its
	// server's max_result_bytes; 0: prompt.DefaultMaxResultBytes). The audit trail keeps
	// the whole result.
	MaxResultBytes int `json:"max_result_bytes,omitempty"`
}

// ToolCall is a model's request to call a tool.
type ToolCall struct {
	ID        string          `json:"id"`   // the model's own id for the call, to answer it by
	Name      string          `json:"name"` // server.tool
	Arguments json.RawMessage `json:"arguments"`
}

// ToolResult is what a tool call gave back, as the model reads it.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	// Source is the digest of the audit trail's record of this result ("" for a call that
	// never reached its tool: refused, over budget, failed past its retries).
	Source string `json:"source,omitempty"`
}

// ToolStep is one step of a tool-using turn: what the model said and the calls it asked
// for, then the results of those calls.
type ToolStep struct {
	Text    string       `json:"text,omitempty"`
	Calls   []ToolCall   `json:"calls"`
	Results []ToolResult `json:"results"`
	// Reasoning is what the model thought before its calls, as a provider that must be
	// given it back wants it (Anthropic's thinking blocks, signed): none from most models.
	Reasoning []Reasoning `json:"reasoning,omitempty"`
}

// Reasoning is one block of a model's thinking, kept only to be sent back as it came.
type Reasoning struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"` // an encrypted block: its data
}

// Tooling is what a tool-using turn's request carries besides its task: the tools it may
// call now, and the conversation so far after its prompt.
type Tooling struct {
	Tools []ToolSpec `json:"tools,omitempty"` // none on a turn without tools
	Steps []ToolStep `json:"steps,omitempty"`
	// Final says the turn's tool budget is spent: answer now, without calling a tool.
	// Tools are still listed, since the conversation names them.
	Final bool `json:"final,omitempty"`
}

// On says whether the turn uses tools at all (now or at an earlier step).
func (t Tooling) On() bool { return len(t.Tools) > 0 || len(t.Steps) > 0 }

// Results are every tool result of the conversation so far, in order.
func (t Tooling) Results() []ToolResult {
	var rs []ToolResult
	for _, s := range t.Steps {
		rs = append(rs, s.Results...)
	}
	return rs
}

// Step is a model's answer at one step of a tool-using turn: tool calls to make, or, when
// there are none, the turn's answer.
type Step[T any] struct {
	Text      string      // what the model said besides its calls (kept in the conversation)
	Calls     []ToolCall  // calls to make before the next step
	Reasoning []Reasoning // the thinking before the calls, for a provider that wants it back
	Answer    T           // the answer, when Calls is empty
}

// Limits on tool use. A session's own settings are its config's.
const (
	DefaultToolCallsPerTurn = 6
	MaxToolCallsPerTurn     = 50
	// DefaultToolCallsPerHypothesis sizes a session's tool budget when its config sets
	// none: this many calls for each hypothesis it may make (max_hypotheses).
	DefaultToolCallsPerHypothesis = 10
	MaxToolCallsPerSession        = 1_000_000
	MaxSessionTools               = 64
	// DefaultApprovalTimeout is how long a call waits for the scientist's approval before
	// it is refused for them, so an unanswered question cannot hold a session forever.
	DefaultApprovalTimeout = 24 * time.Hour
	MaxApprovalTimeout     = 30 * 24 * time.Hour
)

// ToolTurnBudget is how many tool calls one turn may make.
func (c Config) ToolTurnBudget() int {
	if c.ToolCallsPerTurn > 0 {
		return c.ToolCallsPerTurn
	}
	return DefaultToolCallsPerTurn
}

// ToolSessionBudget is how many tool calls the whole session may make.
func (c Config) ToolSessionBudget() int {
	if c.ToolCallsPerSession > 0 {
		return c.ToolCallsPerSession
	}
	return min(MaxToolCallsPerSession, DefaultToolCallsPerHypothesis*max(1, c.MaxHypotheses))
}

// ApprovalWait is how long a call waits for the scientist's approval.
func (c Config) ApprovalWait() time.Duration {
	if c.ApprovalTimeout > 0 {
		return time.Duration(c.ApprovalTimeout)
	}
	return DefaultApprovalTimeout
}

// Allows says whether the session may call the tool (server.tool).
func (c Config) Allows(tool string) bool { return matchTool(c.Tools, tool) }

// NeedsApproval says whether each call of the tool waits for the scientist.
func (c Config) NeedsApproval(tool string) bool { return matchTool(c.ApproveTools, tool) }

// matchTool says whether a list of tool names ("server.tool" or "server.*") covers tool.
func matchTool(names []string, tool string) bool {
	server, _, _ := strings.Cut(tool, ".")
	return slices.Contains(names, tool) || slices.Contains(names, server+".*")
}

// validateTools checks the tool settings of a configuration.
func (c Config) validateTools() error {
	if len(c.Tools) > MaxSessionTools {
		return &FieldError{"config.tools", fmt.Sprintf("lists %d tools; at most %d", len(c.Tools), MaxSessionTools)}
	}
	seen := map[string]bool{}
	for _, t := range c.Tools {
		if _, _, err := SplitTool(t); err != nil {
			return &FieldError{"config.tools", err.Error()}
		}
		if seen[t] {
			return &FieldError{"config.tools", fmt.Sprintf("%q is listed twice", t)}
		}
		seen[t] = true
	}
	for _, t := range c.ApproveTools {
		if _, _, err := SplitTool(t); err != nil {
			return &FieldError{"config.approve_tools", err.Error()}
		}
		if server, tool, _ := SplitTool(t); !matchTool(c.Tools, t) && (tool != "*" || !slices.ContainsFunc(c.Tools, func(n string) bool { return strings.HasPrefix(n, server+".") })) {
			return &FieldError{"config.approve_tools", fmt.Sprintf("%q is not among the session's tools (config.tools); a tool the session cannot call needs no approval", t)}
		}
	}
	switch {
	case c.ToolCallsPerTurn < 0 || c.ToolCallsPerTurn > MaxToolCallsPerTurn:
		return &FieldError{"config.tool_calls_per_turn", fmt.Sprintf("is %d; from 1 to %d (0: the default, %d)", c.ToolCallsPerTurn, MaxToolCallsPerTurn, DefaultToolCallsPerTurn)}
	case c.ToolCallsPerSession < 0 || c.ToolCallsPerSession > MaxToolCallsPerSession:
		return &FieldError{"config.tool_calls_per_session", fmt.Sprintf("is %d; from 1 to %d (0: the default, %d per hypothesis)", c.ToolCallsPerSession, MaxToolCallsPerSession, DefaultToolCallsPerHypothesis)}
	case c.ApprovalTimeout < 0 || (c.ApprovalTimeout > 0 && time.Duration(c.ApprovalTimeout) < time.Minute) || time.Duration(c.ApprovalTimeout) > MaxApprovalTimeout:
		return &FieldError{"config.approval_timeout", fmt.Sprintf("is %s; from 1m to %s (0: the default, %s)", c.ApprovalTimeout, Duration(MaxApprovalTimeout), Duration(DefaultApprovalTimeout))}
	}
	return nil
}
