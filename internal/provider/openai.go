package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// OpenAIDefaultBaseURL is the OpenAI API's own address.
const OpenAIDefaultBaseURL = "https://api.openai.com/v1/"

// OpenAIConfig configures an OpenAI (or OpenAI-compatible) chat model.
type OpenAIConfig struct {
	APIKey string // required; a local server without auth accepts any value
	// BaseURL is the API's address, e.g. http://localhost:11434/v1 for Ollama; "" means
	// OpenAIDefaultBaseURL.
	BaseURL    string
	Model      string       // required, e.g. "gpt-6-luna"
	HTTPClient *http.Client // nil: a new http.Client
	Timeout    time.Duration
	// PromptCacheKey sends each request's cache key (research.Cache.Key) as
	// prompt_cache_key, which OpenAI uses to route requests that share a prefix to where it
	// is cached, and the long cache lifetime a request asks for (research.Cache.Long:
	// prompt_cache_retention or prompt_cache_breakpoint, by model). Off for other
	// OpenAI-compatible servers, which may refuse the fields.
	PromptCacheKey bool
}

// OpenAI is a Completer on the Chat Completions API, through the official SDK. It asks for
// structured output (response_format json_schema), strict when the schema allows it.
type OpenAI struct {
	chat     openai.ChatCompletionService
	files    openai.FileService
	batches  openai.BatchService
	model    string
	key      string // only to remove it from error messages
	cacheKey bool   // send prompt_cache_key and the cache lifetime (OpenAIConfig.PromptCacheKey)
}

// NewOpenAI returns an OpenAI completer. It reads nothing from the environment (it builds
// the SDK's chat completion service without the client's OPENAI_* defaults): the key and
// the base URL come from cfg alone.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	base, hc, err := endpoint{"openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", " (a local server without auth accepts any value)", "gpt-6-luna", OpenAIDefaultBaseURL}.
		check(cfg.APIKey, cfg.Model, cfg.BaseURL, cfg.HTTPClient)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0), // Temporal's retry policy is the one retry mechanism
	}
	if cfg.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(cfg.Timeout))
	}
	return &OpenAI{
		chat: openai.NewChatCompletionService(opts...), files: openai.NewFileService(opts...), batches: openai.NewBatchService(opts...),
		model: cfg.Model, key: cfg.APIKey, cacheKey: cfg.PromptCacheKey,
	}, nil
}

// Complete sends one chat completion request. A turn that may call tools offers them as
// functions, next to the answer's response format: the model calls tools or answers.
func (o *OpenAI) Complete(ctx context.Context, req Completion) (Answer, error) {
	resp, err := o.chat.New(ctx, o.params(req))
	if err != nil {
		return Answer{}, o.classify(ctx, err)
	}
	return openAIAnswer(req, resp), nil
}

// params is the Chat Completions request a Completion is, for a call or a batch.
func (o *OpenAI) params(req Completion) openai.ChatCompletionNewParams {
	var msgs []openai.ChatCompletionMessageParamUnion
	if req.System != "" {
		msgs = append(msgs, openai.SystemMessage(req.System))
	}
	turns := req.messages()
	user := len(msgs) // the prompt's message, where a cache breakpoint may go
	msgs = append(msgs, openai.UserMessage(turns[0].text))
	for _, st := range req.Tooling.Steps {
		msgs = append(msgs, openAIStep(st, req.Tooling.Tools)...)
	}
	if req.Tooling.Final && len(req.Tooling.Steps) > 0 {
		msgs = append(msgs, openai.UserMessage(prompt.FinalStep))
	}
	for _, m := range turns[1:] {
		if m.assistant {
			msgs = append(msgs, openai.AssistantMessage(m.text))
		} else {
			msgs = append(msgs, openai.UserMessage(m.text))
		}
	}
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(o.model), Messages: msgs}
	// OpenAI caches every prompt's prefix by itself; the key keeps a round's calls
	// together, and a long lifetime keeps them past a batch's wait (openAICache).
	if o.cacheKey && req.Cache.Key != "" {
		params.PromptCacheKey = openai.String(req.Cache.Key)
	}
	if o.cacheKey {
		openAICache(&params, o.model, req.Cache, user)
	}
	if len(req.Schema) > 0 {
		schema, strict := strictSchema(req.Schema)
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:   toolName(req.SchemaName),
					Strict: openai.Bool(strict),
					Schema: schema,
				},
			},
		}
	}
	for _, t := range req.Tooling.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema == nil {
			schema = map[string]any{"type": "object"}
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        wireName(t.Name),
			Description: openai.String(prompt.ToolDescription(t.Name, t.Description)),
			Parameters:  shared.FunctionParameters(schema),
		}))
	}
	if len(params.Tools) > 0 && (req.Tooling.Final || req.Repair != "") {
		// The conversation names the tools, so they stay listed; the model may not call one.
		params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
	}
	return params
}

// openAIAnswer reads a chat completion's answer: its text or tool calls, and its usage
// (cache reads and, on models that report them, writes included).
func openAIAnswer(req Completion, resp *openai.ChatCompletion) Answer {
	d := resp.Usage.PromptTokensDetails
	a := Answer{Usage: usageOf(resp.Usage.PromptTokens, resp.Usage.CompletionTokens, d.CachedTokens, d.CacheWriteTokens)}
	if len(resp.Choices) > 0 {
		c := resp.Choices[0]
		a.Text = c.Message.Content
		if a.Text == "" && c.Message.Refusal != "" {
			a.Text = "(refused) " + c.Message.Refusal
		}
		a.Truncated = c.FinishReason == "length"
		names := toolNames(req.Tooling)
		for _, tc := range c.Message.ToolCalls {
			if tc.Type != "function" {
				continue
			}
			a.Calls = append(a.Calls, research.ToolCall{ID: tc.ID, Name: unwire(names, tc.Function.Name), Arguments: json.RawMessage(arguments([]byte(tc.Function.Arguments)))})
		}
	}
	return a
}

