package providertest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Batches, shared by both APIs. A batch is created pending; it ends (completed, or
// cancelled, expired) when it is looked at after its time has come: its delay on the
// clock, CompleteBatch, the end of a cancellation, or the 24-hour completion window. It is
// processed then, request after request in the order they were submitted, through the
// same code as ordinary requests (and, unless Options.BatchNoCache, the same prompt
// cache), and its results are kept in a shuffled order.

// completionWindow is how long both APIs give a batch before its requests expire.
const completionWindow = 24 * time.Hour

type batch struct {
	mu sync.Mutex // held while the batch is processed, so that it is processed once

	provider, id string
	seq          int // the batch's number, for the order of its results
	created      time.Time
	delay        time.Duration // <0: only by CompleteBatch
	items        []batchItem

	// Guarded by Server.mu:
	forced   bool      // CompleteBatch asked for it
	cancelAt time.Time // when cancelling began; zero if never
	outcome  string    // "" while pending; "completed", "cancelled", "expired" or "failed"
	endedAt  time.Time
	results  []batchResult // in the order the results come back
	usage    Usage

	// OpenAI only.
	endpoint, inputFileID     string
	metadata                  map[string]string
	invalid                   []map[string]any // validation errors of the input file: the batch failed
	outputFileID, errorFileID string
}

type batchItem struct {
	customID string
	body     json.RawMessage // the request: a chat completion, embeddings or message request
}

// batchResult is one request's outcome.
type batchResult struct {
	customID string
	kind     string         // "succeeded", "errored", "canceled" or "expired"
	body     map[string]any // the response, when succeeded
	err      *apiError      // the error, when errored
}

// newBatch registers a pending batch.
func (s *Server) newBatch(provider, prefix string, items []batchItem) *batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	b := &batch{provider: provider, id: fmt.Sprintf("%s%06d", prefix, s.ids), seq: len(s.order), created: s.clock.Now(), delay: s.opts.BatchDelay, items: items}
	s.batches[b.id] = b
	s.order = append(s.order, b.id)
	return b
}

// batchOf finds a batch of the given API.
func (s *Server) batchOf(provider, id string) *batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.batches[id]; b != nil && b.provider == provider {
		return b
	}
	return nil
}

// CompleteBatch ends a pending batch now, whatever its delay: it is processed at once. It
// returns an error for a batch the fake does not have or that has already ended.
func (s *Server) CompleteBatch(id string) error {
	s.mu.Lock()
	b := s.batches[id]
	switch {
	case b == nil:
		s.mu.Unlock()
		return fmt.Errorf("providertest: no batch %q", id)
	case b.outcome != "":
		s.mu.Unlock()
		return fmt.Errorf("providertest: batch %s has already ended (%s)", id, b.outcome)
	case !b.cancelAt.IsZero():
		s.mu.Unlock()
		return fmt.Errorf("providertest: batch %s is being cancelled", id)
	}
	b.forced = true
	s.mu.Unlock()
	s.observe(b)
	return nil
}

