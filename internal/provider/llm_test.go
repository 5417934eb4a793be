package provider

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// ask asks m the question of spec's agent about req, without tools, with req's prompt:
// what the agents' methods of provider.LLM did before provider.Ask.
func ask[Req, Ans any](ctx context.Context, m Model, spec prompt.Spec[Req, Ans], req Req) (Ans, research.Usage, error) {
	text := reflect.ValueOf(req).FieldByName("Prompt").String()
	st, u, err := Ask(ctx, m, spec, req, text, research.Cache{}, nil)
	return st.Answer, u, err
}

var testPrices = Prices{"test-model": {PromptPerMTok: 1, CompletionPerMTok: 2}}

func hyp(id string) research.Hypothesis {
	return research.Hypothesis{ID: id, Title: "Title " + id, Statement: "Statement " + id, Predictions: []string{"Prediction " + id}}
}

// agentCase is one agent task: how to call it, the answer a good model gives, and what
// the result must be.
type agentCase struct {
	name   string
	schema string
	answer string
	call   func(ctx context.Context, m Model) (any, research.Usage, error)
	check  func(t *testing.T, v any)
}

var goodHypothesis = `{"title":"Microglia carry tau","statement":"Microglia carry tau between synapses.","rationale":"They engulf synapses.","testable_predictions":["Depleting microglia slows spread"]}`

