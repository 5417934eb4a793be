package provider_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// texts are more than one request's worth, so that Embed batches them.
func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("Hypothesis %d: microglia carry tau seed %d between neurons", i, i*7)
	}
	return out
}

// TestVoyageEmbedder: against the fake Voyage API, every text gets its own vector (the
// stand-in's), in order, over several requests, embedded as a document; the usage counts
// Voyage's total_tokens and is priced from the table.
func TestVoyageEmbedder(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	e, err := provider.NewVoyageEmbedder(provider.VoyageConfig{APIKey: f.VoyageKey(), BaseURL: f.VoyageBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	in := texts(70) // 64 + 6: two requests
	vecs, u, err := e.Embed(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range in {
		if !slices.Equal(vecs[i], simulator.Embed(x)) {
			t.Fatalf("vector %d is not its text's", i)
		}
	}
	want := 0
	for _, x := range in {
		want += providertest.Tokens(x)
	}
	st := f.Stats()
	if u.Requests != 2 || u.PromptTokens != want || u.CompletionTokens != 0 {
		t.Errorf("usage %+v; want 2 requests and %d input tokens", u, want)
	}
	if st.Models[provider.DefaultVoyageModel] != 2 || st.VoyageInputTypes["document"] != 2 || st.Embeddings.Texts != 70 {
		t.Errorf("the fake saw models %v, input types %v, %d texts; want 2 requests of %s as documents, 70 texts", st.Models, st.VoyageInputTypes, st.Embeddings.Texts, provider.DefaultVoyageModel)
	}
	// Unpriced without a table; priced with the built-in one.
	if u.Unpriced != 2 || u.CostUSD != 0 {
		t.Errorf("without prices: %+v; want 2 unpriced requests", u)
	}
	r := &provider.Registry{Env: env(map[string]string{"VOYAGE_API_KEY": f.VoyageKey(), "VOYAGE_BASE_URL": f.VoyageBaseURL()}), Prices: provider.DefaultPrices()}
	pe, err := r.Embedder("voyage", "")
	if err != nil {
		t.Fatal(err)
	}
	_, u, err = pe.Embed(t.Context(), in[:3])
	if err != nil {
		t.Fatal(err)
	}
	if wantCost := float64(u.PromptTokens) * 0.06 / 1e6; u.Unpriced != 0 || math.Abs(u.CostUSD-wantCost) > 1e-15 {
		t.Errorf("priced: %+v; want $%g", u, wantCost)
	}
}

// TestVoyageErrors: each failure is classified as the other providers' are, says what to
// do, and never quotes the key.
func TestVoyageErrors(t *testing.T) {
	const key = "pa-secret-0123456789abcdef"
	f := providertest.Start(t, providertest.Options{})
	wrong, err := provider.NewVoyageEmbedder(provider.VoyageConfig{APIKey: key, BaseURL: f.VoyageBaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = wrong.Embed(t.Context(), []string{"tau"})
	var auth *provider.AuthError
	if !errors.As(err, &auth) || !strings.Contains(err.Error(), "VOYAGE_API_KEY") || !strings.Contains(err.Error(), "Provided API key is invalid") || strings.Contains(err.Error(), key) {
		t.Errorf("wrong key: %v; want an AuthError naming VOYAGE_API_KEY and quoting Voyage, without the key", err)
	}

	for _, tc := range []struct {
		name   string
		status int
		body   string
		check  func(error) bool
	}{
		{"rate limited", 429, `{"detail":"Rate limit exceeded"}`, func(err error) bool { var e *provider.RateLimitError; return errors.As(err, &e) }},
		{"overloaded", 503, `{"detail":"Service unavailable"}`, func(err error) bool { var e *provider.TransientError; return errors.As(err, &e) }},
		{"bad model", 400, `{"detail":"Model voyage-nine is not supported"}`, func(err error) bool {
			var e *provider.RequestError
			return errors.As(err, &e) && strings.Contains(err.Error(), "voyage-nine")
		}},
		{"out of range", 200, `{"data":[{"embedding":[1,0],"index":5}],"usage":{"total_tokens":3}}`, func(err error) bool { var e *provider.RequestError; return errors.As(err, &e) }},
		{"a vector missing", 200, `{"data":[],"usage":{"total_tokens":3}}`, func(err error) bool {
			var e *provider.RequestError
			return errors.As(err, &e) && strings.Contains(err.Error(), "no vector")
		}},
		{"not JSON", 200, `<html>proxy error</html>`, func(err error) bool { var e *provider.TransientError; return errors.As(err, &e) }},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer "+key {
				t.Errorf("%s: %s with %q", tc.name, r.URL.Path, r.Header.Get("Authorization"))
			}
			w.WriteHeader(tc.status)
			fmt.Fprint(w, tc.body)
		}))
		e, err := provider.NewVoyageEmbedder(provider.VoyageConfig{APIKey: key, BaseURL: srv.URL, Model: "voyage-nine"})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = e.Embed(context.Background(), []string{"tau"})
		if err == nil || !tc.check(err) || strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v (%T)", tc.name, err, err)
		}
		srv.Close()
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestEmbeddingsApartFromChat: an Anthropic session (Claude for chat) gets its embeddings
// from the provider it names, through the registry and the worker's environment alone:
// Voyage, or an OpenAI-compatible server (Ollama, vLLM) with a model of its own; without
// one it has none and compares words.
func TestEmbeddingsApartFromChat(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	r := &provider.Registry{HTTPClient: http.DefaultClient, Env: env(map[string]string{
		"ANTHROPIC_API_KEY": f.AnthropicKey(), "ANTHROPIC_BASE_URL": f.AnthropicBaseURL(),
		"VOYAGE_API_KEY": f.VoyageKey(), "VOYAGE_BASE_URL": f.VoyageBaseURL(),
		// A local server without auth: no COSCI_EMBEDDING_API_KEY. (The fake's OpenAI side
		// wants its key, so this one is given; see below for none.)
		"COSCI_EMBEDDING_BASE_URL": f.OpenAIBaseURL(), "COSCI_EMBEDDING_API_KEY": f.OpenAIKey(),
	})}
	chat, err := r.Model("anthropic", "claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ask(t.Context(), chat, prompt.CompareSpec, research.CompareRequest{TurnID: "c", A: hypA, B: hypB}); err != nil {
		t.Fatalf("chat through Anthropic: %v", err)
	}
	for _, tc := range []struct {
		embedding, model string
		wantModel        string
	}{
		{"voyage", "", provider.DefaultVoyageModel},
		{"voyage", "voyage-3.5-lite", "voyage-3.5-lite"},
		{"openai-compatible", "nomic-embed-text", "nomic-embed-text"},
	} {
		name := provider.EmbeddingProviderOf("anthropic", tc.embedding)
		e, err := r.Embedder(name, tc.model)
		if err != nil || e == nil {
			t.Fatalf("%s: %v, %v", tc.embedding, e, err)
		}
		before := f.Stats().Models[tc.wantModel]
		vecs, _, err := e.Embed(t.Context(), []string{"microglia carry tau", "neurons release tau"})
		if err != nil || len(vecs) != 2 || !slices.Equal(vecs[1], simulator.Embed("neurons release tau")) {
			t.Fatalf("%s: %d vectors, %v", tc.embedding, len(vecs), err)
		}
		if got := f.Stats().Models[tc.wantModel] - before; got != 1 {
			t.Errorf("%s: %d requests for %s; want 1", tc.embedding, got, tc.wantModel)
		}
		if again, _ := r.Embedder(name, tc.model); again != e {
			t.Errorf("%s: a second embedder for the same provider and model; want the cached one", tc.embedding)
		}
	}
	if st := f.Stats(); st.Requests["POST /voyage/v1/embeddings"] != 2 || st.Requests["POST /v1/embeddings"] != 1 {
		t.Errorf("requests %v; want 2 to Voyage and 1 to the OpenAI-compatible server", st.Requests)
	}
	// No embedding provider: a Claude or offline session compares words.
	for _, chatProvider := range []string{"anthropic", "offline", ""} {
		if e, err := r.Embedder(provider.EmbeddingProviderOf(chatProvider, ""), ""); e != nil || err != nil {
			t.Errorf("%q without an embedding provider: %v, %v; want none", chatProvider, e, err)
		}
	}
	if got := provider.EmbeddingProviderOf("openai", ""); got != "openai" {
		t.Errorf("an OpenAI session's own embeddings: %q", got)
	}
}

// TestEmbedderConfiguration: what the worker's environment lacks is named, as an
// AuthError, so the session pauses until someone sets it.
func TestEmbedderConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name, provider, model string
		env                   map[string]string
		wantVar               string // the variable the AuthError names
		wantUnknown           bool
	}{
		{"voyage without a key", "voyage", "", map[string]string{"ANTHROPIC_API_KEY": "x"}, "VOYAGE_API_KEY", false},
		{"voyage with a bad base", "voyage", "", map[string]string{"VOYAGE_API_KEY": "k", "VOYAGE_BASE_URL": "api.voyageai.com"}, "VOYAGE_BASE_URL", false},
		{"compatible without a server", "openai-compatible", "nomic-embed-text", map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"}, "COSCI_EMBEDDING_BASE_URL", false},
		{"openai without a key", "openai", "", map[string]string{"VOYAGE_API_KEY": "k"}, "OPENAI_API_KEY", false},
		{"unknown", "cohere", "", map[string]string{}, "", true},
	} {
		r := &provider.Registry{Env: env(tc.env)}
		_, err := r.Embedder(tc.provider, tc.model)
		var auth *provider.AuthError
		switch {
		case tc.wantUnknown:
			if !errors.Is(err, provider.ErrUnknownProvider) || !strings.Contains(err.Error(), "voyage") {
				t.Errorf("%s: %v; want ErrUnknownProvider listing the providers", tc.name, err)
			}
		case !errors.As(err, &auth) || !strings.Contains(err.Error(), tc.wantVar):
			t.Errorf("%s: %v; want an AuthError naming %s", tc.name, err, tc.wantVar)
		}
	}
	// A local server without auth needs no key: cosci sends a placeholder.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer none" {
			t.Errorf("Authorization %q; want the placeholder", got)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.6,0.8]}],"model":"nomic-embed-text","usage":{"prompt_tokens":2,"total_tokens":2}}`)
	}))
	defer srv.Close()
	r := &provider.Registry{Env: env(map[string]string{"COSCI_EMBEDDING_BASE_URL": srv.URL + "/v1"}), Prices: provider.DefaultPrices()}
	e, err := r.Embedder("openai-compatible", "nomic-embed-text")
	if err != nil {
		t.Fatal(err)
	}
	vecs, u, err := e.Embed(t.Context(), []string{"tau"})
	if err != nil || len(vecs) != 1 || vecs[0][1] != 0.8 {
		t.Fatalf("%v, %v", vecs, err)
	}
	if u.Unpriced != 1 { // a local model is not in the price table: unpriced, not free
		t.Errorf("usage %+v; want its request unpriced", u)
	}
}
