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
// CacheWritePerMTok, or CacheWriteLongPerMTok when written with the long lifetime
// (research.Cache.Long: Anthropic's 1-hour cache); any of them left at 0 costs as the
// next one down (a long write as a short one, a short one or a read as any input token).
// A request answered through the provider's batch API costs BatchShare of all that (0:
// research.DefaultBatchShare).
type Price struct {
	PromptPerMTok         float64 `json:"prompt_per_mtok"`
	CompletionPerMTok     float64 `json:"completion_per_mtok"`
	CachedPerMTok         float64 `json:"cached_per_mtok,omitempty"`
	CacheWritePerMTok     float64 `json:"cache_write_per_mtok,omitempty"`
	CacheWriteLongPerMTok float64 `json:"cache_write_long_per_mtok,omitempty"`
	BatchShare            float64 `json:"batch_share,omitempty"`
}

// Prices are prices by model name. A session's CostUSD is an estimate from this table,
// not a bill: providers change their prices.
type Prices map[string]Price

// PricesAsOf is when the built-in prices were read: the providers' price and model pages
// (OpenAI's developers.openai.com/api/docs/pricing, Anthropic's platform.claude.com model
// and pricing pages, Voyage AI's docs.voyageai.com/docs/pricing) as copies of them stood
// on that day.
const PricesAsOf = "2026-11-25"