var agentCases = []agentCase{
	{
		name: "plan", schema: "research_plan",
		answer: `{"preferences":["mechanisms"],"constraints":["no human trials"],"evaluation_criteria":["novelty","testability"],"summary":"Find mechanisms."}`,
		call: func(ctx context.Context, m Model) (any, research.Usage, error) {
			return ask(ctx, m, prompt.PlanSpec, research.PlanRequest{TurnID: "t", Goal: "g", Prompt: "PLAN PROMPT"})
		},
		check: func(t *testing.T, v any) {
			p := v.(research.Plan)
			if p.Summary != "Find mechanisms." || len(p.Criteria) != 2 {
				t.Errorf("plan = %+v", p)
			}
		},
	},
	{
		name: "generate", schema: "hypothesis", answer: goodHypothesis,
		call: func(ctx context.Context, m Model) (any, research.Usage, error) {
			return ask(ctx, m, prompt.GenerateSpec, research.GenerateRequest{TurnID: "t", HypothesisID: "h-0007", Goal: "g", Strategy: research.StrategyDebate, Prompt: "GENERATE PROMPT"})
		},
		check: func(t *testing.T, v any) {
			h := v.(research.Hypothesis)
			if h.ID != "h-0007" || h.Goal != "g" || h.Origin != "generation" || h.Strategy != research.StrategyDebate || h.Title != "Microglia carry tau" || len(h.Predictions) != 1 {
				t.Errorf("hypothesis = %+v", h)
			}
		},
	},
	{
		name: "review", schema: "review",
		answer: `{"scores":{"novelty":7,"plausibility":6,"testability":8,"safety":9},"critique":"Sound.","verdict":"accept"}`,
		call: func(ctx context.Context, m Model) (any, research.Usage, error) {
			return ask(ctx, m, prompt.ReviewSpec, research.ReviewRequest{TurnID: "t", Goal: "g", Type: research.ReviewInitial, Hypothesis: hyp("h-1"), Prompt: "REVIEW PROMPT"})
		},
		check: func(t *testing.T, v any) {
			r := v.(research.Review)
			if r.HypothesisID != "h-1" || r.Type != research.ReviewInitial || r.Scores.Testability != 8 || r.Verdict != "accept" {
				t.Errorf("review = %+v", r)
			}
		},
	},
	{
		name: "deep verification", schema: "review",
		answer: `{"scores":{"novelty":5,"plausibility":4,"testability":6,"safety":9},"critique":"One premise fails.","verdict":"revise","assumptions":[{"text":"Tau is secreted","verdict":"holds","note":"shown"},{"text":"Microglia move","verdict":"fails","note":"not shown"}]}`,
		call: func(ctx context.Context, m Model) (any, research.Usage, error) {
			return ask(ctx, m, prompt.ReviewSpec, research.ReviewRequest{TurnID: "t", Goal: "g", Type: research.ReviewDeepVerification, Hypothesis: hyp("h-2"), Prompt: "DEEP PROMPT"})
		},
		check: func(t *testing.T, v any) {
			r := v.(research.Review)
			if len(r.Assumptions) != 2 || r.Assumptions[1].Verdict != "fails" {
				t.Errorf("review = %+v", r)
			}
		},
	},
	{
		name: "compare", schema: "comparison", answer: `{"winner":"b","reasoning":"B is more testable."}`,
		call: func(ctx context.Context, m Model) (any, research.Usage, error) {
			return ask(ctx, m, prompt.CompareSpec, research.CompareRequest{TurnID: "t", Goal: "g", A: hyp("h-1"), B: hyp("h-2"), Prompt: "COMPARE PROMPT"})
		},
		check: func(t *testing.T, v any) {
			c := v.(research.Comparison)
			if c.A != "h-1" || c.B != "h-2" || c.Winner != "h-2" || c.Reasoning != "B is more testable." {
				t.Errorf("comparison = %+v", c)
			}
		},
	},
	{
		name: "debate advocate", schema: "advocate", answer: `{"argument":"A explains more."}`,
		call: func(ctx context.Context, m Model) (any, research.Usage, error) {
			return ask(ctx, m, prompt.DebateSpec, research.DebateRequest{TurnID: "t", Goal: "g", A: hyp("h-1"), B: hyp("h-2"), Turn: 1, Turns: 3, Prompt: "ADVOCATE PROMPT"})
		},
		check: func(t *testing.T, v any) {
			d := v.(research.DebateAnswer)
			if d.Turn != (research.DebateTurn{Turn: 1, Speaker: "A", Argument: "A explains more."}) || d.Winner != "" {
				t.Errorf("debate answer = %+v", d)
			}
		},
	},
	{
		name: "debate judge", schema: "judgement", answer: `{"argument":"Both argued well.","winner":"A","reasoning":"A is safer."}`,
		call: func(ctx context.Context, m Model) (any, research.Usage, error) {
			return ask(ctx, m, prompt.DebateSpec, research.DebateRequest{TurnID: "t", Goal: "g", A: hyp("h-1"), B: hyp("h-2"), Turn: 3, Turns: 3, Prompt: "JUDGE PROMPT"})
		},
		check: func(t *testing.T, v any) {
			d := v.(research.DebateAnswer)
			if d.Turn.Speaker != "judge" || d.Turn.Argument != "Both argued well." || d.Winner != "h-1" || d.Reasoning != "A is safer." {
				t.Errorf("debate answer = %+v", d)
			}
		},
	},
	{
		name: "evolve", schema: "hypothesis", answer: goodHypothesis,
		call: func(ctx context.Context, m Model) (any, research.Usage, error) {
			return ask(ctx, m, prompt.EvolveSpec, research.EvolveRequest{TurnID: "t", HypothesisID: "h-0009", Goal: "g", Kind: research.EvolveCombination, Parents: []research.Hypothesis{hyp("h-1"), hyp("h-2")}, Prompt: "EVOLVE PROMPT"})
		},
		check: func(t *testing.T, v any) {
			h := v.(research.Hypothesis)
			if h.ID != "h-0009" || h.Origin != "evolution" || h.Strategy != research.EvolveCombination || strings.Join(h.Parents, ",") != "h-1,h-2" {
				t.Errorf("hypothesis = %+v", h)
			}
		},
	},
	{
		name: "meta-review", schema: "meta_review", answer: `{"critiques":["vague predictions"],"strengths":[],"feedback":"Be specific."}`,
		call: func(ctx context.Context, m Model) (any, research.Usage, error) {
			return ask(ctx, m, prompt.MetaReviewSpec, research.MetaReviewRequest{TurnID: "t", Goal: "g", Round: 3, Prompt: "META PROMPT"})
		},
		check: func(t *testing.T, v any) {
			mr := v.(research.MetaReview)
			if mr.Round != 3 || mr.Feedback != "Be specific." || len(mr.Critiques) != 1 {
				t.Errorf("meta-review = %+v", mr)
			}
		},
	},
	{
		name: "overview", schema: "research_overview",
		answer: `{"summary":"Microglia matter.","themes":[{"title":"Microglia","hypotheses":["h-1"],"note":"Test them."}],"open_questions":["Which microglia?"],"suggested_experiments":["Deplete microglia"]}`,
		call: func(ctx context.Context, m Model) (any, research.Usage, error) {
			return ask(ctx, m, prompt.OverviewSpec, research.OverviewRequest{TurnID: "t", Goal: "g", Top: []research.Hypothesis{hyp("h-1")}, Prompt: "OVERVIEW PROMPT"})
		},
		check: func(t *testing.T, v any) {
			o := v.(research.Overview)
			if o.Summary != "Microglia matter." || len(o.Themes) != 1 || o.Themes[0].Hypotheses[0] != "h-1" {
				t.Errorf("overview = %+v", o)
			}
		},
	},
}

