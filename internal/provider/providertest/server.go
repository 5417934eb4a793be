package providertest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// The keys a Server accepts when Options name none.
const (
	DefaultOpenAIKey    = "sk-providertest-openai-0123456789"
	DefaultAnthropicKey = "sk-ant-providertest-0123456789"
)

// DefaultOpenAICacheTTL is how long OpenAI keeps an unused prefix in its in-memory cache
// when Options say nothing: the low end of the "5 to 10 minutes of inactivity" OpenAI
// documents, so that a benchmark does not overstate what caching saves.
const DefaultOpenAICacheTTL = 5 * time.Minute

// Options configure a Server. The zero value is a working fake.
type Options struct {
	// OpenAIKey, AnthropicKey and VoyageKey are the API keys the fake accepts ("" means
	// DefaultOpenAIKey, DefaultAnthropicKey and DefaultVoyageKey).
	OpenAIKey, AnthropicKey, VoyageKey string
	// Clock drives the prompt cache's lifetimes and the batches' timelines; nil means the
	// real time.
	Clock Clock
	// Latency holds each ordinary chat completion or message this long (real time) before
	// answering, as a real model would: tests of concurrency see requests in flight.
	Latency time.Duration

	// OpenAICacheTTL is how long an OpenAI prefix stays cached without use, for requests
	// with the default in-memory retention; 0 means DefaultOpenAICacheTTL. A request with
	// prompt_cache_retention "24h" keeps its prefixes for 24 hours.
	OpenAICacheTTL time.Duration
	// AnthropicMinimums are the fewest tokens a Claude model caches at a breakpoint, by
	// model name prefix, over the built-in table (AnthropicMinimum); the longest matching
	// prefix wins. AnthropicDefaultMinimum is the minimum of a model no prefix matches (0
	// means 1,024).
	AnthropicMinimums       map[string]int
	AnthropicDefaultMinimum int
	// AnthropicTokenScale multiplies the fake's o200k_base counts of Claude requests and
	// answers (0 means 1). Claude's tokenizer is not public and counts English text higher
	// than o200k_base does (see doc.go); a benchmark can set, say, 1.2 to see how much its
	// figures move, including which prefixes reach a model's caching minimum.
	AnthropicTokenScale float64

	// BatchDelay is how long a batch takes, from its creation to its results, on Clock. 0
	// means it is done when first looked at after its creation; a negative delay means
	// only CompleteBatch ends it. A delay past the 24-hour completion window expires it.
	BatchDelay time.Duration
	// CancelDelay is how long a cancelled batch stays cancelling (canceling) on Clock.
	CancelDelay time.Duration
	// BatchNoCache processes batches without the prompt cache, neither reading nor
	// writing it: the providers only promise caching in batches on a best-effort basis,
	// and this is the pessimistic end (the default is the optimistic one; see doc.go).
	BatchNoCache bool
	// Seed seeds the order in which batch results come back (shuffled, as the real APIs
	// do not keep the input order).
	Seed uint64
	// FailBatchRequest, when set, is asked for each request of a batch as the batch is
	// processed; true makes that request fail (an error line on OpenAI, an errored result
	// on Anthropic) while the others succeed.
	FailBatchRequest func(BatchRequest) bool

	// Answer, when set, decides each turn's reply; it gets the fake's own reply in
	// Turn.Default. It may be called from several goroutines at once.
	Answer func(Turn) Reply
	// CallTools makes the default reply of a turn that offers tools (and lets the model
	// call one) a call of the first tool, until the conversation has a tool result: the
	// shape of a grounded turn.
	CallTools bool
}

// BatchRequest names one request of a batch, for Options.FailBatchRequest.
type BatchRequest struct {
	Provider, BatchID, CustomID string
}

// Server is the fake OpenAI and Anthropic API, an http.Handler: OpenAI's endpoints under
// /v1/ (chat/completions, embeddings, files, batches) and Anthropic's (messages,
// messages/batches) on the same server, and Voyage's embeddings under /voyage/v1/.
type Server struct {
	opts  Options
	clock Clock
	mux   *http.ServeMux
	srv   *httptest.Server // set by Start

	mu       sync.Mutex
	openAI   *prefixCache
	claude   *prefixCache
	files    map[string]*file
	batches  map[string]*batch
	order    []string          // batch ids in creation order
	ids      int               // for the ids the fake makes up
	seq      int               // turns answered
	asked    map[uint64]uint64 // turn key -> times asked, for Turn.Key
	stats    Stats
	problems []string
}

