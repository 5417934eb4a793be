package providertest

import (
	"strconv"
	"strings"
	"time"
)

// OpenAI's prompt cache from GPT-5.6 on (the SDK's prompt_cache_options and
// prompt_cache_breakpoint docs, and OpenAI's pricing, read 2026-11-25): writes are billed
// (cache_write_tokens, 1.25 times the input price), and a request may mark explicit
// breakpoints on content parts besides the implicit one the API chooses (none with
// prompt_cache_options.mode "explicit"). Where the implicit breakpoint goes the docs do
// not say; the fake takes it to cache the prompt as the automatic cache did before
// GPT-5.6 (its prefixes of 1,024 + k·128 tokens, rounded to a token block), for 30
// minutes. An explicit breakpoint caches the prefix up to the exact end of its part
// (not rounded), for its ttl ("30m", the request's default, or "12h"); the latest 3 are
// written beside the implicit one, 4 without it. A request reads the longest live
// prefix of either kind (explicit ones looked up from each of its own explicit
// breakpoints back to any message or marked-part boundary before it, without a lookback
// limit); what it writes is the tokens past the read up to the end of the last prefix it
// caches. Every hit renews the lifetime.

// openAIExplicitTTL is a breakpoint's lifetime when neither it nor the request names one.
const openAIExplicitTTL = 30 * time.Minute

// mark is where the explicit cache may cut an OpenAI prompt: the end of a message, or of
// a content part with a prompt_cache_breakpoint (explicit, with its mode and ttl).
type mark struct {
	end      int
	explicit bool
	mode     string
	ttl      string
}

// explicitCaching reports whether a model caches at breakpoints and bills the writes:
// GPT-5.6 and later (gpt-5.6-*, gpt-6*, ...), by name.
func explicitCaching(model string) bool {
	rest, ok := strings.CutPrefix(model[strings.LastIndexByte(model, '/')+1:], "gpt-")
	if !ok {
		return false
	}
	version, _, _ := strings.Cut(rest, "-")
	majorText, minorText, _ := strings.Cut(version, ".")
	major, err := strconv.Atoi(majorText)
	minor, _ := strconv.Atoi(minorText)
	return err == nil && (major > 5 || (major == 5 && minor >= 6))
}

// checkCacheOptions refuses what the API refuses about the explicit cache: its options or
// breakpoints on a model before GPT-5.6, prompt_cache_options beside the
// prompt_cache_retention it supersedes, and modes or lifetimes it does not take.
func checkCacheOptions(req chatRequest, marks []mark) *apiError {
	explicit := 0
	for _, m := range marks {
		if m.explicit {
			explicit++
			if m.mode != "explicit" {
				return &apiError{status: 400, kind: "invalid_request_error", param: "prompt_cache_breakpoint.mode", message: "Invalid value: '" + m.mode + "'. Supported values are: 'explicit'."}
			}
			if m.ttl != "" && m.ttl != "30m" && m.ttl != "12h" {
				return &apiError{status: 400, kind: "invalid_request_error", param: "prompt_cache_breakpoint.ttl", message: "Invalid value: '" + m.ttl + "'. Supported values are: '30m' and '12h'."}
			}
		}
	}
	o := req.PromptCacheOptions
	switch {
	case (o != nil || explicit > 0) && !explicitCaching(req.Model):
		return &apiError{status: 400, kind: "invalid_request_error", param: "prompt_cache_options", message: "prompt_cache_options and prompt_cache_breakpoint are only supported on gpt-5.6 and later models."}
	case o == nil:
		return nil
	case req.PromptCacheRetention != "":
		return &apiError{status: 400, kind: "invalid_request_error", param: "prompt_cache_retention", message: "prompt_cache_retention cannot be used with prompt_cache_options."}
	case o.Mode != "" && o.Mode != "implicit" && o.Mode != "explicit":
		return &apiError{status: 400, kind: "invalid_request_error", param: "prompt_cache_options.mode", message: "Invalid value: '" + o.Mode + "'. Supported values are: 'implicit' and 'explicit'."}
	case o.TTL != "" && o.TTL != "30m":
		return &apiError{status: 400, kind: "invalid_request_error", param: "prompt_cache_options.ttl", message: "Invalid value: '" + o.TTL + "'. Supported values are: '30m'."}
	}
	return nil
}

// explicit looks up and caches a prompt of a GPT-5.6 or later model, as the comment at
// the top of this file says, and returns cached_tokens and cache_write_tokens.
func (c *prefixCache) explicit(scope string, ids []uint32, marks []mark, req chatRequest, now time.Time) (read, written int) {
	implicit := req.PromptCacheOptions == nil || req.PromptCacheOptions.Mode != "explicit"
	end := 0 // the end of the last prefix the request caches
	if implicit && len(ids) >= openAIMinPrefix {
		read = c.openAI(scope, ids, openAIExplicitTTL, now)
		end = len(ids) - (len(ids)-openAIMinPrefix)%openAIStep
	}
	blocks := openAIBlocks(scope, ids, marks, implicit)
	use := c.breakpoints(blocks, openAIMinPrefix, len(blocks), now)
	read = max(read, use.read)
	for _, b := range blocks {
		if b.ttl > 0 && b.end >= openAIMinPrefix {
			end = max(end, b.end)
		}
	}
	return read, max(0, end-read)
}

// openAIBlocks are a prompt's marks as the cache sees them: the hash of the prefix up to
// each (within scope), and the lifetime of the explicit breakpoints the request writes
// there (the latest 3, or 4 without the implicit one).
func openAIBlocks(scope string, ids []uint32, marks []mark, implicit bool) []block {
	room := 4
	if implicit {
		room = 3
	}
	blocks := make([]block, len(marks))
	h, from := newHasher(scope), 0
	for i, m := range marks {
		for _, id := range ids[from:m.end] {
			h = h.id(id)
		}
		from = m.end
		blocks[i] = block{key: uint64(h), end: m.end}
	}
	for i := len(marks) - 1; i >= 0 && room > 0; i-- {
		if marks[i].explicit {
			room--
			blocks[i].ttl = lifetime(marks[i].ttl)
		}
	}
	return blocks
}

// lifetime is a breakpoint's ttl as a duration ("" is the request's default, 30 minutes).
func lifetime(ttl string) time.Duration {
	if ttl == "12h" {
		return 12 * time.Hour
	}
	return openAIExplicitTTL
}