// observe brings a batch up to date on the clock: if its time has come, it ends now.
func (s *Server) observe(b *batch) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := s.clock.Now()
	s.mu.Lock()
	end := ""
	switch {
	case b.outcome != "":
	case !b.cancelAt.IsZero():
		if !now.Before(b.cancelAt.Add(s.opts.CancelDelay)) {
			end = "cancelled"
		}
	case b.forced || (b.delay >= 0 && b.delay <= completionWindow && !now.Before(b.created.Add(b.delay))):
		end = "completed"
	case !now.Before(b.created.Add(completionWindow)):
		end = "expired"
	}
	s.mu.Unlock()
	if end == "" {
		return
	}
	results := make([]batchResult, len(b.items))
	var usage Usage
	for i, it := range b.items {
		results[i] = batchResult{customID: it.customID, kind: map[string]string{"cancelled": "canceled", "expired": "expired"}[end]}
	}
	if end == "completed" {
		runs := make([]moment, len(b.items)) // back to back, now
		if s.opts.BatchSpread {
			until := now
			if !b.forced && b.delay >= 0 {
				until = b.created.Add(b.delay) // when it ended, however late it is looked at
			}
			runs = s.schedule(b, until)
		}
		order := make([]int, len(b.items))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(i, j int) int { return runs[i].at.Compare(runs[j].at) })
		for _, i := range order {
			results[i], usage = s.process(b, b.items[i], usage, runs[i])
		}
	}
	rng := rand.New(rand.NewPCG(s.opts.Seed, uint64(b.seq)))
	rng.Shuffle(len(results), func(i, j int) { results[i], results[j] = results[j], results[i] })
	s.mu.Lock()
	defer s.mu.Unlock()
	b.outcome, b.endedAt, b.results, b.usage = end, now, results, usage
	if b.provider == "openai" {
		s.writeOutputFiles(b)
	}
}

// moment is when a request runs, for the prompt cache: at the clock's now (the zero
// moment: an ordinary request, or a batch processed back to back), or, for a spread
// batch's request, at its own time, what it writes readable lag later, once it has run.
type moment struct {
	at  time.Time
	lag time.Duration
}

func (m moment) now(c Clock) time.Time {
	if m.at.IsZero() {
		return c.Now()
	}
	return m.at
}

// Defaults of a spread batch (Options.BatchSpread).
const (
	defaultBatchConcurrency = 4
	defaultBatchRequestTime = 20 * time.Second
	batchRequestSpread      = 0.6 // σ of the log-normal request times
)

// schedule is when each request of a spread batch runs, the batch having ended at until:
// the run takes the middle of its time, a tenth in from each end (OpenAI's validating and
// finalizing), and the requests arrive in it at seeded, uniformly drawn times, in the
// order they were submitted; each starts on arrival or, with BatchConcurrency running,
// when the first of them ends, and takes a log-normal time around BatchRequestTime. A
// request still running at until ends then.
func (s *Server) schedule(b *batch, until time.Time) []moment {
	n := len(b.items)
	span := max(until.Sub(b.created), 0)
	from, width := b.created.Add(span/10), span-2*(span/10)
	rng := rand.New(rand.NewPCG(s.opts.Seed^0x5eed, uint64(b.seq)))
	arrivals := make([]time.Duration, n)
	for i := range arrivals {
		arrivals[i] = time.Duration(rng.Float64() * float64(width))
	}
	slices.Sort(arrivals)
	lanes := make([]time.Time, cmp.Or(max(s.opts.BatchConcurrency, 0), defaultBatchConcurrency))
	median := cmp.Or(max(s.opts.BatchRequestTime, 0), defaultBatchRequestTime)
	runs := make([]moment, n)
	for i, a := range arrivals {
		lane := 0
		for l := range lanes {
			if lanes[l].Before(lanes[lane]) {
				lane = l
			}
		}
		start := from.Add(a)
		if lanes[lane].After(start) {
			start = lanes[lane]
		}
		end := start.Add(time.Duration(float64(median) * math.Exp(batchRequestSpread*rng.NormFloat64())))
		if start.After(until) {
			start = until
		}
		if end.After(until) {
			end = until
		}
		lanes[lane] = end
		runs[i] = moment{at: start, lag: end.Sub(start)}
	}
	return runs
}

