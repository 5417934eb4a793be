package provider

import (
	"context"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/cosci-dev/cosci/internal/research"
)

// Embeddings, for the proximity agent: an OpenAI-compatible server's embeddings endpoint,
// through the official SDK. Anthropic has none, and the offline simulator offers none:
// their sessions compare hypotheses by their words.

// DefaultEmbeddingModel is the embedding model a session uses when it names none.
const DefaultEmbeddingModel = "text-embedding-3-small"

// embedBatch is how many texts go into one request.
const embedBatch = 64

// Embedder turns texts into vectors, one per text, in order.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, research.Usage, error)
}

// OpenAIEmbedder is an Embedder on an OpenAI-compatible embeddings endpoint.
type OpenAIEmbedder struct {
	svc    openai.EmbeddingService
	model  string
	key    string // only to remove it from error messages
	prices Prices // for the cost of its usage
}

// NewOpenAIEmbedder returns an embedder for cfg's server and model (DefaultEmbeddingModel
// if cfg names none). Like NewOpenAI, it reads nothing from the environment and never
// retries: Temporal's retry policy is the one retry mechanism.
func NewOpenAIEmbedder(cfg OpenAIConfig) (*OpenAIEmbedder, error) {
	if cfg.Model == "" {
		cfg.Model = DefaultEmbeddingModel
	}
	base, hc, err := endpoint{"openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", " (a local server without auth accepts any value)", DefaultEmbeddingModel, OpenAIDefaultBaseURL}.
		check(cfg.APIKey, cfg.Model, cfg.BaseURL, cfg.HTTPClient)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{option.WithHTTPClient(hc), option.WithBaseURL(base), option.WithAPIKey(cfg.APIKey), option.WithMaxRetries(0)}
	if cfg.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(cfg.Timeout))
	}
	return &OpenAIEmbedder{svc: openai.NewEmbeddingService(opts...), model: cfg.Model, key: cfg.APIKey}, nil
}

// Embed embeds texts, a batch per request.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, research.Usage, error) {
	out := make([][]float32, len(texts))
	var usage research.Usage
	for start := 0; start < len(texts); start += embedBatch {
		batch := texts[start:min(start+embedBatch, len(texts))]
		resp, err := e.svc.New(ctx, openai.EmbeddingNewParams{
			Model: openai.EmbeddingModel(e.model),
			Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: batch},
		})
		if err != nil {
			return nil, usage, (&OpenAI{key: e.key}).classify(ctx, err)
		}
		usage = usage.Add(research.Usage{PromptTokens: int(resp.Usage.PromptTokens), Requests: 1})
		for _, d := range resp.Data {
			i := int(d.Index)
			if i < 0 || i >= len(batch) {
				return nil, usage, &RequestError{Provider: "openai", Message: fmt.Sprintf("the embeddings answer has index %d for a batch of %d", i, len(batch))}
			}
			v := make([]float32, len(d.Embedding))
			for k, x := range d.Embedding {
				v[k] = float32(x)
			}
			out[start+i] = v
		}
	}
	for i, v := range out {
		if len(v) == 0 {
			return nil, usage, &RequestError{Provider: "openai", Message: fmt.Sprintf("the embeddings answer has no vector for text %d", i)}
		}
	}
	return out, e.prices.Priced(e.model, usage), nil
}

// Embedder returns the embedder of a session's provider and embedding model, or nil when
// the provider offers none (anthropic, offline): the session then compares words. A
// missing key is an *AuthError, as for Model.
func (r *Registry) Embedder(provider, model string) (Embedder, error) {
	if provider != "openai" {
		return nil, nil
	}
	if model == "" {
		model = DefaultEmbeddingModel
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.embedders[model]; ok {
		return e, nil
	}
	env := r.Env
	if env == nil {
		return nil, &AuthError{Provider: provider, Message: "the worker's registry has no environment to read credentials from (Registry.Env is nil); this is a bug in the worker"}
	}
	key := env("OPENAI_API_KEY")
	if key == "" {
		return nil, keyMissing("openai", "OPENAI_API_KEY", " (a local server without auth, such as Ollama, accepts any value)")
	}
	e, err := NewOpenAIEmbedder(OpenAIConfig{APIKey: key, BaseURL: env("OPENAI_BASE_URL"), Model: model, HTTPClient: r.HTTPClient})
	if err != nil {
		return nil, err
	}
	if r.embedders == nil {
		r.embedders = map[string]Embedder{}
	}
	e.prices = r.Prices
	r.embedders[model] = e
	return e, nil
}
