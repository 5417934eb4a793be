// Package provider holds the models cosci can talk to: OpenAI-compatible servers (OpenAI,
// Ollama, vLLM, llama.cpp, OpenRouter) and Anthropic through their official SDKs, the
// registry that resolves a turn's provider and model from the worker's environment, the
// price table, and the mapping of provider errors onto what Temporal retries. The offline
// simulator, the embedded default, is package simulator.
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// Model is a full cosci model: one method per agent task. Its method set is
// activities.Model's; simulator.Offline and LLM implement it.
type Model interface {
	Plan(ctx context.Context, req research.PlanRequest) (research.Plan, research.Usage, error)
	Generate(ctx context.Context, req research.GenerateRequest) (research.Hypothesis, research.Usage, error)
	Review(ctx context.Context, req research.ReviewRequest) (research.Review, research.Usage, error)
	Compare(ctx context.Context, req research.CompareRequest) (research.Comparison, research.Usage, error)
	Debate(ctx context.Context, req research.DebateRequest) (research.DebateAnswer, research.Usage, error)
	Evolve(ctx context.Context, req research.EvolveRequest) (research.Hypothesis, research.Usage, error)
	MetaReview(ctx context.Context, req research.MetaReviewRequest) (research.MetaReview, research.Usage, error)
	Overview(ctx context.Context, req research.OverviewRequest) (research.Overview, research.Usage, error)
}

var (
	_ Model = (*simulator.Offline)(nil)
	_ Model = (*LLM)(nil)
)

// LLM makes any Completer a full cosci model. It renders nothing itself: each request's
// Prompt was rendered by package prompt, and LLM sends it with the agent's JSON schema and
// parses the answer with package prompt's parser, exactly as the offline simulator's
// answers are parsed.
//
// A malformed or truncated answer gets ONE repair turn, which quotes the parser's problem
// and the bad answer back to the model; if the repaired answer is malformed too, the
// method returns the *prompt.MalformedError. The returned usage sums both turns, with
// CostUSD estimated from Prices for Model, also when the turn fails.
type LLM struct {
	C      Completer
	Model  string // the model's name, for Prices
	Prices Prices
}

// Generate proposes one hypothesis. The result carries the request's id, goal and
// strategy, and Origin "generation".
func (m *LLM) Generate(ctx context.Context, req research.GenerateRequest) (research.Hypothesis, research.Usage, error) {
	h, u, err := ask(ctx, m, req.Prompt, req.Cache, prompt.AgentGeneration, "hypothesis", prompt.HypothesisSchema, prompt.ParseHypothesis)
	if err != nil {
		return research.Hypothesis{}, u, err
	}
	h.ID, h.Goal, h.Origin, h.Strategy = req.HypothesisID, req.Goal, "generation", req.Strategy
	return h, u, nil
}

// Review reviews req.Hypothesis with the schema of req.Type (a deep verification must
// list assumptions).
func (m *LLM) Review(ctx context.Context, req research.ReviewRequest) (research.Review, research.Usage, error) {
	parse := func(raw []byte) (research.Review, error) { return prompt.ParseReviewOf(req.Type, raw) }
	r, u, err := ask(ctx, m, req.Prompt, req.Cache, prompt.AgentReflection, "review", prompt.ReviewSchemaFor(req.Type), parse)
	if err != nil {
		return research.Review{}, u, err
	}
	r.HypothesisID, r.Type = req.Hypothesis.ID, req.Type
	return r, u, nil
}

// Compare judges a match; the model answers with the label "A" or "B", which the result
// turns into the hypothesis' id.
func (m *LLM) Compare(ctx context.Context, req research.CompareRequest) (research.Comparison, research.Usage, error) {
	type verdict struct{ label, reasoning string }
	parse := func(raw []byte) (verdict, error) {
		l, r, err := prompt.ParseComparison(raw)
		return verdict{l, r}, err
	}
	v, u, err := ask(ctx, m, req.Prompt, req.Cache, prompt.AgentRanking, "comparison", prompt.ComparisonSchema, parse)
	if err != nil {
		return research.Comparison{}, u, err
	}
	c := research.Comparison{A: req.A.ID, B: req.B.ID, Winner: req.A.ID, Reasoning: v.reasoning}
	if v.label == "B" {
		c.Winner = req.B.ID
	}
	return c, u, nil
}

