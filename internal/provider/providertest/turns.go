// Ordinary turns (not those of a batch) of every API: answering one, holding it as a
// turn in flight, and the reply the Answer hook or the defaults give it.

package providertest

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"time"
)

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
