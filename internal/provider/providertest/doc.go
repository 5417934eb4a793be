// Package providertest is a fake of the parts of the OpenAI and Anthropic HTTP APIs that
// cosci uses, wire-compatible with the official Go SDKs, that caches prompts and runs
// batches the way the real APIs describe, so that tests and benchmarks can measure what
// caching and batching save.
//
// One Server (an http.Handler; Start runs it on httptest) serves both APIs:
//
//   - OpenAI, under /v1 (Server.OpenAIBaseURL): POST chat/completions, POST embeddings,
//     the Files API (POST files, GET files/{id}, GET files/{id}/content, DELETE) and the
//     Batch API (POST batches, GET batches/{id}, POST batches/{id}/cancel) for batches of
//     chat completions or embeddings.
//   - Anthropic (Server.AnthropicBaseURL): POST /v1/messages and Message Batches (POST
//     /v1/messages/batches, GET …/{id}, GET …/{id}/results, POST …/{id}/cancel).
//   - Voyage AI (Server.VoyageBaseURL, under /voyage): POST /v1/embeddings, Voyage's
//     request ({"input", "model", "input_type"}) and answer ({"data": [{"embedding",
//     "index"}], "usage": {"total_tokens"}}), errors as {"detail": "..."}.
//
// Each API takes only its configured key ("Authorization: Bearer" for OpenAI and Voyage,
// "x-api-key" for Anthropic) and refuses any other with a 401 in its own error shape. Requests the real
// API would refuse (five cache breakpoints, a tool_choice naming no tool, a batch line
// with a duplicate custom_id…) get the API's 4xx; requests the fake cannot make sense of
// (an unknown endpoint, a body that is not JSON, streaming) are also noted as Problems,
// and Start fails the test for each.
//
// # Answers
//
// The fake tells the agent from the answer schema's name (response_format.json_schema.name
// on OpenAI; on Anthropic the tool that tool_choice forces, or the offered tool named like
// an answer schema), falling back to the schema's shape, never from the prompt's words. It
// answers with a minimal valid JSON answer that internal/prompt's parser for that agent
// takes (a comparison's winner alternates A, B), and with a minimal instance of any other
// schema. Options.Answer replaces the answer and its output token count (a benchmark can
// write answers as long as a real model's); Options.CallTools makes the model call the
// first offered tool before answering, in a turn that lets it call one (a grounded turn).
//
// # Token counts
//
// Every count is o200k_base (Tokens), over what the request carries, in the order the
// provider processes it:
//
//   - OpenAI: the tool definitions (each as the JSON of its name, description and
//     parameters), the answer schema (the JSON of its name and schema), then each message
//     framed as the chat format frames it (3 tokens, plus its role), then the 3 tokens that
//     prime the reply. For messages this is the way OpenAI publishes for counting
//     o200k_base chat prompts; tools and the schema OpenAI renders in a format of its own
//     (a TypeScript-like namespace), which the fake's JSON approximates: the hypothesis
//     schema in response_format is 126 tokens, about a quarter of a generation turn, so a
//     10% difference in its rendering moves that turn's count by 2 to 3%.
//   - Anthropic: the tools (the JSON of name, description and input_schema), the system
//     blocks, the tool-use system prompt Anthropic adds to a request with tools (346 tokens
//     for tool_choice auto or none, 313 for any or tool: its published figures for Claude 4
//     models), then each content block (a text, a tool call's name and input, a tool
//     result's content). Message framing, which Anthropic does not publish, is not counted.
//     Claude's tokenizer is not public: third parties report it counting English text 5 to
//     30% above OpenAI's tokenizers, so the fake's Anthropic counts are likely low by that
//     much (Options.AnthropicTokenScale multiplies them, to see how far figures move).
//
// Measured on cosci's prompts (TestTokenCountSpread): cl100k_base, GPT-4's vocabulary,
// counts 1.2% below o200k_base overall (0 to 3% per agent), and bytes/4 counts 14% above.
// So where the tokenizer is known the fake is exact up to the schema's rendering (a few
// percent); for Claude, expect the real input counts 5 to 30% higher, and since cached and
// uncached tokens scale alike the share served from cache moves much less, except near a
// caching minimum.
//
// # Prompt caching
//
// Both caches key a prefix by a hash of everything in it (and the model), forget it after
// its lifetime without use, and renew the lifetime of what a request reads. Time is
// Options.Clock's (a FakeClock moves past a TTL without sleeping).
//
// OpenAI caches automatically. Before GPT-5.6, a prompt of at least 1,024 tokens is cached
// as its prefixes of 1,024 + k·128 tokens; a later prompt's cached_tokens
// (usage.prompt_tokens_details) is the longest of its own such prefixes that is cached
// and live, and nothing is reported as written (cache_write_tokens stays 0). From GPT-5.6
// on (gpt-5.6-*, gpt-6*; openai_cache.go) the same implicit cache lives 30 minutes and its
// writes are reported in cache_write_tokens (billed at 1.25 times the input price), and a
// request may add prompt_cache_breakpoint marks on content parts, which cache the prefix
// up to the exact end of the part (30 minutes, or their ttl "12h"). prompt_cache_options
// and breakpoints on an earlier model, bad modes or lifetimes, and prompt_cache_options
// beside prompt_cache_retention are 400s. Before GPT-5.6, prefixes live
// Options.OpenAICacheTTL without use (default 5 minutes, the low end of OpenAI's "5 to 10
// minutes of inactivity"), or 24 hours for a request with prompt_cache_retention "24h".
// prompt_cache_key is modelled as
// a partition: a request hits only prefixes cached by requests with the same key (requests
// without a key share one partition). That is how the real API behaves when the key keeps
// a session's requests on one cache machine; what is not modelled is the overflow to other
// machines above about 15 requests a minute for one prefix and key, which lowers real hit
// rates.
//
// Anthropic caches only at cache_control breakpoints (at most 4 a request, more is a 400;
// the top-level automatic cache_control marks the last block and takes one of the 4). The
// request is laid out tools, system, tool-use prompt, messages, so a change in the tools
// invalidates everything, a change of tool_choice only the messages. For each breakpoint
// the fake looks for a live entry at that block or up to 20 blocks before it, as the API
// does; cache_read_input_tokens is the longest prefix found. Each breakpoint after it
// whose prefix has at least the model's minimum (AnthropicMinimum: 1,024 for Sonnet 4.x
// and Opus 4.1, 4,096 for Haiku 4.5 and Opus 4.5/4.6, 2,048 for Haiku 3.5; default 1,024;
// Options can override) is written, and cache_creation_input_tokens is the tokens from
// the read to the last one written, split by lifetime in cache_creation; input_tokens is
// the rest. Lifetimes are 5 minutes, or 1 hour with ttl "1h", renewed on each read; a 1h
// breakpoint after a 5m one is a 400, as the API requires longer lifetimes first.
//
// # Batches
//
// A batch (OpenAI: a JSONL file of requests with custom_id; Anthropic: requests of
// custom_id and params) is pending for Options.BatchDelay on the clock (OpenAI shows
// validating for the first tenth, in_progress, then finalizing for the last tenth;
// Anthropic in_progress), then completed (ended); CompleteBatch ends one at once, and a
// negative delay waits for it. It is processed when first looked at after that: each
// request in the order submitted, through the same code as an ordinary request, so the
// results are what the request would have got alone, an invalid request comes back as an
// error line or an errored result, and Options.FailBatchRequest can fail chosen ones. The
// results come back shuffled (seeded by Options.Seed): read them by custom_id. OpenAI
// writes successes to output_file_id and failures to error_file_id, one line per request
// as the real API does; Anthropic streams them from …/results. Cancelling a pending batch
// makes it cancelling (canceling) for Options.CancelDelay, then cancelled (ended) with
// every request cancelled; a batch whose delay passes the 24-hour window expires at it.
//
// Within a batch the same prompt cache applies, by default with the requests in
// submission order at the moment the batch is processed: the optimistic end of what the
// APIs promise ("best effort"; Anthropic reports 30 to 98% hit rates for batches with
// shared prefixes and recommends 1-hour breakpoints for them). Options.BatchNoCache gives
// the pessimistic end, batches that neither read nor write the cache; a benchmark can
// report both.
//
// Options.BatchSpread runs a batch as a real one runs, spread over its time: the middle
// eight tenths of it (OpenAI's validating and finalizing at the ends), into which the
// requests arrive at seeded, uniformly drawn times in the order they were submitted; each
// starts on arrival, or when one of the BatchConcurrency requests running ends (4 by
// default), and runs a seeded log-normal time around BatchRequestTime (20 s). A request
// reads the cache as it stands when it starts, on the clock, and what it writes can be
// read from when it ends (Anthropic: an entry is available once the first response has
// begun; the fake waits for the whole response, the cautious side). So a 5-minute prefix
// serves a batch's next request only if it starts within 5 minutes of the last use, and a
// batch of hours needs the long lifetime. The batch is still processed when it is first
// looked at after its end, its requests at their own, earlier times: the cache keeps when
// each entry became readable, so that an entry written later (by an ordinary request
// meanwhile) is not read earlier. Stats counts the in-batch hits (Usage.Hits: requests
// that read anything from the cache).
//
// # Counters
//
// Server.Stats gives requests by endpoint and by key, 401s and other refusals, turns by
// agent, model and schema, the tokens of turns by API (input, read from the cache, written
// to it, output; ordinary and batched apart), embeddings, batches by status, and the
// chat/messages requests in flight and their maximum.
package providertest
