package provider

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// AnthropicDefaultBaseURL is the Anthropic API's own address.
const AnthropicDefaultBaseURL = "https://api.anthropic.com/"

// AnthropicDefaultMaxTokens is the output limit of a turn when AnthropicConfig names none.
const AnthropicDefaultMaxTokens = 4096

// AnthropicConfig configures an Anthropic model.
type AnthropicConfig struct {
	APIKey     string       // required
	BaseURL    string       // "" means AnthropicDefaultBaseURL
	Model      string       // required, e.g. "claude-haiku-4-5"
	HTTPClient *http.Client // nil: a new http.Client
	Timeout    time.Duration
	MaxTokens  int // the output limit of a turn; 0 means AnthropicDefaultMaxTokens
	// StructuredOutput asks for the answer as structured output (output_config.format)
	// instead of through a forced tool. nil decides by the model: the models that refuse a
	// forced tool choice (StructuredOnly) get structured output.
	StructuredOutput *bool
}

// StructuredOnly says whether a Claude model refuses a forced tool choice, so that its
// answer must come as structured output: the 5.5 models and the Fable and Mythos ones,
// which always think (a forced tool choice is a 400 on them).
func StructuredOnly(model string) bool {
	for _, p := range []string{"claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-fable", "claude-mythos"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// Anthropic is a Completer on the Messages API, through the official SDK. It gets
// structured output through tool use: one tool, named after the schema, whose input schema
// is the answer's schema, and a tool choice that forces it; the answer is the tool call's
// input.
type Anthropic struct {
	client     anthropic.Client
	model      string
	maxTokens  int
	structured bool   // the answer as structured output, not through a forced tool
	key        string // only to remove it from error messages
}

// NewAnthropic returns an Anthropic completer. It reads nothing from the environment or
// the SDK's profile files: the key and the base URL come from cfg alone.
func NewAnthropic(cfg AnthropicConfig) (*Anthropic, error) {
	base, hc, err := endpoint{"anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "", "claude-haiku-4-5", AnthropicDefaultBaseURL}.
		check(cfg.APIKey, cfg.Model, cfg.BaseURL, cfg.HTTPClient)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(), // no ANTHROPIC_* variables, profiles or federation
		option.WithHTTPClient(hc),
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0), // Temporal's retry policy is the one retry mechanism
	}
	if cfg.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(cfg.Timeout))
	}
	maxTokens := cfg.MaxTokens
	if maxTokens <= 0 {
		maxTokens = AnthropicDefaultMaxTokens
	}
	structured := StructuredOnly(cfg.Model)
	if cfg.StructuredOutput != nil {
		structured = *cfg.StructuredOutput
	}
	return &Anthropic{client: anthropic.NewClient(opts...), model: cfg.Model, maxTokens: maxTokens, key: cfg.APIKey, structured: structured}, nil
}

// Complete sends one Messages request. The answer comes through a tool named after the
// schema; a turn that may call tools offers them beside it, and the model must call one
// of them: a tool, or the answer.
func (a *Anthropic) Complete(ctx context.Context, req Completion) (Answer, error) {
	params, err := a.params(req)
	if err != nil {
		return Answer{}, err
	}
	msg, err := a.client.Messages.New(ctx, params)
	if err != nil {
		return Answer{}, a.classify(ctx, err)
	}
	return anthropicAnswer(req, msg), nil
}

