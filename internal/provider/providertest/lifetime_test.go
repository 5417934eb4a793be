package providertest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
	"github.com/cosci-dev/cosci/internal/research"
)

// TestCacheLifetimesThroughCosciCompleters: cosci's completers asking for the short or the
// long cache lifetime (research.Cache.Long), against the fake on a clock that moves. Two
// calls share a prefix of about 2,000 tokens and differ after it; the second comes after
// a wait. A long-lived prefix outlives a wait the short one does not: Anthropic's 1h
// breakpoint is read after 30 minutes where the 5m one is gone (and its write is reported
// as 1h, which costs more); OpenAI's 24h retention after 3 hours where the in-memory one
// is gone. From GPT-5.6 on writes are reported, both choices live 30 minutes, and the
// explicit breakpoint of the long one is read to the prefix's exact end where the
// implicit cache reads it rounded down to a 128-token block.
func TestCacheLifetimesThroughCosciCompleters(t *testing.T) {
	shared := long("tau", 2000)
	for _, tc := range []struct {
		name      string
		api       string // "anthropic" | "openai"
		model     string
		long      bool
		wait      time.Duration
		read      string // what the second call reads: "" nothing, "exact" the prefix, "rounded" it in 128-token blocks
		written   bool   // the first call reports cache writes
		writeLong bool   // ... made with the long lifetime
	}{
		{"anthropic 5m, 2 minutes", "anthropic", "claude-sonnet-5-5", false, 2 * time.Minute, "exact", true, false},
		{"anthropic 5m, 30 minutes", "anthropic", "claude-sonnet-5-5", false, 30 * time.Minute, "", true, false},
		{"anthropic 1h, 30 minutes", "anthropic", "claude-sonnet-5-5", true, 30 * time.Minute, "exact", true, true},
		{"anthropic 1h, 2 hours", "anthropic", "claude-sonnet-5-5", true, 2 * time.Hour, "", true, true},
		{"openai in memory, 2 minutes", "openai", "gpt-5.4", false, 2 * time.Minute, "rounded", false, false},
		{"openai in memory, 30 minutes", "openai", "gpt-5.4", false, 30 * time.Minute, "", false, false},
		{"openai 24h, 3 hours", "openai", "gpt-5.4", true, 3 * time.Hour, "rounded", false, false},
		{"gpt-6 implicit, 20 minutes", "openai", "gpt-6-sol", false, 20 * time.Minute, "rounded", true, false},
		{"gpt-6 implicit, 45 minutes", "openai", "gpt-6-sol", false, 45 * time.Minute, "", true, false},
		{"gpt-6 explicit breakpoint, 20 minutes", "openai", "gpt-6-sol", true, 20 * time.Minute, "exact", true, false},
		{"gpt-6 explicit breakpoint, 45 minutes", "openai", "gpt-6-sol", true, 45 * time.Minute, "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock, f := startAt(t, providertest.Options{})
			var c provider.Completer
			var err error
			if tc.api == "anthropic" {
				c, err = provider.NewAnthropic(provider.AnthropicConfig{APIKey: f.AnthropicKey(), BaseURL: f.AnthropicBaseURL(), Model: tc.model})
			} else {
				c, err = provider.NewOpenAI(provider.OpenAIConfig{APIKey: f.OpenAIKey(), BaseURL: f.OpenAIBaseURL(), Model: tc.model, PromptCacheKey: true})
			}
			if err != nil {
				t.Fatal(err)
			}
			call := func(own string) research.Usage {
				t.Helper()
				text := shared + own
				a, err := c.Complete(context.Background(), provider.Completion{Agent: "generation", Prompt: text,
					Cache: research.Cache{Prefix: len(shared), Key: "cosci-k", Breakpoints: true, Long: tc.long}})
				if err != nil {
					t.Fatal(err)
				}
				return a.Usage
			}
			first := call("\nFirst hypothesis, please.")
			clock.Advance(tc.wait)
			second := call("\nSecond hypothesis, about microglia instead.")
			read := ""
			switch n := second.CachedTokens; {
			case n >= 1024 && n%128 == 0:
				read = "rounded"
			case n >= 1024:
				read = "exact"
			}
			if read != tc.read {
				t.Errorf("after %v the second call read %d tokens (%q); want %q", tc.wait, second.CachedTokens, read, tc.read)
			}
			if got := first.CacheWriteTokens > 0; got != tc.written {
				t.Errorf("the first call wrote %d tokens; want writes %v", first.CacheWriteTokens, tc.written)
			}
			if got := first.CacheWriteLongTokens; (got > 0) != tc.writeLong || (tc.writeLong && got != first.CacheWriteTokens) {
				t.Errorf("the first call wrote %d tokens with the long lifetime of %d; want all of them long: %v", got, first.CacheWriteTokens, tc.writeLong)
			}
		})
	}
}

// TestOpenAIExplicitCacheRefusals: what the API refuses about its explicit cache is a 400
// from the fake too, so cosci sending it where it does not belong fails a test.
func TestOpenAIExplicitCacheRefusals(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	const marked = `[{"type":"text","text":"shared","prompt_cache_breakpoint":{"mode":"explicit"%s}},{"type":"text","text":"own"}]`
	for _, tc := range []struct {
		name   string
		body   string
		status int
	}{
		{"a breakpoint on gpt-6", `{"model":"gpt-6-sol","messages":[{"role":"user","content":` + fmt.Sprintf(marked, "") + `}]}`, 200},
		{"a 12h breakpoint", `{"model":"gpt-6-sol","messages":[{"role":"user","content":` + fmt.Sprintf(marked, `,"ttl":"12h"`) + `}]}`, 200},
		{"options on gpt-6", `{"model":"gpt-6-sol","prompt_cache_options":{"mode":"explicit","ttl":"30m"},"messages":[{"role":"user","content":"q"}]}`, 200},
		{"a breakpoint before gpt-5.6", `{"model":"gpt-5.4","messages":[{"role":"user","content":` + fmt.Sprintf(marked, "") + `}]}`, 400},
		{"options before gpt-5.6", `{"model":"gpt-5.5","prompt_cache_options":{"ttl":"30m"},"messages":[{"role":"user","content":"q"}]}`, 400},
		{"options beside retention", `{"model":"gpt-6-sol","prompt_cache_retention":"24h","prompt_cache_options":{"ttl":"30m"},"messages":[{"role":"user","content":"q"}]}`, 400},
		{"a 1h breakpoint", `{"model":"gpt-6-sol","messages":[{"role":"user","content":` + fmt.Sprintf(marked, `,"ttl":"1h"`) + `}]}`, 400},
		{"a request ttl of 12h", `{"model":"gpt-6-sol","prompt_cache_options":{"ttl":"12h"},"messages":[{"role":"user","content":"q"}]}`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(f.OpenAIBaseURL(), "/")+"/chat/completions", strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+f.OpenAIKey())
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}
