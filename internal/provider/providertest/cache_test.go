package providertest

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// ids is a prompt of n token ids, the same as any other ids(…) up to diverge (exclusive)
// and different after it.
func ids(n, diverge int, salt uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(i)
		if i >= diverge {
			out[i] += salt << 20
		}
	}
	return out
}

func TestOpenAICacheArithmetic(t *testing.T) {
	const never = 1 << 30
	for _, tc := range []struct {
		name         string
		first, again []uint32
		scope2       string
		after        time.Duration
		want         int
	}{
		{"identical, under the minimum", ids(1000, never, 0), ids(1000, never, 0), "", 0, 0},
		{"identical, 1,500 tokens: 1,024 + 3·128", ids(1500, never, 0), ids(1500, never, 0), "", 0, 1408},
		{"identical, exactly 1,024", ids(1024, never, 0), ids(1024, never, 0), "", 0, 1024},
		{"diverging at 1,300: 1,280", ids(2000, never, 0), ids(2000, 1300, 1), "", 0, 1280},
		{"diverging at 1,100: 1,024", ids(2000, never, 0), ids(2000, 1100, 1), "", 0, 1024},
		{"diverging at 1,000: nothing", ids(2000, never, 0), ids(2000, 1000, 1), "", 0, 0},
		{"longer than the cached one", ids(1200, never, 0), ids(3000, never, 0), "", 0, 1152},
		{"another scope (prompt_cache_key)", ids(1500, never, 0), ids(1500, never, 0), "other", 0, 0},
		{"within the lifetime", ids(1500, never, 0), ids(1500, never, 0), "", 5*time.Minute - time.Second, 1408},
		{"past the lifetime", ids(1500, never, 0), ids(1500, never, 0), "", 5 * time.Minute, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newPrefixCache()
			if got := c.openAI("", tc.first, 5*time.Minute, t0); got != 0 {
				t.Fatalf("the first request had %d cached; want 0", got)
			}
			if got := c.openAI(tc.scope2, tc.again, 5*time.Minute, t0.Add(tc.after)); got != tc.want {
				t.Errorf("cached %d; want %d", got, tc.want)
			}
		})
	}
}

// request is an Anthropic request as the cache sees it: blocks of the given contents and
// tokens, with breakpoints (their TTLs) at some of them.
func request(contents []string, tokens []int, bps map[int]time.Duration) []block {
	h := newHasher("claude-test")
	end := 0
	var bs []block
	for i, c := range contents {
		h = h.text(c)
		end += tokens[i]
		bs = append(bs, block{key: uint64(h), end: end, ttl: bps[i]})
	}
	return bs
}

func TestAnthropicCacheArithmetic(t *testing.T) {
	const m5, h1 = anthropicTTL, anthropicLongTTL
	three := []string{"tools", "system", "question"}
	sizes := []int{500, 1500, 300}
	for _, tc := range []struct {
		name          string
		first, second []block
		after         time.Duration
		want1, want2  cacheUse
	}{
		{
			name:  "a breakpoint on the system: written, then read",
			first: request(three, sizes, map[int]time.Duration{1: m5}), second: request(three, sizes, map[int]time.Duration{1: m5}),
			want1: cacheUse{write5m: 2000}, want2: cacheUse{read: 2000},
		},
		{
			name:  "a breakpoint under the minimum caches nothing",
			first: request(three, sizes, map[int]time.Duration{0: m5}), second: request(three, sizes, map[int]time.Duration{0: m5}),
		},
		{
			name:  "one under the minimum and one above: the stretch to the one above is written",
			first: request(three, sizes, map[int]time.Duration{0: m5, 1: m5}), second: request(three, sizes, map[int]time.Duration{0: m5, 1: m5}),
			want1: cacheUse{write5m: 2000}, want2: cacheUse{read: 2000},
		},
		{
			name:  "1h then 5m: each stretch under its own lifetime",
			first: request(three, sizes, map[int]time.Duration{1: h1, 2: m5}), second: request(three, sizes, map[int]time.Duration{1: h1, 2: m5}),
			want1: cacheUse{write1: 2000, write5m: 300}, want2: cacheUse{read: 2300},
		},
		{
			name:  "past 5 minutes the 5m entry is gone, the 1h one is read",
			first: request(three, sizes, map[int]time.Duration{1: h1, 2: m5}), second: request(three, sizes, map[int]time.Duration{1: h1, 2: m5}),
			after: 6 * time.Minute,
			want1: cacheUse{write1: 2000, write5m: 300}, want2: cacheUse{read: 2000, write5m: 300},
		},
		{
			name:  "a new question after the cached system: read the system, write the question",
			first: request(three, sizes, map[int]time.Duration{1: m5}), second: request([]string{"tools", "system", "another"}, sizes, map[int]time.Duration{1: m5, 2: m5}),
			want1: cacheUse{write5m: 2000}, want2: cacheUse{read: 2000, write5m: 300},
		},
		{
			name:  "a change in the tools invalidates everything after it",
			first: request(three, sizes, map[int]time.Duration{1: m5}), second: request([]string{"tools v2", "system", "question"}, sizes, map[int]time.Duration{1: m5}),
			want1: cacheUse{write5m: 2000}, want2: cacheUse{write5m: 2000},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newPrefixCache()
			if got := c.anthropic(tc.first, 1024, t0); got != tc.want1 {
				t.Errorf("first request %+v; want %+v", got, tc.want1)
			}
			if got := c.anthropic(tc.second, 1024, t0.Add(tc.after)); got != tc.want2 {
				t.Errorf("second request %+v; want %+v", got, tc.want2)
			}
		})
	}
}

// The lookback: a breakpoint finds an entry up to 20 blocks before it, not further.
func TestAnthropicLookback(t *testing.T) {
	contents := make([]string, 40)
	tokens := make([]int, 40)
	for i := range contents {
		contents[i], tokens[i] = string(rune('a'+i%26))+string(rune('0'+i/26)), 100
	}
	for _, tc := range []struct {
		bp   int
		want int
	}{{30, 1100}, {31, 0}} {
		c := newPrefixCache()
		c.anthropic(request(contents, tokens, map[int]time.Duration{10: anthropicTTL}), 1024, t0) // caches 11 blocks, 1,100 tokens
		got := c.anthropic(request(contents, tokens, map[int]time.Duration{tc.bp: anthropicTTL}), 1024, t0)
		if got.read != tc.want {
			t.Errorf("a breakpoint at block %d, an entry at block 10: read %d; want %d", tc.bp, got.read, tc.want)
		}
	}
}