// params is the Messages request a Completion is, for a call or a batch.
func (a *Anthropic) params(req Completion) (anthropic.MessageNewParams, error) {
	turns := req.messages()
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(promptBlocks(turns[0].text, req.Cache)...)}
	for i, st := range req.Tooling.Steps {
		final := req.Tooling.Final && i == len(req.Tooling.Steps)-1
		msgs = append(msgs, anthropicStep(st, final, req.Tooling.Tools)...)
	}
	if req.Cache.Breakpoints && len(req.Tooling.Steps) > 0 {
		// The conversation so far is the next step's prefix: a breakpoint on its last tool
		// result lets that step read it from the cache.
		markLastResult(msgs[len(msgs)-1].Content, req.Cache.Long)
	}
	for _, m := range turns[1:] {
		if m.assistant {
			msgs = append(msgs, anthropic.NewAssistantMessage(anthropic.NewTextBlock(m.text)))
		} else {
			msgs = append(msgs, anthropic.NewUserMessage(anthropic.NewTextBlock(m.text)))
		}
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(a.model),
		MaxTokens: int64(a.maxTokens),
		Messages:  msgs,
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	name := toolName(req.SchemaName)
	for _, t := range req.Tooling.Tools {
		schema, err := toolSchema(t.InputSchema)
		if err != nil {
			schema = anthropic.ToolInputSchemaParam{}
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name: wireName(t.Name), Description: anthropic.String(prompt.ToolDescription(t.Name, t.Description)), InputSchema: schema,
		}})
	}
	mayCall := mayCallTools(req)
	if a.structured {
		return a.structuredParams(params, req, mayCall)
	}
	if len(req.Schema) > 0 {
		schema, err := toolSchema(req.Schema)
		if err != nil {
			return params, &RequestError{Provider: "anthropic", Message: "the " + req.Agent + " schema is not a JSON object schema (" + err.Error() + "); this is a bug in cosci"}
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name:        name,
			Description: anthropic.String("Give your answer: call this tool once, with the complete answer as its input."),
			InputSchema: schema,
		}})
		if mayCall {
			// A tool or the answer, never prose.
			params.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
		} else {
			params.ToolChoice = anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{
				Name:                   name,
				DisableParallelToolUse: anthropic.Bool(true),
			}}
		}
	}
	return params, nil
}

// structuredParams asks for the answer as structured output: the answer's schema, pruned
// to what structured output takes (as OpenAI's strict mode), in output_config.format; the
// model answers in text, or calls one of the turn's tools when it may.
func (a *Anthropic) structuredParams(params anthropic.MessageNewParams, req Completion, mayCall bool) (anthropic.MessageNewParams, error) {
	if len(req.Schema) > 0 {
		pruned, _ := strictSchema(req.Schema)
		var schema map[string]any
		if err := json.Unmarshal(pruned, &schema); err != nil {
			return params, &RequestError{Provider: "anthropic", Message: "the " + req.Agent + " schema is not a JSON object (" + err.Error() + "); this is a bug in cosci"}
		}
		params.OutputConfig = anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schema}}
	}
	switch {
	case len(params.Tools) > 0 && mayCall:
		params.ToolChoice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}
	case len(params.Tools) > 0:
		// The conversation names the tools, so they stay listed; the model may not call one.
		params.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
	}
	return params, nil
}

// mayCallTools says whether a turn lets the model call a tool rather than answer.
func mayCallTools(req Completion) bool {
	return len(req.Tooling.Tools) > 0 && !req.Tooling.Final && req.Repair == ""
}

