// Package forecast says what a research session will cost before its first call: how many
// requests each agent makes for the session's configuration, times the tokens such a
// request carries as the cost benchmark measured them (figures.json), at the model's
// prices, in the session's mode (cached calls, or cached calls and batches). It is a
// range, not a bill: the assumptions it rests on are part of the answer (Estimate.Assumes).
package forecast

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// Figure is what one request of an agent carries, on average, in a benchmark session:
// its prompt, the share of that served from cache, the tokens written to cache, the
// answer; and how many such requests the session made per hypothesis.
type Figure struct {
	RequestsPerHypothesis float64 `json:"requests_per_hypothesis"`
	PromptTokens          float64 `json:"prompt_tokens"`
	CachedShare           float64 `json:"cached_share"`
	CacheWriteTokens      float64 `json:"cache_write_tokens"`
	OutputTokens          float64 `json:"output_tokens"`
}

// Figures are the benchmark's figures by model, mode (ModeCache, ModeBatch) and agent.
type Figures map[string]map[string]map[string]Figure

// The modes a session runs in, as figures.json names them.
const (
	ModeCache = "cache"
	ModeBatch = "cache+batch"
)

// The agents the figures name.
const (
	AgentPlan       = "plan"
	AgentHypothesis = "hypothesis"
	AgentReview     = "review"
	AgentComparison = "comparison"
	AgentMetaReview = "meta_review"
	AgentOverview   = "overview"
	// AgentDebate is a debate's turns, which the figures count as comparisons.
	AgentDebate = "debate"
)

// Agents are the agents a forecast counts, in the order a session first runs them.
var Agents = []string{AgentPlan, AgentHypothesis, AgentReview, AgentComparison, AgentMetaReview, AgentOverview}

// batchedAgents are the agents whose requests go through the batch API in a batched
// session (generation and evolution, reviews, matches); the plan, meta-reviews and the
// overview are one request at a time and always ordinary calls.
var batchedAgents = []string{AgentHypothesis, AgentReview, AgentComparison}

// measuredReviewTypes is how many review types the benchmark's sessions ran (initial and
// full, workflows' goal()): figures.json's review requests per hypothesis are for that many.
const measuredReviewTypes = 2

// The spread the range allows around the figures: a goal's own prompts and answers run
// longer or shorter than the benchmark's (its prompts are one goal's, its answers as long
// as a model writes them on average), and how many matches a tournament plays moves with
// how close its ratings are (4.2 a hypothesis at 25 hypotheses, 4.4 at 200).
const (
	tokenSpread = 0.25
	// cacheLoss is the share of the measured cache hits the high end gives up on ordinary
	// calls: turns spaced past the cache's lifetime (a step that waits on tools, on an
	// approval, on a slow provider) write their prefix again instead of reading it.
	cacheLoss = 0.5
)

//go:embed figures.json
var figuresJSON []byte

// Measured is the benchmark's figures, as recorded in figures.json.
func Measured() Figures {
	var f Figures
	if err := json.Unmarshal(figuresJSON, &f); err != nil {
		panic("forecast: figures.json: " + err.Error()) // embedded: a test reads it
	}
	return f
}

// closestModel is the model whose figures stand in for one the benchmark did not run, by
// provider: the tokens a request carries depend on cosci's prompts far more than on the
// model (only the tokenizer differs).
var closestModel = map[string]string{"openai": "gpt-6-sol", "anthropic": "claude-sonnet-5-5"}

// defaultModel is the model a provider runs when the request names none.
var defaultModel = map[string]string{"openai": provider.OpenAIDefaultModel, "anthropic": provider.AnthropicDefaultModel}

// Agent is one agent's part of a forecast.
type Agent struct {
	Agent    string
	Requests float64 // expected
	Batched  bool
	// Usage is the expected tokens of the agent's requests; Low, Expected and High the
	// dollars.
	Usage               research.Usage
	Low, Expected, High float64
}