// process answers one request of a batch as the API would answer it alone, at run.
func (s *Server) process(b *batch, it batchItem, usage Usage, run moment) (batchResult, Usage) {
	r := batchResult{customID: it.customID}
	if f := s.opts.FailBatchRequest; f != nil && f(BatchRequest{Provider: b.provider, BatchID: b.id, CustomID: it.customID}) {
		r.kind = "errored"
		if b.provider == "openai" {
			r.err = &apiError{status: http.StatusInternalServerError, kind: "server_error", message: "The server had an error while processing your request. Sorry about that!"}
		} else {
			r.err = &apiError{status: http.StatusInternalServerError, kind: "api_error", message: "Internal server error"}
		}
		return r, usage
	}
	cache := !s.opts.BatchNoCache
	switch {
	case b.provider == "anthropic":
		r.body, r.err = s.message(it.body, b.id, it.customID, cache, run)
	case b.endpoint == "/v1/embeddings":
		r.body, r.err = s.embed(it.body)
	default:
		r.body, r.err = s.chat(it.body, b.id, it.customID, cache, run)
	}
	if r.err != nil {
		r.kind = "errored"
		return r, usage
	}
	r.kind = "succeeded"
	usage.add(usageOf(r.body))
	return r, usage
}

// usageOf reads the tokens of a response back from its usage block.
func usageOf(body map[string]any) Usage {
	u, _ := body["usage"].(map[string]any)
	n := func(m map[string]any, k string) int { v, _ := m[k].(int); return v }
	t := Usage{Requests: 1}
	if _, ok := u["completion_tokens"]; ok { // OpenAI
		details, _ := u["prompt_tokens_details"].(map[string]any)
		t.Input, t.CacheRead, t.Output = n(u, "prompt_tokens"), n(details, "cached_tokens"), n(u, "completion_tokens")
		t.CacheWrite, t.Hits = n(details, "cache_write_tokens"), hit(t.CacheRead)
		return t
	}
	if _, ok := u["output_tokens"]; ok { // Anthropic
		t.CacheRead, t.CacheWrite = n(u, "cache_read_input_tokens"), n(u, "cache_creation_input_tokens")
		t.Input, t.Output = n(u, "input_tokens")+t.CacheRead+t.CacheWrite, n(u, "output_tokens")
		creation, _ := u["cache_creation"].(map[string]any)
		t.CacheWriteLong, t.Hits = n(creation, "ephemeral_1h_input_tokens"), hit(t.CacheRead)
		return t
	}
	t.Input = n(u, "prompt_tokens") // embeddings
	return t
}

// status is a batch's status now, in its API's words: OpenAI's validating, in_progress,
// finalizing, completed, cancelling, cancelled, expired, failed; Anthropic's in_progress,
// canceling, ended. A pending OpenAI batch spends the first tenth of its delay validating
// and the last tenth finalizing.
func (s *Server) status(b *batch) string {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.provider == "anthropic" {
		switch {
		case b.outcome != "":
			return "ended"
		case !b.cancelAt.IsZero():
			return "canceling"
		}
		return "in_progress"
	}
	switch {
	case b.outcome != "":
		return b.outcome
	case !b.cancelAt.IsZero():
		return "cancelling"
	case b.delay < 0 || b.delay > completionWindow:
		return "in_progress"
	}
	switch e := now.Sub(b.created); {
	case e < b.delay/10:
		return "validating"
	case e < b.delay-b.delay/10:
		return "in_progress"
	}
	return "finalizing"
}

// cancel starts cancelling a pending batch; it returns false if the batch has ended.
func (s *Server) cancel(b *batch) bool {
	s.observe(b) // a batch whose time has come ends first
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.outcome != "" {
		return false
	}
	if b.cancelAt.IsZero() {
		b.cancelAt = s.clock.Now()
	}
	return true
}

// counts tallies a batch's results by kind; pending is the requests not yet ended.
func (b *batch) counts() (pending int, kinds map[string]int) {
	kinds = map[string]int{}
	if b.outcome == "" {
		return len(b.items), kinds
	}
	for _, r := range b.results {
		kinds[r.kind]++
	}
	return 0, kinds
}

// stamper renders a batch's times as an API shows them, by format, and a time that has
// not come yet (zero) as null.
func stamper(format func(time.Time) any) func(time.Time) any {
	return func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return format(t)
	}
}
