package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"time"
)

// Anthropic: Message Batches.

// anthropicBatchMax is how many requests a message batch may hold.
const anthropicBatchMax = 100000

// customIDRE is what Anthropic takes as a custom_id.
var customIDRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func (s *Server) handleMessageBatchCreate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Requests []struct {
			CustomID string          `json:"custom_id"`
			Params   json.RawMessage `json:"params"`
		} `json:"requests"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		s.problem("a message batch request that is not JSON: %v", err)
		writeAnthropicError(w, *badRequest("the request body is not valid JSON: %v", err))
		return
	}
	refuse := func(format string, args ...any) {
		s.refused()
		writeAnthropicError(w, *badRequest(format, args...))
	}
	if n := len(req.Requests); n == 0 || n > anthropicBatchMax {
		refuse("requests: a batch holds from 1 to %d requests; got %d", anthropicBatchMax, n)
		return
	}
	seen := map[string]bool{}
	items := make([]batchItem, len(req.Requests))
	for i, it := range req.Requests {
		switch {
		case !customIDRE.MatchString(it.CustomID):
			refuse("requests.%d.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i)
			return
		case seen[it.CustomID]:
			refuse("requests: custom_id '%s' is used more than once; each request of a batch needs its own", it.CustomID)
			return
		case len(it.Params) == 0 || string(it.Params) == "null":
			refuse("requests.%d.params: Field required", i)
			return
		}
		seen[it.CustomID] = true
		// The params are checked when the batch is processed, as Anthropic does: a bad
		// request comes back errored, the rest of the batch succeeds.
		items[i] = batchItem{customID: it.CustomID, body: it.Params}
	}
	b := s.newBatch("anthropic", "msgbatch_fake", items)
	writeJSON(w, http.StatusOK, s.anthropicBatch(b, r, ""))
}

func (s *Server) anthropicBatchNamed(w http.ResponseWriter, r *http.Request) *batch {
	id := r.PathValue("id")
	b := s.batchOf("anthropic", id)
	if b == nil {
		s.refused()
		writeAnthropicError(w, *notFound("message batch %s not found", id))
	}
	return b
}

func (s *Server) handleMessageBatchGet(w http.ResponseWriter, r *http.Request) {
	if b := s.anthropicBatchNamed(w, r); b != nil {
		s.observe(b)
		writeJSON(w, http.StatusOK, s.anthropicBatch(b, r, ""))
	}
}

func (s *Server) handleMessageBatchCancel(w http.ResponseWriter, r *http.Request) {
	b := s.anthropicBatchNamed(w, r)
	if b == nil {
		return
	}
	if !s.cancel(b) {
		s.refused()
		writeAnthropicError(w, *badRequest("message batch %s has ended and cannot be canceled", b.id))
		return
	}
	writeJSON(w, http.StatusOK, s.anthropicBatch(b, r, "canceling"))
}

// handleMessageBatchResults streams an ended batch's results, one JSON line per request
// with its custom_id, in the (shuffled) order the batch keeps them.
func (s *Server) handleMessageBatchResults(w http.ResponseWriter, r *http.Request) {
	b := s.anthropicBatchNamed(w, r)
	if b == nil {
		return
	}
	s.observe(b)
	s.mu.Lock()
	ended := b.outcome != ""
	results := b.results
	s.mu.Unlock()
	if !ended {
		s.refused()
		writeAnthropicError(w, *badRequest("message batch %s has not ended yet; its results are available once processing_status is ended", b.id))
		return
	}
	var out bytes.Buffer
	for _, res := range results {
		result := map[string]any{"type": res.kind}
		switch res.kind {
		case "succeeded":
			result["message"] = res.body
		case "errored":
			result["error"] = res.err.anthropicBody("req_fake")
		}
		line, _ := json.Marshal(map[string]any{"custom_id": res.customID, "result": result})
		out.Write(line)
		out.WriteByte('\n')
	}
	w.Header().Set("Content-Type", "application/binary")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out.Bytes())
}

// anthropicBatch is a batch as the API shows it; status overrides processing_status ("" keeps it).
func (s *Server) anthropicBatch(b *batch, r *http.Request, status string) map[string]any {
	if status == "" {
		status = s.status(b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at := stamper(func(t time.Time) any { return t.UTC().Format(time.RFC3339Nano) })
	pending, kinds := b.counts()
	var resultsURL any
	if b.outcome != "" {
		resultsURL = fmt.Sprintf("http://%s/v1/messages/batches/%s/results", r.Host, b.id)
	}
	return map[string]any{
		"id": b.id, "type": "message_batch", "processing_status": status,
		"request_counts": map[string]any{
			"processing": pending, "succeeded": kinds["succeeded"], "errored": kinds["errored"],
			"canceled": kinds["canceled"], "expired": kinds["expired"],
		},
		"created_at": at(b.created), "expires_at": at(b.created.Add(completionWindow)), "ended_at": at(b.endedAt),
		"cancel_initiated_at": at(b.cancelAt), "archived_at": nil, "results_url": resultsURL,
	}
}
