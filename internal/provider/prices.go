package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
)

// Price is what a model costs, in US dollars per million tokens. Input tokens read from
// the provider's prompt cache cost CachedPerMTok, and those written into it
// CacheWritePerMTok; either left at 0 costs as any input token.
type Price struct {
	PromptPerMTok     float64 `json:"prompt_per_mtok"`
	CompletionPerMTok float64 `json:"completion_per_mtok"`
	CachedPerMTok     float64 `json:"cached_per_mtok,omitempty"`
	CacheWritePerMTok float64 `json:"cache_write_per_mtok,omitempty"`
}

// Prices are prices by model name. A session's CostUSD is an estimate from this table,
// not a bill: providers change their prices, and batch discounts are not counted.
type Prices map[string]Price

// PricesAsOf is when the built-in prices were read from the providers' price pages.
const PricesAsOf = "mid-2025"

// DefaultPrices is a small built-in table of list prices for a few common OpenAI and
// Anthropic models, in USD per million tokens. They are ESTIMATES, copied from the
// providers' price pages as of PricesAsOf (the last time they were checked), and will go
// stale. Override or extend them with a JSON file read by LoadPrices and merged over this
// table (maps.Copy), in the form {"model": {"prompt_per_mtok": 0.15,
// "completion_per_mtok": 0.6, "cached_per_mtok": 0.075}}. A model missing from the table
// costs 0 (unknown), never a guess. OpenAI bills cached input at a quarter or half of the
// input price (by model) and writes nothing extra; Anthropic bills a cache read at a tenth
// of the input price and a write (5-minute cache) at 1.25 times it.
func DefaultPrices() Prices {
	return Prices{
		// OpenAI: input, output, cached input
		"gpt-4o-mini":  {0.15, 0.60, 0.075, 0},
		"gpt-4o":       {2.50, 10.00, 1.25, 0},
		"gpt-4.1":      {2.00, 8.00, 0.50, 0},
		"gpt-4.1-mini": {0.40, 1.60, 0.10, 0},
		"gpt-4.1-nano": {0.10, 0.40, 0.025, 0},
		"o4-mini":      {1.10, 4.40, 0.275, 0},
		"gpt-5":        {1.25, 10.00, 0.125, 0},
		"gpt-5-mini":   {0.25, 2.00, 0.025, 0},
		"gpt-5-nano":   {0.05, 0.40, 0.005, 0},
		// OpenAI embeddings (input only)
		"text-embedding-3-small": {0.02, 0, 0, 0},
		"text-embedding-3-large": {0.13, 0, 0, 0},
		// Anthropic: input, output, cache read, cache write (5 minutes)
		"claude-3-5-haiku-latest":  {0.80, 4.00, 0.08, 1.00},
		"claude-3-5-sonnet-latest": {3.00, 15.00, 0.30, 3.75},
		"claude-3-7-sonnet-latest": {3.00, 15.00, 0.30, 3.75},
		"claude-haiku-4-5":         {1.00, 5.00, 0.10, 1.25},
		"claude-sonnet-4-0":        {3.00, 15.00, 0.30, 3.75},
		"claude-sonnet-4-5":        {3.00, 15.00, 0.30, 3.75},
		"claude-opus-4-0":          {15.00, 75.00, 1.50, 18.75},
		"claude-opus-4-1":          {15.00, 75.00, 1.50, 18.75},
	}
}

// LoadPrices reads a price table from a JSON file of the form
// {"model": {"prompt_per_mtok": 0.15, "completion_per_mtok": 0.6}}. It returns the
// file's entries only; the caller merges them over DefaultPrices. An unknown field (a
// typo) or a negative price is refused, naming the model.
func LoadPrices(path string) (Prices, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the price table: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p Prices
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("price table %s: %v; write {\"model\": {\"prompt_per_mtok\": 0.15, \"completion_per_mtok\": 0.6}}", path, err)
	}
	for m, pr := range p {
		if strings.TrimSpace(m) == "" {
			return nil, fmt.Errorf("price table %s: a model name is empty", path)
		}
		if slices.ContainsFunc([]float64{pr.PromptPerMTok, pr.CompletionPerMTok, pr.CachedPerMTok, pr.CacheWritePerMTok}, func(v float64) bool { return v < 0 || math.IsNaN(v) }) {
			return nil, fmt.Errorf("price table %s: model %q has a negative price; prices are USD per million tokens", path, m)
		}
	}
	if p == nil {
		p = Prices{}
	}
	return p, nil
}

// Cost is the estimated cost in USD of u's tokens on the model, or 0 when the table has
// no price for it. A model is found by its exact name, then without a router's "vendor/"
// prefix (OpenRouter's "openai/gpt-4o-mini"), then as a dated snapshot of a listed model
// ("gpt-4o-mini-2024-07-18" is priced as "gpt-4o-mini", "claude-3-5-haiku-20241022" as
// "claude-3-5-haiku-latest").
//
// Cached input is priced at CachedPerMTok, input written to the cache at
// CacheWritePerMTok, the rest of the prompt at PromptPerMTok.
func (p Prices) Cost(model string, u research.Usage) float64 {
	pr, ok := p.lookup(model)
	if !ok {
		return 0
	}
	or := func(v, def float64) float64 {
		if v == 0 {
			return def
		}
		return v
	}
	cached, written := min(u.CachedTokens, u.PromptTokens), min(u.CacheWriteTokens, u.PromptTokens-min(u.CachedTokens, u.PromptTokens))
	plain := u.PromptTokens - cached - written
	return (float64(plain)*pr.PromptPerMTok + float64(cached)*or(pr.CachedPerMTok, pr.PromptPerMTok) +
		float64(written)*or(pr.CacheWritePerMTok, pr.PromptPerMTok) + float64(u.CompletionTokens)*pr.CompletionPerMTok) / 1e6
}

func (p Prices) lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
		if pr, ok := p[model]; ok {
			return pr, true
		}
	}
	best, found := "", Price{}
	for name, pr := range p {
		base := strings.TrimSuffix(name, "-latest")
		rest, ok := strings.CutPrefix(model, base+"-")
		if !ok || rest == "" || rest[0] < '0' || rest[0] > '9' {
			continue // not a dated snapshot of name
		}
		if len(base) > len(best) || (len(base) == len(best) && name < best) {
			best, found = base, pr
		}
	}
	return found, best != ""
}
