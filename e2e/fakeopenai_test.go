package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeOpenAI is an OpenAI Chat Completions server for the end-to-end tests. It answers
// every agent of the co-scientist with a minimal valid JSON answer for its schema (see
// internal/prompt), recognising the agent from the prompt, and a usage block it adds up.
// It accepts only "Authorization: Bearer <key>" and answers anything else with a 401, as
// OpenAI does. It can hold each answer for a while, and counts the requests in flight.
type fakeOpenAI struct {
	t     *testing.T
	srv   *httptest.Server
	key   string        // the one key it accepts
	delay time.Duration // how long it holds each answer

	inFlight, maxInFlight atomic.Int64

	mu           sync.Mutex
	requests     int            // answered, of any kind
	answered     int            // answered 200
	unauthorized int            // answered 401
	authHeaders  map[string]int // Authorization headers seen
	agents       map[string]int // 200 answers by agent
	models       map[string]int // model names asked for
	schemas      map[string]int // response_format json_schema names asked for
	problems     []string       // requests the fake could not make sense of
	prompt       int            // prompt tokens answered (200 only)
	completion   int            // completion tokens answered (200 only)
	embedded     int            // texts embedded
	embedTokens  int            // prompt tokens of the embeddings
	texts        map[string]int // each text embedded, and how often
}

func newFakeOpenAI(t *testing.T, key string, delay time.Duration) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{
		t: t, key: key, delay: delay,
		authHeaders: map[string]int{}, agents: map[string]int{}, models: map[string]int{}, schemas: map[string]int{},
	}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, p := range f.problems {
			t.Errorf("fake OpenAI: %s", p)
		}
	})
	return f
}

// baseURL is what OPENAI_BASE_URL must be for a worker to talk to the fake.
func (f *fakeOpenAI) baseURL() string { return f.srv.URL + "/v1" }

