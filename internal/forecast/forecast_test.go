package forecast

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/research"
)

// TestMeasuredFigures: figures.json has every agent of both benchmark models in both modes,
// and each figure is one a session could have (a prompt, an answer, a share in [0, 1]).
func TestMeasuredFigures(t *testing.T) {
	fs := Measured()
	for _, model := range []string{"gpt-6-sol", "claude-sonnet-5-5"} {
		for _, mode := range []string{ModeCache, ModeBatch} {
			for _, agent := range Agents {
				f, ok := fs[model][mode][agent]
				if !ok || f.RequestsPerHypothesis <= 0 || f.PromptTokens <= 0 || f.OutputTokens <= 0 || f.CachedShare < 0 || f.CachedShare > 1 || f.CacheWriteTokens < 0 {
					t.Errorf("%s %s %s: %+v (present %v)", model, mode, agent, f, ok)
				}
			}
		}
	}
}

// The prices of the arithmetic's tests: $1 a million input tokens, $0.10 cached, $2
// written, $10 output; batches half.
var testPrices = provider.Prices{"m": {PromptPerMTok: 1, CachedPerMTok: 0.1, CacheWritePerMTok: 2, CompletionPerMTok: 10}}

// one is figures where only agent has requests: 1,000 prompt tokens, half cached, 100
// written, 200 out, rph a hypothesis. Its request at testPrices costs $0.00265 (400 plain
// + 50 cached + 200 written + 2,000 out, in millionths), $0.001325 batched.
func one(agent string, rph float64) Figures {
	byAgent := map[string]Figure{}
	for _, a := range Agents {
		byAgent[a] = Figure{}
	}
	byAgent[agent] = Figure{RequestsPerHypothesis: rph, PromptTokens: 1000, CachedShare: 0.5, CacheWriteTokens: 100, OutputTokens: 200}
	return Figures{"m": {ModeCache: byAgent, ModeBatch: byAgent}}
}

