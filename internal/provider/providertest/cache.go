package providertest

import (
	"hash/fnv"
	"time"
)

// The prompt cache, as each API describes its own. Both cache prefixes of the prompt, in
// the order the provider lays the request out (tools and the answer schema, then the
// system prompt, then the messages), and both forget a prefix that has not been used for
// its lifetime. They differ in what they cache and how they report it:
//
//   - OpenAI caches automatically: every prompt of at least 1,024 tokens, in steps of 128
//     tokens. cached_tokens is the longest such prefix an earlier request within the
//     lifetime had too. Nothing is reported as written. From GPT-5.6 on it caches at
//     breakpoints, as Anthropic does, and reports the writes (openai_cache.go).
//   - Anthropic caches only at the blocks a request marks with cache_control, and only a
//     prefix of at least the model's minimum. cache_read_input_tokens is the longest
//     marked prefix cached before; cache_creation_input_tokens what this request wrote
//     past it; input_tokens the rest.

// Prompt caching constants of the OpenAI API (platform.openai.com/docs/guides/prompt-caching).
const (
	openAIMinPrefix = 1024 // prompts shorter than this are not cached at all
	openAIStep      = 128  // cached prefixes grow in steps of this many tokens
)

// Anthropic's rules (docs.claude.com/en/docs/build-with-claude/prompt-caching).
const (
	anthropicMaxBreakpoints = 4  // cache_control blocks a request may carry
	anthropicLookback       = 20 // blocks before a breakpoint checked for an earlier entry
	anthropicTTL            = 5 * time.Minute
	anthropicLongTTL        = time.Hour
)

// entry is one cached prefix: from when it can be read, when it is forgotten, and the
// lifetime a use renews.
type entry struct {
	from, expires time.Time
	ttl           time.Duration
}

// prefixCache holds cached prefixes by the hash of their content (and of the scope they
// were cached in: model, and for OpenAI the prompt_cache_key).
type prefixCache struct {
	entries map[uint64]entry
	swept   int // len(entries) at the last sweep
	// lag is how long after a request starts what it writes can be read: 0 for an
	// ordinary request; a spread batch's request's run time (moment), set while it runs.
	// A spread batch is processed once it has ended, its requests at their own, earlier
	// times, so the cache may be asked about a time before what it last heard of: an
	// entry is live only from its write (from) to its expiry.
	lag time.Duration
}

func newPrefixCache() *prefixCache { return &prefixCache{entries: map[uint64]entry{}} }

// live reports whether key is cached at now.
func (c *prefixCache) live(key uint64, now time.Time) bool {
	e, ok := c.entries[key]
	return ok && !now.Before(e.from) && now.Before(e.expires)
}

// use renews a live entry's lifetime, as both APIs do on a hit (never shortening it: a
// use at an earlier time than the last one renews nothing).
func (c *prefixCache) use(key uint64, now time.Time) {
	if e, ok := c.entries[key]; ok && c.live(key, now) && now.Add(e.ttl).After(e.expires) {
		e.expires = now.Add(e.ttl)
		c.entries[key] = e
	}
}

// put caches key for ttl from now (readable from lag after now, lived ttl from then); an
// entry that is already cached keeps the longer of the two lifetimes. An entry whose time
// does not meet the new one's (written later, by a request the fake served before an
// earlier request of a spread batch) gives way to the one that lasts longer.
func (c *prefixCache) put(key uint64, now time.Time, ttl time.Duration) {
	from := now.Add(c.lag)
	e := entry{from: from, expires: from.Add(ttl), ttl: ttl}
	if old, ok := c.entries[key]; ok {
		switch {
		case !old.from.After(e.expires) && !e.from.After(old.expires): // they meet: one entry
			if old.expires.After(e.expires) {
				e.expires, e.ttl = old.expires, old.ttl
			}
			if old.from.Before(e.from) {
				e.from = old.from
			}
		case old.expires.After(e.expires):
			e = old
		}
	}
	c.entries[key] = e
	if len(c.entries) > 2*c.swept+1024 { // forget the dead now and then, so memory stays bounded
		for k, v := range c.entries {
			// A day past its death: a spread batch's requests run up to its 24-hour window
			// before the moment it is processed.
			if !now.Before(v.expires.Add(completionWindow)) {
				delete(c.entries, k)
			}
		}
		c.swept = len(c.entries)
	}
}

// hasher is an incremental FNV-1a hash: the hash of a prefix is the state after feeding it.
type hasher uint64

func newHasher(scope string) hasher {
	h := fnv.New64a()
	h.Write([]byte(scope))
	return hasher(h.Sum64())
}

const fnvPrime = 1099511628211

func (h hasher) id(id uint32) hasher {
	for i := 0; i < 4; i++ {
		h ^= hasher(byte(id >> (8 * i)))
		h *= fnvPrime
	}
	return h
}

func (h hasher) text(s string) hasher {
	for i := 0; i < len(s); i++ {
		h ^= hasher(s[i])
		h *= fnvPrime
	}
	return h.id(uint32(len(s))) // so that "ab"+"c" and "a"+"bc" differ
}