// chatRequest is the part of a Chat Completions request the fake reads.
type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string, or an array of {"type": "text", "text"}
	} `json:"messages"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// text is every message's text, in order.
func (r chatRequest) text() string {
	var b strings.Builder
	for _, m := range r.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			b.WriteString(s)
		} else {
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				b.WriteString(p.Text)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req chatRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	f.mu.Lock()
	f.requests++
	f.authHeaders[r.Header.Get("Authorization")]++
	f.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/embeddings" && r.Header.Get("Authorization") == "Bearer "+f.key:
		f.embed(w, body)
		return
	case r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions":
		f.fail(w, http.StatusNotFound, fmt.Sprintf("%s %s: not an endpoint of the fake", r.Method, r.URL.Path))
		return
	case err != nil:
		f.fail(w, http.StatusBadRequest, "unreadable request: "+err.Error())
		return
	case r.Header.Get("Authorization") != "Bearer "+f.key:
		f.mu.Lock()
		f.unauthorized++
		f.mu.Unlock()
		// OpenAI's own answer to a wrong key, which quotes the key masked.
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
			"message": "Incorrect API key provided: " + masked(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")) +
				". You can find your API key at https://platform.openai.com/account/api-keys.",
			"type": "invalid_request_error", "param": nil, "code": "invalid_api_key",
		}})
		return
	}

	text := req.text()
	agent := agentOf(text)
	if agent == "" {
		f.fail(w, http.StatusBadRequest, fmt.Sprintf("cannot tell which agent asked: %.200q", text))
		return
	}
	// Only chat turns count as in flight: --slots bounds provider turns, and the proximity
	// agent's embeddings requests (one per new hypothesis, on the sessions queue) are not.
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for m := f.maxInFlight.Load(); n > m && !f.maxInFlight.CompareAndSwap(m, n); m = f.maxInFlight.Load() {
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}

	f.mu.Lock()
	seq := f.answered
	f.answered++
	f.mu.Unlock()
	content, err := json.Marshal(answerFor(agent, text, seq))
	if err != nil {
		f.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	promptTokens, completionTokens := len(text)/4+1, len(content)/4+1

	f.mu.Lock()
	f.agents[agent]++
	f.models[req.Model]++
	if req.ResponseFormat != nil && req.ResponseFormat.JSONSchema != nil {
		f.schemas[req.ResponseFormat.JSONSchema.Name]++
	}
	f.prompt += promptTokens
	f.completion += completionTokens
	f.mu.Unlock()

	writeJSON(w, http.StatusOK, map[string]any{
		"id": fmt.Sprintf("chatcmpl-fake-%d", seq), "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop", "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": string(content), "refusal": nil},
		}},
		"usage": map[string]any{"prompt_tokens": promptTokens, "completion_tokens": completionTokens, "total_tokens": promptTokens + completionTokens},
	})
}

// fail answers a request the fake cannot make sense of, and fails the test.
func (f *fakeOpenAI) fail(w http.ResponseWriter, status int, problem string) {
	f.mu.Lock()
	f.problems = append(f.problems, problem)
	f.mu.Unlock()
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": problem, "type": "invalid_request_error", "code": nil}})
}

// stats is a copy of the counters, for assertions.
type fakeStats struct {
	requests, answered, unauthorized, prompt, completion, embedded, embedTokens int
	authHeaders, agents, models, schemas, texts                                 map[string]int
}

func (f *fakeOpenAI) stats() fakeStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	clone := func(m map[string]int) map[string]int {
		c := make(map[string]int, len(m))
		for k, v := range m {
			c[k] = v
		}
		return c
	}
	return fakeStats{
		requests: f.requests, answered: f.answered, unauthorized: f.unauthorized, prompt: f.prompt, completion: f.completion,
		authHeaders: clone(f.authHeaders), agents: clone(f.agents), models: clone(f.models), schemas: clone(f.schemas),
		embedded: f.embedded, embedTokens: f.embedTokens, texts: clone(f.texts),
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// masked is a key as OpenAI quotes it in an error: its start and its last few characters.
func masked(key string) string {
	if len(key) < 12 {
		return "***"
	}
	return key[:3] + "*****" + key[len(key)-4:]
}

// agentOf tells which agent wrote a prompt, by the role each agent's part of
// internal/prompt's templates opens with (every prompt starts with the same shared
// prefix, so it is the second "You are").
func agentOf(text string) string {
	// Ordered: the overview's prompt is a meta-review agent's too.
	for _, a := range []struct{ marker, agent string }{
		{"You are the supervisor.", "plan"},
		{"You are the generation agent.", "generation"},
		{"You are the evolution agent.", "evolution"},
		{"You are the reflection agent.", "reflection"},
		{"You are the ranking agent. Judge a match", "comparison"},
		{"You are an advocate in a scientific debate", "advocate"},
		{"You are the judge of a scientific debate", "judgement"},
		{"You are the meta-review agent. The session is over", "overview"},
		{"You are the meta-review agent.", "meta-review"},
	} {
		if strings.Contains(text, a.marker) {
			return a.agent
		}
	}
	return ""
}

// vocabulary makes every fake hypothesis read differently, so the proximity agent does
// not take them for near-duplicates.
var vocabulary = strings.Fields(`kinase phosphatase microglia astrocyte synapse exosome receptor ligand
	autophagy lysosome proteasome chaperone mitochondria ribosome endosome vesicle transporter channel
	cytokine chemokine interferon complement antibody epitope peptide enzyme cofactor metabolite lipid
	cholesterol sphingolipid glycan integrin cadherin collagen fibronectin laminin protease inhibitor
	agonist antagonist scaffold adaptor ubiquitin sumoylation acetylation methylation oxidation
	hypoxia glycolysis ketone insulin leptin ghrelin melatonin cortisol dopamine serotonin glutamate
	gaba glycine acetylcholine histamine purine pyrimidine nucleotide helicase polymerase ligase
	nuclease transposon enhancer promoter silencer insulator chromatin nucleosome histone centromere
	telomere spindle cilium flagellum lamellipodium filopodium podosome invadopodium microtubule
	actin myosin dynein kinesin tubulin septin spectrin ankyrin dystrophin titin nebulin vimentin`)

func phrase(rng *rand.Rand, n int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = vocabulary[rng.IntN(len(vocabulary))]
	}
	return strings.Join(words, " ")
}

// answerFor is a minimal valid answer of the agent's schema; seq makes it unique.
func answerFor(agent, prompt string, seq int) any {
	rng := rand.New(rand.NewPCG(uint64(seq), 0xc05c1))
	label := []string{"A", "B"}[seq%2]
	switch agent {
	case "plan":
		return map[string]any{
			"preferences":         []string{"mechanistic hypotheses", "close to the clinic", "testable in a year"},
			"constraints":         []string{"ethical research only", "existing models and methods", "no human subjects at first"},
			"evaluation_criteria": []string{"novelty", "plausibility", "testability"},
			"summary":             "Mechanistic, testable hypotheses judged on novelty, plausibility and testability.",
		}
	case "generation", "evolution":
		return map[string]any{
			"title":                fmt.Sprintf("Fake hypothesis %d: %s", seq, phrase(rng, 3)),
			"statement":            fmt.Sprintf("The %s pathway drives the effect through %s.", phrase(rng, 4), phrase(rng, 4)),
			"rationale":            "Reported links between " + phrase(rng, 6) + " suggest it.",
			"testable_predictions": []string{"Blocking " + phrase(rng, 3) + " reduces the effect.", "Raising " + phrase(rng, 3) + " increases it."},
		}
	case "reflection":
		review := map[string]any{
			"scores":   map[string]float64{"novelty": float64(5 + seq%4), "plausibility": 7, "testability": 6.5, "safety": 9},
			"critique": "Clear mechanism; the weakest link is " + phrase(rng, 3) + ".",
			"verdict":  "accept",
		}
		if strings.Contains(prompt, `"assumptions"`) { // a deep verification's schema
			review["assumptions"] = []map[string]string{{"text": "The pathway is active in the tissue.", "verdict": "holds", "note": "Widely reported."}}
		}
		return review
	case "comparison":
		return map[string]string{"winner": label, "reasoning": "It is more specific and easier to test."}
	case "advocate":
		return map[string]string{"argument": "My hypothesis makes the sharper prediction: " + phrase(rng, 5) + "."}
	case "judgement":
		return map[string]string{"argument": "Both sides argued well.", "winner": label, "reasoning": "Its predictions are easier to test."}
	case "meta-review":
		return map[string]any{
			"critiques": []string{"Mechanisms are under-specified."},
			"strengths": []string{"Predictions are concrete."},
			"feedback":  "Name the mediating molecule and a falsifying experiment.",
		}
	case "overview":
		return map[string]any{
			"summary":               "The session found several testable mechanisms.",
			"themes":                []any{},
			"open_questions":        []string{"Which mechanism dominates in vivo?"},
			"suggested_experiments": []string{"Knock down the top candidate in an animal model."},
		}
	}
	panic("no answer for agent " + agent)
}

// agentsSeen lists the agents the fake answered, sorted.
func (s fakeStats) agentsSeen() []string {
	var out []string
	for a := range s.agents {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}
