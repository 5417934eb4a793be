package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/cosci-dev/cosci/internal/research"
)

// Embeddings, for the proximity agent. A session chooses its embedding provider apart
// from its chat provider (research.Config.EmbeddingProvider), so that a session whose chat
// provider has no embeddings API (Anthropic, offline) can still compare hypotheses by
// meaning rather than by words:
//
//   - "openai": OpenAI's embeddings endpoint, or whatever OPENAI_BASE_URL names, with
//     OPENAI_API_KEY (the chat provider's own settings);
//   - "openai-compatible": any other server with an OpenAI-compatible embeddings endpoint
//     (Ollama, vLLM, llama.cpp, TEI) at COSCI_EMBEDDING_BASE_URL, with
//     COSCI_EMBEDDING_API_KEY if it asks for one; the session names the model it serves;
//   - "voyage": Voyage AI (the embeddings Anthropic recommends), with VOYAGE_API_KEY
//     (VOYAGE_BASE_URL for a proxy).
//
// A session that names none uses its chat provider's embeddings when it has some (openai)
// and compares words otherwise (see EmbeddingProviderOf).

// The embedding providers a session may name (research.EmbeddingProviders).
const (
	EmbedOpenAI     = "openai"
	EmbedCompatible = "openai-compatible"
	EmbedVoyage     = "voyage"
)

// DefaultEmbeddingModel is the OpenAI embedding model a session uses when it names none;
// DefaultVoyageModel is Voyage's. An OpenAI-compatible server has no default: the session
// names the model the server serves.
const (
	DefaultEmbeddingModel = "text-embedding-3-small"
	DefaultVoyageModel    = "voyage-3.5"
)

// VoyageDefaultBaseURL is Voyage's API; requests go to {base}/v1/embeddings.
const VoyageDefaultBaseURL = "https://api.voyageai.com"

// embedBatch is how many texts go into one request (Voyage takes up to 1,000, OpenAI 2,048).
const embedBatch = 64

// EmbeddingProviderOf is the embedding provider a session with the chat provider chat and
// the embedding provider embedding uses: embedding when it names one, else the chat
// provider's own embeddings ("openai"), else "" (none: compare words).
func EmbeddingProviderOf(chat, embedding string) string {
	if e := strings.ToLower(strings.TrimSpace(embedding)); e != "" {
		return e
	}
	if strings.ToLower(strings.TrimSpace(chat)) == EmbedOpenAI {
		return EmbedOpenAI
	}
	return ""
}

// EmbeddingModelOf is the model an embedding provider embeds with when the session names
// none: DefaultEmbeddingModel for OpenAI, DefaultVoyageModel for Voyage, and "" for an
// OpenAI-compatible server (research.Config.Validate asks for one).
func EmbeddingModelOf(provider, model string) string {
	if model = strings.TrimSpace(model); model != "" {
		return model
	}
	switch provider {
	case EmbedOpenAI:
		return DefaultEmbeddingModel
	case EmbedVoyage:
		return DefaultVoyageModel
	}
	return ""
}

// Embedder turns texts into vectors, one per text, in order.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, research.Usage, error)
}

// OpenAIEmbedder is an Embedder on an OpenAI-compatible embeddings endpoint.
type OpenAIEmbedder struct {
	svc    openai.EmbeddingService
	model  string
	name   string // the provider its errors name: "openai" or "openai-compatible"
	keyVar string // the variable that holds its key, for the errors
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
	return newOpenAIEmbedder(cfg, endpoint{"openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", " (a local server without auth accepts any value)", DefaultEmbeddingModel, OpenAIDefaultBaseURL})
}

func newOpenAIEmbedder(cfg OpenAIConfig, ep endpoint) (*OpenAIEmbedder, error) {
	base, hc, err := ep.check(cfg.APIKey, cfg.Model, cfg.BaseURL, cfg.HTTPClient)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{option.WithHTTPClient(hc), option.WithBaseURL(base), option.WithAPIKey(cfg.APIKey), option.WithMaxRetries(0)}
	if cfg.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(cfg.Timeout))
	}
	return &OpenAIEmbedder{svc: openai.NewEmbeddingService(opts...), model: cfg.Model, name: ep.provider, keyVar: ep.keyVar, key: cfg.APIKey}, nil
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
			return nil, usage, e.classify(ctx, err)
		}
		usage = usage.Add(research.Usage{PromptTokens: int(resp.Usage.PromptTokens), Requests: 1})
		for _, d := range resp.Data {
			if err := place(e.name, out[start:start+len(batch)], int(d.Index), d.Embedding); err != nil {
				return nil, usage, err
			}
		}
	}
	if err := complete(e.name, out); err != nil {
		return nil, usage, err
	}
	return out, e.prices.Priced(e.model, usage), nil
}

