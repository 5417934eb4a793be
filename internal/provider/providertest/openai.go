package providertest

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/simulator"
)

// OpenAI: Chat Completions and Embeddings.

// chatRequest is the part of a Chat Completions request the fake reads.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"` // "none" | "auto" | "required" | {"type":"function","function":{"name"}}
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
	PromptCacheKey       string `json:"prompt_cache_key"`
	PromptCacheRetention string `json:"prompt_cache_retention"`
	PromptCacheOptions   *struct {
		Mode string `json:"mode"` // "implicit" (default) | "explicit"
		TTL  string `json:"ttl"`  // "30m", the only one
	} `json:"prompt_cache_options"`
	Stream bool `json:"stream"`
	N      *int `json:"n"`
}

type chatMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // a string, an array of parts, or null
	ToolCalls []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

// cachePart is a content part as the explicit prompt cache sees it: its text as it
// counts, and its prompt_cache_breakpoint, if any.
type cachePart struct {
	text       string
	breakpoint *struct {
		Mode string `json:"mode"`
		TTL  string `json:"ttl"`
	}
}

// breakpointParts are the message's content parts when one of them carries a
// prompt_cache_breakpoint (nil otherwise: the message counts as its text() in one piece).
func (m chatMessage) breakpointParts() []cachePart {
	var raw []json.RawMessage
	if json.Unmarshal(m.Content, &raw) != nil {
		return nil
	}
	var parts []cachePart
	marked := false
	for _, r := range raw {
		var p struct {
			Type       string `json:"type"`
			Text       string `json:"text"`
			Breakpoint *struct {
				Mode string `json:"mode"`
				TTL  string `json:"ttl"`
			} `json:"prompt_cache_breakpoint"`
		}
		_ = json.Unmarshal(r, &p)
		text := p.Text
		if p.Type != "text" {
			text = string(r)
		}
		parts = append(parts, cachePart{text: text, breakpoint: p.Breakpoint})
		marked = marked || p.Breakpoint != nil
	}
	if !marked {
		return nil
	}
	return parts
}

// text is a message's content as text: a string, or its text parts joined (any other part
// as its JSON, which is how it counts).
func (m chatMessage) text() (string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor an array of content parts")
	}
	var raw []json.RawMessage
	_ = json.Unmarshal(m.Content, &raw)
	var b strings.Builder
	for i, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		} else {
			b.Write(raw[i])
		}
	}
	return b.String(), nil
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	s.answerTurn(w, r, "chat completion", writeOpenAIError, "X-Request-Id", func(body []byte) (map[string]any, *apiError) {
		return s.chat(body, "", "", true, moment{})
	})
}

// chat answers one Chat Completions request (ordinary, or one of a batch): the completion,
// or the error the API would give.
func (s *Server) chat(body []byte, batchID, customID string, cache bool, run moment) (map[string]any, *apiError) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.problem("a chat completion request that is not JSON: %v", err)
		return nil, badRequest("We could not parse the JSON body of your request. (%v)", err)
	}
	turn, ids, marks, e := openAITurn(req)
	if e != nil {
		s.refused()
		return nil, e
	}
	turn.BatchID, turn.CustomID = batchID, customID
	now := run.now(s.clock)
	cached, written := 0, 0
	if cache {
		// The cache is per model; prompt_cache_key narrows it further (see doc.go).
		scope := req.Model + "\x00" + req.PromptCacheKey
		s.mu.Lock()
		s.openAI.lag = run.lag
		if explicitCaching(req.Model) {
			cached, written = s.openAI.explicit(scope, ids, marks, req, now)
		} else {
			ttl := s.opts.OpenAICacheTTL
			if req.PromptCacheRetention == "24h" {
				ttl = 24 * time.Hour
			}
			cached = s.openAI.openAI(scope, ids, ttl, now)
		}
		s.openAI.lag = 0
		s.mu.Unlock()
	}
	turn.PromptTokens = len(ids)
	rep := s.reply(turn, 1)
	s.answered(turn, Usage{Requests: 1, Input: len(ids), CacheRead: cached, CacheWrite: written, Output: rep.OutputTokens, Hits: hit(cached)}, len(rep.Calls))

	msg := map[string]any{"role": "assistant", "content": rep.Text, "refusal": nil, "annotations": []any{}}
	finish := "stop"
	if len(rep.Calls) > 0 {
		finish = "tool_calls"
		msg["content"] = nil
		var calls []any
		for i, c := range rep.Calls {
			calls = append(calls, map[string]any{
				"id": fmt.Sprintf("call_fake_%d_%d", turn.Seq, i), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": string(c.Arguments)},
			})
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": s.newID("chatcmpl-fake"), "object": "chat.completion", "created": now.Unix(), "model": req.Model,
		"system_fingerprint": "fp_fake",
		"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage": map[string]any{
			"prompt_tokens": len(ids), "completion_tokens": rep.OutputTokens, "total_tokens": len(ids) + rep.OutputTokens,
			"prompt_tokens_details":     map[string]any{"cached_tokens": cached, "cache_write_tokens": written, "audio_tokens": 0},
			"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
		},
	}, nil
}

