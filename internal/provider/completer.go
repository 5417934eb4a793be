package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// A Completer sends one prompt to a model and returns its raw text answer. OpenAI and
// Anthropic implement it; LLM turns any Completer into a full cosci model.
//
// A Completer makes exactly one HTTP request per call: it never retries, since Temporal's
// retry policy is the one retry mechanism. Its errors are *AuthError, *RateLimitError,
// *RequestError or *TransientError, or the context's error when the call was cancelled.
type Completer interface {
	Complete(ctx context.Context, req Completion) (Answer, error)
}

// Completion is one request to a model.
type Completion struct {
	Agent  string // "generation", "reflection", ... (for logs and errors)
	System string // a short system prompt
	Prompt string // the rendered prompt (package prompt's)
	// Cache says how much of Prompt the calls of its agent in a round share, and their
	// key: the Completer marks or keys it for the provider's prompt cache.
	Cache      research.Cache
	SchemaName string          // e.g. "hypothesis"
	Schema     json.RawMessage // the answer's JSON schema (package prompt's)
	Repair     string          // non-empty on a repair turn: the previous answer's problem, to be fixed
	Previous   string          // the previous (malformed) answer, on a repair turn
	// Tooling, for a turn that may call tools: the tools (offered through the API's own
	// tool use, unless Final) and the conversation's steps after the prompt.
	Tooling research.Tooling
}

// Answer is a model's raw answer to a Completion.
type Answer struct {
	Text  string
	Usage research.Usage // tokens from the API's usage block; Requests 1; no cost
	// Truncated is set when the model stopped at its output token limit, so Text is
	// likely cut short.
	Truncated bool
	// Calls are the tool calls the model asked for instead of answering (Text is then
	// what it said besides them, if anything).
	Calls []research.ToolCall
	// Reasoning is the thinking before the calls, which some providers (Anthropic's
	// thinking models) must be given back with them on the next step.
	Reasoning []research.Reasoning
}

// systemPrompt is the system prompt LLM sends with every turn; the task is in the prompt.
const systemPrompt = "You are an agent of an AI co-scientist that helps a scientist generate, debate and refine research hypotheses. " +
	"Follow the instructions in the user's message and answer with exactly one JSON object that matches the given schema, with no other text."

// repairText is the message that asks a model to correct its previous answer.
func repairText(problem string) string {
	return "Your previous answer cannot be used: " + problem +
		"\n\nAnswer the original request again with one complete JSON object that matches the schema, and nothing else."
}

// messages are a Completion as a conversation: the prompt, and on a repair turn the
// previous answer and the request to fix it. An empty previous answer is not repeated,
// since providers refuse empty messages.
type message struct {
	assistant bool
	text      string
}

func (c Completion) messages() []message {
	if c.Repair == "" {
		return []message{{text: c.Prompt}}
	}
	if strings.TrimSpace(c.Previous) == "" {
		return []message{{text: c.Prompt + "\n\n" + repairText("it was empty. "+c.Repair)}}
	}
	return []message{{text: c.Prompt}, {assistant: true, text: c.Previous}, {text: repairText(c.Repair)}}
}

// wireName is a tool's name as both APIs accept it ("literature.search" becomes
// "literature__search"); names maps it back.
func wireName(name string) string { return toolName(strings.ReplaceAll(name, ".", "__")) }

// toolNames maps the wire names of a conversation's tools back to their names.
func toolNames(t research.Tooling) map[string]string {
	names := map[string]string{}
	for _, tool := range t.Tools {
		names[wireName(tool.Name)] = tool.Name
	}
	for _, st := range t.Steps {
		for _, c := range st.Calls {
			names[wireName(c.Name)] = c.Name
		}
	}
	return names
}

// unwire is the name of a tool the model called by its wire name; a name the conversation
// does not know is kept, and the caller refuses it like any unknown tool.
func unwire(names map[string]string, wire string) string {
	if n, ok := names[wire]; ok {
		return n
	}
	return wire
}

// arguments are a call's arguments as the APIs want them: a JSON object, "{}" for none.
func arguments(raw []byte) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	return string(raw)
}

// schemaNameRE is what both APIs accept as a response format or tool name.
var schemaNameRE = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// toolName makes a schema name acceptable to both APIs: letters, digits, _ and -, at most
// 64 characters, "answer" when nothing is left.
func toolName(name string) string {
	name = schemaNameRE.ReplaceAllString(name, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" || strings.Trim(name, "_") == "" {
		return "answer"
	}
	return name
}

// checkBaseURL refuses a base URL the SDK could not send a request to, naming the
// environment variable that set it.
func checkBaseURL(provider, envVar, base string) error {
	if base == "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &AuthError{Provider: provider, Message: fmt.Sprintf("base URL %q is not an http(s) URL; fix %s in the worker's environment (e.g. http://localhost:11434/v1), or unset it to use the provider's own", quote(base, ""), envVar)}
	}
	return nil
}

// keyMissing is the error for a provider whose key is not set.
func keyMissing(provider, envVar, hint string) *AuthError {
	return &AuthError{Provider: provider, Message: envVar + " is not set; set it in the worker's environment and restart the worker" + hint}
}

// usageOf is one request's usage: prompt counts every input token, cached (read from the
// prompt cache) and written (into it) included.
func usageOf(prompt, completion, cached, written int64) research.Usage {
	return research.Usage{PromptTokens: int(prompt), CompletionTokens: int(completion), Requests: 1,
		CachedTokens: int(cached), CacheWriteTokens: int(written)}
}

// toolContent is a tool result as the model reads it, from either API: inside a block
// naming its server and tool, which its content cannot close, cut to its server's limit
// (prompt.ToolResult). tools are the turn's, which carry the limits.
func toolContent(tools []research.ToolSpec, r research.ToolResult) string {
	return prompt.ToolResult(r.Name, r.Content, r.IsError, resultLimit(tools, r.Name))
}

// resultLimit is how much of a result of the tool the model reads: its spec's limit, else
// that of another tool of its server (a call the session refused names a tool it was not
// offered), else 0 (prompt's default).
func resultLimit(tools []research.ToolSpec, name string) int {
	server, _, _ := strings.Cut(name, ".")
	limit := 0
	for _, t := range tools {
		switch {
		case t.Name == name:
			return t.MaxResultBytes
		case limit == 0 && strings.HasPrefix(t.Name, server+"."):
			limit = t.MaxResultBytes
		}
	}
	return limit
}
