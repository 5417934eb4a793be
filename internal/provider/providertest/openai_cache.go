package providertest

import (
	"strconv"
	"strings"
	"time"
)

// OpenAI's explicit prompt cache, from GPT-5.6 on (the SDK's prompt_cache_options and
// prompt_cache_breakpoint docs, and OpenAI's pricing, read 2026-11-25): the cache is
// written at breakpoints, an implicit one the API places (the fake: at the end of the
// last message) unless prompt_cache_options.mode is "explicit", and the explicit ones a
// request marks on content parts (the latest 3 of them written beside the implicit one,
// 4 without it). A breakpoint lives its ttl ("30m", the request's default, or "12h"),
// renewed on a hit; a later request reads the longest prefix, ending at any of its
// message or marked-part boundaries, that a breakpoint cached (no lookback limit). What
// it writes past the read is reported as cache_write_tokens, billed at 1.25 times the
// input price. The fake caches a breakpoint of at least 1,024 tokens, as the automatic
// cache's minimum.

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

// openAIBlocks are a prompt's marks as the cache sees them: the hash of the prefix up to
// each (within scope), and the lifetime of the breakpoints the request writes there.
func openAIBlocks(scope string, ids []uint32, marks []mark, req chatRequest) []block {
	implicit := req.PromptCacheOptions == nil || req.PromptCacheOptions.Mode != "explicit"
	room := 4 // explicit breakpoints written: the latest ones
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
	for i := len(marks) - 1; i >= 0; i-- {
		m := marks[i]
		switch {
		case m.explicit && room > 0:
			room--
			blocks[i].ttl = lifetime(m.ttl)
		case !m.explicit && implicit && i == len(marks)-1:
			blocks[i].ttl = openAIExplicitTTL
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