// openAIStep is one step of a tool-using turn as Chat Completions messages: the
// assistant's message with its tool calls, then one tool message per result, each in its
// block (toolContent).
func openAIStep(st research.ToolStep, tools []research.ToolSpec) []openai.ChatCompletionMessageParamUnion {
	asst := openai.ChatCompletionAssistantMessageParam{}
	if st.Text != "" {
		asst.Content.OfString = openai.String(st.Text)
	}
	for _, c := range st.Calls {
		asst.ToolCalls = append(asst.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       c.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: wireName(c.Name), Arguments: arguments(c.Arguments)},
			},
		})
	}
	msgs := []openai.ChatCompletionMessageParamUnion{{OfAssistant: &asst}}
	for _, r := range st.Results {
		msgs = append(msgs, openai.ToolMessage(toolContent(tools, r), r.CallID))
	}
	return msgs
}

func (o *OpenAI) classify(ctx context.Context, err error) error {
	return classifyOpenAI(ctx, "openai", "OPENAI_API_KEY", o.key, err)
}

// classifyOpenAI classifies an error of the OpenAI SDK, for the provider name whose key
// (held in keyVar) is key: chat completions, batches and embeddings, OpenAI's or a
// compatible server's.
func classifyOpenAI(ctx context.Context, name, keyVar, key string, err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		f := apiFailure{status: apiErr.StatusCode, code: apiErr.Code, kind: apiErr.Type, text: apiErr.Message}
		if apiErr.Response != nil {
			f.header = apiErr.Response.Header
		}
		return classify(name, keyVar, key, f, err)
	}
	return classifyOther(ctx, name, key, err)
}

// strictKeywords are the JSON schema keywords kept in a strict schema. Strict mode
// supports a subset of JSON schema; length limits and numeric bounds (which package
// prompt's parsers enforce anyway, and which the prompt states) are left out rather than
// risk a refused request.
var strictKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "description": true, "anyOf": true, "$ref": true,
	"$defs": true, "const": true, "title": true,
}

// strictSchema returns the schema to send and whether strict mode can take it: strict
// mode wants every object closed (additionalProperties false) with every property
// required. For such a schema it returns a copy without the keywords strict mode may
// refuse, keeping the properties' order (the order the model writes them in); for any
// other, the schema as it is, for a non-strict request.
func strictSchema(schema json.RawMessage) (json.RawMessage, bool) {
	node, err := decodeOrdered(schema)
	if err != nil {
		return schema, false
	}
	if !closed(node) {
		return schema, false
	}
	out, err := json.Marshal(prune(node))
	if err != nil {
		return schema, false
	}
	return out, true
}

// closed reports whether every object schema in n forbids additional properties and
// requires all its properties.
func closed(n any) bool {
	obj, ok := n.(*ordered)
	if !ok {
		return true
	}
	if t, _ := obj.get("type").(string); t == "object" {
		if ap, ok := obj.get("additionalProperties").(bool); !ok || ap {
			return false
		}
		props, _ := obj.get("properties").(*ordered)
		req := map[string]bool{}
		if rs, ok := obj.get("required").([]any); ok {
			for _, r := range rs {
				if s, ok := r.(string); ok {
					req[s] = true
				}
			}
		}
		if props != nil {
			for _, k := range props.keys {
				if !req[k] {
					return false
				}
			}
		}
	}
	for _, k := range []string{"properties", "$defs"} {
		if m, ok := obj.get(k).(*ordered); ok {
			for _, key := range m.keys {
				if !closed(m.vals[key]) {
					return false
				}
			}
		}
	}
	if !closed(obj.get("items")) {
		return false
	}
	if as, ok := obj.get("anyOf").([]any); ok {
		for _, a := range as {
			if !closed(a) {
				return false
			}
		}
	}
	return true
}

// prune drops the keywords strict mode may refuse from a schema node, recursively.
func prune(n any) any {
	obj, ok := n.(*ordered)
	if !ok {
		return n
	}
	out := &ordered{vals: map[string]any{}}
	for _, k := range obj.keys {
		if !strictKeywords[k] {
			continue
		}
		v := obj.vals[k]
		switch k {
		case "properties", "$defs":
			if m, ok := v.(*ordered); ok {
				pm := &ordered{vals: map[string]any{}}
				for _, key := range m.keys {
					pm.set(key, prune(m.vals[key]))
				}
				v = pm
			}
		case "items":
			v = prune(v)
		case "anyOf":
			if as, ok := v.([]any); ok {
				ps := make([]any, len(as))
				for i, a := range as {
					ps[i] = prune(a)
				}
				v = ps
			}
		}
		out.set(k, v)
	}
	return out
}

// ordered is a JSON object that remembers the order of its keys.
type ordered struct {
	keys []string
	vals map[string]any
}

func (o *ordered) get(k string) any { return o.vals[k] }

func (o *ordered) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *ordered) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// decodeOrdered decodes JSON with objects as *ordered, arrays as []any and numbers as
// json.Number.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the schema")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &ordered{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}
