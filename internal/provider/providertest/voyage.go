package providertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/cosci-dev/cosci/internal/simulator"
)

// DefaultVoyageKey is the Voyage key a Server accepts when Options name none.
const DefaultVoyageKey = "pa-providertest-voyage-0123456789"

// voyagePrefix is where the fake serves Voyage's API, apart from OpenAI's /v1: both have a
// POST /v1/embeddings.
const voyagePrefix = "/voyage"

// VoyageBaseURL is the base URL a Voyage client (and VOYAGE_BASE_URL) takes: it posts to
// {base}/v1/embeddings.
func (s *Server) VoyageBaseURL() string { return s.srv.URL + voyagePrefix }

// VoyageKey is the Voyage key the fake accepts.
func (s *Server) VoyageKey() string { return s.opts.VoyageKey }

// voyageMaxTexts is the most texts Voyage takes in one request.
const voyageMaxTexts = 1000

var voyageAuth = auth{
	key: func(s *Server, r *http.Request) (string, bool) {
		h := r.Header.Get("Authorization")
		return h, h == "Bearer "+s.opts.VoyageKey
	},
	refuse: func(w http.ResponseWriter, _ string) {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"detail": "Provided API key is invalid."})
	},
}

// handleVoyageEmbeddings answers Voyage's embeddings API: {"input": [...], "model": ...,
// "input_type": "document"|"query"|null} gets {"object": "list", "data": [{"object":
// "embedding", "embedding": [...], "index": i}], "model": ..., "usage": {"total_tokens":
// n}}, each vector simulator.Embed's stand-in for its text, as the OpenAI fake's. Errors
// are Voyage's {"detail": "..."}.
func (s *Server) handleVoyageEmbeddings(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	refuse := func(format string, args ...any) {
		s.refused()
		writeJSON(w, http.StatusBadRequest, map[string]any{"detail": fmt.Sprintf(format, args...)})
	}
	var req struct {
		Input     json.RawMessage `json:"input"`
		Model     string          `json:"model"`
		InputType *string         `json:"input_type"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		s.problem("a Voyage embeddings request that is not JSON: %v", err)
		writeJSON(w, http.StatusBadRequest, map[string]any{"detail": "Request body is not valid JSON."})
		return
	}
	texts, ok := inputTexts(req.Input)
	if !ok {
		refuse("Value error, input must be a string or a non-empty list of strings")
		return
	}
	switch {
	case req.Model == "":
		refuse("Field required: model")
		return
	case len(texts) > voyageMaxTexts:
		refuse("Value error, the input list has %d items; it may have at most %d", len(texts), voyageMaxTexts)
		return
	case req.InputType != nil && *req.InputType != "document" && *req.InputType != "query":
		refuse("Value error, input_type %q is not one of 'query', 'document' or null", *req.InputType)
		return
	}
	data := make([]any, len(texts))
	tokens := 0
	for i, text := range texts {
		if text == "" {
			refuse("Value error, input[%d] is an empty string", i)
			return
		}
		data[i] = map[string]any{"object": "embedding", "embedding": simulator.Embed(text), "index": i}
		tokens += Tokens(text)
	}
	s.mu.Lock()
	s.countEmbeddings(req.Model, texts, tokens)
	if req.InputType != nil {
		s.stats.VoyageInputTypes[*req.InputType]++
	} else {
		s.stats.VoyageInputTypes[""]++
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": req.Model, "usage": map[string]any{"total_tokens": tokens}})
}
