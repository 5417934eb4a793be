package provider

import (
	"context"
	"encoding/json"
	"slices"
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
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("first message's blocks = %q, want %q", got, tt.want)
			}
			marked := 0
			for _, m := range msgs[1:] {
				for _, b := range m.(map[string]any)["content"].([]any) {
					if _, ok := b.(map[string]any)["cache_control"]; ok {
						marked++
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
