package prompt

// What a model call of an agent is, whatever the model: its Spec names the agent, the
// schema its answer must fit and the parser that reads the answer into the domain. Each
// agent's Spec is in its file, beside its prompt and its parser; package provider asks any
// model with it (provider.Ask), so a new agent adds no method to any model.

import (
	"encoding/json"

	"github.com/cosci-dev/cosci/internal/research"
)

// Spec declares the model call of an agent whose request is Req (package research) and
// whose answer is Ans.
type Spec[Req, Ans any] struct {
	Agent string // the agent, as errors and logs name it (AgentGeneration, ...)
	// Schema is the name and JSON schema of the answer to req: an agent's schema may
	// depend on the request (a review's type, a debate's speaker, a turn's tools).
	Schema func(req Req) (name string, schema json.RawMessage)
	// Parse reads a model's answer to req, and gives it what the request, not the model,
	// knows (ids, provenance; a match's label "A" or "B" becomes the hypothesis' id).
	Parse func(req Req, raw []byte) (Ans, error)
	// Check, when set, refuses a request no model can answer, before one is asked.
	Check func(req Req) error
}

// Question is one step of a turn of an agent, as a model is asked it: a Spec bound to its
// request, with the rendered prompt.
type Question struct {
	Agent      string
	SchemaName string
	Schema     json.RawMessage
	Prompt     string
	Cache      research.Cache
	// Tooling is the step's tools and conversation, for a turn that may call tools (Tools
	// set); the zero Tooling otherwise.
	Tooling research.Tooling
	Tools   bool
	// Request is the agent's request (package research): a model that writes its answers
	// from the request, not the prompt, reads it (the offline simulator).
	Request any
	// Parse is the Spec's parser bound to Request; its answer is the Spec's Ans.
	Parse func(raw []byte) (any, error)
}

// Question binds s to req: text is the rendered prompt and cache its caching; tooling, if
// not nil, makes it a step of a turn that may call tools.
func (s Spec[Req, Ans]) Question(req Req, text string, cache research.Cache, tooling *research.Tooling) Question {
	name, schema := s.Schema(req)
	q := Question{Agent: s.Agent, SchemaName: name, Schema: schema, Prompt: text, Cache: cache, Request: req,
		Parse: func(raw []byte) (any, error) { return s.Parse(req, raw) }}
	if tooling != nil {
		q.Tooling, q.Tools = *tooling, true
	}
	return q
}

// fixed is the Schema of an agent whose schema does not depend on the request.
func fixed[Req any](name string, schema json.RawMessage) func(Req) (string, json.RawMessage) {
	return func(Req) (string, json.RawMessage) { return name, schema }
}

// parsed is the Parse of an agent whose answer needs nothing of the request.
func parsed[Req, Ans any](parse func([]byte) (Ans, error)) func(Req, []byte) (Ans, error) {
	return func(_ Req, raw []byte) (Ans, error) { return parse(raw) }
}
