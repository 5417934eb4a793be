// Package provider holds the models cosci can talk to: OpenAI-compatible servers (OpenAI,
// Ollama, vLLM, llama.cpp, OpenRouter) and Anthropic through their official SDKs, the
// registry that resolves a turn's provider and model from the worker's environment, the
// price table, and the mapping of provider errors onto what Temporal retries. The offline
// simulator, the default provider, is package simulator: the binaries that offer it give
// it to the Registry (Registry.Offline), so that provider does not import it.
package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// Model is a cosci model: it answers one step of a turn of any agent, asked with the
// agent's prompt.Spec (Ask), so a new agent adds no method to any model. LLM sends the
// question's prompt to a Completer with the Spec's schema and reads the answer with the
// Spec's parser; the offline simulator (simulator.Offline) writes its answer from the
// request, in the same JSON, read by the same parser.
type Model interface {
	// Answer answers q: a value of its Spec's answer type in Step.Answer, or, on a step
	// of a turn that may call tools (q.Tools), the tool calls the model asks for.
	Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error)
}

var _ Model = (*LLM)(nil)

// Ask asks m for the answer of spec's agent to req: text is the rendered prompt and cache
// how a provider may cache it; tooling, for a step of a turn that may call tools, is the
// step's tools and conversation (nil for a turn without tools), and the step's answer may
// then be tool calls. It is the one way any model is asked anything.
func Ask[Req, Ans any](ctx context.Context, m Model, spec prompt.Spec[Req, Ans], req Req, text string, cache research.Cache, tooling *research.Tooling) (research.Step[Ans], research.Usage, error) {
	var zero research.Step[Ans]
	if spec.Check != nil {
		if err := spec.Check(req); err != nil {
			return zero, research.Usage{}, err
		}
	}
	st, u, err := m.Answer(ctx, spec.Question(req, text, cache, tooling))
	switch {
	case err != nil:
		return zero, u, err
	case len(st.Calls) > 0 && tooling != nil:
		return research.Step[Ans]{Text: st.Text, Calls: st.Calls, Reasoning: st.Reasoning}, u, nil
	case len(st.Calls) > 0:
		// A turn without tools has no one to run them: the turn would keep an empty answer.
		return zero, u, fmt.Errorf("%T asked for tools in a %s turn that has none", m, spec.Agent)
	}
	ans, ok := st.Answer.(Ans)
	if !ok {
		return zero, u, fmt.Errorf("%T answered a %s turn with a %T, not a %T", m, spec.Agent, st.Answer, ans)
	}
	return research.Step[Ans]{Answer: ans}, u, nil
}

// LLM makes any Completer a full cosci model. It renders nothing itself: each question's
// prompt was rendered by package prompt, and LLM sends it with the agent's JSON schema and
// parses the answer with the agent's parser (prompt.Spec), exactly as the offline
// simulator's answers are parsed.
//
// A malformed or truncated answer gets ONE repair turn, which quotes the parser's problem
// and the bad answer back to the model; if the repaired answer is malformed too, the
// turn fails with the *prompt.MalformedError. The returned usage sums both turns, with
// CostUSD estimated from Prices for Model, also when the turn fails.
type LLM struct {
	C      Completer
	Model  string // the model's name, for Prices
	Prices Prices
}

// Answer takes one step of a turn: the model answers (parsed, with one repair turn for a
// malformed or truncated answer), or, if the turn may call tools, asks for tool calls.
func (m *LLM) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	var zero research.Step[any]
	if m.C == nil {
		return zero, research.Usage{}, errors.New("provider.LLM has no Completer; build it with NewOpenAI, NewAnthropic or Registry.Model")
	}
	tooling := q.Tooling
	req := Completion{Agent: q.Agent, System: systemPrompt, Prompt: q.Prompt, Cache: q.Cache, SchemaName: q.SchemaName, Schema: slices.Clone(q.Schema), Tooling: tooling}
	var total research.Usage // each request priced on its own: one may be batched, its repair not
	for attempt := 0; ; attempt++ {
		ans, err := m.C.Complete(ctx, req)
		total = total.Add(m.priced(ans.Usage))
		if err != nil {
			return zero, total, err
		}
		if len(ans.Calls) > 0 && len(tooling.Tools) > 0 && !tooling.Final && req.Repair == "" {
			return research.Step[any]{Text: ans.Text, Calls: ans.Calls, Reasoning: ans.Reasoning}, total, nil
		}
		v, perr := q.Parse([]byte(ans.Text))
		if perr == nil && (!ans.Truncated || attempt == 1) {
			return research.Step[any]{Answer: v}, total, nil
		}
		problem := truncation(q.Agent, ans, perr)
		if problem == nil {
			var me *prompt.MalformedError
			if !errors.As(perr, &me) {
				return zero, total, perr // not the model's fault: no repair
			}
			problem = me
		}
		if attempt == 1 {
			return zero, total, problem
		}
		req.Repair, req.Previous = problem.Problem, ans.Text
	}
}

// truncation is the problem of an answer cut short at the output token limit, or nil if
// it was not. A first answer that was cut but still parses is repaired all the same,
// since what is missing from it cannot be told; a repaired one that parses is taken.
func truncation(agent string, ans Answer, perr error) *prompt.MalformedError {
	if !ans.Truncated {
		return nil
	}
	p := fmt.Sprintf("the answer was cut off at the output token limit after %d bytes; answer again with the complete object, shorter: keep every field but write less in each", len(ans.Text))
	var me *prompt.MalformedError
	if errors.As(perr, &me) {
		p += " (the cut answer: " + me.Problem + ")"
	}
	return &prompt.MalformedError{Agent: agent, Problem: p}
}

// priced adds the estimated cost to a usage: the cost of each request, which may be batched
// or not (Prices.Priced).
func (m *LLM) priced(u research.Usage) research.Usage {
	return m.Prices.Priced(m.Model, u)
}
