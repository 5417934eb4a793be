package providertest

import (
	"encoding/json"
	"fmt"
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
	// BatchSpread runs a batch's requests over the batch's run, as a real batch's are,
	// instead of back to back at the moment it ends: each request starts at a seeded time
	// within the run (in the order submitted, at most BatchConcurrency at once) and takes
	// a seeded time (around BatchRequestTime), and reads the prompt cache as it stands
	// when it starts, by the clock, while what it writes can be read only once it has
	// run (see doc.go). A batch CompleteBatch ends runs from its creation to that moment.
	BatchSpread bool
	// BatchConcurrency is how many requests of a spread batch run at once (0 means 4).
	BatchConcurrency int
	// BatchRequestTime is the median time one request of a spread batch takes (0 means
	// 20 s); the times spread log-normally around it (σ 0.6).
	BatchRequestTime time.Duration
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
