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
)

// AnthropicDefaultBaseURL is the Anthropic API's own address.
const AnthropicDefaultBaseURL = "https://api.anthropic.com/"

// AnthropicDefaultMaxTokens is the output limit of a turn when AnthropicConfig names none.
const AnthropicDefaultMaxTokens = 4096

// AnthropicConfig configures an Anthropic model.
type AnthropicConfig struct {
	APIKey     string       // required
	BaseURL    string       // "" means AnthropicDefaultBaseURL
	Model      string       // required, e.g. "claude-3-5-haiku-latest"
	HTTPClient *http.Client // nil: a new http.Client
	Timeout    time.Duration
	MaxTokens  int // the output limit of a turn; 0 means AnthropicDefaultMaxTokens
}

// Anthropic is a Completer on the Messages API, through the official SDK. It gets
// structured output through tool use: one tool, named after the schema, whose input schema
// is the answer's schema, and a tool choice that forces it; the answer is the tool call's
// input.
type Anthropic struct {
	client    anthropic.Client
	model     string
	maxTokens int
	key       string // only to remove it from error messages
}

// NewAnthropic returns an Anthropic completer. It reads nothing from the environment or
// the SDK's profile files: the key and the base URL come from cfg alone.
func NewAnthropic(cfg AnthropicConfig) (*Anthropic, error) {
	base, hc, err := endpoint{"anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "", "claude-3-5-haiku-latest", AnthropicDefaultBaseURL}.
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
	return &Anthropic{client: anthropic.NewClient(opts...), model: cfg.Model, maxTokens: maxTokens, key: cfg.APIKey}, nil
}

// Complete sends one Messages request.
func (a *Anthropic) Complete(ctx context.Context, req Completion) (Answer, error) {
	var msgs []anthropic.MessageParam
	for _, m := range req.messages() {
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
	if len(req.Schema) > 0 {
		schema, err := toolSchema(req.Schema)
		if err != nil {
			return Answer{}, &RequestError{Provider: "anthropic", Message: "the " + req.Agent + " schema is not a JSON object schema (" + err.Error() + "); this is a bug in cosci"}
		}
		params.Tools = []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name:        name,
			Description: anthropic.String("Give your answer: call this tool once, with the complete answer as its input."),
			InputSchema: schema,
		}}}
		params.ToolChoice = anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{
			Name:                   name,
			DisableParallelToolUse: anthropic.Bool(true),
		}}
	}
	msg, err := a.client.Messages.New(ctx, params)
	if err != nil {
		return Answer{}, a.classify(ctx, err)
	}
	u := msg.Usage
	ans := Answer{
		Usage:     usageOf(u.InputTokens+u.CacheCreationInputTokens+u.CacheReadInputTokens, u.OutputTokens),
		Truncated: msg.StopReason == anthropic.StopReasonMaxTokens,
	}
	var text []string
	for _, b := range msg.Content {
		switch b.Type {
		case "tool_use":
			if ans.Text == "" && (b.Name == name || len(req.Schema) == 0) {
				ans.Text = string(b.Input)
			}
		case "text":
			text = append(text, b.Text)
		}
	}
	if ans.Text == "" { // no tool call: the parser may still find the object in the text
		ans.Text = strings.Join(text, "\n")
	}
	return ans, nil
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
