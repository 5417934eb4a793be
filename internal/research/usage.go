package research

// What provider turns cost: tokens, requests, the prompt cache, and the context a turn
// filled.

// Usage counts what a provider turn cost.
type Usage struct {
	// PromptTokens counts every input token, those a provider served from its prompt cache
	// and those it wrote into it included.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	Requests         int `json:"requests"`
	// CachedTokens of the prompt were read from the provider's prompt cache (billed at a
	// fraction of the input price); CacheWriteTokens were written into it (Anthropic bills
	// them above the input price). CacheWriteLongTokens are the part of CacheWriteTokens
	// written with the long lifetime (Cache.Long: Anthropic's 1-hour cache), which costs
	// more than a short write; CacheWriteTokens stays the total.
	CachedTokens         int `json:"cached_tokens,omitempty"`
	CacheWriteTokens     int `json:"cache_write_tokens,omitempty"`
	CacheWriteLongTokens int `json:"cache_write_long_tokens,omitempty"`
	// Batched counts the requests answered through the provider's batch API (billed at a
	// discount); Unpriced those whose model the worker's price table lacks, whose cost is
	// unknown and not in CostUSD.
	Batched  int `json:"batched,omitempty"`
	Unpriced int `json:"unpriced,omitempty"`
	// CostUSD is an estimate from the worker's price table; 0 when the model has no price.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// DefaultBatchShare is what a request costs through a batch API, as a share of its list
// price: both OpenAI's Batch API and Anthropic's Message Batches take 50% off input and
// output. It is here, not in provider, because a session's workflow reserves its budget
// for a batch with it, and a workflow imports no model client.
const DefaultBatchShare = 0.5

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:         u.PromptTokens + v.PromptTokens,
		CompletionTokens:     u.CompletionTokens + v.CompletionTokens,
		Requests:             u.Requests + v.Requests,
		CachedTokens:         u.CachedTokens + v.CachedTokens,
		CacheWriteTokens:     u.CacheWriteTokens + v.CacheWriteTokens,
		CacheWriteLongTokens: u.CacheWriteLongTokens + v.CacheWriteLongTokens,
		Batched:              u.Batched + v.Batched,
		Unpriced:             u.Unpriced + v.Unpriced,
		CostUSD:              u.CostUSD + v.CostUSD,
	}
}

// Tokens is prompt plus completion tokens.
func (u Usage) Tokens() int { return u.PromptTokens + u.CompletionTokens }

// CachedPercent is the share of the prompt tokens the provider's cache served, in whole
// percent (0 with no prompt tokens).
func (u Usage) CachedPercent() int { return 100 * u.CachedTokens / max(1, u.PromptTokens) }

// Context is what every agent's prompt carries besides its own task: the research plan,
// the scientist's steering and the latest meta-review.
type Context struct {
	Plan       *Plan       // nil before the plan exists
	Focus      []string    // the scientist's focus refinements, newest last
	Feedback   []string    // the scientist's feedback ("toward: ..." / "away from: ..."), newest last
	MetaReview *MetaReview // the latest meta-review, if any
	// Remarks are the scientist's latest messages in the conversation with the session,
	// newest last, each cut short: what they said, as data for the agents to weigh.
	Remarks []string
	// Lab is the session's latest results from the lab (analyses of its data), newest
	// last: for the generation, evolution and meta-review turns of the rounds after them.
	Lab []LabResult
}

// Cache says how a provider may cache a request's prompt. The first Prefix bytes of the
// prompt are the same in every call of its agent in the session's round (the
// co-scientist's role, the goal, the plan, the latest meta-review, the agent's
// instructions), so a provider that caches prompt prefixes serves them from its cache
// after the first call; Key names that group of calls, for a provider that routes
// requests by a key (OpenAI's prompt_cache_key). Breakpoints says whether to mark the
// prefix for a provider that caches only what it is told to (Anthropic): a turn made
// once per round (the plan, a meta-review) gains nothing from a cache write.
//
// Long asks the provider to hold the prefix past its short lifetime, for calls that come
// long after the write (a batch's requests, which may run hours after they are sent):
// Anthropic's 1-hour cache_control ttl (written at a higher price) instead of 5 minutes;
// on OpenAI prompt_cache_retention "24h" on the models that offer extended retention,
// and an explicit prompt_cache_breakpoint at the prefix's end on GPT-5.6 and later.
// false is the provider's short lifetime.
type Cache struct {
	Prefix      int
	Key         string
	Breakpoints bool
	Long        bool
}