func TestForecastArithmetic(t *testing.T) {
	const perRequest = 0.00265
	// high is one request at 1.25 times the tokens, cached at share: 1,250 prompt, 125
	// written, 250 out.
	high := func(share float64) float64 {
		cached := 1250 * share
		return (1250-cached-125)*1e-6 + cached*0.1e-6 + 125*2e-6 + 250*10e-6
	}
	tests := []struct {
		name            string
		agent           string // the figure's
		line            string // the estimate's agent whose requests are checked, if not agent
		rph             float64
		config          research.Config
		requests        float64
		expected        float64 // dollars
		low, highDollar float64
	}{
		{"the plan is one request however many hypotheses", AgentPlan, "", 0.005, research.Config{MaxHypotheses: 50},
			1, perRequest, 0.75 * perRequest, high(0.25)},
		{"the overview too", AgentOverview, "", 0.005, research.Config{MaxHypotheses: 50},
			1, perRequest, 0.75 * perRequest, high(0.25)},
		{"a generation or evolution a hypothesis", AgentHypothesis, "", 1.3, research.Config{MaxHypotheses: 10},
			10, 10 * perRequest, 10 * 0.75 * perRequest, 10 * high(0.25)},
		{"reviews by review types: figures for two, four asked", AgentReview, "", 2, research.Config{MaxHypotheses: 10, ReviewTypes: []string{"initial", "full", "observation", "tournament"}},
			40, 40 * perRequest, 40 * 0.75 * perRequest, 40 * high(0.25)},
		{"reviews: one type asked", AgentReview, "", 2, research.Config{MaxHypotheses: 10, ReviewTypes: []string{"initial"}},
			10, 10 * perRequest, 10 * 0.75 * perRequest, 10 * high(0.25)},
		{"matches by the measured rate", AgentComparison, "", 4.4, research.Config{MaxHypotheses: 10},
			44, 44 * perRequest, 44 * 0.75 * perRequest, 44 * high(0.25)},
		// Debates take their turns from the tournament's budget of calls: as many match
		// requests (44), of which the boundary's (44 - one placement game for each of 10
		// newcomers) are debate turns by the share of debates and their length t:
		// 34 * share*t / (1 + share*(t-1)).
		{"every boundary match a debate: the same calls, 34 of them debate turns", AgentComparison, AgentDebate, 4.4, research.Config{MaxHypotheses: 10, DebateShare: 1},
			34, 44 * perRequest, 44 * 0.75 * perRequest, 44 * high(0.25)},
		{"batched, half the matches debates: their turns (25.5, 27.2, 28.33) ordinary calls", AgentComparison, AgentDebate, 4.4, research.Config{MaxHypotheses: 10, DebateShare: 0.5, Batch: true},
			27.2, 16.8*perRequest/2 + 27.2*perRequest, 18.5*0.75*perRequest/2 + 25.5*0.75*perRequest, (44-34*2.5/3)*high(0)/2 + 34*2.5/3*high(0.25)},
		{"meta-reviews by the measured rate, not batched", AgentMetaReview, "", 0.25, research.Config{MaxHypotheses: 20, Batch: true},
			5, 5 * perRequest, 5 * 0.75 * perRequest, 5 * high(0.25)},
		{"batched generations: half, and uncached at the high end", AgentHypothesis, "", 1, research.Config{MaxHypotheses: 10, Batch: true},
			10, 10 * perRequest / 2, 10 * 0.75 * perRequest / 2, 10 * high(0) / 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.config.Provider, tc.config.Model = "openai", "m"
			e, err := Forecast(tc.config, one(tc.agent, tc.rph), testPrices)
			if err != nil {
				t.Fatal(err)
			}
			if tc.line == "" {
				tc.line = tc.agent
			}
			var got Agent
			for _, a := range e.Agents {
				if a.Agent == tc.line {
					got = a
				}
			}
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-3*math.Abs(b) } // tokens are whole
			if !near(got.Requests, tc.requests) || !near(e.Expected, tc.expected) || !near(e.Low, tc.low) || !near(e.High, tc.highDollar) {
				t.Errorf("requests %g, $%g (%g to %g); want %g, $%g (%g to %g)", got.Requests, e.Expected, e.Low, e.High, tc.requests, tc.expected, tc.low, tc.highDollar)
			}
			if !(e.Low <= e.Expected && e.Expected <= e.High) {
				t.Errorf("range %g to %g does not hold %g", e.Low, e.High, e.Expected)
			}
			wantBatched := tc.config.Batch && slices.Contains(batchedAgents, tc.line)
			if got.Batched != wantBatched || (got.Usage.Batched > 0) != wantBatched {
				t.Errorf("%s batched %v (%d requests); want %v", tc.agent, got.Batched, got.Usage.Batched, wantBatched)
			}
		})
	}
}

// TestForecastTools: tools widen the high end only, by the session's tool-call budget of
// steps as large as a generation.
func TestForecastTools(t *testing.T) {
	c := research.Config{Provider: "openai", Model: "m", MaxHypotheses: 10}
	without, _ := Forecast(c, one(AgentHypothesis, 1), testPrices)
	c.Tools, c.ToolCallsPerSession = []string{"search.*"}, 7
	with, _ := Forecast(c, one(AgentHypothesis, 1), testPrices)
	step := (1250*1e-6 - 125*1e-6 + 125*2e-6 + 250*10e-6) // uncached, 1.25 times the tokens
	if with.Low != without.Low || with.Expected != without.Expected || math.Abs(with.High-without.High-7*step) > 1e-9 {
		t.Errorf("with tools %+v; without %+v; want the high end %g more", with, without, 7*step)
	}
	// Batched, a turn that may call tools is an ordinary call: the high end pays full price
	// for the generations (uncached, as batched ones at the high end), the low end still
	// the batch's.
	c.Batch = true
	batched, _ := Forecast(c, one(AgentHypothesis, 1), testPrices)
	if math.Abs(batched.High-10*step-7*step) > 1e-9 || math.Abs(batched.Low-without.Low/2) > 1e-9 {
		t.Errorf("batched with tools: $%g to $%g; want $%g to $%g", batched.Low, batched.High, without.Low/2, 17*step)
	}
}

