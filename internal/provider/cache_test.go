package provider

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// TestPromptCacheOnTheWire: what each provider is told about a prompt's shared prefix.
// Anthropic caches only what is marked: a breakpoint ends the prefix the calls of a round
// share, and in a tool loop one ends the conversation so far; a turn made once a round
// (no breakpoints) is sent in one block, unmarked. OpenAI caches prefixes by itself and
// gets the round's key, when it is OpenAI's own API.
func TestPromptCacheOnTheWire(t *testing.T) {
	const text = "SHARED PREFIX|OWN PART"
	cache := research.Cache{Prefix: len("SHARED PREFIX|"), Key: "cosci-round-key", Breakpoints: true}
	long := cache
	long.Long = true
	step := research.ToolStep{Text: "Let me search.", Calls: []research.ToolCall{{ID: "toolu_1", Name: "literature.search", Arguments: json.RawMessage(`{"query":"tau"}`)}},
		Results: []research.ToolResult{{CallID: "toolu_1", Content: "a result"}}}
	tests := []struct {
		name    string
		cache   research.Cache
		tooling research.Tooling
		want    []string // each content block of the first user message, "text" or "text|cached"
		loop    bool     // the last tool result carries a breakpoint
	}{
		{"breakpoint after the shared prefix", cache, research.Tooling{}, []string{"SHARED PREFIX||cached", "OWN PART"}, false},
		{"a turn made once a round", research.Cache{Prefix: cache.Prefix, Key: cache.Key}, research.Tooling{}, []string{text}, false},
		{"all of it shared", research.Cache{Prefix: len(text), Breakpoints: true}, research.Tooling{}, []string{text + "|cached"}, false},
		{"a prefix past the text", research.Cache{Prefix: len(text) + 1, Breakpoints: true}, research.Tooling{}, []string{text}, false},
		{"tool loop", cache, research.Tooling{Tools: loopTools, Steps: []research.ToolStep{step}}, []string{"SHARED PREFIX||cached", "OWN PART"}, true},
		{"tool loop, final step", cache, research.Tooling{Tools: loopTools, Steps: []research.ToolStep{step}, Final: true}, []string{"SHARED PREFIX||cached", "OWN PART"}, true},
		{"long: a 1h breakpoint", long, research.Tooling{}, []string{"SHARED PREFIX||cached|1h", "OWN PART"}, false},
		{"long tool loop: every breakpoint 1h", long, research.Tooling{Tools: loopTools, Steps: []research.ToolStep{step}}, []string{"SHARED PREFIX||cached|1h", "OWN PART"}, true},
	}
	for _, tt := range tests {
		t.Run("anthropic/"+tt.name, func(t *testing.T) {
			f := newFake(t, okFor(anthropicWire, "hypothesis", goodHypothesis, 100, 10, false))
			c := anthropicWire.completer(t, f.URL)
			if _, err := c.Complete(context.Background(), Completion{Agent: "generation", Prompt: text, Cache: tt.cache, SchemaName: "hypothesis", Schema: json.RawMessage(`{"type":"object"}`), Tooling: tt.tooling}); err != nil {
				t.Fatal(err)
			}
			body := f.saw(t, 1)[0].body
			msgs := body["messages"].([]any)
			var got []string
			for _, b := range msgs[0].(map[string]any)["content"].([]any) {
				b := b.(map[string]any)
				s := b["text"].(string)
				if cc, ok := b["cache_control"].(map[string]any); ok && cc["type"] == "ephemeral" {
					s += "|cached"
					if cc["ttl"] != nil {
						s += "|" + cc["ttl"].(string)
					}
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("first message's blocks = %q, want %q", got, tt.want)
			}
			marked := 0
			for _, m := range msgs[1:] {
				for _, b := range m.(map[string]any)["content"].([]any) {
					if cc, ok := b.(map[string]any)["cache_control"].(map[string]any); ok {
						marked++
						if ttl, _ := cc["ttl"].(string); ttl != map[bool]string{true: "1h"}[tt.cache.Long] {
							t.Errorf("the conversation's breakpoint has ttl %q with Long %v", ttl, tt.cache.Long)
						}
						if b.(map[string]any)["type"] != "tool_result" {
							t.Errorf("a breakpoint on a %v block", b.(map[string]any)["type"])
						}
					}
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tt.loop]; marked != want {
				t.Errorf("%d breakpoints in the conversation after the prompt, want %d", marked, want)
			}
		})
	}
	for _, key := range []bool{true, false} {
		t.Run("openai/prompt_cache_key "+map[bool]string{true: "on", false: "off"}[key], func(t *testing.T) {
			f := newFake(t, okFor(openaiWire, "hypothesis", goodHypothesis, 100, 10, false))
			c, err := NewOpenAI(OpenAIConfig{APIKey: testKey, BaseURL: f.URL + "/v1", Model: "test-model", PromptCacheKey: key})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Complete(context.Background(), Completion{Agent: "generation", Prompt: text, Cache: cache, SchemaName: "hypothesis", Schema: json.RawMessage(`{"type":"object"}`)}); err != nil {
				t.Fatal(err)
			}
			got, sent := f.saw(t, 1)[0].body["prompt_cache_key"]
			if sent != key || (key && got != cache.Key) {
				t.Errorf("prompt_cache_key = %v (sent %v), want sent %v", got, sent, key)
			}
		})
	}
	// Only OpenAI's own API gets the key: other OpenAI-compatible servers may refuse it.
	for base, want := range map[string]bool{"": true, "https://api.openai.com/v1/": true, "http://localhost:11434/v1": false, "https://openrouter.ai/api/v1": false} {
		if got := isOpenAI(base); got != want {
			t.Errorf("isOpenAI(%q) = %v, want %v", base, got, want)
		}
	}
}

// TestOpenAILongCache: what a long-lived cache asks of OpenAI, by model: extended
// retention on GPT-5 to 5.5, an explicit breakpoint at the shared prefix's end from
// GPT-5.6 on, nothing for other models, for short turns or for compatible servers; and the
// lifetime each turn's record names.
func TestOpenAILongCache(t *testing.T) {
	const text = "SHARED PREFIX|OWN PART"
	short := research.Cache{Prefix: len("SHARED PREFIX|"), Key: "k", Breakpoints: true}
	long := short
	long.Long = true
	for _, tc := range []struct {
		name      string
		model     string
		cache     research.Cache
		own       bool   // OpenAI's own API
		retention any    // prompt_cache_retention sent (nil: none)
		parts     string // the prompt's content parts, "|"-joined, "*" after a breakpoint; "" for a string
		record    string // CacheLifetime
	}{
		{"gpt-5.4 long", "gpt-5.4", long, true, "24h", "", "24h"},
		{"gpt-5.4 short", "gpt-5.4", short, true, nil, "", "default"},
		{"gpt-5.5 short: its only retention", "gpt-5.5", short, true, nil, "", "24h"},
		{"gpt-5 long", "gpt-5-mini", long, true, "24h", "", "24h"},
		{"gpt-6-sol long", "gpt-6-sol", long, true, nil, "SHARED PREFIX|*|OWN PART", "30m"},
		{"gpt-5.6-sol long", "gpt-5.6-sol", long, true, nil, "SHARED PREFIX|*|OWN PART", "30m"},
		{"gpt-6.1 long, all shared", "gpt-6.1-terra", research.Cache{Prefix: len(text), Long: true}, true, nil, "SHARED PREFIX|OWN PART*", "30m"},
		{"gpt-6-sol short", "gpt-6-sol", short, true, nil, "", "30m"},
		{"gpt-6-sol long, no prefix", "gpt-6-sol", research.Cache{Long: true}, true, nil, "", "30m"},
		{"gpt-4o long", "gpt-4o", long, true, nil, "", "default"},
		{"routed name", "openai/gpt-5.4", long, true, "24h", "", "24h"},
		{"compatible server", "gpt-5.4", long, false, nil, "", "24h"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, okFor(openaiWire, "hypothesis", goodHypothesis, 100, 10, false))
			c, err := NewOpenAI(OpenAIConfig{APIKey: testKey, BaseURL: f.URL + "/v1", Model: tc.model, PromptCacheKey: tc.own})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Complete(context.Background(), Completion{Agent: "generation", Prompt: text, Cache: tc.cache, SchemaName: "hypothesis", Schema: json.RawMessage(`{"type":"object"}`)}); err != nil {
				t.Fatal(err)
			}
			body := f.saw(t, 1)[0].body
			if got := body["prompt_cache_retention"]; got != tc.retention {
				t.Errorf("prompt_cache_retention = %v, want %v", got, tc.retention)
			}
			var user map[string]any
			for _, m := range body["messages"].([]any) {
				if m := m.(map[string]any); m["role"] == "user" {
					user = m
					break
				}
			}
			parts := ""
			switch content := user["content"].(type) {
			case string:
				if content != text {
					t.Errorf("the prompt = %q", content)
				}
			case []any:
				var got []string
				for _, p := range content {
					p := p.(map[string]any)
					s := p["text"].(string)
					if bp, ok := p["prompt_cache_breakpoint"].(map[string]any); ok && bp["mode"] == "explicit" {
						s += "*"
					}
					got = append(got, s)
				}
				parts = strings.Join(got, "|")
			}
			if parts != tc.parts {
				t.Errorf("the prompt's parts = %q, want %q", parts, tc.parts)
			}
			if got := CacheLifetime("openai", tc.model, tc.cache); got != tc.record {
				t.Errorf("CacheLifetime = %q, want %q", got, tc.record)
			}
		})
	}
	for _, tc := range []struct {
		provider string
		cache    research.Cache
		want     string
	}{
		{"anthropic", long, "1h"},
		{"anthropic", short, "5m"},
		{"anthropic", research.Cache{Prefix: 10, Long: true}, ""}, // no breakpoints: nothing cached
		{"simulator", long, ""},
	} {
		if got := CacheLifetime(tc.provider, "claude-sonnet-5-5", tc.cache); got != tc.want {
			t.Errorf("CacheLifetime(%s, %+v) = %q, want %q", tc.provider, tc.cache, got, tc.want)
		}
	}
}