// Estimate is a session's forecast.
type Estimate struct {
	Provider, Model, Mode string
	// FiguresOf is the model whose figures the forecast used: Model, or the closest one
	// the benchmark ran.
	FiguresOf string
	Agents    []Agent
	// Requests are the expected requests in all, Batched those through a batch API.
	Requests, Batched float64
	Usage             research.Usage // expected tokens in all
	// Priced says whether the prices know the model; without, the dollars are 0 and mean
	// nothing.
	Priced              bool
	Low, Expected, High float64
	// Assumes says what the forecast rests on, one sentence each.
	Assumes []string
}

// Free says the session calls no paid model (the offline provider).
func (e Estimate) Free() bool { return e.Provider == research.DefaultProvider }

// Forecast is what a session of configuration c costs, from figures fs at prices p. c is
// a request's config after WithDefaults. A provider the figures have no model of (but
// offline, which costs nothing) is an error.
func Forecast(c research.Config, fs Figures, p provider.Prices) (Estimate, error) {
	e := Estimate{Provider: strings.ToLower(strings.TrimSpace(c.Provider)), Model: strings.TrimSpace(c.Model), Mode: ModeCache}
	if c.Batch {
		e.Mode = ModeBatch
	}
	if e.Free() {
		e.Priced = true
		e.Assumes = append(e.Assumes, "the offline provider simulates its model: no call is paid")
		return e, nil
	}
	if e.Model == "" {
		e.Model = defaultModel[e.Provider]
	}
	e.FiguresOf = e.Model
	byAgent := fs[e.Model][e.Mode]
	if byAgent == nil {
		e.FiguresOf = closestModel[e.Provider]
		byAgent = fs[e.FiguresOf][e.Mode]
		if byAgent == nil {
			return e, fmt.Errorf("no figures for provider %s (the benchmark ran %s)", e.Provider, strings.Join(slices.Sorted(maps.Keys(fs)), ", "))
		}
		e.Assumes = append(e.Assumes, fmt.Sprintf("the benchmark did not run %s: its requests are taken to carry the tokens %s's do", e.Model, e.FiguresOf))
	}
	e.Priced = p.Has(e.Model)
	if !e.Priced {
		e.Assumes = append(e.Assumes, fmt.Sprintf("%s has no price (prices read %s): no dollar figure, only requests and tokens", e.Model, provider.PricesAsOf))
	}
	n := float64(c.MaxHypotheses)
	reviewTypes := float64(max(1, len(c.ReviewTypes)))
	share := min(max(c.DebateShare, 0), 1)
	// A turn that may call tools is an ordinary call even in a batched session (its tool
	// loop needs each answer before its next step): with tools, the high end batches nothing.
	batchesHold := len(c.Tools) == 0
	add := func(name string, f Figure, req, lowReq, highReq float64, batched bool) {
		a := Agent{Agent: name, Requests: req, Batched: batched}
		a.Usage = usage(f, req, 1, f.CachedShare, batched)
		highShare := f.CachedShare * (1 - cacheLoss)
		if batched {
			highShare = 0 // batches cache "best effort": at worst, not at all
		}
		if e.Priced {
			a.Low = p.Cost(e.Model, usage(f, lowReq, 1-tokenSpread, f.CachedShare, batched))
			a.Expected = p.Cost(e.Model, a.Usage)
			a.High = p.Cost(e.Model, usage(f, highReq, 1+tokenSpread, highShare, batched && batchesHold))
		}
		e.Agents = append(e.Agents, a)
		e.Requests += req
		if batched {
			e.Batched += req
		}
		e.Usage = e.Usage.Add(a.Usage)
		e.Low, e.Expected, e.High = e.Low+a.Low, e.Expected+a.Expected, e.High+a.High
	}
	for _, name := range Agents {
		f := byAgent[name]
		req := f.RequestsPerHypothesis * n
		switch name {
		case AgentPlan, AgentOverview:
			req = 1 // once a session, however long
		case AgentHypothesis:
			req = n // generations and evolutions stop at max_hypotheses
		case AgentReview:
			req *= reviewTypes / measuredReviewTypes
		}
		batched := c.Batch && slices.Contains(batchedAgents, name)
		if name == AgentComparison && share > 0 {
			// The tournament spends a budget of calls a round: debates take their turns
			// from it, so the matches' requests stay as many. One placement game a
			// newcomer; of the rest (the boundary of the top), a share of the matches
			// are debates of several turns, each an ordinary call.
			boundary := max(0, req-n)
			turns := func(t float64) float64 { return boundary * share * t / (1 + share*(t-1)) }
			low, expected, high := turns(tournament.MinTurns), turns(expectedDebateTurns), turns(tournament.MaxDebateTurns)
			add(name, f, req-expected, req-low, req-high, batched)
			add(AgentDebate, f, expected, low, high, false)
			continue
		}
		add(name, f, req, req, req, batched)
	}
	e.assumeSession(c, byAgent[AgentHypothesis], p, share)
	return e, nil
}

