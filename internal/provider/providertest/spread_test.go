package providertest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
	"github.com/cosci-dev/cosci/internal/research"
)

// TestSpreadBatchCaching: a batch whose requests share a prefix, sent by cosci's batchers,
// read back as the fake counts its in-batch cache hits. Processed back to back when it
// ends (the default), every request after the first reads the prefix the first wrote,
// whatever its lifetime. Spread over its run (BatchSpread), a request reads only what
// has been written before it starts and is still alive: over a 2-hour batch the short
// lifetime (Anthropic's 5 minutes) is gone between most requests, the long one (1 hour,
// renewed on each hit) serves nearly all; over a 5-minute batch both do. GPT-6's 30
// minutes (implicit, or an explicit breakpoint with Cache.Long) sits between.
func TestSpreadBatchCaching(t *testing.T) {
	const n = 12
	shared := long("tau", 2000)
	for _, tc := range []struct {
		name           string
		api, model     string
		long, spread   bool
		delay          time.Duration
		minHit, maxHit int // in-batch hits, of n requests
	}{
		{"anthropic 5m back to back, 2h", "anthropic", "claude-sonnet-5-5", false, false, 2 * time.Hour, n - 1, n - 1},
		{"anthropic 5m spread, 2h", "anthropic", "claude-sonnet-5-5", false, true, 2 * time.Hour, 0, n / 3},
		{"anthropic 1h spread, 2h", "anthropic", "claude-sonnet-5-5", true, true, 2 * time.Hour, n - 2, n - 1},
		{"anthropic 5m spread, 5m", "anthropic", "claude-sonnet-5-5", false, true, 5 * time.Minute, n - 4, n - 1},
		{"gpt-6 explicit spread, 5m", "openai", "gpt-6-sol", true, true, 5 * time.Minute, n - 4, n - 1},
		{"gpt-6 explicit spread, 8h", "openai", "gpt-6-sol", true, true, 8 * time.Hour, 0, n / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock, f := startAt(t, providertest.Options{BatchDelay: tc.delay, BatchSpread: tc.spread, Seed: 5})
			var b provider.Batcher
			var err error
			if tc.api == "anthropic" {
				b, err = provider.NewAnthropic(provider.AnthropicConfig{APIKey: f.AnthropicKey(), BaseURL: f.AnthropicBaseURL(), Model: tc.model})
			} else {
				b, err = provider.NewOpenAI(provider.OpenAIConfig{APIKey: f.OpenAIKey(), BaseURL: f.OpenAIBaseURL(), Model: tc.model, PromptCacheKey: true})
			}
			if err != nil {
				t.Fatal(err)
			}
			var reqs []provider.BatchRequest
			for i := range n {
				reqs = append(reqs, provider.BatchRequest{ID: fmt.Sprintf("t%d", i), Completion: provider.Completion{Agent: "reflection",
					Prompt: shared + fmt.Sprintf("\nReview hypothesis %d, please.", i),
					Cache:  research.Cache{Prefix: len(shared), Key: "cosci-k", Breakpoints: true, Long: tc.long}}})
			}
			ctx := context.Background()
			id, err := b.SubmitBatch(ctx, "round-1-reviews-1", reqs)
			if err != nil {
				t.Fatal(err)
			}
			clock.Advance(tc.delay)
			if st, err := b.BatchState(ctx, id); err != nil || !st.Ended {
				t.Fatalf("batch after its delay: %+v, %v", st, err)
			}
			st := f.Stats()
			u := st.AnthropicBatch
			if tc.api == "openai" {
				u = st.OpenAIBatch
			}
			t.Logf("%d of %d requests hit, %.0f%% of the input cached, %d written (%d long)", u.Hits, u.Requests, 100*u.CachedShare(), u.CacheWrite, u.CacheWriteLong)
			if u.Requests != n || u.Hits < tc.minHit || u.Hits > tc.maxHit {
				t.Errorf("%d of %d requests hit the cache; want %d to %d of %d", u.Hits, u.Requests, tc.minHit, tc.maxHit, n)
			}
			if tc.api == "anthropic" && tc.long != (u.CacheWriteLong > 0) {
				t.Errorf("%d of %d written tokens long; want long writes %v", u.CacheWriteLong, u.CacheWrite, tc.long)
			}
		})
	}
}
