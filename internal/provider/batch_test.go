package provider_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/cosci-dev/cosci/internal/prompt"
	"math"
	"net/http"
	"net/http/httptest"
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

var (
	hypA = research.Hypothesis{ID: "h-1", Title: "Tau seeding via exosomes", Statement: "Exosomes carry tau seeds.", Rationale: "Exosomal tau is in CSF.", Predictions: []string{"Blocking exosomes slows spread"}}
	hypB = research.Hypothesis{ID: "h-2", Title: "Synaptic tau release", Statement: "Neurons release tau at synapses.", Rationale: "Release follows activity.", Predictions: []string{"Silencing neurons reduces tau"}}
)

// batchModels are cosci's models on each API, pointed at the fake, priced.
func batchModels(t *testing.T, f *providertest.Server) map[string]*provider.LLM {
	t.Helper()
	oa, err := provider.NewOpenAI(provider.OpenAIConfig{APIKey: f.OpenAIKey(), BaseURL: f.OpenAIBaseURL(), Model: "gpt-6-sol"})
	if err != nil {
		t.Fatal(err)
	}
	an, err := provider.NewAnthropic(provider.AnthropicConfig{APIKey: f.AnthropicKey(), BaseURL: f.AnthropicBaseURL(), Model: "claude-sonnet-5-5"})
	if err != nil {
		t.Fatal(err)
	}
	prices := provider.DefaultPrices()
	return map[string]*provider.LLM{"openai": {C: oa, Model: "gpt-6-sol", Prices: prices}, "anthropic": {C: an, Model: "claude-sonnet-5-5", Prices: prices}}
}

// TestBatchRoundTrip: the completions a round's turns would send are recorded without a
// call, go out as one batch, and come back, in any order, as each turn's answer, priced at
// the batch discount; a request the batch failed, and a turn whose prompt changed since,
// are asked as ordinary calls.
func TestBatchRoundTrip(t *testing.T) {
	f := providertest.Start(t, providertest.Options{Seed: 3, FailBatchRequest: func(r providertest.BatchRequest) bool { return r.CustomID == "t2" }})
	ctx := context.Background()
	for name, m := range batchModels(t, f) {
		t.Run(name, func(t *testing.T) {
			before := f.Stats()
			// Four matches, recorded as the turns would send them.
			var reqs []research.CompareRequest
			var batch []provider.BatchRequest
			for i := range 4 {
				req := research.CompareRequest{TurnID: fmt.Sprintf("match-%d", i), A: hypA, B: hypB, Prompt: fmt.Sprintf("JUDGE MATCH %d", i)}
				rec := &provider.Recorder{}
				if _, _, err := ask(ctx, m.With(rec), prompt.CompareSpec, req); !errors.Is(err, provider.ErrDeferred) || len(rec.Got) != 1 {
					t.Fatalf("recording match %d: %v, %d completions", i, err, len(rec.Got))
				}
				reqs = append(reqs, req)
				batch = append(batch, provider.BatchRequest{ID: fmt.Sprintf("t%d", i), Completion: rec.Got[0]})
			}
			if got := ordinary(f.Stats()); got != ordinary(before) {
				t.Fatalf("recording made %d requests", got-ordinary(before))
			}
			b, ok := m.Batcher()
			if !ok {
				t.Fatal("the provider has no Batcher")
			}
			id, err := b.SubmitBatch(ctx, "round-1-matches", batch)
			if err != nil {
				t.Fatal(err)
			}
			st, err := b.BatchState(ctx, id)
			if err != nil || !st.Ended || st.Total != 4 || st.Done != 3 || st.Failed != 1 {
				t.Fatalf("state %+v, %v; want ended, 3 of 4 done, 1 failed", st, err)
			}
			results, err := b.BatchResults(ctx, id)
			if err != nil || len(results) != 4 || results["t2"].Err == "" {
				t.Fatalf("results %v, %v", results, err)
			}
			direct := ordinary(f.Stats())
			for i, req := range reqs {
				r := results[fmt.Sprintf("t%d", i)]
				if i == 3 {
					req.Prompt += " (the goal was refined since)"
				}
				c, u, err := ask(ctx, m.With(&provider.Answered{Digest: provider.Digest(batch[i].Completion), Result: r, Next: b}), prompt.CompareSpec, req)
				if err != nil || (c.Winner != hypA.ID && c.Winner != hypB.ID) {
					t.Fatalf("match %d: %+v, %v", i, c, err)
				}
				list := m.Prices.Cost(m.Model, research.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CachedTokens: u.CachedTokens, CacheWriteTokens: u.CacheWriteTokens})
				fromBatch := i != 2 && i != 3
				if (u.Batched == 1) != fromBatch || u.Requests != 1 {
					t.Errorf("match %d: usage %+v; from the batch %v", i, u, fromBatch)
				}
				if want := map[bool]float64{true: 0.5, false: 1}[fromBatch] * list; math.Abs(u.CostUSD-want) > 1e-12 {
					t.Errorf("match %d costs $%g, want $%g", i, u.CostUSD, want)
				}
			}
			if calls := ordinary(f.Stats()) - direct; calls != 2 {
				t.Errorf("%d ordinary calls after the batch; want 2 (the failed request and the changed prompt)", calls)
			}
		})
	}
}