// New returns a fake with the given options; it serves nothing until given to an
// http.Server (Start does that on httptest).
func New(opts Options) *Server {
	if opts.OpenAIKey == "" {
		opts.OpenAIKey = DefaultOpenAIKey
	}
	if opts.AnthropicKey == "" {
		opts.AnthropicKey = DefaultAnthropicKey
	}
	if opts.VoyageKey == "" {
		opts.VoyageKey = DefaultVoyageKey
	}
	if opts.AnthropicTokenScale <= 0 {
		opts.AnthropicTokenScale = 1
	}
	if opts.OpenAICacheTTL <= 0 {
		opts.OpenAICacheTTL = DefaultOpenAICacheTTL
	}
	s := &Server{
		opts: opts, clock: opts.Clock, mux: http.NewServeMux(),
		openAI: newPrefixCache(), claude: newPrefixCache(),
		files: map[string]*file{}, batches: map[string]*batch{},
		asked: map[uint64]uint64{}, stats: newStats(),
	}
	if s.clock == nil {
		s.clock = realClock{}
	}
	s.routes()
	return s
}

// Start starts a fake on httptest for the test's duration. When the test ends, it fails
// the test for each request the fake could not make sense of (see Problems).
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := New(opts)
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	t.Cleanup(func() {
		for _, p := range s.Problems() {
			t.Errorf("providertest: %s", p)
		}
	})
	return s
}

// URL is the server's address (Start only).
func (s *Server) URL() string { return s.srv.URL }

// OpenAIBaseURL is the base URL the OpenAI SDK (and OPENAI_BASE_URL) takes.
func (s *Server) OpenAIBaseURL() string { return s.srv.URL + "/v1" }

// AnthropicBaseURL is the base URL the Anthropic SDK (and ANTHROPIC_BASE_URL) takes.
func (s *Server) AnthropicBaseURL() string { return s.srv.URL }

// OpenAIKey and AnthropicKey are the keys the fake accepts.
func (s *Server) OpenAIKey() string    { return s.opts.OpenAIKey }
func (s *Server) AnthropicKey() string { return s.opts.AnthropicKey }

// Problems are the requests the fake could not make sense of: an endpoint it does not
// serve, a body that is not JSON, a streaming request. A real API would refuse most of
// them too; the fake answers them with an error and notes them, since they mean a client
// (or the fake) is wrong.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.problems...)
}

func (s *Server) problem(format string, args ...any) {
	s.mu.Lock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *Server) routes() {
	openai := func(pattern string, h func(http.ResponseWriter, *http.Request)) {
		s.mux.HandleFunc(pattern, s.authorized(openAIAuth, h))
	}
	claude := func(pattern string, h func(http.ResponseWriter, *http.Request)) {
		s.mux.HandleFunc(pattern, s.authorized(anthropicAuth, h))
	}
	openai("POST /v1/chat/completions", s.handleChat)
	openai("POST /v1/embeddings", s.handleEmbeddings)
	openai("POST /v1/files", s.handleFileUpload)
	openai("GET /v1/files/{id}", s.handleFileGet)
	openai("GET /v1/files/{id}/content", s.handleFileContent)
	openai("DELETE /v1/files/{id}", s.handleFileDelete)
	openai("POST /v1/batches", s.handleBatchCreate)
	openai("GET /v1/batches/{id}", s.handleBatchGet)
	openai("POST /v1/batches/{id}/cancel", s.handleBatchCancel)
	s.mux.HandleFunc("POST "+voyagePrefix+"/v1/embeddings", s.authorized(voyageAuth, s.handleVoyageEmbeddings))
	claude("POST /v1/messages", s.handleMessages)
	claude("POST /v1/messages/batches", s.handleMessageBatchCreate)
	claude("GET /v1/messages/batches/{id}", s.handleMessageBatchGet)
	claude("GET /v1/messages/batches/{id}/results", s.handleMessageBatchResults)
	claude("POST /v1/messages/batches/{id}/cancel", s.handleMessageBatchCancel)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.count(r.Method+" "+r.URL.Path, "")
		s.problem("%s %s: not an endpoint of the fake", r.Method, r.URL.Path)
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("%s %s is not an endpoint of the fake OpenAI/Anthropic API", r.Method, r.URL.Path),
			"type":    "invalid_request_error", "param": nil, "code": "unknown_url",
		}})
	})
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// auth is how one API reads the key and answers a wrong one.
type auth struct {
	key    func(*Server, *http.Request) (got string, ok bool)
	refuse func(http.ResponseWriter, string)
}