func newLLM(t *testing.T, w wire, f *fake) *LLM {
	return &LLM{C: w.completer(t, f.URL), Model: "test-model", Prices: testPrices}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// wantUsage checks u against want, the cost to within rounding.
func wantUsage(t *testing.T, u, want research.Usage) {
	t.Helper()
	if u.PromptTokens != want.PromptTokens || u.CompletionTokens != want.CompletionTokens || u.Requests != want.Requests || !near(u.CostUSD, want.CostUSD) {
		t.Errorf("usage = %+v, want %+v", u, want)
	}
}

// TestCachedUsage: the prompt-cache counts each API reports in its own way (OpenAI:
// cached tokens inside prompt_tokens; Anthropic: cache reads and writes beside
// input_tokens) come back as one usage, and are priced as cached input.
func TestCachedUsage(t *testing.T) {
	usage := map[string][2]string{
		"openai":    {`"usage":{"prompt_tokens":1000,"completion_tokens":200,"total_tokens":1200}`, `"usage":{"prompt_tokens":1000,"completion_tokens":200,"total_tokens":1200,"prompt_tokens_details":{"cached_tokens":600}}`},
		"anthropic": {`"usage":{"input_tokens":1000,"output_tokens":200}`, `"usage":{"input_tokens":200,"output_tokens":200,"cache_read_input_tokens":600,"cache_creation_input_tokens":200}`},
	}
	prices := Prices{"test-model": {PromptPerMTok: 1, CompletionPerMTok: 2, CachedPerMTok: 0.1, CacheWritePerMTok: 1.25}}
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			r := okFor(w, agentCases[0].schema, agentCases[0].answer, 1000, 200, false)
			if !strings.Contains(r.body, usage[w.name][0]) {
				t.Fatalf("the fake's usage block changed: %s", r.body)
			}
			r.body = strings.Replace(r.body, usage[w.name][0], usage[w.name][1], 1)
			m := newLLM(t, w, newFake(t, r))
			m.Prices = prices
			_, u, err := agentCases[0].call(context.Background(), m)
			if err != nil {
				t.Fatal(err)
			}
			want := research.Usage{PromptTokens: 1000, CompletionTokens: 200, Requests: 1, CachedTokens: 600}
			cost := (400*1 + 600*0.1 + 200*2) / 1e6
			if w.name == "anthropic" {
				want.CacheWriteTokens = 200
				cost = (200*1 + 600*0.1 + 200*1.25 + 200*2) / 1e6
			}
			want.CostUSD = cost
			if u.CachedTokens != want.CachedTokens || u.CacheWriteTokens != want.CacheWriteTokens {
				t.Errorf("usage = %+v, want %+v", u, want)
			}
			wantUsage(t, u, want)
		})
	}
}

// Every agent, on both providers: the prompt and the schema go out as the API wants them,
// the answer is parsed, and the usage and its cost come back.
func TestLLMAnswersEveryAgent(t *testing.T) {
	for _, w := range wires {
		for _, tc := range agentCases {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				f := newFake(t, okFor(w, tc.schema, tc.answer, 1000, 200, false))
				v, u, err := tc.call(context.Background(), newLLM(t, w, f))
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				tc.check(t, v)
				wantUsage(t, u, research.Usage{PromptTokens: 1000, CompletionTokens: 200, Requests: 1, CostUSD: (1000*1 + 200*2) / 1e6})
				rec := f.saw(t, 1)[0]
				if rec.method != http.MethodPost || rec.path != w.path {
					t.Errorf("request %s %s, want POST %s", rec.method, rec.path, w.path)
				}
				if rec.body["model"] != "test-model" {
					t.Errorf("model = %v", rec.body["model"])
				}
				conv := w.sent(rec)
				if len(conv) != 2 || conv[0] != "system: "+systemPrompt || !strings.HasPrefix(conv[1], "user: ") || !strings.HasSuffix(conv[1], " PROMPT") {
					t.Errorf("conversation = %q, want the system prompt and the user's prompt", conv)
				}
				name, schema := w.schema(rec)
				if name != tc.schema {
					t.Errorf("schema name = %q, want %q", name, tc.schema)
				}
				if schema == nil || schema["properties"] == nil {
					t.Errorf("request carries no schema: %s", rec.raw)
				}
			})
		}
	}
}

