// What the fake counts: the turns, tokens, cache hits and batches it served (Stats).

package providertest

import "maps"

// Stats are the fake's counters, for assertions.
type Stats struct {
	Requests     map[string]int   // by endpoint ("POST /v1/chat/completions"), whatever the answer
	Keys         map[string]int   // the credential each request presented (the Authorization or x-api-key header)
	Unauthorized int              // requests refused with a 401
	Refused      int              // other requests refused as the real API would (4xx), ordinary or in a batch
	Agents       map[string]int   // turns answered (ordinary and in batches) by agent; "" for no known schema
	ByAgent      map[string]Usage // the tokens of those turns, by agent
	Models       map[string]int   // turns and embeddings requests by model
	Schemas      map[string]int   // turns by answer schema name
	ToolCalls    int              // tool calls the fake made instead of answering
	// Tokens of the turns answered, by API, ordinary and in batches apart.
	OpenAI, Anthropic, OpenAIBatch, AnthropicBatch Usage
	Embeddings                                     Embeddings     // OpenAI's and Voyage's
	VoyageInputTypes                               map[string]int // Voyage requests by input_type ("" for none)
	Batches                                        map[string]int // batches by API and status now: "openai/completed", "anthropic/ended"
	InFlight, MaxInFlight                          int            // ordinary chat completions and messages being answered
}

// Usage counts the tokens of turns, the same way for both APIs.
type Usage struct {
	Requests   int
	Input      int // every input token: cached, written to the cache and neither
	CacheRead  int // input tokens served from the cache (OpenAI cached_tokens, Anthropic cache_read_input_tokens)
	CacheWrite int // input tokens written to the cache (Anthropic cache_creation_input_tokens)
	// CacheWriteLong is the part of CacheWrite written with the long lifetime (Anthropic's
	// 1-hour breakpoints, cache_creation.ephemeral_1h_input_tokens).
	CacheWriteLong int
	Output         int
	// Hits counts the requests that read anything from the cache; the others (Requests -
	// Hits) missed it, whatever they wrote.
	Hits int
}

// CachedShare is the share of input tokens served from the cache.
func (t Usage) CachedShare() float64 {
	if t.Input == 0 {
		return 0
	}
	return float64(t.CacheRead) / float64(t.Input)
}

func (t *Usage) add(u Usage) {
	t.Requests += u.Requests
	t.Input += u.Input
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
	t.CacheWriteLong += u.CacheWriteLong
	t.Output += u.Output
	t.Hits += u.Hits
}

// HitRate is the share of the requests that read anything from the cache.
func (t Usage) HitRate() float64 {
	if t.Requests == 0 {
		return 0
	}
	return float64(t.Hits) / float64(t.Requests)
}

// hit is 1 for a request that read tokens from the cache, else 0.
func hit(read int) int {
	if read > 0 {
		return 1
	}
	return 0
}

// Embeddings counts the embeddings requests answered.
type Embeddings struct {
	Requests, Texts, Tokens int
	PerText                 map[string]int // how often each text was embedded
}

func newStats() Stats {
	return Stats{
		Requests: map[string]int{}, Keys: map[string]int{}, Agents: map[string]int{}, ByAgent: map[string]Usage{}, Models: map[string]int{},
		Schemas: map[string]int{}, Batches: map[string]int{}, Embeddings: Embeddings{PerText: map[string]int{}}, VoyageInputTypes: map[string]int{},
	}
}

// Stats returns a copy of the counters. It first brings every batch up to date on the
// clock (a batch due by now is processed, as on any look at it).
func (s *Server) Stats() Stats {
	s.mu.Lock()
	all := make([]*batch, 0, len(s.order))
	for _, id := range s.order {
		all = append(all, s.batches[id])
	}
	s.mu.Unlock()
	statuses := map[string]int{}
	for _, b := range all {
		s.observe(b)
		statuses[b.provider+"/"+s.status(b)]++
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.stats
	c.Requests, c.Keys, c.Agents = maps.Clone(c.Requests), maps.Clone(c.Keys), maps.Clone(c.Agents)
	c.Models, c.Schemas, c.ByAgent = maps.Clone(c.Models), maps.Clone(c.Schemas), maps.Clone(c.ByAgent)
	c.Embeddings.PerText = maps.Clone(c.Embeddings.PerText)
	c.VoyageInputTypes = maps.Clone(c.VoyageInputTypes)
	c.Batches = statuses
	return c
}
