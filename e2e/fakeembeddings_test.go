package e2e

import (
	"encoding/json"
	"net/http"

	"github.com/cosci-dev/cosci/internal/simulator"
)

// embed answers the Embeddings API: each input gets the stand-in embedding of its text
// (simulator.Embed), and the usage counts like the chat's. The fake notes how many texts
// it embedded, by text, so a test can tell each hypothesis was embedded once.
func (f *fakeOpenAI) embed(w http.ResponseWriter, body []byte) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Input) == 0 {
		f.fail(w, http.StatusBadRequest, "an embeddings request without a list of texts: "+string(body))
		return
	}
	data := make([]map[string]any, len(req.Input))
	tokens := 0
	for i, text := range req.Input {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": simulator.Embed(text)}
		tokens += len(text)/4 + 1
	}
	f.mu.Lock()
	f.answered++
	f.prompt += tokens
	f.embedTokens += tokens
	f.models[req.Model]++
	f.embedded += len(req.Input)
	if f.texts == nil {
		f.texts = map[string]int{}
	}
	for _, text := range req.Input {
		f.texts[text]++
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "model": req.Model, "data": data,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}})
}
