package providertest_test

import (
	"context"
	"encoding/json"
	"github.com/cosci-dev/cosci/internal/prompt"
	"reflect"
	"testing"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
	"github.com/cosci-dev/cosci/internal/research"
)

// ask asks m the question of spec's agent about req, without tools, with req's prompt:
// what the agents' methods of provider.LLM did before provider.Ask.
func ask[Req, Ans any](ctx context.Context, m provider.Model, spec prompt.Spec[Req, Ans], req Req) (Ans, research.Usage, error) {
	text := reflect.ValueOf(req).FieldByName("Prompt").String()
	st, u, err := provider.Ask(ctx, m, spec, req, text, research.Cache{}, nil)
	return st.Answer, u, err
}

// cosci's own completers (internal/provider, on the official SDKs) against the fake: every
// agent's turn gets an answer its parser takes, on both APIs, recognised by the schema.

// models are cosci's models on each API, pointed at the fake.
func models(t *testing.T, f *providertest.Server) map[string]*provider.LLM {
	t.Helper()
	oa, err := provider.NewOpenAI(provider.OpenAIConfig{APIKey: f.OpenAIKey(), BaseURL: f.OpenAIBaseURL(), Model: "gpt-4.1-mini"})
	if err != nil {
		t.Fatal(err)
	}
	an, err := provider.NewAnthropic(provider.AnthropicConfig{APIKey: f.AnthropicKey(), BaseURL: f.AnthropicBaseURL(), Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	// A Claude model with structured outputs answers in output_config's format, an
	// anonymous schema the fake must tell by its shape.
	fm, err := provider.NewAnthropic(provider.AnthropicConfig{APIKey: f.AnthropicKey(), BaseURL: f.AnthropicBaseURL(), Model: "claude-sonnet-5-5"})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*provider.LLM{"openai": {C: oa, Model: "gpt-4.1-mini"}, "anthropic": {C: an, Model: "claude-sonnet-4-5"},
		"anthropic-format": {C: fm, Model: "claude-sonnet-5-5"}}
}

var (
	hypA = research.Hypothesis{ID: "h-1", Title: "Tau seeding via exosomes", Statement: "Exosomes carry tau seeds.", Rationale: "Exosomal tau is in CSF.", Predictions: []string{"Blocking exosomes slows spread"}}
	hypB = research.Hypothesis{ID: "h-2", Title: "Synaptic tau release", Statement: "Neurons release tau at synapses.", Rationale: "Release follows activity.", Predictions: []string{"Silencing neurons reduces tau"}}
)

func TestEveryAgentAnswersThroughCosciCompleters(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	ctx := context.Background()
	for name, m := range models(t, f) {
		t.Run(name, func(t *testing.T) {
			// The prompts' wording does not matter: the fake reads the schema.
			const p = "a prompt in words the fake never reads"
			if plan, _, err := ask(ctx, m, prompt.PlanSpec, research.PlanRequest{Prompt: p}); err != nil || len(plan.Criteria) == 0 {
				t.Errorf("plan: %+v, %v", plan, err)
			}
			if h, _, err := ask(ctx, m, prompt.GenerateSpec, research.GenerateRequest{HypothesisID: "h-3", Prompt: p}); err != nil || h.Title == "" {
				t.Errorf("generate: %+v, %v", h, err)
			}
			// Every review type gets the fake's review, not a minimal instance of its
			// schema (whose safety 0 would exclude every hypothesis).
			for _, typ := range research.ReviewTypes {
				r, _, err := ask(ctx, m, prompt.ReviewSpec, research.ReviewRequest{Type: typ, Hypothesis: hypA, Prompt: p})
				if err != nil || r.Verdict == "" || r.Scores.Safety == 0 {
					t.Errorf("%s review: %+v, %v", typ, r, err)
				}
			}
			if r, _, err := ask(ctx, m, prompt.ReviewSpec, research.ReviewRequest{Type: research.ReviewDeepVerification, Hypothesis: hypA, Prompt: p}); err != nil || len(r.Assumptions) == 0 {
				t.Errorf("deep verification: %+v, %v", r, err)
			}
			if c, _, err := ask(ctx, m, prompt.CompareSpec, research.CompareRequest{A: hypA, B: hypB, Prompt: p}); err != nil || (c.Winner != hypA.ID && c.Winner != hypB.ID) {
				t.Errorf("compare: %+v, %v", c, err)
			}
			if d, _, err := ask(ctx, m, prompt.DebateSpec, research.DebateRequest{A: hypA, B: hypB, Turn: 1, Turns: 3, Prompt: p}); err != nil || d.Turn.Argument == "" {
				t.Errorf("advocate: %+v, %v", d, err)
			}
			if d, _, err := ask(ctx, m, prompt.DebateSpec, research.DebateRequest{A: hypA, B: hypB, Turn: 3, Turns: 3, Prompt: p}); err != nil || d.Winner == "" {
				t.Errorf("judge: %+v, %v", d, err)
			}
			if h, _, err := ask(ctx, m, prompt.EvolveSpec, research.EvolveRequest{HypothesisID: "h-4", Parents: []research.Hypothesis{hypA}, Prompt: p}); err != nil || h.Title == "" {
				t.Errorf("evolve: %+v, %v", h, err)
			}
			if mr, _, err := ask(ctx, m, prompt.MetaReviewSpec, research.MetaReviewRequest{Round: 1, Prompt: p}); err != nil || mr.Feedback == "" {
				t.Errorf("meta-review: %+v, %v", mr, err)
			}
			if o, _, err := ask(ctx, m, prompt.OverviewSpec, research.OverviewRequest{Top: []research.Hypothesis{hypA}, Prompt: p}); err != nil || o.Summary == "" {
				t.Errorf("overview: %+v, %v", o, err)
			}
		})
	}
	s := f.Stats()
	for _, agent := range []string{providertest.AgentPlan, providertest.AgentHypothesis, providertest.AgentReview, providertest.AgentDeepVerification,
		providertest.AgentComparison, providertest.AgentAdvocate, providertest.AgentJudgement, providertest.AgentMetaReview, providertest.AgentOverview} {
		want := 3 // one turn per model
		switch agent {
		case providertest.AgentHypothesis:
			want = 2 * 3 // generation and evolution
		case providertest.AgentReview:
			want = (len(research.ReviewTypes) - 1) * 3 // all types but deep verification
		case providertest.AgentDeepVerification:
			want = 2 * 3
		}
		if s.Agents[agent] != want {
			t.Errorf("the fake answered %d %s turns; want %d (all: %v)", s.Agents[agent], agent, want, s.Agents)
		}
	}
	if s.OpenAI.Requests != 15 || s.Anthropic.Requests != 30 || s.Unauthorized != 0 || s.Refused != 0 {
		t.Errorf("requests: openai %d, anthropic %d, unauthorized %d, refused %d; want 15, 30, 0, 0", s.OpenAI.Requests, s.Anthropic.Requests, s.Unauthorized, s.Refused)
	}
}

// A grounded turn: the model calls a tool first, then answers once the conversation
// carries the tool's result.
func TestGroundedTurnCallsAToolThenAnswers(t *testing.T) {
	f := providertest.Start(t, providertest.Options{CallTools: true})
	ctx := context.Background()
	search := research.ToolSpec{Name: "literature.search", Description: "Search the literature.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)}
	ms := models(t, f)
	for name, m := range ms {
		t.Run(name, func(t *testing.T) {
			req := research.GenerateRequest{HypothesisID: "h-5", Prompt: "ground it", Tooling: research.Tooling{Tools: []research.ToolSpec{search}}}
			st, _, err := provider.Ask(ctx, m, prompt.GenerateSpec, req, req.Prompt, req.Cache, &req.Tooling)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Calls) != 1 || st.Calls[0].Name != "literature.search" {
				t.Fatalf("first step: calls %+v; want one call of literature.search", st.Calls)
			}
			var args struct{ Query string }
			if err := json.Unmarshal(st.Calls[0].Arguments, &args); err != nil || args.Query == "" {
				t.Errorf("the call's arguments %s do not fit the tool's schema: %v", st.Calls[0].Arguments, err)
			}
			req.Tooling.Steps = []research.ToolStep{{Calls: st.Calls, Results: []research.ToolResult{{CallID: st.Calls[0].ID, Name: "literature.search", Content: "Smith 2020: tau spreads."}}}}
			st, _, err = provider.Ask(ctx, m, prompt.GenerateSpec, req, req.Prompt, req.Cache, &req.Tooling)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Calls) != 0 || st.Answer.Title == "" {
				t.Errorf("second step: calls %+v, answer %+v; want the answer", st.Calls, st.Answer)
			}
		})
	}
	if s := f.Stats(); s.ToolCalls != len(ms) {
		t.Errorf("the fake made %d tool calls; want %d, one per model", s.ToolCalls, len(ms))
	}
}