// openAITurn checks a request as the API would, and returns the turn and the prompt as
// token ids in the order OpenAI processes it: the tools, the answer schema, then the
// messages in order (each framed by its role), then the priming of the reply; and where
// the explicit prompt cache may cut it (marks: the end of each message and of each
// content part with a prompt_cache_breakpoint, whose parts are counted one by one).
func openAITurn(req chatRequest) (Turn, []uint32, []mark, *apiError) {
	t, ids, marks, e := openAIPrompt(req)
	if e == nil {
		e = checkCacheOptions(req, marks)
	}
	return t, ids, marks, e
}

func openAIPrompt(req chatRequest) (Turn, []uint32, []mark, *apiError) {
	t := Turn{Provider: "openai", Model: req.Model}
	var marks []mark
	switch {
	case req.Model == "":
		return t, nil, nil, &apiError{status: 400, kind: "invalid_request_error", param: "model", message: "you must provide a model parameter"}
	case len(req.Messages) == 0:
		return t, nil, nil, &apiError{status: 400, kind: "invalid_request_error", param: "messages", message: "[] is too short - 'messages'"}
	case req.N != nil && *req.N != 1:
		return t, nil, nil, badRequest("the fake answers one choice; n must be 1")
	}
	var ids []uint32
	names := map[string]bool{}
	for i, tool := range req.Tools {
		if tool.Type != "function" || tool.Function.Name == "" {
			return t, nil, nil, &apiError{status: 400, kind: "invalid_request_error", param: fmt.Sprintf("tools[%d]", i), message: "a tool must be of type function and have a name"}
		}
		names[tool.Function.Name] = true
		t.Tools = append(t.Tools, Tool{Name: tool.Function.Name, Description: tool.Function.Description, InputSchema: tool.Function.Parameters})
		def, _ := json.Marshal(map[string]any{"name": tool.Function.Name, "description": tool.Function.Description, "parameters": tool.Function.Parameters})
		ids = append(ids, encode(string(def))...)
	}
	choice := "auto"
	if len(req.ToolChoice) > 0 {
		var named struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		switch {
		case json.Unmarshal(req.ToolChoice, &choice) == nil:
			if choice != "none" && choice != "auto" && choice != "required" {
				return t, nil, nil, &apiError{status: 400, kind: "invalid_request_error", param: "tool_choice", message: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'none', 'auto', and 'required'.", choice)}
			}
		case json.Unmarshal(req.ToolChoice, &named) == nil && names[named.Function.Name]:
			choice = "required"
		default:
			return t, nil, nil, &apiError{status: 400, kind: "invalid_request_error", param: "tool_choice", message: "tool_choice names no tool of the request"}
		}
		if len(req.Tools) == 0 {
			return t, nil, nil, &apiError{status: 400, kind: "invalid_request_error", param: "tool_choice", message: "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."}
		}
	}
	t.MayCallTools = len(req.Tools) > 0 && choice != "none"
	if rf := req.ResponseFormat; rf != nil && rf.Type == "json_schema" {
		if rf.JSONSchema == nil || rf.JSONSchema.Name == "" {
			return t, nil, nil, &apiError{status: 400, kind: "invalid_request_error", param: "response_format.json_schema.name", message: "Missing required parameter: 'response_format.json_schema.name'."}
		}
		t.SchemaName, t.Schema = rf.JSONSchema.Name, rf.JSONSchema.Schema
		t.Agent = agentOf(t.SchemaName, t.Schema)
		def, _ := json.Marshal(map[string]any{"name": rf.JSONSchema.Name, "schema": rf.JSONSchema.Schema})
		ids = append(ids, encode(string(def))...)
	}
	for i, m := range req.Messages {
		text, err := m.text()
		if err != nil {
			return t, nil, nil, &apiError{status: 400, kind: "invalid_request_error", param: fmt.Sprintf("messages[%d].content", i), message: err.Error()}
		}
		switch m.Role {
		case "system", "developer":
			if t.System != "" {
				t.System += "\n"
			}
			t.System += text
		case "user", "assistant":
		case "tool":
			t.ToolResults++
		default:
			return t, nil, nil, &apiError{status: 400, kind: "invalid_request_error", param: fmt.Sprintf("messages[%d].role", i), message: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'.", m.Role)}
		}
		for _, c := range m.ToolCalls {
			text += c.Function.Name + c.Function.Arguments
		}
		t.Messages = append(t.Messages, Message{Role: m.Role, Text: text})
		ids = append(ids, idStart)
		ids = append(ids, encode(m.Role)...)
		ids = append(ids, idMessage)
		if parts := m.breakpointParts(); parts != nil {
			for _, p := range parts {
				ids = append(ids, encode(p.text)...)
				if p.breakpoint != nil {
					marks = append(marks, mark{end: len(ids), explicit: true, mode: p.breakpoint.Mode, ttl: p.breakpoint.TTL})
				}
			}
		} else {
			ids = append(ids, encode(text)...)
		}
		ids = append(ids, idEnd)
		marks = append(marks, mark{end: len(ids)})
	}
	ids = append(ids, idStart)
	ids = append(ids, encode("assistant")...)
	ids = append(ids, idMessage)
	return t, ids, marks, nil
}

// handleEmbeddings answers the Embeddings API: each input gets simulator.Embed's stand-in
// vector of its text, as floats or base64 as asked.
func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	resp, e := s.embed(body)
	if e != nil {
		writeOpenAIError(w, *e)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// inputTexts reads an embeddings request's input, as OpenAI and Voyage take it: a string,
// or a non-empty array of strings.
func inputTexts(input json.RawMessage) (texts []string, ok bool) {
	var one string
	switch {
	case json.Unmarshal(input, &one) == nil:
		return []string{one}, true
	case json.Unmarshal(input, &texts) == nil && len(texts) > 0:
		return texts, true
	}
	return nil, false
}

func (s *Server) embed(body []byte) (map[string]any, *apiError) {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     int             `json:"dimensions"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		s.problem("an embeddings request that is not JSON: %v", err)
		return nil, badRequest("We could not parse the JSON body of your request. (%v)", err)
	}
	texts, ok := inputTexts(req.Input)
	if !ok {
		s.refused()
		return nil, &apiError{status: 400, kind: "invalid_request_error", param: "input", message: "'input' must be a string or a non-empty array of strings"}
	}
	if req.Model == "" {
		s.refused()
		return nil, &apiError{status: 400, kind: "invalid_request_error", param: "model", message: "you must provide a model parameter"}
	}
	data := make([]any, len(texts))
	tokens := 0
	for i, text := range texts {
		if text == "" {
			s.refused()
			return nil, &apiError{status: 400, kind: "invalid_request_error", param: "input", message: fmt.Sprintf("'$.input[%d]' is invalid: an empty string", i)}
		}
		v := simulator.Embed(text)
		if req.Dimensions > 0 && req.Dimensions < len(v) {
			v = v[:req.Dimensions]
		}
		var emb any = v
		if req.EncodingFormat == "base64" {
			var b bytes.Buffer
			for _, x := range v {
				_ = binary.Write(&b, binary.LittleEndian, math.Float32bits(x))
			}
			emb = base64.StdEncoding.EncodeToString(b.Bytes())
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
		tokens += Tokens(text)
	}
	s.mu.Lock()
	s.countEmbeddings(req.Model, texts, tokens)
	s.mu.Unlock()
	return map[string]any{"object": "list", "model": req.Model, "data": data,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}}, nil
}

// countEmbeddings records an embeddings request in the stats; the caller holds s.mu.
func (s *Server) countEmbeddings(model string, texts []string, tokens int) {
	s.stats.Models[model]++
	s.stats.Embeddings.Requests++
	s.stats.Embeddings.Texts += len(texts)
	s.stats.Embeddings.Tokens += tokens
	for _, text := range texts {
		s.stats.Embeddings.PerText[text]++
	}
}