// The OpenAI request asks for strict structured output, with a schema strict mode accepts
// whose properties keep their order; the Anthropic one forces its tool and keeps the
// schema whole.
func TestSchemaOnTheWire(t *testing.T) {
	t.Run("openai", func(t *testing.T) {
		f := newFake(t, okFor(openaiWire, "hypothesis", goodHypothesis, 1, 1, false))
		if _, _, err := ask(context.Background(), newLLM(t, openaiWire, f), prompt.GenerateSpec, research.GenerateRequest{Prompt: "p"}); err != nil {
			t.Fatal(err)
		}
		raw := string(f.requests()[0].raw)
		for _, want := range []string{`"type":"json_schema"`, `"strict":true`, `"name":"hypothesis"`, `"additionalProperties":false`} {
			if !strings.Contains(raw, want) {
				t.Errorf("request lacks %s: %s", want, raw)
			}
		}
		if strings.Contains(raw, "maxLength") {
			t.Errorf("strict schema keeps maxLength: %s", raw)
		}
		order := []string{`"title"`, `"statement"`, `"rationale"`, `"testable_predictions"`}
		last := -1
		for _, k := range order {
			i := strings.Index(raw, k)
			if i < last {
				t.Errorf("schema properties out of order: %s", raw)
			}
			last = i
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		f := newFake(t, okFor(anthropicWire, "review", `{"scores":{"novelty":7,"plausibility":6,"testability":8,"safety":9},"critique":"c","verdict":"accept"}`, 1, 1, false))
		if _, _, err := ask(context.Background(), newLLM(t, anthropicWire, f), prompt.ReviewSpec, research.ReviewRequest{Type: research.ReviewFull, Prompt: "p"}); err != nil {
			t.Fatal(err)
		}
		rec := f.requests()[0]
		_, schema := anthropicWire.schema(rec)
		if schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("input_schema = %v", schema)
		}
		req, _ := schema["required"].([]any)
		if len(req) != 4 { // scores, citation_support, critique, verdict
			t.Errorf("required = %v", schema["required"])
		}
		if rec.header.Get("X-Api-Key") != testKey {
			t.Errorf("x-api-key header not sent")
		}
		if rec.body["max_tokens"] != float64(AnthropicDefaultMaxTokens) {
			t.Errorf("max_tokens = %v", rec.body["max_tokens"])
		}
	})
}

func TestStrictSchemaEveryPromptSchema(t *testing.T) {
	for name, s := range map[string][]byte{
		"plan": prompt.PlanSchema, "hypothesis": prompt.HypothesisSchema, "review": prompt.ReviewSchema,
		"deep": prompt.DeepVerificationSchema, "comparison": prompt.ComparisonSchema, "advocate": prompt.AdvocateSchema,
		"judgement": prompt.JudgementSchema, "meta": prompt.MetaReviewSchema, "overview": prompt.OverviewSchema,
	} {
		out, strict := strictSchema(s)
		if !strict {
			t.Errorf("%s: not strict", name)
		}
		for _, kw := range []string{"maxLength", "minItems", "maxItems", "minimum", "maximum"} {
			if strings.Contains(string(out), kw) {
				t.Errorf("%s: strict schema keeps %s: %s", name, kw, out)
			}
		}
	}
	// The meta-review's delegations survive strict mode, less their limits.
	if out, _ := strictSchema(prompt.MetaReviewSchema); !strings.Contains(string(out), `"delegations":{"type":"array"`) || !strings.Contains(string(out), `"required":["task","hypothesis_id","reason"],"additionalProperties":false`) {
		t.Errorf("strict meta-review schema lacks its delegations: %s", out)
	}
	open := []byte(`{"type":"object","properties":{"a":{"type":"string","maxLength":3},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}`)
	if out, strict := strictSchema(open); strict || string(out) != string(open) {
		t.Errorf("a schema with an optional property: strict=%v, %s", strict, out)
	}
	// A property named like a keyword is a property, not a keyword.
	odd := []byte(`{"type":"object","properties":{"maxLength":{"type":"number"}},"required":["maxLength"],"additionalProperties":false}`)
	if out, strict := strictSchema(odd); !strict || !strings.Contains(string(out), `"maxLength":{"type":"number"}`) {
		t.Errorf("property named maxLength: strict=%v, %s", strict, out)
	}
}

