package research

import "testing"

// TestUsageAdd: every count adds, the long cache writes among them, so that a session's
// total keeps the part of its cache writes made with the long lifetime.
func TestUsageAdd(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b Usage
		want Usage
	}{
		{"zero", Usage{}, Usage{}, Usage{}},
		{"every field",
			Usage{PromptTokens: 10, CompletionTokens: 2, Requests: 1, CachedTokens: 3, CacheWriteTokens: 4, CacheWriteLongTokens: 1, Batched: 1, Unpriced: 0, CostUSD: 0.5},
			Usage{PromptTokens: 20, CompletionTokens: 3, Requests: 2, CachedTokens: 5, CacheWriteTokens: 6, CacheWriteLongTokens: 6, Batched: 0, Unpriced: 1, CostUSD: 0.25},
			Usage{PromptTokens: 30, CompletionTokens: 5, Requests: 3, CachedTokens: 8, CacheWriteTokens: 10, CacheWriteLongTokens: 7, Batched: 1, Unpriced: 1, CostUSD: 0.75}},
		{"long writes only on one side", Usage{CacheWriteTokens: 100}, Usage{CacheWriteTokens: 50, CacheWriteLongTokens: 50}, Usage{CacheWriteTokens: 150, CacheWriteLongTokens: 50}},
	} {
		if got := tc.a.Add(tc.b); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
