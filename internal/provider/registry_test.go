package provider

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestRegistryMissingKey(t *testing.T) {
	for _, tc := range []struct{ provider, variable string }{{"openai", "OPENAI_API_KEY"}, {"anthropic", "ANTHROPIC_API_KEY"}} {
		r := &Registry{Env: envOf(map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", tc.variable: "  "})}
		m, err := r.Model(tc.provider, "")
		var ae *AuthError
		if m != nil || !errors.As(err, &ae) || ae.Provider != tc.provider {
			t.Fatalf("%s: model %v, error %v (%T), want an *AuthError", tc.provider, m, err, err)
		}
		if !strings.Contains(err.Error(), tc.variable) {
			t.Errorf("%s: error %q does not name %s", tc.provider, err, tc.variable)
		}
	}
}

// OPENAI_BASE_URL points the client at an OpenAI-compatible server (Ollama, vLLM, ...),
// the default model is asked for, and the key goes out as a bearer token.
func TestRegistryOpenAIBaseURL(t *testing.T) {
	f := newFake(t, okFor(openaiWire, "research_plan", `{"preferences":["p"],"constraints":["c"],"evaluation_criteria":["e"],"summary":"s"}`, 100, 10, false))
	r := &Registry{
		Env:    envOf(map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": f.URL + "/v1"}),
		Prices: Prices{OpenAIDefaultModel: {PromptPerMTok: 10, CompletionPerMTok: 100}},
	}
	m, err := r.Model("openai", "")
	if err != nil {
		t.Fatal(err)
	}
	p, u, err := ask(context.Background(), m, prompt.PlanSpec, research.PlanRequest{Prompt: "p"})
	if err != nil || p.Summary != "s" {
		t.Fatalf("plan %+v, error %v", p, err)
	}
	if !near(u.CostUSD, (100*10+10*100)/1e6) {
		t.Errorf("cost = %g, want the default model's price", u.CostUSD)
	}
	reqs := f.saw(t, 1)
	if reqs[0].body["model"] != OpenAIDefaultModel {
		t.Errorf("model = %v, want %s", reqs[0].body["model"], OpenAIDefaultModel)
	}
	if got := reqs[0].header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
}

func TestRegistryAnthropicBaseURL(t *testing.T) {
	f := newFake(t, okFor(anthropicWire, "advocate", `{"argument":"a"}`, 1, 1, false))
	r := &Registry{Env: envOf(map[string]string{"ANTHROPIC_API_KEY": testKey, "ANTHROPIC_BASE_URL": f.URL})}
	m, err := r.Model("anthropic", "claude-test")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ask(context.Background(), m, prompt.DebateSpec, research.DebateRequest{Turn: 1, Turns: 2, Prompt: "p"}); err != nil {
		t.Fatal(err)
	}
	if got := f.requests()[0].body["model"]; got != "claude-test" {
		t.Errorf("model = %v", got)
	}
}

func TestRegistryCachesAndIsSafeForConcurrentUse(t *testing.T) {
	r := &Registry{Offline: &simulator.Offline{}, Env: envOf(map[string]string{"OPENAI_API_KEY": "x", "ANTHROPIC_API_KEY": "y"}), HTTPClient: &http.Client{}}
	var wg sync.WaitGroup
	got := make([]Model, 16)
	for i := range got {
		wg.Go(func() {
			m, err := r.Model("openai", "gpt-4o")
			if err != nil {
				t.Error(err)
			}
			got[i] = m
		})
	}
	wg.Wait()
	for _, m := range got[1:] {
		if m != got[0] {
			t.Fatal("the same provider and model built two clients")
		}
	}
	other, _ := r.Model("openai", OpenAIDefaultModel)
	def, _ := r.Model("openai", "")
	if other == got[0] || def != other {
		t.Error("models are not cached by (provider, model), with the default model named")
	}
	a, _ := r.Model("anthropic", "")
	if a.(*LLM).Model != AnthropicDefaultModel {
		t.Errorf("anthropic default model = %s", a.(*LLM).Model)
	}
	for _, p := range []string{"offline", "", "Offline"} {
		if m, err := r.Model(p, "whatever"); err != nil || m != Model(r.Offline) {
			t.Errorf("provider %q: %v, %v; want r.Offline", p, m, err)
		}
	}
}

func TestRegistryRefuses(t *testing.T) {
	r := &Registry{Env: envOf(map[string]string{"OPENAI_API_KEY": "x", "OPENAI_BASE_URL": "localhost:11434"})}
	if _, err := r.Model("gemini", ""); !errors.Is(err, ErrUnknownProvider) {
		t.Errorf("unknown provider: %v", err)
	}
	var ae *AuthError
	if _, err := r.Model("openai", ""); !errors.As(err, &ae) || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("a base URL without a scheme: %v", err)
	}
	// provider does not import the simulator: a binary that does not give its registry an
	// offline model does not serve the offline provider.
	for _, p := range []string{"offline", ""} {
		if m, err := (&Registry{}).Model(p, ""); m != nil || !errors.Is(err, ErrUnknownProvider) || !strings.Contains(err.Error(), "Registry.Offline") {
			t.Errorf("provider %q of a registry without Offline: %v, %v; want no model and %v naming Registry.Offline", p, m, err, ErrUnknownProvider)
		}
	}
	if _, err := (&Registry{}).Model("openai", ""); !errors.As(err, &ae) {
		t.Errorf("a registry without Env: %v", err)
	}
}

func TestNewClientsRefuse(t *testing.T) {
	if _, err := NewOpenAI(OpenAIConfig{Model: "m"}); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("no key: %v", err)
	}
	if _, err := NewAnthropic(AnthropicConfig{APIKey: "k"}); err == nil {
		t.Error("no model: no error")
	}
	if _, err := NewAnthropic(AnthropicConfig{APIKey: "k", Model: "m", BaseURL: "ftp://x"}); err == nil {
		t.Error("ftp base URL: no error")
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		header map[string]string
		want   time.Duration
	}{
		{map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-3"}, 0},
		{map[string]string{"Retry-After-Ms": "250"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After": "2", "Retry-After-Ms": "250"}, 2 * time.Second},
		{nil, 0},
	} {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.header, got, tc.want)
		}
	}
}

func TestQuoteRedacts(t *testing.T) {
	for _, s := range []string{
		"key " + testKey + " is wrong",
		"Incorrect API key provided: sk-proj-abc1********************wxyz.",
		"invalid x-api-key sk-ant-api03-AAAAAAAAAAAAAAAA",
	} {
		q := quote(s, testKey)
		if strings.Contains(q, "sk-") || !strings.Contains(q, "[redacted]") {
			t.Errorf("quote(%q) = %q", s, q)
		}
	}
	if q := quote(strings.Repeat("x ", 1000), ""); len([]rune(q)) > maxQuote {
		t.Errorf("a long message is not cut: %d characters", len(q))
	}
}

func TestPrices(t *testing.T) {
	p := DefaultPrices()
	u := research.Usage{PromptTokens: 1_000_000, CompletionTokens: 2_000_000}
	for _, tc := range []struct {
		model string
		want  float64
	}{
		{"gpt-4o-mini", 0.15 + 2*0.60},
		{"gpt-4o-mini-2024-07-18", 0.15 + 2*0.60}, // a snapshot of gpt-4o-mini, not of gpt-4o
		{"gpt-4o-2024-08-06", 2.50 + 2*10},
		{"openai/gpt-4o-mini", 0.15 + 2*0.60},
		{"claude-3-5-haiku-latest", 0.80 + 2*4},
		{"claude-3-5-haiku-20241022", 0.80 + 2*4},
		{"gpt-4o-mini-tts", 0},
		{"gpt-6-sol", 2 + 2*10},
		{"gpt-6-sol-2026-09-22", 2 + 2*10},
		{"gpt-5.4-mini-2026-03-17", 0.75 + 2*4.50}, // gpt-5.4-mini's snapshot, not gpt-5.4's
		{"claude-sonnet-5-5", 2 + 2*10},
		{"claude-haiku-4-5-20251001", 1 + 2*5},
		{"llama3.1:8b", 0},
		{"", 0},
	} {
		if got := p.Cost(tc.model, u); !near(got, tc.want) {
			t.Errorf("%s: %g, want %g", tc.model, got, tc.want)
		}
	}
	if got := Prices(nil).Cost("gpt-4o", u); got != 0 {
		t.Errorf("nil table: %g", got)
	}
}

// TestDefaultModelsArePriced: the models a session gets when it names none have a price,
// and every built-in price is a real one.
func TestDefaultModelsArePriced(t *testing.T) {
	p := DefaultPrices()
	for _, m := range []string{OpenAIDefaultModel, AnthropicDefaultModel, DefaultEmbeddingModel, DefaultVoyageModel} {
		if !p.Has(m) {
			t.Errorf("the default model %s has no price", m)
		}
	}
	for m, pr := range p {
		if pr.PromptPerMTok <= 0 || (pr.CompletionPerMTok <= 0 && !strings.HasPrefix(m, "text-embedding") && !strings.HasPrefix(m, "voyage-")) || pr.BatchShare != 0 {
			t.Errorf("%s: %+v", m, pr)
		}
	}
	if p.Has("llama3.1:8b") || p.Has("") {
		t.Error("Has prices a model the table lacks")
	}
}

// TestBatchedPrices: a request answered through a batch API costs the model's batch share
// of its list price (half, unless the table says otherwise), cache discounts included.
func TestBatchedPrices(t *testing.T) {
	p := Prices{"m": {PromptPerMTok: 2, CompletionPerMTok: 10, CachedPerMTok: 0.2}, "other": {PromptPerMTok: 2, CompletionPerMTok: 10, CachedPerMTok: 0.2, BatchShare: 0.25}}
	u := research.Usage{PromptTokens: 1_000_000, CachedTokens: 500_000, CompletionTokens: 100_000, Requests: 1}
	list := 0.5*2 + 0.5*0.2 + 0.1*10
	for _, tc := range []struct {
		model   string
		batched int
		want    float64
	}{
		{"m", 0, list},
		{"m", 1, list * research.DefaultBatchShare},
		{"other", 1, list * 0.25},
	} {
		u.Batched = tc.batched
		if got := p.Cost(tc.model, u); !near(got, tc.want) {
			t.Errorf("%s, batched %d: %g, want %g", tc.model, tc.batched, got, tc.want)
		}
	}
}

// TestUnpricedModel: a turn on a model the price table lacks costs 0 and says so, so that
// the session can tell unknown from free.
func TestUnpricedModel(t *testing.T) {
	for _, tc := range []struct {
		model        string
		wantUnpriced int
	}{{"test-model", 0}, {"qwen2.5:7b", 1}} {
		f := newFake(t, okFor(openaiWire, agentCases[0].schema, agentCases[0].answer, 1000, 200, false))
		m := newLLM(t, openaiWire, f)
		m.Model = tc.model
		_, u, err := agentCases[0].call(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		if u.Unpriced != tc.wantUnpriced || (tc.wantUnpriced > 0) != (u.CostUSD == 0) {
			t.Errorf("%s: usage %+v, want %d unpriced", tc.model, u, tc.wantUnpriced)
		}
	}
}

// TestPriced: a usage on a priced model gets its cost; on a model the table lacks, a cost
// of 0 and its requests counted as unpriced (the embedder's and the LLM's usage alike).
func TestPriced(t *testing.T) {
	p := Prices{"local": Price{PromptPerMTok: 1, CompletionPerMTok: 2}}
	for _, tc := range []struct {
		model        string
		u            research.Usage
		wantCost     float64
		wantUnpriced int
	}{
		{"local", research.Usage{PromptTokens: 1e6, CompletionTokens: 1e6, Requests: 2}, 3, 0},
		{"elsewhere", research.Usage{PromptTokens: 1e6, Requests: 2, CostUSD: 9}, 0, 2},
		{"elsewhere", research.Usage{}, 0, 0},
	} {
		got := p.Priced(tc.model, tc.u)
		if !near(got.CostUSD, tc.wantCost) || got.Unpriced != tc.wantUnpriced || got.PromptTokens != tc.u.PromptTokens {
			t.Errorf("%s, %+v: %+v; want cost %g, %d unpriced, the tokens as they were", tc.model, tc.u, got, tc.wantCost, tc.wantUnpriced)
		}
	}
}

// TestCachedPrices: input read from the prompt cache, and input written into it, are
// priced as the providers bill them; a table that gives no cache prices bills them as
// any input; counts that do not add up never make a negative cost.
func TestCachedPrices(t *testing.T) {
	p := DefaultPrices()
	p["local"] = Price{PromptPerMTok: 1, CompletionPerMTok: 2}
	for _, tc := range []struct {
		name  string
		model string
		u     research.Usage
		want  float64
	}{
		{"openai, a quarter cached", "gpt-4.1", research.Usage{PromptTokens: 4_000_000, CachedTokens: 1_000_000, CompletionTokens: 1_000_000}, 3*2.00 + 0.50 + 8.00},
		{"anthropic, read and write", "claude-sonnet-4-5", research.Usage{PromptTokens: 3_000_000, CachedTokens: 1_000_000, CacheWriteTokens: 1_000_000}, 3.00 + 0.30 + 3.75},
		{"no cache prices", "local", research.Usage{PromptTokens: 2_000_000, CachedTokens: 1_000_000, CacheWriteTokens: 1_000_000}, 2 * 1},
		{"more cached than prompt", "gpt-4.1", research.Usage{PromptTokens: 1_000_000, CachedTokens: 5_000_000, CacheWriteTokens: 5_000_000}, 0.50},
		{"anthropic, 1h write", "claude-sonnet-5-5", research.Usage{PromptTokens: 3_000_000, CachedTokens: 1_000_000, CacheWriteTokens: 2_000_000, CacheWriteLongTokens: 1_000_000}, 0.10 + 2.50 + 4.00},
		{"more long than written", "claude-sonnet-5-5", research.Usage{PromptTokens: 2_000_000, CacheWriteTokens: 1_000_000, CacheWriteLongTokens: 3_000_000}, 2.00 + 4.00},
		{"long write without a long price", "local", research.Usage{PromptTokens: 1_000_000, CacheWriteTokens: 1_000_000, CacheWriteLongTokens: 1_000_000}, 1},
		{"openai gpt-6, written at 1.25x", "gpt-6-sol", research.Usage{PromptTokens: 3_000_000, CachedTokens: 1_000_000, CacheWriteTokens: 1_000_000}, 2.00 + 0.20 + 2.50},
		{"openai before 5.6, writes free", "gpt-5.4", research.Usage{PromptTokens: 2_000_000, CacheWriteTokens: 1_000_000}, 2 * 2.50},
		{"batched long write", "claude-sonnet-5-5", research.Usage{PromptTokens: 1_000_000, CacheWriteTokens: 1_000_000, CacheWriteLongTokens: 1_000_000, Batched: 1}, 0.5 * 4.00},
	} {
		if got := p.Cost(tc.model, tc.u); !near(got, tc.want) || got < 0 {
			t.Errorf("%s: %g, want %g", tc.name, got, tc.want)
		}
	}
	// Every built-in price of a cache read is below the input price, and a long write
	// costs no less than a short one.
	for m, pr := range p {
		if pr.CachedPerMTok > pr.PromptPerMTok {
			t.Errorf("%s: a cached token costs more (%g) than an input token (%g)", m, pr.CachedPerMTok, pr.PromptPerMTok)
		}
		if pr.CacheWriteLongPerMTok != 0 && pr.CacheWriteLongPerMTok < pr.CacheWritePerMTok {
			t.Errorf("%s: a 1h write costs less (%g) than a short one (%g)", m, pr.CacheWriteLongPerMTok, pr.CacheWritePerMTok)
		}
	}
}

// TestCachePriceRatios: the built-in table holds to the ratios its comment states: a
// Claude 1h write is twice the input price and a 5m write 1.25 times it, a read a tenth of
// it (a twentieth on Opus and Sonnet 5.5, since Sonnet 5.5's cut of 2026-10-07); OpenAI's
// writes from GPT-5.6 on are 1.25 times the input price, and free (no price) before.
func TestCachePriceRatios(t *testing.T) {
	p := DefaultPrices()
	ratio := func(v, of float64) float64 { return v / of }
	for m, pr := range p {
		switch {
		case strings.HasPrefix(m, "claude-"):
			read := 0.1
			if m == "claude-opus-5-5" || m == "claude-sonnet-5-5" {
				read = 0.05
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{{"read", ratio(pr.CachedPerMTok, pr.PromptPerMTok), read}, {"5m write", ratio(pr.CacheWritePerMTok, pr.PromptPerMTok), 1.25}, {"1h write", ratio(pr.CacheWriteLongPerMTok, pr.PromptPerMTok), 2}} {
				if !near(c.got, c.want) {
					t.Errorf("%s: %s at %gx input, want %gx", m, c.what, c.got, c.want)
				}
			}
		case strings.HasPrefix(m, "gpt-6"), strings.HasPrefix(m, "gpt-5.6"):
			if !near(ratio(pr.CacheWritePerMTok, pr.PromptPerMTok), 1.25) {
				t.Errorf("%s: cache writes at %g, want 1.25x input %g", m, pr.CacheWritePerMTok, pr.PromptPerMTok)
			}
		case strings.HasPrefix(m, "gpt-"):
			if pr.CacheWritePerMTok != 0 || pr.CacheWriteLongPerMTok != 0 {
				t.Errorf("%s: a write price on a model whose writes are free", m)
			}
		}
	}
	if got := p["claude-sonnet-5-5"]; got.CachedPerMTok != 0.10 || got.CacheWriteLongPerMTok != 4.00 {
		t.Errorf("claude-sonnet-5-5 = %+v; want reads $0.10 (cut on 2026-10-07) and 1h writes $4", got)
	}
}

func TestLoadPrices(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p, err := LoadPrices(write("ok.json", `{"llama3.1:8b": {"prompt_per_mtok": 0, "completion_per_mtok": 0}, "gpt-4o-mini": {"prompt_per_mtok": 0.2, "completion_per_mtok": 0.8},
		"claude-x": {"prompt_per_mtok": 1, "completion_per_mtok": 5, "cache_write_per_mtok": 1.25, "cache_write_long_per_mtok": 2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 3 || p["gpt-4o-mini"] != (Price{PromptPerMTok: 0.2, CompletionPerMTok: 0.8}) ||
		p["claude-x"] != (Price{PromptPerMTok: 1, CompletionPerMTok: 5, CacheWritePerMTok: 1.25, CacheWriteLongPerMTok: 2}) {
		t.Errorf("prices = %v", p)
	}
	for name, body := range map[string]string{
		"typo.json":      `{"m": {"prompt_per_mtoks": 1}}`,
		"negative.json":  `{"m": {"prompt_per_mtok": -1, "completion_per_mtok": 1}}`,
		"negative cache": `{"m": {"prompt_per_mtok": 1, "completion_per_mtok": 1, "cached_per_mtok": -0.1}}`,
		"batch share":    `{"m": {"prompt_per_mtok": 1, "completion_per_mtok": 1, "batch_share": 2}}`,
		"negative long":  `{"m": {"prompt_per_mtok": 1, "completion_per_mtok": 1, "cache_write_long_per_mtok": -2}}`,
		"bad.json":       `[1, 2]`,
	} {
		if _, err := LoadPrices(write(name, body)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := LoadPrices(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
}