// A truncated answer gets one repair turn, which carries the parser's message and the bad
// answer; the usage sums both turns.
func TestLLMRepairsOnce(t *testing.T) {
	cut := goodHypothesis[:40]
	_, perr := prompt.ParseHypothesis([]byte(cut))
	var me *prompt.MalformedError
	if !errors.As(perr, &me) {
		t.Fatalf("the parser accepts %q", cut)
	}
	for _, w := range wires {
		for _, tokenLimit := range []bool{false, true} {
			name := w.name + "/cut short"
			if tokenLimit {
				name = w.name + "/token limit"
			}
			t.Run(name, func(t *testing.T) {
				f := newFake(t, okFor(w, "hypothesis", cut, 1000, 200, tokenLimit), okFor(w, "hypothesis", goodHypothesis, 1500, 300, false))
				h, u, err := ask(context.Background(), newLLM(t, w, f), prompt.GenerateSpec, research.GenerateRequest{HypothesisID: "h-1", Prompt: "THE PROMPT"})
				if err != nil {
					t.Fatalf("error after a repair: %v", err)
				}
				if h.Title != "Microglia carry tau" {
					t.Errorf("hypothesis = %+v", h)
				}
				wantUsage(t, u, research.Usage{PromptTokens: 2500, CompletionTokens: 500, Requests: 2, CostUSD: (2500*1 + 500*2) / 1e6})
				reqs := f.saw(t, 2)
				conv := w.sent(reqs[1])
				if len(conv) != 4 {
					t.Fatalf("repair conversation = %q, want system, prompt, previous answer, repair", conv)
				}
				if conv[1] != "user: THE PROMPT" || conv[2] != "assistant: "+cut {
					t.Errorf("repair turn does not repeat the prompt and the bad answer: %q", conv)
				}
				if !strings.Contains(conv[3], me.Problem) {
					t.Errorf("repair message %q lacks the parser's message %q", conv[3], me.Problem)
				}
				if tokenLimit && !strings.Contains(conv[3], "token limit") {
					t.Errorf("repair message %q does not say the answer hit the token limit", conv[3])
				}
			})
		}
	}
}

func TestLLMGivesUpAfterOneRepair(t *testing.T) {
	cut := goodHypothesis[:40]
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			f := newFake(t, okFor(w, "hypothesis", cut, 10, 5, false), okFor(w, "hypothesis", cut, 10, 5, false), okFor(w, "hypothesis", goodHypothesis, 10, 5, false))
			_, u, err := ask(context.Background(), newLLM(t, w, f), prompt.GenerateSpec, research.GenerateRequest{Prompt: "p"})
			var me *prompt.MalformedError
			if !errors.As(err, &me) || me.Agent != prompt.AgentGeneration {
				t.Fatalf("error = %v (%T), want a *prompt.MalformedError of the generation agent", err, err)
			}
			f.saw(t, 2)
			if u.Requests != 2 || u.PromptTokens != 20 || u.CompletionTokens != 10 {
				t.Errorf("usage = %+v, want both turns", u)
			}
		})
	}
}

// A model that fails the parser's checks (not the JSON) is repaired the same way: here an
// Anthropic tool call whose input lacks a field.
func TestLLMRepairsAnIncompleteToolCall(t *testing.T) {
	f := newFake(t,
		okFor(anthropicWire, "comparison", `{"winner":"C","reasoning":"r"}`, 10, 5, false),
		okFor(anthropicWire, "comparison", `{"winner":"A","reasoning":"r"}`, 10, 5, false))
	c, _, err := ask(context.Background(), newLLM(t, anthropicWire, f), prompt.CompareSpec, research.CompareRequest{A: hyp("h-1"), B: hyp("h-2"), Prompt: "p"})
	if err != nil || c.Winner != "h-1" {
		t.Fatalf("comparison %+v, error %v", c, err)
	}
	if conv := anthropicWire.sent(f.requests()[1]); !strings.Contains(conv[len(conv)-1], `winner "C" is neither "A" nor "B"`) {
		t.Errorf("repair = %q", conv)
	}
}

