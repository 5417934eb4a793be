package provider

import (
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/cosci-dev/cosci/internal/research"
)

// Cache lifetimes: how long a provider keeps a prompt's prefix, short or long
// (research.Cache.Long), and what the turn's record says was asked.

// openAICaching is how an OpenAI model's prompt cache may be held longer.
type openAICaching int

const (
	openAIDefault  openAICaching = iota // no choice cosci makes: the API's default retention
	openAIExtended                      // prompt_cache_retention "24h" (GPT-5 to GPT-5.5)
	openAIExplicit                      // prompt_cache_breakpoint, 30-minute writes billed (GPT-5.6 on)
)

// openAICachingOf classifies a model by its name (a router's "openai/" prefix dropped):
// GPT-5.6 and later (the GPT-6 family) write explicit breakpoints and bill the writes;
// the GPT-5 models before 5.6 offer extended retention; others neither, as far as cosci
// asks (OpenAI's prompt-caching guide and the SDK's field docs, read 2026-11-25).
func openAICachingOf(model string) openAICaching {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	rest, ok := strings.CutPrefix(model, "gpt-")
	if !ok {
		return openAIDefault
	}
	version, _, _ := strings.Cut(rest, "-")
	majorText, minorText, _ := strings.Cut(version, ".")
	major, err := strconv.Atoi(majorText)
	if err != nil {
		return openAIDefault
	}
	minor := 0
	if minorText != "" {
		if minor, err = strconv.Atoi(minorText); err != nil {
			return openAIDefault
		}
	}
	switch {
	case major > 5 || (major == 5 && minor >= 6):
		return openAIExplicit
	case major == 5:
		return openAIExtended
	}
	return openAIDefault
}

// openAICache sets what a request carries for its cache lifetime on OpenAI's own API:
// with c.Long, extended retention on the models that offer it, or on GPT-5.6 and later an
// explicit breakpoint at the end of the shared prefix of the prompt (the user message
// first), so that the calls sharing it read it to its exact end, wherever the implicit
// breakpoint the API chooses falls. Its lifetime is the request's default, 30 minutes
// (the only one prompt_cache_options takes; a breakpoint's own ttl may be "12h", whose
// write price is not known here), renewed on each hit: it does not outlive a batch that
// waits longer. Short is the API's default: nothing sent.
func openAICache(params *openai.ChatCompletionNewParams, model string, c research.Cache, user int) {
	if !c.Long {
		return
	}
	switch openAICachingOf(model) {
	case openAIExtended:
		params.PromptCacheRetention = openai.ChatCompletionNewParamsPromptCacheRetention24h
	case openAIExplicit:
		u := params.Messages[user].OfUser
		if u == nil || c.Prefix <= 0 || c.Prefix > len(u.Content.OfString.Value) {
			return
		}
		text := u.Content.OfString.Value
		shared := openai.ChatCompletionContentPartTextParam{Text: text[:c.Prefix]}
		shared.PromptCacheBreakpoint.Mode = "explicit"
		parts := []openai.ChatCompletionContentPartUnionParam{{OfText: &shared}}
		if c.Prefix < len(text) {
			parts = append(parts, openai.TextContentPart(text[c.Prefix:]))
		}
		u.Content = openai.ChatCompletionUserMessageParamContentUnion{OfArrayOfContentParts: parts}
	}
}

// CacheLifetime is the cache lifetime a turn asked of its provider, as its record keeps
// it (store.Turn.Cache): "" when the turn caches nothing cosci chose (Anthropic without
// breakpoints; a model of another provider); Anthropic's "5m" or "1h" (Long); on OpenAI
// "24h" for extended retention (asked with Long, or GPT-5.5's only one), "30m" from
// GPT-5.6 on (the implicit breakpoint's lifetime, and the explicit one's with Long), and
// "default" where the request names none and OpenAI's default applies (in memory for 5
// to 10 minutes, or 24 hours for an organization without zero data retention, which
// cosci cannot see). It is the lifetime asked of OpenAI's own API: a compatible server
// (OPENAI_BASE_URL) is sent none of it.
func CacheLifetime(provider, model string, c research.Cache) string {
	switch provider {
	case "anthropic":
		switch {
		case !c.Breakpoints:
			return ""
		case c.Long:
			return "1h"
		}
		return "5m"
	case "openai":
		switch kind := openAICachingOf(model); {
		case kind == openAIExplicit:
			return "30m"
		case kind == openAIExtended && (c.Long || strings.HasPrefix(strings.TrimPrefix(model, "openai/"), "gpt-5.5")):
			return "24h"
		}
		return "default"
	}
	return ""
}
