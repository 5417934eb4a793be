package workflows

import (
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/provider/providertest"
)

// TestTurnClockDraws: each activity's latencies centre on its median times the clock's
// scale, spread as the log-normal says, and a new clock draws the same sequence.
func TestTurnClockDraws(t *testing.T) {
	for _, tc := range []struct {
		activity string
		scale    float64
	}{{"Compare", 1}, {"Review", 1}, {"Overview", 1}, {"Generate", 2}, {"Proximity", 0.5}} {
		t.Run(tc.activity, func(t *testing.T) {
			a, b := &turnClock{scale: tc.scale}, &turnClock{scale: tc.scale}
			const n = 2001
			draws := make([]time.Duration, n)
			for i := range draws {
				draws[i] = a.draw(tc.activity)
				if again := b.draw(tc.activity); again != draws[i] {
					t.Fatalf("draw %d: %v, then %v from a new clock", i, draws[i], again)
				}
			}
			slices.Sort(draws)
			want := time.Duration(tc.scale * float64(turnMedians[tc.activity]))
			if m := draws[n/2]; m < want*9/10 || m > want*11/10 {
				t.Errorf("median %v, want %v within 10%%", m, want)
			}
			// With σ 0.6, the 90th percentile is exp(0.6·1.2816) ≈ 2.16 times the median.
			if p90 := float64(draws[n*9/10]) / float64(draws[n/2]); p90 < 1.9 || p90 > 2.4 {
				t.Errorf("90th percentile %.2f times the median, want about 2.16", p90)
			}
		})
	}
}

// TestBatchDelays: the sweep flag parses into delays and refuses what is not one.
func TestBatchDelays(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []time.Duration
		err  bool
	}{
		{"5m,30m,2h", []time.Duration{5 * time.Minute, 30 * time.Minute, 2 * time.Hour}, false},
		{" 1h ", []time.Duration{time.Hour}, false},
		{"5m,soon", nil, true},
		{"-1m", nil, true},
	} {
		got, err := batchDelays(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("batchDelays(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestFigures: the forecast's figures are per request and per hypothesis, from the
// model's own token counts (not the ×1.2 rows), the cache+batch ones from the sweep's
// middle delay with caching batches.
func TestFigures(t *testing.T) {
	delays := []time.Duration{5 * time.Minute, 30 * time.Minute, 2 * time.Hour}
	row := func(kind string, scale float64, delay time.Duration, requests int) costRow {
		return costRow{modelID: "m", kind: kind, scale: scale, delay: delay, realistic: true, hypotheses: 10,
			byAgent: map[string]providertest.Usage{"review": {Requests: requests, Input: 1000 * requests, CacheRead: 400 * requests, CacheWrite: 100 * requests, Output: 50 * requests}}}
	}
	got := figures([]costRow{
		row(modeCache, 1, 0, 20),
		row(modeCache, 1.2, 0, 99),
		row(modeBatch, 1, 5*time.Minute, 98),
		row(modeBatch, 1, 30*time.Minute, 30),
		row(modeBatchNoCache, 1, 30*time.Minute, 97),
		row(modeBatch, 1, 2*time.Hour, 96),
	}, delays)
	want := map[string]map[string]map[string]agentFigures{"m": {
		"cache":       {"review": {RequestsPerHypothesis: 2, PromptTokens: 1000, CachedShare: 0.4, CacheWriteTokens: 100, OutputTokens: 50}},
		"cache+batch": {"review": {RequestsPerHypothesis: 3, PromptTokens: 1000, CachedShare: 0.4, CacheWriteTokens: 100, OutputTokens: 50}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("figures = %+v\nwant %+v", got, want)
	}
}

// TestTurnClockExpiresCaches: the turns' latencies reach the fake provider's caches.
// With turns of a few seconds a short session's prompts are cached as at zero latency;
// with turns that take longer than the caches' lifetime (Claude's five minutes, GPT-6's
// thirty: slow is 40 and 400 times the medians), less of them is, and the session lasts
// hours on the workflow clock.
func TestTurnClockExpiresCaches(t *testing.T) {
	defer func(n int) { *costHypotheses = n }(*costHypotheses)
	*costHypotheses = 6
	for _, p := range []struct {
		provider, model string
		slow            float64 // turns this many times the medians outlive the cache
	}{{"openai", "gpt-6-sol", 400}, {"anthropic", "claude-sonnet-5-5", 40}} {
		t.Run(p.provider, func(t *testing.T) {
			bound := runCost(t, p.provider, p.model, 1, costMode{kind: modeCache})
			fast := runCost(t, p.provider, p.model, 1, costMode{kind: modeCache, clock: &turnClock{scale: 0.1}})
			slow := runCost(t, p.provider, p.model, 1, costMode{kind: modeCache, clock: &turnClock{scale: p.slow}})
			share := func(r costRow) float64 { return float64(r.cached) / float64(max(1, r.input)) }
			if share(bound) == 0 || math.Abs(share(fast)-share(bound)) > 0.02 {
				t.Errorf("cached share %.3f with fast turns, %.3f at zero latency; want about the same, above 0", share(fast), share(bound))
			}
			if share(slow) >= share(fast) {
				t.Errorf("cached share %.3f with turns of minutes, %.3f with fast ones; want less", share(slow), share(fast))
			}
			if bound.elapsed != 0 || fast.elapsed <= 0 || slow.elapsed < time.Hour {
				t.Errorf("session time %v at zero latency, %v fast, %v slow; want 0, more, hours", bound.elapsed, fast.elapsed, slow.elapsed)
			}
			t.Logf("cached share: %.3f at zero latency, %.3f fast, %.3f slow (%v)", share(bound), share(fast), share(slow), slow.elapsed)
			if slow.hypotheses != bound.hypotheses {
				t.Errorf("%d hypotheses with slow turns, %d at zero latency", slow.hypotheses, bound.hypotheses)
			}
		})
	}
}