// Plan writes the research plan.
func (m *LLM) Plan(ctx context.Context, req research.PlanRequest) (research.Plan, research.Usage, error) {
	return ask(ctx, m, req.Prompt, req.Cache, prompt.AgentSupervisor, "research_plan", prompt.PlanSchema, prompt.ParsePlan)
}

// Debate speaks one turn of a debate: an advocate's argument, or on the last turn the
// judge's summing-up and verdict, whose label becomes the winner's id.
func (m *LLM) Debate(ctx context.Context, req research.DebateRequest) (research.DebateAnswer, research.Usage, error) {
	if req.Turn < 1 || req.Turns < 1 {
		return research.DebateAnswer{}, research.Usage{}, fmt.Errorf("debate turn %d of %d does not exist; number turns from 1", req.Turn, req.Turns)
	}
	speaker := prompt.DebateSpeaker(req.Turn, req.Turns)
	turn := research.DebateTurn{Turn: req.Turn, Speaker: speaker}
	if speaker != "judge" {
		arg, u, err := ask(ctx, m, req.Prompt, req.Cache, prompt.AgentRanking, "advocate", prompt.AdvocateSchema, prompt.ParseAdvocate)
		if err != nil {
			return research.DebateAnswer{}, u, err
		}
		turn.Argument = arg
		return research.DebateAnswer{Turn: turn}, u, nil
	}
	type judgement struct{ argument, label, reasoning string }
	parse := func(raw []byte) (judgement, error) {
		a, l, r, err := prompt.ParseJudgement(raw)
		return judgement{a, l, r}, err
	}
	j, u, err := ask(ctx, m, req.Prompt, req.Cache, prompt.AgentRanking, "judgement", prompt.JudgementSchema, parse)
	if err != nil {
		return research.DebateAnswer{}, u, err
	}
	turn.Argument = j.argument
	ans := research.DebateAnswer{Turn: turn, Winner: req.A.ID, Reasoning: j.reasoning}
	if j.label == "B" {
		ans.Winner = req.B.ID
	}
	return ans, u, nil
}

// Evolve writes a new hypothesis from req.Parents. The result carries the request's id,
// goal and kind (as Strategy), its parents' ids, and Origin "evolution".
func (m *LLM) Evolve(ctx context.Context, req research.EvolveRequest) (research.Hypothesis, research.Usage, error) {
	h, u, err := ask(ctx, m, req.Prompt, req.Cache, prompt.AgentEvolution, "hypothesis", prompt.HypothesisSchema, prompt.ParseEvolved)
	if err != nil {
		return research.Hypothesis{}, u, err
	}
	h.ID, h.Goal, h.Origin, h.Strategy = req.HypothesisID, req.Goal, "evolution", req.Kind
	h.Parents = nil
	for _, p := range req.Parents {
		h.Parents = append(h.Parents, p.ID)
	}
	return h, u, nil
}

// MetaReview finds the recurring critique of a round.
func (m *LLM) MetaReview(ctx context.Context, req research.MetaReviewRequest) (research.MetaReview, research.Usage, error) {
	mr, u, err := ask(ctx, m, req.Prompt, req.Cache, prompt.AgentMetaReview, "meta_review", prompt.MetaReviewSchema,
		func(raw []byte) (research.MetaReview, error) { return prompt.ParseMetaReviewFor(req, raw) })
	if err != nil {
		return research.MetaReview{}, u, err
	}
	mr.Round = req.Round
	return mr, u, nil
}

// Overview writes the research overview.
func (m *LLM) Overview(ctx context.Context, req research.OverviewRequest) (research.Overview, research.Usage, error) {
	return ask(ctx, m, req.Prompt, req.Cache, prompt.AgentMetaReview, "research_overview", prompt.OverviewSchema, prompt.ParseOverview)
}

