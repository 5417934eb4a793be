package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Anthropic: the Messages API.

// Anthropic adds a system prompt of its own to a request with tools, and bills it as input:
// 346 tokens when tool_choice is auto or none, 313 when it is any or tool (the figures
// Anthropic publishes for its Claude 4 models). The fake counts them, after the system
// prompt: changing tool_choice keeps the tools and system caches, as the API documents.
const (
	toolPromptAuto = 346
	toolPromptAny  = 313
)

type messageRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	System    json.RawMessage `json:"system"` // a string or an array of text blocks
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or an array of content blocks
	} `json:"messages"`
	Tools      []toolDef `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	CacheControl *cacheControl `json:"cache_control"` // automatic caching: a breakpoint on the last block
	Stream       bool          `json:"stream"`
	// OutputConfig.Format is structured output: the answer's schema, answered in text.
	OutputConfig *struct {
		Format *struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
}

// thinkingOnly are the models that always think and so refuse a forced tool choice (a
// 400, as the API's migration guides for them say): their answers come as structured
// output.
var thinkingOnly = []string{"claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-fable", "claude-mythos"}

func alwaysThinks(model string) bool {
	for _, p := range thinkingOnly {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

type cacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl"`
}

type toolDef struct {
	Type         string          `json:"type"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control"`
}

type contentBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"` // a tool result's: a string or text blocks
	CacheControl *cacheControl   `json:"cache_control"`
}

// blocks reads content that is a string or an array of blocks; raw are the blocks' JSON.
func blocks(content json.RawMessage) (bs []contentBlock, raw []json.RawMessage, err error) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return []contentBlock{{Type: "text", Text: s}}, []json.RawMessage{content}, nil
	}
	if err := json.Unmarshal(content, &bs); err != nil {
		return nil, nil, fmt.Errorf("content is neither a string nor an array of content blocks")
	}
	_ = json.Unmarshal(content, &raw)
	return bs, raw, nil
}

// text is what a block counts as: its text, a tool call's name and input, a tool result's
// content, any other block's JSON.
func (b contentBlock) text(raw json.RawMessage) string {
	switch b.Type {
	case "text":
		return b.Text
	case "tool_use":
		return b.Name + string(b.Input)
	case "tool_result":
		inner, _, err := blocks(b.Content)
		if err != nil || len(b.Content) == 0 {
			return string(b.Content)
		}
		var parts []string
		for _, x := range inner {
			parts = append(parts, x.Text)
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}

func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Anthropic-Version") == "" {
		s.refused()
		writeAnthropicError(w, *badRequest("anthropic-version: header is required"))
		return
	}
	s.answerTurn(w, r, "message", writeAnthropicError, "Request-Id", func(body []byte) (map[string]any, *apiError) {
		return s.message(body, "", "", true, moment{})
	})
}

// message answers one Messages request (ordinary, or one of a batch): the message, or the
// error the API would give.
func (s *Server) message(body []byte, batchID, customID string, cache bool, run moment) (map[string]any, *apiError) {
	var req messageRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.problem("a message request that is not JSON: %v", err)
		return nil, badRequest("the request body is not valid JSON: %v", err)
	}
	p, e := anthropicTurn(req, s.opts.AnthropicTokenScale)
	if e != nil {
		s.refused()
		return nil, e
	}
	t := p.turn
	t.BatchID, t.CustomID = batchID, customID
	total := p.blocks[len(p.blocks)-1].end
	var use cacheUse
	if cache {
		now := run.now(s.clock)
		s.mu.Lock()
		s.claude.lag = run.lag
		use = s.claude.anthropic(p.blocks, s.minimum(req.Model), now)
		s.claude.lag = 0
		s.mu.Unlock()
	}
	t.PromptTokens = total
	rep := s.reply(t, s.opts.AnthropicTokenScale)
	s.answered(t, Usage{Requests: 1, Input: total, CacheRead: use.read, CacheWrite: use.written(), CacheWriteLong: use.write1, Output: rep.OutputTokens, Hits: hit(use.read)}, len(rep.Calls))

	var content []any
	stop := "end_turn"
	switch {
	case len(rep.Calls) > 0:
		stop = "tool_use"
		for i, c := range rep.Calls {
			content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_fake_%d_%d", t.Seq, i), "name": c.Name, "input": json.RawMessage(c.Arguments)})
		}
	case p.answerTool != "" && isObject(rep.Text):
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_fake_%d", t.Seq), "name": p.answerTool, "input": json.RawMessage(rep.Text)})
	default: // no answer tool, or a reply that is not an object: the model wrote prose
		content = append(content, map[string]any{"type": "text", "text": rep.Text})
	}
	tier := "standard"
	if batchID != "" {
		tier = "batch"
	}
	return map[string]any{
		"id": s.newID("msg_fake"), "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens":                total - use.read - use.written(),
			"cache_creation_input_tokens": use.written(),
			"cache_read_input_tokens":     use.read,
			"cache_creation":              map[string]any{"ephemeral_5m_input_tokens": use.write5m, "ephemeral_1h_input_tokens": use.write1},
			"output_tokens":               rep.OutputTokens,
			"service_tier":                tier,
		},
	}, nil
}