var openAIAuth = auth{
	key: func(s *Server, r *http.Request) (string, bool) {
		h := r.Header.Get("Authorization")
		return h, h == "Bearer "+s.opts.OpenAIKey
	},
	refuse: func(w http.ResponseWriter, header string) {
		// OpenAI's own answers: no key, or a wrong one quoted masked.
		msg := "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
		code := any(nil)
		if len(header) > len("Bearer ") {
			msg = "Incorrect API key provided: " + masked(header[len("Bearer "):]) + ". You can find your API key at https://platform.openai.com/account/api-keys."
			code = "invalid_api_key"
		}
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
			"message": msg, "type": "invalid_request_error", "param": nil, "code": code,
		}})
	},
}

var anthropicAuth = auth{
	key: func(s *Server, r *http.Request) (string, bool) {
		k := r.Header.Get("X-Api-Key")
		return k, k == s.opts.AnthropicKey
	},
	refuse: func(w http.ResponseWriter, _ string) {
		writeAnthropicError(w, apiError{status: http.StatusUnauthorized, kind: "authentication_error", message: "invalid x-api-key"})
	},
}

// authorized counts a request and lets it through only with the configured key, as the
// real APIs do.
func (s *Server) authorized(a auth, h func(http.ResponseWriter, *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		got, ok := a.key(s, r)
		s.count(r.Pattern, got)
		if !ok {
			s.mu.Lock()
			s.stats.Unauthorized++
			s.mu.Unlock()
			a.refuse(w, got)
			return
		}
		h(w, r)
	}
}

// count notes a request by endpoint and by the key it presented.
func (s *Server) count(endpoint, key string) {
	s.mu.Lock()
	s.stats.Requests[endpoint]++
	s.stats.Keys[key]++
	s.mu.Unlock()
}

// newID makes up an id with the given prefix.
func (s *Server) newID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s%06d", prefix, s.ids)
}

// masked is a key as OpenAI quotes it in an error: its start and its last few characters.
func masked(key string) string {
	if len(key) < 12 {
		return "***"
	}
	return key[:3] + "*****" + key[len(key)-4:]
}

// apiError is an error answer, rendered in each API's shape.
type apiError struct {
	status              int
	kind, code, message string // kind: OpenAI's "type", Anthropic's error type
	param               string
}

func (e apiError) openAIBody() map[string]any {
	var code, param any
	if e.code != "" {
		code = e.code
	}
	if e.param != "" {
		param = e.param
	}
	return map[string]any{"error": map[string]any{"message": e.message, "type": e.kind, "param": param, "code": code}}
}

func (e apiError) anthropicBody(requestID string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": e.kind, "message": e.message}, "request_id": requestID}
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, kind: "invalid_request_error", message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{status: http.StatusNotFound, kind: "not_found_error", message: fmt.Sprintf(format, args...)}
}

func writeOpenAIError(w http.ResponseWriter, e apiError) {
	if e.status == http.StatusNotFound && e.kind == "not_found_error" {
		e.kind = "invalid_request_error" // OpenAI has no not_found_error type
	}
	writeJSON(w, e.status, e.openAIBody())
}

func writeAnthropicError(w http.ResponseWriter, e apiError) {
	writeJSON(w, e.status, e.anthropicBody("req_fake"))
}

// refused counts an error answer the real API would give too (a bad request).
func (s *Server) refused() {
	s.mu.Lock()
	s.stats.Refused++
	s.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

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
	Output     int
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
	t.Output += u.Output
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

// answered notes one turn answered.
func (s *Server) answered(t Turn, u Usage, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Agents[t.Agent]++
	byAgent := s.stats.ByAgent[t.Agent]
	byAgent.add(u)
	s.stats.ByAgent[t.Agent] = byAgent
	s.stats.Models[t.Model]++
	if t.SchemaName != "" {
		s.stats.Schemas[t.SchemaName]++
	}
	s.stats.ToolCalls += calls
	switch {
	case t.Provider == "openai" && t.BatchID == "":
		s.stats.OpenAI.add(u)
	case t.Provider == "openai":
		s.stats.OpenAIBatch.add(u)
	case t.BatchID == "":
		s.stats.Anthropic.add(u)
	default:
		s.stats.AnthropicBatch.add(u)
	}
}

// answerTurn serves an ordinary turn (not one of a batch) of either API: it reads the
// request, refuses a streaming one (the fake does not stream), holds it Options.Latency
// as a turn in flight, and writes what answer makes of it, or the API's error.
func (s *Server) answerTurn(w http.ResponseWriter, r *http.Request, what string, writeError func(http.ResponseWriter, apiError), requestIDHeader string, answer func(body []byte) (map[string]any, *apiError)) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var probe struct {
		Stream bool `json:"stream"`
	}
	if json.Unmarshal(body, &probe) == nil && probe.Stream {
		s.problem("a streaming %s: the fake does not stream", what)
		writeError(w, *badRequest("the fake does not stream; send stream: false"))
		return
	}
	done := s.inFlight()
	defer done()
	if !s.hold(r) {
		return
	}
	resp, e := answer(body)
	if e != nil {
		writeError(w, *e)
		return
	}
	w.Header().Set(requestIDHeader, "req_fake")
	writeJSON(w, http.StatusOK, resp)
}