// DefaultPrices is a built-in table of list prices of OpenAI, Anthropic and Voyage models, in USD
// per million tokens, at short context (both providers charge more above 200K-272K input
// tokens, which cosci's prompts never reach). They are ESTIMATES read on PricesAsOf and
// will go stale. Override or extend them with a JSON file read by LoadPrices and merged
// over this table (maps.Copy), in the form {"model": {"prompt_per_mtok": 0.15,
// "completion_per_mtok": 0.6, "cached_per_mtok": 0.075}}. A model missing from the table
// costs 0 and is counted as unpriced (see LLM), never guessed.
//
// Cache prices: OpenAI bills cached input at a tenth of the input price on its current
// models (a twentieth on GPT-6.1 Sol and Terra, a quarter or half on older ones); writes are free
// before GPT-5.6, and from GPT-5.6 on (GPT-5.6, the GPT-6 family) billed at 1.25 times
// the input price (cache_write_tokens in the usage; GPT-6 Sol's and Luna's since
// 2026-09-22, GPT-6.1 Terra's 30-minute writes since 2026-10-26). Anthropic bills a
// 5-minute write at 1.25 times the input price and a 1-hour write at 2 times it, and a
// cache read at a tenth of it, except on Opus 5.5 and Sonnet 5.5: Opus 5.5's reads cost
// a twentieth, and Sonnet 5.5's too since Anthropic cut them from $0.20 to $0.10 on
// 2026-10-07 (its model page still said $0.20 on PricesAsOf; the cut is in third-party
// trackers' changelogs of that date).
func DefaultPrices() Prices {
	return Prices{
		// OpenAI, current: input, output, cached input, and from GPT-5.6 on cache writes
		// (1.25x input)
		"gpt-6-astra":   {PromptPerMTok: 10.00, CompletionPerMTok: 50.00, CachedPerMTok: 1.00, CacheWritePerMTok: 12.50},
		"gpt-6.1-sol":   {PromptPerMTok: 2.00, CompletionPerMTok: 10.00, CachedPerMTok: 0.10, CacheWritePerMTok: 2.50},
		"gpt-6.1-terra": {PromptPerMTok: 1.00, CompletionPerMTok: 5.00, CachedPerMTok: 0.05, CacheWritePerMTok: 1.25},
		"gpt-6-sol":     {PromptPerMTok: 2.00, CompletionPerMTok: 10.00, CachedPerMTok: 0.20, CacheWritePerMTok: 2.50},
		"gpt-6-luna":    {PromptPerMTok: 0.10, CompletionPerMTok: 0.50, CachedPerMTok: 0.01, CacheWritePerMTok: 0.125},
		"gpt-5.6-sol":   {PromptPerMTok: 4.00, CompletionPerMTok: 20.00, CachedPerMTok: 0.40, CacheWritePerMTok: 5.00},
		"gpt-5.5":       {PromptPerMTok: 5.00, CompletionPerMTok: 30.00, CachedPerMTok: 0.50},
		"gpt-5.4":       {PromptPerMTok: 2.50, CompletionPerMTok: 15.00, CachedPerMTok: 0.25},
		"gpt-5.4-mini":  {PromptPerMTok: 0.75, CompletionPerMTok: 4.50, CachedPerMTok: 0.075},
		"gpt-5.4-nano":  {PromptPerMTok: 0.20, CompletionPerMTok: 1.25, CachedPerMTok: 0.02},
		// OpenAI, earlier
		"gpt-5.2":      {PromptPerMTok: 1.75, CompletionPerMTok: 14.00, CachedPerMTok: 0.175},
		"gpt-5.1":      {PromptPerMTok: 1.25, CompletionPerMTok: 10.00, CachedPerMTok: 0.125},
		"gpt-5":        {PromptPerMTok: 1.25, CompletionPerMTok: 10.00, CachedPerMTok: 0.125},
		"gpt-5-mini":   {PromptPerMTok: 0.25, CompletionPerMTok: 2.00, CachedPerMTok: 0.025},
		"gpt-5-nano":   {PromptPerMTok: 0.05, CompletionPerMTok: 0.40, CachedPerMTok: 0.005},
		"gpt-4.1":      {PromptPerMTok: 2.00, CompletionPerMTok: 8.00, CachedPerMTok: 0.50},
		"gpt-4.1-mini": {PromptPerMTok: 0.40, CompletionPerMTok: 1.60, CachedPerMTok: 0.10},
		"gpt-4.1-nano": {PromptPerMTok: 0.10, CompletionPerMTok: 0.40, CachedPerMTok: 0.025},
		"gpt-4o":       {PromptPerMTok: 2.50, CompletionPerMTok: 10.00, CachedPerMTok: 1.25},
		"gpt-4o-mini":  {PromptPerMTok: 0.15, CompletionPerMTok: 0.60, CachedPerMTok: 0.075},
		"o4-mini":      {PromptPerMTok: 1.10, CompletionPerMTok: 4.40, CachedPerMTok: 0.275},
		// OpenAI embeddings (input only)
		"text-embedding-3-small": {PromptPerMTok: 0.02},
		"text-embedding-3-large": {PromptPerMTok: 0.13},
		// Voyage AI embeddings (input only; docs.voyageai.com/docs/pricing as copies of it
		// stood on PricesAsOf; the first 200M tokens of an account are free, which this
		// table does not count)
		"voyage-4-large":  {PromptPerMTok: 0.12},
		"voyage-4":        {PromptPerMTok: 0.06},
		"voyage-4-lite":   {PromptPerMTok: 0.02},
		"voyage-3.5":      {PromptPerMTok: 0.06},
		"voyage-3.5-lite": {PromptPerMTok: 0.02},
		"voyage-3-large":  {PromptPerMTok: 0.18},
		"voyage-3":        {PromptPerMTok: 0.06},
		"voyage-3-lite":   {PromptPerMTok: 0.02},
		// Anthropic, current: input, output, cache read, cache write (5 minutes), cache
		// write (1 hour). Haiku 5.5 at its price up to 100K prompt tokens (above it costs
		// 5 times as much; cosci's prompts stay below).
		"claude-opus-5-5":   {PromptPerMTok: 4.00, CompletionPerMTok: 20.00, CachedPerMTok: 0.20, CacheWritePerMTok: 5.00, CacheWriteLongPerMTok: 8.00},
		"claude-sonnet-5-5": {PromptPerMTok: 2.00, CompletionPerMTok: 10.00, CachedPerMTok: 0.10, CacheWritePerMTok: 2.50, CacheWriteLongPerMTok: 4.00},
		"claude-haiku-5-5":  {PromptPerMTok: 0.10, CompletionPerMTok: 0.50, CachedPerMTok: 0.01, CacheWritePerMTok: 0.125, CacheWriteLongPerMTok: 0.20},
		"claude-haiku-4-5":  {PromptPerMTok: 1.00, CompletionPerMTok: 5.00, CachedPerMTok: 0.10, CacheWritePerMTok: 1.25, CacheWriteLongPerMTok: 2.00},
		// Anthropic, earlier
		"claude-sonnet-5":          {PromptPerMTok: 2.00, CompletionPerMTok: 10.00, CachedPerMTok: 0.20, CacheWritePerMTok: 2.50, CacheWriteLongPerMTok: 4.00},
		"claude-opus-4-6":          {PromptPerMTok: 5.00, CompletionPerMTok: 25.00, CachedPerMTok: 0.50, CacheWritePerMTok: 6.25, CacheWriteLongPerMTok: 10.00},
		"claude-opus-4-5":          {PromptPerMTok: 5.00, CompletionPerMTok: 25.00, CachedPerMTok: 0.50, CacheWritePerMTok: 6.25, CacheWriteLongPerMTok: 10.00},
		"claude-sonnet-4-6":        {PromptPerMTok: 3.00, CompletionPerMTok: 15.00, CachedPerMTok: 0.30, CacheWritePerMTok: 3.75, CacheWriteLongPerMTok: 6.00},
		"claude-sonnet-4-5":        {PromptPerMTok: 3.00, CompletionPerMTok: 15.00, CachedPerMTok: 0.30, CacheWritePerMTok: 3.75, CacheWriteLongPerMTok: 6.00},
		"claude-sonnet-4-0":        {PromptPerMTok: 3.00, CompletionPerMTok: 15.00, CachedPerMTok: 0.30, CacheWritePerMTok: 3.75, CacheWriteLongPerMTok: 6.00},
		"claude-opus-4-1":          {PromptPerMTok: 15.00, CompletionPerMTok: 75.00, CachedPerMTok: 1.50, CacheWritePerMTok: 18.75, CacheWriteLongPerMTok: 30.00},
		"claude-opus-4-0":          {PromptPerMTok: 15.00, CompletionPerMTok: 75.00, CachedPerMTok: 1.50, CacheWritePerMTok: 18.75, CacheWriteLongPerMTok: 30.00},
		"claude-3-7-sonnet-latest": {PromptPerMTok: 3.00, CompletionPerMTok: 15.00, CachedPerMTok: 0.30, CacheWritePerMTok: 3.75, CacheWriteLongPerMTok: 6.00},
		"claude-3-5-sonnet-latest": {PromptPerMTok: 3.00, CompletionPerMTok: 15.00, CachedPerMTok: 0.30, CacheWritePerMTok: 3.75, CacheWriteLongPerMTok: 6.00},
		"claude-3-5-haiku-latest":  {PromptPerMTok: 0.80, CompletionPerMTok: 4.00, CachedPerMTok: 0.08, CacheWritePerMTok: 1.00, CacheWriteLongPerMTok: 1.60},
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
		if slices.ContainsFunc([]float64{pr.PromptPerMTok, pr.CompletionPerMTok, pr.CachedPerMTok, pr.CacheWritePerMTok, pr.CacheWriteLongPerMTok}, func(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }) {
			return nil, fmt.Errorf("price table %s: model %q has a negative price; prices are USD per million tokens", path, m)
		}
		if pr.BatchShare < 0 || pr.BatchShare > 1 || math.IsNaN(pr.BatchShare) {
			return nil, fmt.Errorf("price table %s: model %q has batch_share %g; it is the share of the list price a batch costs, from 0 to 1 (0: the default %g)", path, m, pr.BatchShare, research.DefaultBatchShare)
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
// CacheWritePerMTok (the part written with the long lifetime at CacheWriteLongPerMTok),
// the rest of the prompt at PromptPerMTok; u is one request's usage, and
// a request answered through a batch API (u.Batched) costs the model's batch share of that.
func (p Prices) Cost(model string, u research.Usage) float64 {
	pr, ok := p.lookup(model)
	if !ok {
		return 0
	}
	return pr.cost(u)
}

// Priced is u with its cost (Cost). A model the table lacks costs 0, and u's requests are
// counted as unpriced, so that no one reads the 0 as free.
func (p Prices) Priced(model string, u research.Usage) research.Usage {
	pr, ok := p.lookup(model)
	if !ok {
		u.CostUSD, u.Unpriced = 0, u.Requests
		return u
	}
	u.CostUSD = pr.cost(u)
	return u
}

// cost is what u costs at these prices.
func (pr Price) cost(u research.Usage) float64 {
	share := 1.0
	if u.Batched > 0 {
		share = pr.BatchShare
		if share == 0 {
			share = research.DefaultBatchShare
		}
	}
	or := func(v, def float64) float64 {
		if v == 0 {
			return def
		}
		return v
	}
	cached, written := min(u.CachedTokens, u.PromptTokens), min(u.CacheWriteTokens, u.PromptTokens-min(u.CachedTokens, u.PromptTokens))
	long := min(u.CacheWriteLongTokens, written) // part of written, never more
	plain := u.PromptTokens - cached - written
	short := or(pr.CacheWritePerMTok, pr.PromptPerMTok)
	return share * (float64(plain)*pr.PromptPerMTok + float64(cached)*or(pr.CachedPerMTok, pr.PromptPerMTok) +
		float64(written-long)*short + float64(long)*or(pr.CacheWriteLongPerMTok, short) + float64(u.CompletionTokens)*pr.CompletionPerMTok) / 1e6
}

// Has reports whether the table prices the model (by any of the names Cost accepts).
func (p Prices) Has(model string) bool {
	_, ok := p.lookup(model)
	return ok
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