// ask sends one prompt and parses the answer, with one repair turn for a malformed or
// truncated answer.
func ask[T any](ctx context.Context, m *LLM, text string, cache research.Cache, agent, schemaName string, schema json.RawMessage, parse func([]byte) (T, error)) (T, research.Usage, error) {
	st, u, err := askStep(ctx, m, text, cache, agent, schemaName, schema, parse, research.Tooling{})
	return st.Answer, u, err
}

// askStep takes one step of a turn: the model answers (parsed, with one repair turn for a
// malformed or truncated answer), or, if the turn may call tools, asks for tool calls.
func askStep[T any](ctx context.Context, m *LLM, text string, cache research.Cache, agent, schemaName string, schema json.RawMessage, parse func([]byte) (T, error), tooling research.Tooling) (research.Step[T], research.Usage, error) {
	var zero research.Step[T]
	if m.C == nil {
		return zero, research.Usage{}, errors.New("provider.LLM has no Completer; build it with NewOpenAI, NewAnthropic or Registry.Model")
	}
	req := Completion{Agent: agent, System: systemPrompt, Prompt: text, Cache: cache, SchemaName: schemaName, Schema: slices.Clone(schema), Tooling: tooling}
	var total research.Usage // each request priced on its own: one may be batched, its repair not
	for attempt := 0; ; attempt++ {
		ans, err := m.C.Complete(ctx, req)
		total = total.Add(m.priced(ans.Usage))
		if err != nil {
			return zero, total, err
		}
		if len(ans.Calls) > 0 && len(tooling.Tools) > 0 && !tooling.Final && req.Repair == "" {
			return research.Step[T]{Text: ans.Text, Calls: ans.Calls, Reasoning: ans.Reasoning}, total, nil
		}
		v, perr := parse([]byte(ans.Text))
		if perr == nil && (!ans.Truncated || attempt == 1) {
			return research.Step[T]{Answer: v}, total, nil
		}
		problem := truncation(agent, ans, perr)
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

// GenerateStep is Generate for a turn that may call tools: a hypothesis, or tool calls.
func (m *LLM) GenerateStep(ctx context.Context, req research.GenerateRequest) (research.Step[research.Hypothesis], research.Usage, error) {
	st, u, err := askStep(ctx, m, req.Prompt, req.Cache, prompt.AgentGeneration, "hypothesis", prompt.HypothesisSchemaFor(req.Tooling), prompt.ParseHypothesis, req.Tooling)
	if err != nil || len(st.Calls) > 0 {
		return st, u, err
	}
	st.Answer.ID, st.Answer.Goal, st.Answer.Origin, st.Answer.Strategy = req.HypothesisID, req.Goal, "generation", req.Strategy
	return st, u, nil
}

// ReviewStep is Review for a turn that may call tools: a review, or tool calls.
func (m *LLM) ReviewStep(ctx context.Context, req research.ReviewRequest) (research.Step[research.Review], research.Usage, error) {
	parse := func(raw []byte) (research.Review, error) { return prompt.ParseReviewOf(req.Type, raw) }
	st, u, err := askStep(ctx, m, req.Prompt, req.Cache, prompt.AgentReflection, "review", prompt.ReviewSchemaWith(req.Type, req.Tooling), parse, req.Tooling)
	if err != nil || len(st.Calls) > 0 {
		return st, u, err
	}
	st.Answer.HypothesisID, st.Answer.Type = req.Hypothesis.ID, req.Type
	return st, u, nil
}

// EvolveStep is Evolve for a turn that may call tools: a new hypothesis, or tool calls.
func (m *LLM) EvolveStep(ctx context.Context, req research.EvolveRequest) (research.Step[research.Hypothesis], research.Usage, error) {
	st, u, err := askStep(ctx, m, req.Prompt, req.Cache, prompt.AgentEvolution, "hypothesis", prompt.HypothesisSchemaFor(req.Tooling), prompt.ParseEvolved, req.Tooling)
	if err != nil || len(st.Calls) > 0 {
		return st, u, err
	}
	h := &st.Answer
	h.ID, h.Goal, h.Origin, h.Strategy = req.HypothesisID, req.Goal, "evolution", req.Kind
	h.Parents = nil
	for _, p := range req.Parents {
		h.Parents = append(h.Parents, p.ID)
	}
	return st, u, nil
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