func isObject(text string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal([]byte(text), &m) == nil
}

// parsedMessage is a checked Messages request: the turn, the answer tool's name ("" when
// none), and its blocks as the cache sees them (never empty).
type parsedMessage struct {
	turn       Turn
	answerTool string
	blocks     []block
}

// anthropicTurn checks a request as the API would, and lays it out in the order Claude
// processes it: the tools, the system prompt, the tool-use prompt for the tool_choice,
// then the messages' blocks. Each block's key hashes the model and everything up to it, so
// a change anywhere invalidates what follows, and nothing before. Text counts are
// multiplied by scale (Options.AnthropicTokenScale).
func anthropicTurn(req messageRequest, scale float64) (parsedMessage, *apiError) {
	l := &anthropicLayout{p: parsedMessage{turn: Turn{Provider: "anthropic", Model: req.Model}}, h: newHasher(req.Model), scale: scale}
	switch {
	case req.Model == "":
		return l.p, badRequest("model: Field required")
	case req.MaxTokens < 1:
		return l.p, badRequest("max_tokens: Field required (a positive integer)")
	case len(req.Messages) == 0:
		return l.p, badRequest("messages: at least one message is required")
	}
	choice, e := l.tools(req)
	if e != nil {
		return l.p, e
	}
	if e := l.system(req); e != nil {
		return l.p, e
	}
	l.toolPrompt(req, choice)
	if e := l.messages(req); e != nil {
		return l.p, e
	}
	if e := l.cacheBreakpoints(req); e != nil {
		return l.p, e
	}
	return l.p, nil
}

// anthropicLayout is a request laid out so far: its blocks, in p, the hash of everything
// up to the last, where it ends in tokens, and the cache breakpoints' TTLs, in order.
type anthropicLayout struct {
	p           parsedMessage
	h           hasher
	end         int
	scale       float64 // multiplies text counts
	breakpoints []string
}

// add lays out one block of text, and the cache breakpoint cc sets at it, if any.
func (l *anthropicLayout) add(kind, text string, cc *cacheControl) *apiError {
	l.h = l.h.text(kind).text(text)
	l.end += scaled(Tokens(text), l.scale)
	b := block{key: uint64(l.h), end: l.end}
	if cc != nil {
		ttl, e := cc.lifetime()
		if e != nil {
			return e
		}
		b.ttl = ttl
		l.breakpoints = append(l.breakpoints, cc.TTL)
	}
	l.p.blocks = append(l.p.blocks, b)
	return nil
}