// Every HTTP failure is classified, after exactly one request (the SDKs' retries are off),
// and no error repeats the key, even when the provider quotes it.
func TestErrorsAreClassified(t *testing.T) {
	leak := "Incorrect API key provided: " + testKey + " (sk-test-********cdef)."
	type want struct {
		kind       string // auth, rate, request, transient
		status     int
		retryAfter time.Duration
		says       string
	}
	cases := []struct {
		name   string
		wires  []wire
		status int
		kind   string
		header map[string]string
		want   want
	}{
		{"401", wires, 401, "invalid_request_error", nil, want{kind: "auth", says: "_API_KEY in the worker's environment"}},
		{"403", wires, 403, "permission_error", nil, want{kind: "auth", says: "lacks access"}},
		{"429 retry-after seconds", wires, 429, "rate_limit_error", map[string]string{"Retry-After": "7"}, want{kind: "rate", retryAfter: 7 * time.Second, says: "429 Too Many Requests"}},
		{"429 no retry-after", wires, 429, "rate_limit_error", nil, want{kind: "rate"}},
		{"429 insufficient quota", []wire{openaiWire}, 429, "insufficient_quota", nil, want{kind: "auth", says: "out of quota or credit"}},
		{"400 credit balance", []wire{anthropicWire}, 400, "invalid_request_error", nil, want{kind: "auth"}},
		{"400", wires, 400, "invalid_request_error", nil, want{kind: "request", status: 400}},
		{"404", wires, 404, "not_found_error", nil, want{kind: "request", status: 404, says: "check the model name"}},
		{"422", wires, 422, "invalid_request_error", nil, want{kind: "request", status: 422}},
		{"500", wires, 500, "api_error", nil, want{kind: "transient", status: 500, says: "retry"}},
		{"503", wires, 503, "api_error", nil, want{kind: "transient", status: 503}},
		{"529 overloaded", []wire{anthropicWire}, 529, "overloaded_error", nil, want{kind: "transient", status: 529}},
	}
	for _, tc := range cases {
		for _, w := range tc.wires {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				msg := leak
				if tc.name == "400 credit balance" {
					msg = "Your credit balance is too low to access the Anthropic API. " + leak
				}
				f := newFake(t, w.fail(tc.status, tc.kind, msg, tc.header), okFor(w, "hypothesis", goodHypothesis, 1, 1, false))
				_, _, err := ask(context.Background(), newLLM(t, w, f), prompt.GenerateSpec, research.GenerateRequest{Prompt: "p"})
				if err == nil {
					t.Fatal("no error")
				}
				f.saw(t, 1) // no SDK retries
				s := err.Error()
				if strings.Contains(s, testKey) || strings.Contains(s, "sk-test") {
					t.Errorf("error leaks the key: %s", s)
				}
				if !strings.HasPrefix(s, w.name+": ") || !strings.Contains(s, tc.want.says) {
					t.Errorf("error %q: want it to start with %q and say %q", s, w.name+": ", tc.want.says)
				}
				var (
					ae *AuthError
					re *RateLimitError
					qe *RequestError
					te *TransientError
				)
				switch tc.want.kind {
				case "auth":
					if !errors.As(err, &ae) || ae.Provider != w.name {
						t.Errorf("error %v (%T), want *AuthError", err, err)
					}
					if tc.status == 401 && !strings.Contains(s, w.keyVar) {
						t.Errorf("error %q does not name %s", s, w.keyVar)
					}
				case "rate":
					if !errors.As(err, &re) || re.RetryAfter != tc.want.retryAfter {
						t.Errorf("error %v (%T), want *RateLimitError{RetryAfter: %s}", err, err, tc.want.retryAfter)
					}
				case "request":
					if !errors.As(err, &qe) || qe.Status != tc.want.status {
						t.Errorf("error %v (%T), want *RequestError{Status: %d}", err, err, tc.want.status)
					}
				case "transient":
					if !errors.As(err, &te) || te.Status != tc.want.status {
						t.Errorf("error %v (%T), want *TransientError{Status: %d}", err, err, tc.want.status)
					}
				}
			})
		}
	}
}