// ordinary counts the fake's ordinary calls of either API (not in a batch).
func ordinary(s providertest.Stats) int { return s.OpenAI.Requests + s.Anthropic.Requests }

// TestBatchCancelAndNoAPI: a batch can be cancelled before it ends; a server without the
// batch endpoints (a local OpenAI-compatible one) says so with ErrNoBatchAPI.
func TestBatchCancelAndNoAPI(t *testing.T) {
	f := providertest.Start(t, providertest.Options{BatchDelay: -1})
	ctx := context.Background()
	for name, m := range batchModels(t, f) {
		t.Run(name, func(t *testing.T) {
			rec := &provider.Recorder{}
			_, _, _ = ask(ctx, m.With(rec), prompt.CompareSpec, research.CompareRequest{A: hypA, B: hypB, Prompt: "JUDGE"})
			b, _ := m.Batcher()
			id, err := b.SubmitBatch(ctx, "k", []provider.BatchRequest{{ID: "t0", Completion: rec.Got[0]}})
			if err != nil {
				t.Fatal(err)
			}
			if st, err := b.BatchState(ctx, id); err != nil || st.Ended {
				t.Fatalf("a batch that never completes by itself: %+v, %v", st, err)
			}
			if err := b.CancelBatch(ctx, id); err != nil {
				t.Fatal(err)
			}
			if _, err := b.SubmitBatch(ctx, "k", []provider.BatchRequest{{ID: "bad id!", Completion: rec.Got[0]}}); err == nil {
				t.Error("a request id the APIs refuse was sent")
			}
		})
	}
	none := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(none.Close)
	oa, _ := provider.NewOpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: none.URL + "/v1", Model: "local"})
	an, _ := provider.NewAnthropic(provider.AnthropicConfig{APIKey: "k", BaseURL: none.URL, Model: "local"})
	for _, b := range []provider.Batcher{oa, an} {
		if _, err := b.SubmitBatch(ctx, "k", []provider.BatchRequest{{ID: "t0", Completion: provider.Completion{Prompt: "x", SchemaName: "comparison"}}}); !errors.Is(err, provider.ErrNoBatchAPI) {
			t.Errorf("%T on a server without batches: %v", b, err)
		}
	}
}

// TestThinkingModelsAnswerAsStructuredOutput: the Claude models that always think refuse
// a forced tool choice, so cosci asks them for structured output; every agent's answer
// then comes as text its parser takes, and a forced tool is refused as the API refuses it.
func TestThinkingModelsAnswerAsStructuredOutput(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	ctx := context.Background()
	an, err := provider.NewAnthropic(provider.AnthropicConfig{APIKey: f.AnthropicKey(), BaseURL: f.AnthropicBaseURL(), Model: "claude-sonnet-5-5"})
	if err != nil {
		t.Fatal(err)
	}
	m := &provider.LLM{C: an, Model: "claude-sonnet-5-5"}
	if p, _, err := ask(ctx, m, prompt.PlanSpec, research.PlanRequest{Prompt: "PLAN"}); err != nil || len(p.Criteria) == 0 {
		t.Errorf("plan: %+v, %v", p, err)
	}
	if h, _, err := ask(ctx, m, prompt.GenerateSpec, research.GenerateRequest{HypothesisID: "h-3", Prompt: "GENERATE"}); err != nil || h.Title == "" {
		t.Errorf("generate: %+v, %v", h, err)
	}
	if r, _, err := ask(ctx, m, prompt.ReviewSpec, research.ReviewRequest{Type: research.ReviewDeepVerification, Hypothesis: hypA, Prompt: "REVIEW"}); err != nil || len(r.Assumptions) == 0 {
		t.Errorf("deep verification: %+v, %v", r, err)
	}
	if c, _, err := ask(ctx, m, prompt.CompareSpec, research.CompareRequest{A: hypA, B: hypB, Prompt: "JUDGE"}); err != nil || c.Winner == "" {
		t.Errorf("compare: %+v, %v", c, err)
	}
	if !provider.StructuredOnly("claude-opus-5-5") || provider.StructuredOnly("claude-haiku-4-5") {
		t.Error("StructuredOnly picks the wrong models")
	}
	forced := false
	old, err := provider.NewAnthropic(provider.AnthropicConfig{APIKey: f.AnthropicKey(), BaseURL: f.AnthropicBaseURL(), Model: "claude-sonnet-5-5", StructuredOutput: &forced})
	if err != nil {
		t.Fatal(err)
	}
	var re *provider.RequestError
	if _, _, err := ask(ctx, &provider.LLM{C: old, Model: "claude-sonnet-5-5"}, prompt.PlanSpec, research.PlanRequest{Prompt: "PLAN"}); !errors.As(err, &re) {
		t.Errorf("a forced tool on a thinking model: %v; want the API's refusal", err)
	}
}