func (e *OpenAIEmbedder) classify(ctx context.Context, err error) error {
	return classifyOpenAI(ctx, e.name, e.keyVar, e.key, err)
}

// place puts the vector an answer gives for index i of a batch into batch.
func place(provider string, batch [][]float32, i int, vec []float64) error {
	if i < 0 || i >= len(batch) {
		return &RequestError{Provider: provider, Message: fmt.Sprintf("the embeddings answer has index %d for a batch of %d", i, len(batch))}
	}
	v := make([]float32, len(vec))
	for k, x := range vec {
		v[k] = float32(x)
	}
	batch[i] = v
	return nil
}

// complete refuses an answer that left a text without its vector.
func complete(provider string, out [][]float32) error {
	for i, v := range out {
		if len(v) == 0 {
			return &RequestError{Provider: provider, Message: fmt.Sprintf("the embeddings answer has no vector for text %d", i)}
		}
	}
	return nil
}

// VoyageConfig configures a VoyageEmbedder.
type VoyageConfig struct {
	APIKey     string        // required: VOYAGE_API_KEY
	BaseURL    string        // "" means VoyageDefaultBaseURL
	Model      string        // "" means DefaultVoyageModel
	HTTPClient *http.Client  // nil means a new client
	Timeout    time.Duration // per request; 0 leaves it to the context
}

// VoyageEmbedder is an Embedder on Voyage AI's embeddings API (POST {base}/v1/embeddings).
// Voyage has no Go SDK; the API is one JSON request, which this makes with net/http.
type VoyageEmbedder struct {
	url, model, key string
	hc              *http.Client
	timeout         time.Duration
	prices          Prices
}

// maxVoyageAnswer bounds the answer read: 64 vectors of 2,048 floats as JSON take about 3 MB.
const maxVoyageAnswer = 32 << 20

// NewVoyageEmbedder returns an embedder for cfg's model. Like the other providers it reads
// nothing from the environment and never retries.
func NewVoyageEmbedder(cfg VoyageConfig) (*VoyageEmbedder, error) {
	if cfg.Model == "" {
		cfg.Model = DefaultVoyageModel
	}
	base, hc, err := endpoint{EmbedVoyage, "VOYAGE_API_KEY", "VOYAGE_BASE_URL", "", DefaultVoyageModel, VoyageDefaultBaseURL}.
		check(cfg.APIKey, cfg.Model, cfg.BaseURL, cfg.HTTPClient)
	if err != nil {
		return nil, err
	}
	return &VoyageEmbedder{url: strings.TrimRight(base, "/") + "/v1/embeddings", model: cfg.Model, key: cfg.APIKey, hc: hc, timeout: cfg.Timeout}, nil
}

// voyageRequest and voyageAnswer are the API's request and answer, as far as cosci uses
// them. Hypotheses are embedded as documents: they are compared with one another, never
// searched for with a query.
type voyageRequest struct {
	Input     []string `json:"input"`
	Model     string   `json:"model"`
	InputType string   `json:"input_type"`
}

type voyageAnswer struct {
	Data []struct {
		Embedding []float64 `json:"embedding"`
		Index     int       `json:"index"`
	} `json:"data"`
	Usage struct {
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
}

// Embed embeds texts, a batch per request.
func (e *VoyageEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, research.Usage, error) {
	out := make([][]float32, len(texts))
	var usage research.Usage
	for start := 0; start < len(texts); start += embedBatch {
		batch := texts[start:min(start+embedBatch, len(texts))]
		ans, err := e.post(ctx, voyageRequest{Input: batch, Model: e.model, InputType: "document"})
		if err != nil {
			return nil, usage, err
		}
		usage = usage.Add(research.Usage{PromptTokens: ans.Usage.TotalTokens, Requests: 1})
		for _, d := range ans.Data {
			if err := place(EmbedVoyage, out[start:start+len(batch)], d.Index, d.Embedding); err != nil {
				return nil, usage, err
			}
		}
	}
	if err := complete(EmbedVoyage, out); err != nil {
		return nil, usage, err
	}
	return out, e.prices.Priced(e.model, usage), nil
}

// post sends one request and reads its answer, classifying a failure as the other
// providers' are.
func (e *VoyageEmbedder) post(ctx context.Context, body voyageRequest) (voyageAnswer, error) {
	if e.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.timeout)
		defer cancel()
	}
	b, err := json.Marshal(body)
	if err != nil {
		return voyageAnswer{}, &RequestError{Provider: EmbedVoyage, Message: "cannot encode the request: " + err.Error(), err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(b))
	if err != nil {
		return voyageAnswer{}, &AuthError{Provider: EmbedVoyage, Message: "cannot make a request to " + e.url + ": check VOYAGE_BASE_URL", err: err}
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.hc.Do(req)
	if err != nil {
		return voyageAnswer{}, classifyOther(ctx, EmbedVoyage, e.key, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxVoyageAnswer+1))
	if err != nil {
		return voyageAnswer{}, classifyOther(ctx, EmbedVoyage, e.key, err)
	}
	if resp.StatusCode/100 != 2 {
		// Voyage's errors are {"detail": "..."}; quote the whole body if it is not.
		var detail struct {
			Detail any `json:"detail"`
		}
		text := string(raw)
		if json.Unmarshal(raw, &detail) == nil && detail.Detail != nil {
			if s, ok := detail.Detail.(string); ok {
				text = s
			} else if d, err := json.Marshal(detail.Detail); err == nil {
				text = string(d)
			}
		}
		return voyageAnswer{}, classify(EmbedVoyage, "VOYAGE_API_KEY", e.key, apiFailure{status: resp.StatusCode, text: text, header: resp.Header}, nil)
	}
	if len(raw) > maxVoyageAnswer {
		return voyageAnswer{}, &RequestError{Provider: EmbedVoyage, Message: fmt.Sprintf("the embeddings answer is over %d MB; embed fewer texts at once", maxVoyageAnswer>>20)}
	}
	var ans voyageAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return voyageAnswer{}, classifyOther(ctx, EmbedVoyage, e.key, err)
	}
	return ans, nil
}