func TestErrorsWithoutAnAnswer(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name+"/connection refused", func(t *testing.T) {
			srv := httptest.NewServer(http.NotFoundHandler())
			url := srv.URL
			srv.Close()
			_, _, err := ask(context.Background(), &LLM{C: w.completer(t, url)}, prompt.PlanSpec, research.PlanRequest{Prompt: "p"})
			var te *TransientError
			if !errors.As(err, &te) || te.Status != 0 {
				t.Errorf("error %v (%T), want *TransientError", err, err)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks the key: %v", err)
			}
		})
		t.Run(w.name+"/timeout", func(t *testing.T) {
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			defer srv.Close()
			defer close(release)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			_, _, err := ask(ctx, &LLM{C: w.completer(t, srv.URL)}, prompt.PlanSpec, research.PlanRequest{Prompt: "p"})
			var te *TransientError
			if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v (%T), want a *TransientError wrapping the deadline", err, err)
			}
		})
		t.Run(w.name+"/cancelled", func(t *testing.T) {
			f := newFake(t)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, _, err := ask(ctx, &LLM{C: w.completer(t, f.URL)}, prompt.PlanSpec, research.PlanRequest{Prompt: "p"})
			var te *TransientError
			if !errors.Is(err, context.Canceled) || errors.As(err, &te) {
				t.Errorf("error %v (%T), want context.Canceled as it is", err, err)
			}
		})
	}
}

func TestLLMWithoutCompleter(t *testing.T) {
	if _, _, err := ask(context.Background(), &LLM{}, prompt.PlanSpec, research.PlanRequest{}); err == nil {
		t.Error("an LLM without a Completer answered")
	}
}

// stub is a model that gives one answer to every question, and counts the questions.
type stub struct {
	st    research.Step[any]
	u     research.Usage
	err   error
	asked int
}

func (s *stub) Answer(context.Context, prompt.Question) (research.Step[any], research.Usage, error) {
	s.asked++
	return s.st, s.u, s.err
}

// TestAsk: what Ask makes of a model's step, and that what the step cost comes back with
// a failure too.
func TestAsk(t *testing.T) {
	spent := research.Usage{PromptTokens: 10, CompletionTokens: 2, Requests: 1}
	calls := []research.ToolCall{{ID: "c1", Name: "literature.search"}}
	for _, tt := range []struct {
		name    string
		model   stub
		req     research.DebateRequest
		tooling *research.Tooling
		err     string // "" for none
		usage   research.Usage
		asked   int
		calls   int
	}{
		{"an answer", stub{st: research.Step[any]{Answer: research.DebateAnswer{Winner: "h-1"}}, u: spent}, research.DebateRequest{Turn: 1, Turns: 2}, nil, "", spent, 1, 0},
		{"another agent's answer", stub{st: research.Step[any]{Answer: research.Plan{}}, u: spent}, research.DebateRequest{Turn: 1, Turns: 2}, nil, "with a research.Plan, not a research.DebateAnswer", spent, 1, 0},
		{"a failure keeps its cost", stub{err: errors.New("outage"), u: spent}, research.DebateRequest{Turn: 1, Turns: 2}, nil, "outage", spent, 1, 0},
		{"tool calls in a step that may call tools", stub{st: research.Step[any]{Calls: calls}, u: spent}, research.DebateRequest{Turn: 1, Turns: 2}, &research.Tooling{}, "", spent, 1, 1},
		{"tool calls in a turn without tools", stub{st: research.Step[any]{Calls: calls}, u: spent}, research.DebateRequest{Turn: 1, Turns: 2}, nil, "asked for tools in a ranking turn that has none", spent, 1, 0},
		{"a request the Spec refuses is not asked", stub{}, research.DebateRequest{Turn: 0, Turns: 2}, nil, "debate turn 0 of 2 does not exist", research.Usage{}, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.model
			req := tt.req
			req.A, req.B = hyp("h-1"), hyp("h-2")
			st, u, err := Ask(context.Background(), &m, prompt.DebateSpec, req, "p", research.Cache{}, tt.tooling)
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("error %v; want one saying %q", err, tt.err)
			}
			if u != tt.usage || m.asked != tt.asked || len(st.Calls) != tt.calls {
				t.Errorf("usage %+v, asked %d, %d calls; want %+v, %d, %d", u, m.asked, len(st.Calls), tt.usage, tt.asked, tt.calls)
			}
		})
	}
}