// anthropicAnswer reads a message's answer: the input of the answer tool, the tool calls
// the model asked for instead, or its text; and its usage, cache reads and writes included.
func anthropicAnswer(req Completion, msg *anthropic.Message) Answer {
	name, mayCall := toolName(req.SchemaName), mayCallTools(req)
	u := msg.Usage
	ans := Answer{
		Usage:     usageOf(u.InputTokens+u.CacheCreationInputTokens+u.CacheReadInputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens),
		Truncated: msg.StopReason == anthropic.StopReasonMaxTokens,
	}
	// The part of the write made with the 1-hour lifetime, billed at its own price.
	ans.Usage.CacheWriteLongTokens = int(min(u.CacheCreation.Ephemeral1hInputTokens, u.CacheCreationInputTokens))
	names := toolNames(req.Tooling)
	var text []string
	answered := false
	for _, b := range msg.Content {
		switch b.Type {
		case "tool_use":
			switch {
			case b.Name == name || (len(req.Schema) == 0 && !mayCall):
				if !answered {
					ans.Text, answered = string(b.Input), true
				}
			case mayCall:
				ans.Calls = append(ans.Calls, research.ToolCall{ID: b.ID, Name: unwire(names, b.Name), Arguments: json.RawMessage(arguments(b.Input))})
			}
		case "text":
			text = append(text, b.Text)
		case "thinking":
			ans.Reasoning = append(ans.Reasoning, research.Reasoning{Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			ans.Reasoning = append(ans.Reasoning, research.Reasoning{Redacted: b.Data})
		}
	}
	if answered {
		ans.Calls = nil // the answer ends the turn, whatever else the model asked for
		return ans
	}
	ans.Text = strings.Join(text, "\n") // with no call, the parser may still find the object in the text
	return ans
}

// promptBlocks is the prompt as the first user message's text blocks: with a cache
// breakpoint at the end of the prefix the calls of its agent in a round share, when the
// turn asks for one. Anthropic caches nothing unmarked; a prefix shorter than the model's
// minimum is not cached and costs nothing extra.
func promptBlocks(text string, c research.Cache) []anthropic.ContentBlockParamUnion {
	if !c.Breakpoints || c.Prefix <= 0 || c.Prefix > len(text) {
		return []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(text)}
	}
	shared := anthropic.NewTextBlock(text[:c.Prefix])
	*shared.GetCacheControl() = breakpoint(c.Long)
	if c.Prefix == len(text) {
		return []anthropic.ContentBlockParamUnion{shared}
	}
	return []anthropic.ContentBlockParamUnion{shared, anthropic.NewTextBlock(text[c.Prefix:])}
}

// markLastResult puts a cache breakpoint on the last tool result among blocks (not on the
// instruction to answer that may follow it, which the next step would not repeat).
func markLastResult(blocks []anthropic.ContentBlockParamUnion, long bool) {
	for i := len(blocks) - 1; i >= 0; i-- {
		if blocks[i].OfToolResult != nil {
			*blocks[i].GetCacheControl() = breakpoint(long)
			return
		}
	}
}

// breakpoint is a cache_control breakpoint: the default 5-minute lifetime, or with long
// (research.Cache.Long) ttl "1h", written at twice the input price instead of 1.25 times,
// for a prefix read again after more than 5 minutes (a batch's requests). A request's
// breakpoints all take the one lifetime, so the API's rule that longer lifetimes come
// first always holds.
func breakpoint(long bool) anthropic.CacheControlEphemeralParam {
	cc := anthropic.NewCacheControlEphemeralParam()
	if long {
		cc.TTL = anthropic.CacheControlEphemeralTTLTTL1h
	}
	return cc
}

// anthropicStep is one step of a tool-using turn as Messages: the assistant's text and
// tool_use blocks, then a user message of tool_result blocks, each in its block
// (toolContent), and, when the turn's tool budget is spent, the instruction to answer.
func anthropicStep(st research.ToolStep, final bool, tools []research.ToolSpec) []anthropic.MessageParam {
	var asst []anthropic.ContentBlockParamUnion
	// A thinking model's thoughts go back first, as it gave them: the API refuses a tool
	// call whose thinking is missing.
	for _, r := range st.Reasoning {
		if r.Redacted != "" {
			asst = append(asst, anthropic.NewRedactedThinkingBlock(r.Redacted))
		} else {
			asst = append(asst, anthropic.NewThinkingBlock(r.Signature, r.Text))
		}
	}
	if st.Text != "" {
		asst = append(asst, anthropic.NewTextBlock(st.Text))
	}
	for _, c := range st.Calls {
		asst = append(asst, anthropic.NewToolUseBlock(c.ID, json.RawMessage(arguments(c.Arguments)), wireName(c.Name)))
	}
	var results []anthropic.ContentBlockParamUnion
	for _, r := range st.Results {
		results = append(results, anthropic.NewToolResultBlock(r.CallID, toolContent(tools, r), r.IsError))
	}
	if final {
		results = append(results, anthropic.NewTextBlock(prompt.FinalStep))
	}
	return []anthropic.MessageParam{anthropic.NewAssistantMessage(asst...), anthropic.NewUserMessage(results...)}
}

// toolSchema turns an answer's JSON schema into a tool's input schema, keeping the order
// of its properties.
func toolSchema(schema json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil {
		return anthropic.ToolInputSchemaParam{}, err
	}
	var typ string
	if t, ok := top["type"]; ok {
		if err := json.Unmarshal(t, &typ); err != nil || typ != "object" {
			return anthropic.ToolInputSchemaParam{}, errors.New(`its "type" is not "object"`)
		}
	}
	p := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
	for k, v := range top {
		switch k {
		case "type":
		case "properties":
			p.Properties = v
		case "required":
			if err := json.Unmarshal(v, &p.Required); err != nil {
				return anthropic.ToolInputSchemaParam{}, err
			}
		default:
			p.ExtraFields[k] = v
		}
	}
	return p, nil
}

func (a *Anthropic) classify(ctx context.Context, err error) error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		f := apiFailure{status: apiErr.StatusCode, kind: string(apiErr.Type())}
		var body struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(apiErr.RawJSON()), &body) == nil {
			f.text = body.Error.Message
		}
		if apiErr.Response != nil {
			f.header = apiErr.Response.Header
			if f.status == 0 {
				f.status = apiErr.Response.StatusCode
			}
		}
		return classify("anthropic", "ANTHROPIC_API_KEY", a.key, f, err)
	}
	return classifyOther(ctx, "anthropic", a.key, err)
}