// assumeSession adds what the forecast assumes of the session as a whole: its length, its
// tokens, its cache, its debates, its tool calls (costed in the high end from f, a
// generation's figures) and its budget.
func (e *Estimate) assumeSession(c research.Config, f Figure, p provider.Prices, share float64) {
	e.Assumes = append(e.Assumes,
		fmt.Sprintf("the session researches to max_hypotheses (%d): it may converge or hit a limit sooner, and cost less", c.MaxHypotheses),
		fmt.Sprintf("prompts and answers within ±%.0f%% of the benchmark's tokens a request (figures of %s, %s)", 100*tokenSpread, e.FiguresOf, e.Mode))
	if c.Batch {
		e.Assumes = append(e.Assumes, "batches cache from as much as the benchmark measured (low) to nothing (high)")
	} else {
		e.Assumes = append(e.Assumes, fmt.Sprintf("from the benchmark's cache hits (low) to %.0f%% of them (high), for turns spaced past the cache's lifetime", 100*(1-cacheLoss)))
	}
	if c.DebateShare > 0 {
		e.Assumes = append(e.Assumes, fmt.Sprintf("%.0f%% of the matches past each newcomer's placement game are debates of %d to %d turns, each turn as large as a comparison and an ordinary call, out of the same budget of calls",
			100*share, tournament.MinTurns, tournament.MaxDebateTurns))
	}
	if len(c.Tools) > 0 {
		// A tool call is one more step of the turn that made it: the turn's prompt again,
		// with the tool's answer. At most the session's tool-call budget of them.
		calls := c.ToolSessionBudget()
		if e.Priced {
			e.High += p.Cost(e.Model, usage(f, float64(calls), 1+tokenSpread, 0, false))
		}
		e.Assumes = append(e.Assumes, fmt.Sprintf("up to %d tool calls (the session's budget), each a step as large as a generation, uncached, in the high end only", calls))
		if c.Batch {
			e.Assumes = append(e.Assumes, "turns that may call tools are ordinary calls: the high end batches none")
		}
	}
	if c.BudgetUSD > 0 && e.Priced && c.BudgetUSD < e.High {
		e.Assumes = append(e.Assumes, fmt.Sprintf("the range ignores the budget: session's budget of $%.2f suspends it when spent, below the range's top", c.BudgetUSD))
	}
}

// expectedDebateTurns is a debate's turns on average: between tournament.MinTurns for
// players far apart and MaxDebateTurns for the closest.
const expectedDebateTurns = (tournament.MinTurns + tournament.MaxDebateTurns) / 2.0

// usage is n requests of figure f, their tokens scaled by scale, served from cache at
// share, through a batch API (and written to the cache with the long lifetime) if batched.
func usage(f Figure, n, scale, share float64, batched bool) research.Usage {
	prompt := n * f.PromptTokens * scale
	u := research.Usage{
		Requests:         int(n + 0.5),
		PromptTokens:     int(prompt + 0.5),
		CachedTokens:     int(prompt*share + 0.5),
		CacheWriteTokens: int(n*f.CacheWriteTokens*scale + 0.5),
		CompletionTokens: int(n*f.OutputTokens*scale + 0.5),
	}
	if batched {
		u.Batched = max(u.Requests, 1) // Prices.Cost discounts a usage with any batched request
		// A batched turn asks for the long cache lifetime (research.Cache.Long), since its
		// batch runs long after it is sent: what it writes is priced as a long write
		// (Anthropic's 1-hour cache at twice the input price; a model without a long write
		// price pays the short one).
		u.CacheWriteLongTokens = u.CacheWriteTokens
	}
	return u
}
