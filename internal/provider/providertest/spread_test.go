package providertest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// TestSpreadBatchLeadersFirst: on a spread batch, a cache that must be written before it
// is read hits more often when each group's first request (its leader) goes at the front
// and the rest follow after all the leaders (provider.Group's order) than when each
// group's requests sit side by side, which start together, before the first has written
// the prefix they share. Same batch, same seed, same arrival times: only the order
// differs. (The step's own round-robin order is leaders first by chance here.) Over a
// batch of hours the requests arrive minutes apart, each after its neighbour has
// finished, and side by side hits too; there leaders first can lose a hit to a lifetime,
// its followers arriving long after their leader: the cost benchmark measures that.
func TestSpreadBatchLeadersFirst(t *testing.T) {
	const groups, each = 6, 4
	// As a step makes them: round-robin over the groups (each group an agent's prompt
	// prefix, say a review type or a hypothesis's matches).
	var made []provider.BatchRequest
	for i := range each {
		for g := range groups {
			shared := long(fmt.Sprintf("group%d", g), 2000)
			made = append(made, provider.BatchRequest{ID: fmt.Sprintf("g%dr%d", g, i), Completion: provider.Completion{Agent: "reflection",
				Prompt: shared + fmt.Sprintf("\nReview hypothesis %d, please.", i),
				Cache:  research.Cache{Prefix: len(shared), Key: "cosci-k", Breakpoints: true, Long: true}}})
		}
	}
	leadersFirst := slices.Clone(made)
	provider.Group(leadersFirst)
	adjacent := slices.Clone(made)
	slices.SortStableFunc(adjacent, func(a, b provider.BatchRequest) int { return strings.Compare(a.ID, b.ID) })
	if leadersFirst[groups-1].ID != fmt.Sprintf("g%dr0", groups-1) || leadersFirst[groups].ID != "g0r1" {
		t.Fatalf("Group's order %v is not leaders first", ids(leadersFirst))
	}
	hits := func(t *testing.T, api string, delay time.Duration, seed uint64, reqs []provider.BatchRequest) int {
		clock, f := startAt(t, providertest.Options{BatchDelay: delay, BatchSpread: true, Seed: seed})
		var b provider.Batcher
		var err error
		if api == "anthropic" {
			b, err = provider.NewAnthropic(provider.AnthropicConfig{APIKey: f.AnthropicKey(), BaseURL: f.AnthropicBaseURL(), Model: "claude-sonnet-5-5"})
		} else {
			b, err = provider.NewOpenAI(provider.OpenAIConfig{APIKey: f.OpenAIKey(), BaseURL: f.OpenAIBaseURL(), Model: "gpt-6-sol", PromptCacheKey: true})
		}
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		id, err := b.SubmitBatch(ctx, "round-1-reviews-1", reqs)
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(delay)
		if st, err := b.BatchState(ctx, id); err != nil || !st.Ended {
			t.Fatalf("batch after its delay: %+v, %v", st, err)
		}
		u := f.Stats().AnthropicBatch
		if api == "openai" {
			u = f.Stats().OpenAIBatch
		}
		if u.Requests != len(reqs) {
			t.Fatalf("%d of %d requests answered", u.Requests, len(reqs))
		}
		return u.Hits
	}
	for _, api := range []string{"anthropic", "openai"} {
		for _, delay := range []time.Duration{5 * time.Minute, 10 * time.Minute, 30 * time.Minute} {
			for _, seed := range []uint64{1, 2, 3} {
				t.Run(fmt.Sprintf("%s %v seed %d", api, delay, seed), func(t *testing.T) {
					lf, adj, asMade := hits(t, api, delay, seed, leadersFirst), hits(t, api, delay, seed, adjacent), hits(t, api, delay, seed, made)
					t.Logf("hits of %d: leaders first %d, side by side %d, as made %d", groups*each, lf, adj, asMade)
					if lf <= adj {
						t.Errorf("leaders first hit %d times, side by side %d; want more", lf, adj)
					}
					// Every follower can hit, at most one miss per group to spare.
					if want := groups*(each-1) - groups; lf < want {
						t.Errorf("leaders first hit %d times; want at least %d", lf, want)
					}
				})
			}
		}
	}
}

func ids(reqs []provider.BatchRequest) []string {
	var s []string
	for _, r := range reqs {
		s = append(s, r.ID)
	}
	return s
}