// inFlight counts an ordinary turn in flight until the returned func is called.
func (s *Server) inFlight() func() {
	s.mu.Lock()
	s.stats.InFlight++
	s.stats.MaxInFlight = max(s.stats.MaxInFlight, s.stats.InFlight)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.stats.InFlight--
		s.mu.Unlock()
	}
}

// hold waits Options.Latency, or until the client gives up.
func (s *Server) hold(r *http.Request) bool {
	if s.opts.Latency <= 0 {
		return true
	}
	t := time.NewTimer(s.opts.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// reply asks the Answer hook, if any, for a turn's reply, and fills in the output tokens
// (counted, times scale, unless the hook gave them).
func (s *Server) reply(t Turn, scale float64) Reply {
	k := turnKey(t)
	s.mu.Lock()
	t.Seq = s.seq
	s.seq++
	t.Key = k ^ s.asked[k]*0x9e3779b97f4a7c15
	s.asked[k]++
	s.mu.Unlock()
	t.Default = defaultReply(t, s.opts.CallTools)
	rep := t.Default
	if s.opts.Answer != nil {
		rep = s.opts.Answer(t)
	}
	if !t.MayCallTools && len(rep.Calls) > 0 {
		s.problem("the Answer hook called %d tools in a %s turn that may call none; answered %q instead", len(rep.Calls), t.Agent, rep.Text)
		rep.Calls = nil
	}
	if rep.OutputTokens <= 0 {
		n := 0
		if len(rep.Calls) > 0 {
			for _, c := range rep.Calls {
				n += Tokens(c.Name) + Tokens(string(c.Arguments))
			}
		} else {
			n = Tokens(rep.Text)
		}
		rep.OutputTokens = scaled(n, scale)
	}
	return rep
}

// turnKey hashes what a turn asks: the same question gets the same key whenever it comes.
func turnKey(t Turn) uint64 {
	h := fnv.New64a()
	for _, s := range []string{t.Provider, t.Model, t.Agent, string(t.Schema), t.System} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, m := range t.Messages {
		h.Write([]byte(m.Role))
		h.Write([]byte{0})
		h.Write([]byte(m.Text))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// scaled is n tokens times scale, rounded.
func scaled(n int, scale float64) int {
	if scale == 1 {
		return n
	}
	return int(float64(n)*scale + 0.5)
}

// minimum is the fewest tokens a Claude model caches at a breakpoint.
func (s *Server) minimum(model string) int {
	best, n := -1, 0
	for _, table := range []map[string]int{AnthropicMinimum, s.opts.AnthropicMinimums} {
		for prefix, min := range table {
			if len(prefix) >= best && len(model) >= len(prefix) && model[:len(prefix)] == prefix {
				best, n = len(prefix), min
			}
		}
	}
	if best >= 0 {
		return n
	}
	if s.opts.AnthropicDefaultMinimum > 0 {
		return s.opts.AnthropicDefaultMinimum
	}
	return 1024
}

// AnthropicMinimum is the fewest tokens each Claude model caches at a breakpoint, by model
// name prefix (Anthropic's prompt caching documentation, read 2026). Options can add to it
// or override it.
var AnthropicMinimum = map[string]int{
	// The 5 models (as third-party reports of the prompt-caching page list them, read
	// 2026-11; Sonnet 5.5 is taken to be Sonnet 5's).
	"claude-opus-5":   512,
	"claude-fable":    512,
	"claude-mythos":   512,
	"claude-sonnet-5": 1024,
	"claude-opus-4-8": 1024,
	"claude-opus-4-7": 2048,
	// The 4 and 3 models, as the prompt-caching page lists them.
	"claude-opus-4-6":   4096,
	"claude-opus-4-5":   4096,
	"claude-haiku-4-5":  4096,
	"claude-opus-4-1":   1024,
	"claude-opus-4":     1024,
	"claude-sonnet-4-6": 1024,
	"claude-sonnet-4-5": 1024,
	"claude-sonnet-4":   1024,
	"claude-3-7-sonnet": 1024,
	"claude-3-5-haiku":  2048,
	"claude-haiku-3-5":  2048,
	"claude-3-haiku":    2048,
}