// openAICache looks up and then caches the prompt ids (the whole request, laid out as
// OpenAI processes it) within scope, and returns cached_tokens: the longest prefix of
// 1,024 + k·128 tokens that was cached and is still live. Every such prefix of this prompt
// is then cached for ttl (a hit renews them). A prompt under 1,024 tokens is neither
// looked up nor cached.
func (c *prefixCache) openAI(scope string, ids []uint32, ttl time.Duration, now time.Time) (cached int) {
	if len(ids) < openAIMinPrefix {
		return 0
	}
	h := newHasher(scope)
	var keys []uint64 // keys[k] is the prefix of openAIMinPrefix + k·openAIStep tokens
	for i, id := range ids {
		h = h.id(id)
		if n := i + 1; n >= openAIMinPrefix && (n-openAIMinPrefix)%openAIStep == 0 {
			keys = append(keys, uint64(h))
		}
	}
	for k := len(keys) - 1; k >= 0; k-- {
		if c.live(keys[k], now) {
			cached = openAIMinPrefix + k*openAIStep
			break
		}
	}
	for _, key := range keys {
		c.put(key, now, ttl)
	}
	return cached
}

// block is one block of an Anthropic request as the cache sees it: the hash of the prefix
// up to and including it, the tokens up to and including it, and the lifetime of its
// cache_control breakpoint (0: not a breakpoint).
type block struct {
	key uint64
	end int
	ttl time.Duration
}

// cacheUse is how a request's input tokens split, as Anthropic's usage reports them.
type cacheUse struct {
	read            int // cache_read_input_tokens
	write5m, write1 int // cache_creation_input_tokens, by lifetime (cache_creation.ephemeral_5m/1h)
}

func (u cacheUse) written() int { return u.write5m + u.write1 }

// anthropic looks up and caches a request's breakpoints. For each breakpoint it checks the
// breakpoint's own prefix and those of the anthropicLookback blocks before it, longest
// first, for a live entry; the longest entry found is the read (and its lifetime is
// renewed). Each breakpoint past the read whose prefix has at least min tokens is then
// cached with its lifetime, and the tokens from the read to the last of them are what
// this request wrote, each stretch counted under the lifetime of the breakpoint that
// ends it. A breakpoint under min caches nothing, as the API silently does.
func (c *prefixCache) anthropic(blocks []block, min int, now time.Time) cacheUse {
	return c.breakpoints(blocks, min, anthropicLookback, now)
}

// breakpoints is the cache of an API that caches at breakpoints (Anthropic's, and
// OpenAI's from GPT-5.6 on), as anthropic describes it, looking back lookback blocks
// before each breakpoint.
func (c *prefixCache) breakpoints(blocks []block, min, lookback int, now time.Time) cacheUse {
	var u cacheUse
	hit := -1
	for k, b := range blocks {
		if b.ttl == 0 {
			continue
		}
		for j := k; j >= 0 && j >= k-lookback; j-- {
			if c.live(blocks[j].key, now) {
				if blocks[j].end > u.read {
					u.read, hit = blocks[j].end, j
				}
				break
			}
		}
	}
	if hit >= 0 {
		c.use(blocks[hit].key, now)
	}
	from := u.read
	for k := hit + 1; k < len(blocks); k++ {
		b := blocks[k]
		if b.ttl == 0 || b.end < min {
			continue
		}
		if n := b.end - from; n > 0 {
			if b.ttl >= anthropicLongTTL {
				u.write1 += n
			} else {
				u.write5m += n
			}
			from = b.end
		}
		c.put(b.key, now, b.ttl)
	}
	return u
}

// minimum is the fewest tokens a Claude model caches at a breakpoint.
func (s *Server) minimum(model string) int {
	best, n := -1, 0
	for _, table := range []map[string]int{AnthropicMinimum, s.opts.AnthropicMinimums} {
		for prefix, min := range table {
			if len(prefix) >= best && len(model) >= len(prefix) && model[:len(prefix)] == prefix {
				best, n = len(prefix), min
			}
		}
	}
	if best >= 0 {
		return n
	}
	if s.opts.AnthropicDefaultMinimum > 0 {
		return s.opts.AnthropicDefaultMinimum
	}
	return 1024
}

// AnthropicMinimum is the fewest tokens each Claude model caches at a breakpoint, by model
// name prefix (Anthropic's prompt caching documentation, read 2026). Options can add to it
// or override it.
var AnthropicMinimum = map[string]int{
	// The 5 models (as third-party reports of the prompt-caching page list them, read
	// 2026-11; Sonnet 5.5 is taken to be Sonnet 5's).
	"claude-opus-5":   512,
	"claude-fable":    512,
	"claude-mythos":   512,
	"claude-sonnet-5": 1024,
	"claude-opus-4-8": 1024,
	"claude-opus-4-7": 2048,
	// The 4 and 3 models, as the prompt-caching page lists them.
	"claude-opus-4-6":   4096,
	"claude-opus-4-5":   4096,
	"claude-haiku-4-5":  4096,
	"claude-opus-4-1":   1024,
	"claude-opus-4":     1024,
	"claude-sonnet-4-6": 1024,
	"claude-sonnet-4-5": 1024,
	"claude-sonnet-4":   1024,
	"claude-3-7-sonnet": 1024,
	"claude-3-5-haiku":  2048,
	"claude-haiku-3-5":  2048,
	"claude-3-haiku":    2048,
}