// tools lays out the tools and the structured output's schema, finds which tool (if any)
// is the answer, and says the tool_choice.
func (l *anthropicLayout) tools(req messageRequest) (string, *apiError) {
	choice := "auto"
	if req.ToolChoice != nil {
		choice = req.ToolChoice.Type
	}
	names := map[string]bool{}
	for i, td := range req.Tools {
		if td.Name == "" {
			return "", badRequest("tools.%d.name: Field required", i)
		}
		if names[td.Name] {
			return "", badRequest("tools: Tool names must be unique.")
		}
		names[td.Name] = true
		def, _ := json.Marshal(map[string]any{"name": td.Name, "description": td.Description, "input_schema": td.InputSchema})
		if e := l.add("tool", string(def), td.CacheControl); e != nil {
			return "", e
		}
	}
	if (choice == "any" || choice == "tool") && alwaysThinks(req.Model) {
		return "", badRequest("tool_choice: forcing a tool is not supported with thinking on %s; use tool_choice auto or none, and output_config.format for structured output", req.Model)
	}
	// Structured output: its schema is laid out with the tools (a grammar the model is
	// held to), and the answer comes as text.
	var format json.RawMessage
	if oc := req.OutputConfig; oc != nil && oc.Format != nil {
		if oc.Format.Type != "json_schema" || !isObject(string(oc.Format.Schema)) {
			return "", badRequest("output_config.format: a json_schema with an object schema is required")
		}
		format = oc.Format.Schema
		if e := l.add("format", string(format), nil); e != nil {
			return "", e
		}
	}
	switch choice {
	case "auto", "none", "any":
		if choice == "any" && len(req.Tools) == 0 {
			return "", badRequest("tool_choice: tool_choice.type any requires tools")
		}
		for _, td := range req.Tools {
			if _, known := schemaNames[strings.ToLower(td.Name)]; known || schemaShapes[shape(td.InputSchema)] != "" {
				l.p.answerTool = td.Name
				break
			}
		}
	case "tool":
		if !names[req.ToolChoice.Name] {
			return "", badRequest("tool_choice.name: Tool '%s' not found in the request's tools", req.ToolChoice.Name)
		}
		l.p.answerTool = req.ToolChoice.Name
	default:
		return "", badRequest("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
	}
	if format != nil {
		l.p.answerTool = "" // the answer is the text, held to the format
		l.p.turn.Schema = format
		l.p.turn.Agent = agentOf("", format)
	}
	for _, td := range req.Tools {
		if td.Name == l.p.answerTool {
			l.p.turn.SchemaName, l.p.turn.Schema = td.Name, td.InputSchema
			l.p.turn.Agent = agentOf(td.Name, td.InputSchema)
			continue
		}
		l.p.turn.Tools = append(l.p.turn.Tools, Tool{Name: td.Name, Description: td.Description, InputSchema: td.InputSchema})
	}
	l.p.turn.MayCallTools = len(l.p.turn.Tools) > 0 && (choice == "auto" || choice == "any")
	return choice, nil
}

// system lays out the system prompt.
func (l *anthropicLayout) system(req messageRequest) *apiError {
	if len(req.System) > 0 && string(req.System) != "null" {
		var sys string
		var sysBlocks []contentBlock
		switch {
		case json.Unmarshal(req.System, &sys) == nil:
			sysBlocks = []contentBlock{{Type: "text", Text: sys}}
		case json.Unmarshal(req.System, &sysBlocks) == nil:
		default:
			return badRequest("system: Input should be a valid string or a list of text blocks")
		}
		var texts []string
		for i, b := range sysBlocks {
			if b.Type != "text" {
				return badRequest("system.%d.type: Input should be 'text'", i)
			}
			texts = append(texts, b.Text)
			if e := l.add("system", b.Text, b.CacheControl); e != nil {
				return e
			}
		}
		l.p.turn.System = strings.Join(texts, "\n")
	}
	return nil
}

// toolPrompt counts the tool-use prompt: it depends on tool_choice, so it comes after the
// system prompt.
func (l *anthropicLayout) toolPrompt(req messageRequest, choice string) {
	toolPrompt := 0
	if len(req.Tools) > 0 {
		toolPrompt = toolPromptAuto
		if choice == "any" || choice == "tool" {
			toolPrompt = toolPromptAny
		}
	}
	tc := choice
	if req.ToolChoice != nil {
		tc += ":" + req.ToolChoice.Name
	}
	l.h = l.h.text("tool_choice").text(tc)
	l.end += toolPrompt // so every message block's prefix counts it
}

// messages lays out the messages' blocks.
func (l *anthropicLayout) messages(req messageRequest) *apiError {
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return badRequest("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		bs, raw, err := blocks(m.Content)
		if err != nil {
			return badRequest("messages.%d.content: %v", i, err)
		}
		if len(bs) == 0 {
			return badRequest("messages.%d: all messages must have non-empty content", i)
		}
		var texts []string
		for j, b := range bs {
			text := b.text(raw[j])
			if b.Type == "tool_result" {
				l.p.turn.ToolResults++
			}
			texts = append(texts, text)
			if e := l.add(m.Role+"/"+b.Type, text, b.CacheControl); e != nil {
				return e
			}
		}
		l.p.turn.Messages = append(l.p.turn.Messages, Message{Role: m.Role, Text: strings.Join(texts, "\n")})
	}
	return nil
}

// cacheBreakpoints checks the cache breakpoints as the API does, with the automatic one
// the top-level cache_control sets at the last block.
func (l *anthropicLayout) cacheBreakpoints(req messageRequest) *apiError {
	last := &l.p.blocks[len(l.p.blocks)-1]
	// Automatic caching: the top-level cache_control marks the last block.
	if req.CacheControl != nil && last.ttl == 0 {
		ttl, e := req.CacheControl.lifetime()
		if e != nil {
			return e
		}
		last.ttl = ttl
		l.breakpoints = append(l.breakpoints, req.CacheControl.TTL)
	}
	if n := len(l.breakpoints); n > anthropicMaxBreakpoints {
		return badRequest("A maximum of %d blocks with cache_control may be provided. Found %d.", anthropicMaxBreakpoints, n)
	}
	short := false
	for _, ttl := range l.breakpoints {
		switch {
		case ttl == "1h" && short:
			return badRequest("cache_control: a breakpoint with ttl '1h' cannot come after one with ttl '5m'; longer lifetimes must come first (tools, then system, then messages)")
		case ttl != "1h":
			short = true
		}
	}
	return nil
}

// lifetime is a cache_control's TTL, or the error the API gives for a bad one.
func (cc cacheControl) lifetime() (time.Duration, *apiError) {
	if cc.Type != "ephemeral" {
		return 0, badRequest("cache_control.type: Input should be 'ephemeral'")
	}
	switch cc.TTL {
	case "", "5m":
		return anthropicTTL, nil
	case "1h":
		return anthropicLongTTL, nil
	}
	return 0, badRequest("cache_control.ttl: Input should be '5m' or '1h'")
}