// Embedder returns the embedder of an embedding provider (see EmbeddingProviderOf) and
// model (EmbeddingModelOf if ""), or nil for a provider that offers none ("", anthropic,
// offline): the session then compares words. A missing key or base URL is an *AuthError
// naming the variable to set, as for Model; an unknown provider wraps ErrUnknownProvider.
func (r *Registry) Embedder(provider, model string) (Embedder, error) {
	provider = strings.ToLower(strings.TrimSpace(provider))
	switch provider {
	case EmbedOpenAI, EmbedCompatible, EmbedVoyage:
	case "", "anthropic", research.DefaultProvider:
		return nil, nil
	default:
		return nil, fmt.Errorf("%w %q for embeddings: use one of %s", ErrUnknownProvider, provider, strings.Join(research.EmbeddingProviders, ", "))
	}
	model = EmbeddingModelOf(provider, model)
	r.mu.Lock()
	defer r.mu.Unlock()
	return cached(&r.embedders, provider, model, r.buildEmbedder)
}

func (r *Registry) buildEmbedder(provider, model string) (Embedder, error) {
	env := r.Env
	if env == nil {
		return nil, &AuthError{Provider: provider, Message: "the worker's registry has no environment to read credentials from (Registry.Env is nil); this is a bug in the worker"}
	}
	get := func(name string) string { return strings.TrimSpace(env(name)) }
	var e interface {
		Embedder
		setPrices(Prices)
	}
	var err error
	switch provider {
	case EmbedOpenAI:
		key := get("OPENAI_API_KEY")
		if key == "" {
			return nil, keyMissing(provider, "OPENAI_API_KEY", " (a local server without auth, such as Ollama, accepts any value)")
		}
		e, err = NewOpenAIEmbedder(OpenAIConfig{APIKey: key, BaseURL: get("OPENAI_BASE_URL"), Model: model, HTTPClient: r.HTTPClient})
	case EmbedCompatible:
		base := get("COSCI_EMBEDDING_BASE_URL")
		if base == "" {
			return nil, &AuthError{Provider: provider, Message: "COSCI_EMBEDDING_BASE_URL is not set; set it in the worker's environment to the server's OpenAI-compatible base URL (e.g. http://localhost:11434/v1 for Ollama, http://localhost:8000/v1 for vLLM) and restart the worker"}
		}
		key := get("COSCI_EMBEDDING_API_KEY")
		if key == "" {
			key = "none" // a local server without auth takes any key, and the SDK wants one
		}
		e, err = newOpenAIEmbedder(OpenAIConfig{APIKey: key, BaseURL: base, Model: model, HTTPClient: r.HTTPClient},
			endpoint{provider, "COSCI_EMBEDDING_API_KEY", "COSCI_EMBEDDING_BASE_URL", "", "nomic-embed-text", ""})
	default: // EmbedVoyage
		key := get("VOYAGE_API_KEY")
		if key == "" {
			return nil, keyMissing(provider, "VOYAGE_API_KEY", "")
		}
		e, err = NewVoyageEmbedder(VoyageConfig{APIKey: key, BaseURL: get("VOYAGE_BASE_URL"), Model: model, HTTPClient: r.HTTPClient})
	}
	if err != nil {
		return nil, err
	}
	e.setPrices(r.Prices)
	return e, nil
}

// setPrices gives an embedder the registry's prices, for the cost of its usage.
func (e *OpenAIEmbedder) setPrices(p Prices) { e.prices = p }

// setPrices gives an embedder the registry's prices, for the cost of its usage.
func (e *VoyageEmbedder) setPrices(p Prices) { e.prices = p }
