package provider

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/cosci-dev/cosci/internal/research"
)

// Default model names, used when a session names none.
const (
	OpenAIDefaultModel    = "gpt-6-luna"
	AnthropicDefaultModel = "claude-haiku-4-5"
)

// Registry builds models from the worker's environment; credentials never come from
// anywhere else. It caches one model per (provider, model name) and is safe for
// concurrent use. Do not copy a Registry after first use.
//
// The environment it reads:
//
//   - OPENAI_API_KEY: required for provider "openai". A local server without auth
//     (Ollama, vLLM, llama.cpp) accepts any value.
//   - OPENAI_BASE_URL: optional; an OpenAI-compatible server, e.g.
//     http://localhost:11434/v1 (Ollama), http://localhost:8000/v1 (vLLM),
//     http://localhost:8080/v1 (llama.cpp), https://openrouter.ai/api/v1 (OpenRouter).
//   - ANTHROPIC_API_KEY: required for provider "anthropic".
//   - ANTHROPIC_BASE_URL: optional.
type Registry struct {
	// Offline is the "offline" model, given by the binaries that offer it (the worker gives
	// its simulator.Offline), so that what only names or prices models does not carry the
	// simulator; nil: this registry does not serve the offline provider.
	Offline    Model
	Env        func(string) string // os.Getenv in production
	Prices     Prices              // for the cost of real models' turns
	HTTPClient *http.Client        // for real models; nil means a new client each

	mu        sync.Mutex
	models    map[[2]string]Model
	embedders map[[2]string]Embedder
}

// ModelName is the provider and model a turn naming them gets: an empty provider is
// offline, an empty model the provider's default (OpenAIDefaultModel,
// AnthropicDefaultModel), and the offline provider's model is "offline".
func ModelName(provider, model string) (string, string) {
	provider = strings.ToLower(strings.TrimSpace(provider))
	model = strings.TrimSpace(model)
	if provider == "" {
		provider = research.DefaultProvider
	}
	switch {
	case provider == research.DefaultProvider:
		model = research.DefaultProvider
	case model != "":
	case provider == "openai":
		model = OpenAIDefaultModel
	case provider == "anthropic":
		model = AnthropicDefaultModel
	}
	return provider, model
}

// Model returns the model for a session's provider and model name. An empty model name is
// the provider's default (OpenAIDefaultModel, AnthropicDefaultModel); "offline" (or an
// empty provider) returns r.Offline, whatever the model name. A missing key is an
// *AuthError naming the variable to set, an unusable base URL an *AuthError naming its
// variable, and a provider cosci does not know (or "offline" when r.Offline is nil)
// wraps ErrUnknownProvider.
func (r *Registry) Model(provider, model string) (Model, error) {
	provider, model = ModelName(provider, model)
	switch provider {
	case "openai", "anthropic":
	case research.DefaultProvider:
		model = ""
	default:
		return nil, fmt.Errorf("%w %q: use one of %s", ErrUnknownProvider, provider, strings.Join(research.Providers, ", "))
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	return cached(&r.models, provider, model, r.build)
}

// cached returns what cache holds for a provider's model, or builds it and keeps it. A
// failed build is not kept: the environment may be fixed before the next call. The caller
// holds the registry's lock.
func cached[T any](cache *map[[2]string]T, provider, model string, build func(provider, model string) (T, error)) (T, error) {
	k := [2]string{provider, model}
	if v, ok := (*cache)[k]; ok {
		return v, nil
	}
	v, err := build(provider, model)
	if err != nil {
		var none T
		return none, err
	}
	if *cache == nil {
		*cache = map[[2]string]T{}
	}
	(*cache)[k] = v
	return v, nil
}

func (r *Registry) build(provider, model string) (Model, error) {
	if provider == research.DefaultProvider {
		if r.Offline == nil {
			return nil, fmt.Errorf("%w %q: this binary's registry has no offline model (Registry.Offline)", ErrUnknownProvider, provider)
		}
		return r.Offline, nil
	}
	env := r.Env
	if env == nil {
		return nil, &AuthError{Provider: provider, Message: "the worker's registry has no environment to read credentials from (Registry.Env is nil); this is a bug in the worker"}
	}
	get := func(name string) string { return strings.TrimSpace(env(name)) }
	var c Completer
	switch provider {
	case "openai":
		key := get("OPENAI_API_KEY")
		if key == "" {
			return nil, keyMissing("openai", "OPENAI_API_KEY", " (a local server without auth, such as Ollama, accepts any value)")
		}
		base := get("OPENAI_BASE_URL")
		o, err := NewOpenAI(OpenAIConfig{APIKey: key, BaseURL: base, Model: model, HTTPClient: r.HTTPClient, PromptCacheKey: isOpenAI(base)})
		if err != nil {
			return nil, err
		}
		c = o
	case "anthropic":
		key := get("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, keyMissing("anthropic", "ANTHROPIC_API_KEY", "")
		}
		a, err := NewAnthropic(AnthropicConfig{APIKey: key, BaseURL: get("ANTHROPIC_BASE_URL"), Model: model, HTTPClient: r.HTTPClient})
		if err != nil {
			return nil, err
		}
		c = a
	}
	return &LLM{C: c, Model: model, Prices: r.Prices}, nil
}

// isOpenAI reports whether an OPENAI_BASE_URL is OpenAI's own API (or unset): only there
// does cosci send fields other OpenAI-compatible servers may refuse.
func isOpenAI(base string) bool {
	if base == "" {
		return true
	}
	u, err := url.Parse(base)
	return err == nil && (u.Hostname() == "api.openai.com")
}