// TestGroup: a batch's requests go out leaders first: the first request of each group
// sharing a prefix (cache key, system prompt, schema and the prompt's shared prefix), one
// per group in the order the groups first appear, then the groups' other requests, group
// by group, each group's by prompt so that requests sharing more than the prefix sit
// together; order says where each came from.
func TestGroup(t *testing.T) {
	req := func(id, key, prompt string, prefix int) provider.BatchRequest {
		return provider.BatchRequest{ID: id, Completion: provider.Completion{Prompt: prompt, SchemaName: "review", Cache: research.Cache{Key: key, Prefix: prefix}}}
	}
	for _, tc := range []struct {
		name      string
		reqs      []provider.BatchRequest
		want      []string
		wantOrder []int
	}{
		{"empty", nil, nil, []int{}},
		{"one group keeps its prompts in order", []provider.BatchRequest{req("t0", "k", "P|a", 2), req("t1", "k", "P|b", 2)}, []string{"t0", "t1"}, []int{0, 1}},
		{"one group, its first prompt leads", []provider.BatchRequest{req("t0", "k", "P|b", 2), req("t1", "k", "P|a", 2), req("t2", "k", "P|c", 2)},
			[]string{"t1", "t0", "t2"}, []int{1, 0, 2}},
		{"groups made together go leaders first", []provider.BatchRequest{req("t0", "k", "I|h1", 2), req("t1", "k", "I|h2", 2), req("t2", "k", "F|h1", 2), req("t3", "k", "F|h2", 2)},
			[]string{"t0", "t2", "t1", "t3"}, []int{0, 2, 1, 3}},
		{"two review types interleaved stay leaders first", []provider.BatchRequest{req("t0", "k", "I|h1", 2), req("t1", "k", "F|h1", 2), req("t2", "k", "I|h2", 2), req("t3", "k", "F|h2", 2)},
			[]string{"t0", "t1", "t2", "t3"}, []int{0, 1, 2, 3}},
		{"followers after every leader, by group", []provider.BatchRequest{req("t0", "k", "A|1", 2), req("t1", "k", "B|1", 2), req("t2", "k", "A|2", 2), req("t3", "k", "C|1", 2), req("t4", "k", "B|2", 2), req("t5", "k", "A|3", 2)},
			[]string{"t0", "t1", "t3", "t2", "t5", "t4"}, []int{0, 1, 3, 2, 5, 4}},
		{"matches of one hypothesis together", []provider.BatchRequest{req("t0", "k", "P|A:h1 B:h2", 2), req("t1", "k", "P|A:h3 B:h1", 2), req("t2", "k", "P|A:h1 B:h4", 2)},
			[]string{"t0", "t2", "t1"}, []int{0, 2, 1}},
		{"another key is another group", []provider.BatchRequest{req("t0", "k1", "P|a", 2), req("t2", "k1", "P|b", 2), req("t1", "k2", "P|a", 2)},
			[]string{"t0", "t1", "t2"}, []int{0, 2, 1}},
		{"equal prompts keep their order", []provider.BatchRequest{req("t0", "k", "P|a", 2), req("t1", "k", "P|a", 2), req("t2", "k", "P|a", 2)},
			[]string{"t0", "t1", "t2"}, []int{0, 1, 2}},
		{"a prefix past the prompt is the whole prompt", []provider.BatchRequest{req("t0", "k", "ab", 9), req("t1", "k", "ab", 9), req("t2", "k", "cd", -1), req("t3", "k", "ce", -1)},
			[]string{"t0", "t2", "t1", "t3"}, []int{0, 2, 1, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			order := provider.Group(tc.reqs)
			var got []string
			for _, r := range tc.reqs {
				got = append(got, r.ID)
			}
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(order, tc.wantOrder) {
				t.Errorf("Group = %v (order %v), want %v (order %v)", got, order, tc.want, tc.wantOrder)
			}
		})
	}
}