func TestForecastModels(t *testing.T) {
	fs := Measured()
	tests := []struct {
		name      string
		config    research.Config
		figuresOf string
		priced    bool
		assumes   string // a word of what it says it assumes
		err       string
	}{
		{"a model the benchmark ran", research.Config{Provider: "openai", Model: "gpt-6-sol"}, "gpt-6-sol", true, "±25%", ""},
		{"another model of the provider: the closest figures, said", research.Config{Provider: "anthropic", Model: "claude-opus-5-5"}, "claude-sonnet-5-5", true, "did not run claude-opus-5-5", ""},
		{"the provider's default model", research.Config{Provider: "openai"}, "gpt-6-sol", true, "", ""},
		{"a model without a price: no dollars, said", research.Config{Provider: "openai", Model: "gpt-9-nova"}, "gpt-6-sol", false, "no price", ""},
		{"a budget below the range's top, said", research.Config{Provider: "openai", Model: "gpt-6-sol", BudgetUSD: 0.5}, "gpt-6-sol", true, "budget of $0.50 suspends it", ""},
		{"offline costs nothing", research.Config{Provider: "offline"}, "", true, "no call is paid", ""},
		{"a provider the figures lack", research.Config{Provider: "mistral", Model: "x"}, "", false, "", "no figures"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.config.MaxHypotheses = 20
			e, err := Forecast(tc.config, fs, provider.DefaultPrices())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v; want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.FiguresOf != tc.figuresOf || e.Priced != tc.priced || !strings.Contains(strings.Join(e.Assumes, "\n"), tc.assumes) {
				t.Errorf("figures of %q, priced %v, assumes %q", e.FiguresOf, e.Priced, e.Assumes)
			}
			if tc.priced && !e.Free() && !(0 < e.Low && e.Low < e.Expected && e.Expected < e.High) {
				t.Errorf("range %g < %g < %g", e.Low, e.Expected, e.High)
			}
			if !tc.priced && (e.Low != 0 || e.Expected != 0 || e.High != 0 || e.Requests == 0) {
				t.Errorf("unpriced: $%g to $%g, %g requests; want no dollars, the requests", e.Low, e.High, e.Requests)
			}
		})
	}
}

// TestForecastLongWrites: a batched turn asks for the long cache lifetime, so its writes
// are priced at the long write price where the model has one ($4 a million here, against
// $2 short); an ordinary call's writes, and a batched turn's on a model without a long
// price, at the short one.
func TestForecastLongWrites(t *testing.T) {
	long := provider.Prices{"m": {PromptPerMTok: 1, CachedPerMTok: 0.1, CacheWritePerMTok: 2, CacheWriteLongPerMTok: 4, CompletionPerMTok: 10}}
	// One generation's request: 400 plain + 500 cached + 100 written + 200 out tokens, in
	// millionths of a dollar, the writes at 2 or 4.
	short, longer := (400+500*0.1+100*2+200*10)*1e-6, (400+500*0.1+100*4+200*10)*1e-6
	for _, tc := range []struct {
		name   string
		prices provider.Prices
		batch  bool
		want   float64
	}{
		{"ordinary calls write short", long, false, 10 * short},
		{"batched turns write long", long, true, 10 * longer / 2},
		{"batched, no long price: the short one", testPrices, true, 10 * short / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Forecast(research.Config{Provider: "openai", Model: "m", MaxHypotheses: 10, Batch: tc.batch}, one(AgentHypothesis, 1), tc.prices)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(e.Expected-tc.want) > 1e-9 {
				t.Errorf("expected $%g; want $%g", e.Expected, tc.want)
			}
			if tc.batch && e.Usage.CacheWriteLongTokens != e.Usage.CacheWriteTokens {
				t.Errorf("batched: %d of %d written tokens long; want all", e.Usage.CacheWriteLongTokens, e.Usage.CacheWriteTokens)
			}
		})
	}
}
