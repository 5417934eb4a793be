package workflows

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
	"github.com/cosci-dev/cosci/internal/research"
)

// BenchmarkCost: what a research session costs on two current models, at their list
// prices, when nothing is cached or batched (naive), with the prompts cached as the
// providers cache them, and with caching and the batch APIs; the share of input tokens
// served from cache; and the tournament's top-10 precision, which must not move.
//
//	go test ./workflows -run '^$' -bench Cost -benchtime 1x -cost.hypotheses 200
//
// The sessions run in the workflow test environment with cosci's real activities and its
// real provider code (the official SDKs), against providertest's fake APIs: its token
// counts are o200k_base over what each request really carries, its caches follow each
// provider's rules (prefixes of 1,024 + k·128 tokens on OpenAI; Anthropic's breakpoints,
// with Sonnet's 1,024-token minimum) and its batches run through the real batch
// endpoints. The answers come from world, a simulated science behind the fake: each
// hypothesis has a hidden quality, reviews and judges see it through noise, and every
// answer is as long as a real model writes one (worldWords says how long). Everything the
// world answers depends only on the request, so the same seed makes the same session in
// every mode.
//
// Each session runs twice. At zero latency, the test environment's clock moves only when
// a timer fires and turns take no time, so no cache ever expires: that is the bound, what
// caching could save at best. At realistic timing (turnClock), every model turn takes a
// latency drawn for its agent and model, and batches take -cost.batch each (a sweep:
// the providers promise 24 hours and usually take minutes to an hour), so the fake's
// caches, which expire by the same clock, lose what a real session loses in its waits;
// the fake runs each batch's requests spread over its run, as a real batch does
// (providertest.Options.BatchSpread), so a prefix cached in a batch serves its next
// request only if it outlives the time between them. Each delay runs with cosci's batches
// (their requests leaders first by shared prefix: provider.Group), with the requests in the order the steps
// made them (the control), and with batches that cache nothing; the last table says how
// often the batches' requests hit the cache in each.
// -cost.figures writes the per-agent token figures of the realistic sessions, which
// internal/forecast reads.
func BenchmarkCost(b *testing.B) {
	delays, err := batchDelays(*costBatch)
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		var bound, timed []costRow
		for _, m := range []struct {
			provider, model string
			scale           float64 // Claude's tokens against o200k_base's (see providertest)
		}{{"openai", "gpt-6-sol", 1}, {"anthropic", "claude-sonnet-5-5", 1}, {"anthropic", "claude-sonnet-5-5", 1.2}} {
			if *costBound {
				for _, mode := range costModes(nil) {
					bound = append(bound, runCost(b, m.provider, m.model, m.scale, mode))
				}
			}
			if *costLatency > 0 {
				for _, mode := range costModes(delays) {
					if mode.ungrouped && m.scale != 1 {
						continue // the control once a model is enough
					}
					mode.clock = &turnClock{scale: *costLatency * modelPace(m.model)}
					timed = append(timed, runCost(b, m.provider, m.model, m.scale, mode))
				}
			}
		}
		var out strings.Builder
		if len(bound) > 0 {
			out.WriteString("\nZero latency (the bound):\n" + costTable(bound) + "\n" + agentTable(bound))
		}
		if len(timed) > 0 {
			out.WriteString("\nRealistic timing:\n" + costTable(timed) + "\n" + agentTable(timed) + "\n" + hitTable(timed))
		}
		b.Log(out.String())
		if *costFigures != "" {
			rows := timed
			if len(rows) == 0 {
				rows = bound
			}
			if err := writeFigures(*costFigures, rows, delays); err != nil {
				b.Fatal(err)
			}
		}
	}
}

var (
	costHypotheses = flag.Int("cost.hypotheses", 200, "hypotheses in each session of BenchmarkCost")
	costLatency    = flag.Float64("cost.latency", 1, "BenchmarkCost: scale of the turns' latencies at realistic timing (0: run only the zero-latency bound)")
	costBatch      = flag.String("cost.batch", "5m,30m,2h", "BenchmarkCost: how long a batch takes at realistic timing, a comma-separated sweep")
	costBound      = flag.Bool("cost.bound", true, "BenchmarkCost: also run the sessions at zero latency, the bound")
	costFigures    = flag.String("cost.figures", "", "BenchmarkCost: write the per-agent token figures of the sessions (realistic timing when run) as JSON to this file")
)

func batchDelays(list string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(list, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("-cost.batch: %q is not a batch delay", f)
		}
		out = append(out, d)
	}
	return out, nil
}

// costModes are the modes a model runs in: caching alone, then, for each batch delay,
// caching with batches that cache as the fake's prompt cache does (the providers' best
// effort at its best), the same with the batches' requests in the order the steps made
// them (not leaders first by prefix: the control), and batches that cache nothing (at its
// worst). nil delays: the zero-latency bound, whose batches are done when first looked
// at, their requests back to back (so that their order changes nothing: no control).
// At realistic timing the fake spreads a batch's requests over its run
// (providertest.Options.BatchSpread).
func costModes(delays []time.Duration) []costMode {
	modes := []costMode{{kind: modeCache}}
	bound := delays == nil
	if bound {
		delays = []time.Duration{0}
	}
	for _, d := range delays {
		modes = append(modes, costMode{kind: modeBatch, batch: true, delay: d})
		if !bound {
			modes = append(modes, costMode{kind: modeBatchUngrouped, batch: true, ungrouped: true, delay: d})
		}
		modes = append(modes, costMode{kind: modeBatchNoCache, batch: true, noCache: true, delay: d})
	}
	return modes
}

const (
	modeCache          = "cache"
	modeBatch          = "cache+batch"
	modeBatchUngrouped = "cache+batch, ungrouped"
	modeBatchNoCache   = "cache+batch, no cache in batches"
)

type costMode struct {
	kind                      string // modeCache, modeBatch, modeBatchUngrouped or modeBatchNoCache
	batch, noCache, ungrouped bool
	delay                     time.Duration // providertest.Options.BatchDelay
	clock                     *turnClock    // nil: zero latency
}

func (m costMode) String() string {
	if m.batch && m.clock != nil {
		return fmt.Sprintf("%s (batches %s)", m.kind, research.ShortDuration(m.delay))
	}
	return m.kind
}

type costRow struct {
	provider, model, mode string
	modelID, kind         string // the model's name and the mode's kind, for the figures
	scale                 float64
	delay                 time.Duration
	realistic             bool
	elapsed               time.Duration // the session's length on the workflow clock
	hypotheses            int
	requests, batched     int
	batchHits             int // batched requests that read anything from the cache
	batchInput            int // the batched requests' input tokens, and those served from cache
	batchCached           int
	input, cached, output int
	written               int
	naive, cost           float64 // dollars: every token at list price; what the session paid
	reasoningNaive        float64 // with as many hidden reasoning tokens as answer tokens
	reasoningCost         float64
	precision             float64
	byAgent               map[string]providertest.Usage
}

func runCost(b testing.TB, providerName, model string, scale float64, mode costMode) costRow {
	w := &world{seed: 21, quality: map[string]float64{}}
	h, f := batchHarness(b, providertest.Options{Answer: w.answer, BatchNoCache: mode.noCache, Seed: 3, AnthropicTokenScale: scale,
		BatchDelay: mode.delay, BatchSpread: mode.clock != nil})
	h.acts.KeepBatchOrder = mode.ungrouped
	req := goal(*costHypotheses)
	req.Config.Provider, req.Config.Model, req.Config.Batch = providerName, model, mode.batch
	req.Config.ConvergenceRounds = 1000 // research to max_hypotheses
	req.Config.Seed = 21
	start := h.env.Now()
	var res Result
	if mode.clock == nil {
		res = h.run(req)
	} else {
		res = mode.clock.run(h, req)
	}
	elapsed := h.env.Now().Sub(start)
	v := query[StateView](h, QueryState, Page{Limit: MaxPageLimit})
	st := f.Stats()
	ordinary, batched := st.OpenAI, st.OpenAIBatch
	if providerName == "anthropic" {
		ordinary, batched = st.Anthropic, st.AnthropicBatch
	}
	p := provider.DefaultPrices()
	all := ordinary
	all.Requests += batched.Requests
	all.Input += batched.Input
	all.CacheRead += batched.CacheRead
	all.CacheWrite += batched.CacheWrite
	all.Output += batched.Output
	embed := p.Cost(provider.DefaultEmbeddingModel, research.Usage{PromptTokens: st.Embeddings.Tokens})
	name := model
	if scale != 1 && providerName == "anthropic" {
		name += fmt.Sprintf(" (tokens ×%g)", scale)
	}
	row := costRow{
		provider: providerName, model: name, mode: mode.String(), modelID: model, kind: mode.kind,
		scale: scale, delay: mode.delay, realistic: mode.clock != nil, elapsed: elapsed, hypotheses: res.Hypotheses,
		requests: all.Requests, batched: batched.Requests, batchHits: batched.Hits, batchInput: batched.Input, batchCached: batched.CacheRead,
		input: all.Input, cached: all.CacheRead, written: all.CacheWrite, output: all.Output,
		naive: p.Cost(req.Config.Model, research.Usage{PromptTokens: all.Input, CompletionTokens: all.Output}) + embed,
		cost:  v.Usage.CostUSD,
	}
	// Thinking models bill their hidden reasoning as output: with as many reasoning
	// tokens as answer tokens, at the price of the requests they came with.
	priced := req.Config.Model
	row.reasoningNaive = row.naive + p.Cost(priced, research.Usage{CompletionTokens: all.Output})
	row.reasoningCost = row.cost + p.Cost(priced, research.Usage{CompletionTokens: ordinary.Output}) +
		p.Cost(priced, research.Usage{CompletionTokens: batched.Output, Batched: 1})
	row.precision = w.precision(v)
	row.byAgent = st.ByAgent
	return row
}

func costTable(rows []costRow) string {
	var b strings.Builder
	b.WriteString("| model | mode | hypotheses | session time | requests (batched) | input tokens | cached | written to cache | output tokens | naive | this mode | × naive | top-10 precision | with reasoning: naive | this mode | × naive |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %d (%d) | %s | %.0f%% | %s | %s | $%.2f | $%.2f | %.2f | %.1f | $%.2f | $%.2f | %.2f |\n",
			r.model, r.mode, r.hypotheses, research.ShortDuration(r.elapsed.Round(time.Minute)), r.requests, r.batched, research.Thousands(r.input), 100*float64(r.cached)/float64(max(1, r.input)),
			research.Thousands(r.written), research.Thousands(r.output), r.naive, r.cost, r.cost/r.naive, r.precision,
			r.reasoningNaive, r.reasoningCost, r.reasoningCost/r.reasoningNaive)
	}
	return b.String()
}

// hitTable is how often the batches' requests read from the cache, by model and batch
// delay: leaders first by prefix (cosci's order), in the order the steps made them, and not at
// all; and the input share the batches served from cache in each.
func hitTable(rows []costRow) string {
	var b strings.Builder
	b.WriteString("| model | batches take | in-batch hits, leaders first | ungrouped | cached share of the batched input, leaders first | ungrouped | × naive, leaders first | ungrouped | no cache in batches |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	type cell struct{ grouped, ungrouped, none *costRow }
	var keys []string
	cells := map[string]*cell{}
	for i := range rows {
		r := &rows[i]
		if !r.realistic || r.batched == 0 {
			continue
		}
		k := r.model + "\x00" + research.ShortDuration(r.delay)
		if cells[k] == nil {
			cells[k] = &cell{}
			keys = append(keys, k)
		}
		switch r.kind {
		case modeBatch:
			cells[k].grouped = r
		case modeBatchUngrouped:
			cells[k].ungrouped = r
		case modeBatchNoCache:
			cells[k].none = r
		}
	}
	hits := func(r *costRow) string {
		if r == nil {
			return "-"
		}
		return fmt.Sprintf("%d of %d (%.0f%%)", r.batchHits, r.batched, 100*float64(r.batchHits)/float64(max(1, r.batched)))
	}
	share := func(r *costRow) string {
		if r == nil {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", 100*float64(r.batchCached)/float64(max(1, r.batchInput)))
	}
	ratio := func(r *costRow) string {
		if r == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f", r.cost/r.naive)
	}
	for _, k := range keys {
		c := cells[k]
		model, delay, _ := strings.Cut(k, "\x00")
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", model, delay, hits(c.grouped), hits(c.ungrouped),
			share(c.grouped), share(c.ungrouped), ratio(c.grouped), ratio(c.ungrouped), ratio(c.none))
	}
	return b.String()
}

// agentTable is, for the sessions without batches, each agent's mean prompt and the share
// of it served from cache: where the shared prefix reaches the providers' minimum.
func agentTable(rows []costRow) string {
	var b strings.Builder
	b.WriteString("| model | agent | requests | mean prompt tokens | cached |\n|---|---|---:|---:|---:|\n")
	for _, r := range rows {
		if r.kind != modeCache {
			continue
		}
		for _, agent := range slices.Sorted(maps.Keys(r.byAgent)) {
			u := r.byAgent[agent]
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %.0f%% |\n", r.model, agent, u.Requests, research.Thousands(u.Input/max(1, u.Requests)), 100*u.CachedShare())
		}
	}
	return b.String()
}

// world is the science behind the fake provider: every hypothesis it writes has a hidden
// quality, kept by title (its titles are unique: they begin with the hypothesis' id);
// reviews and judges see the quality through noise, as the offline simulator's do. Its
// randomness is drawn from a hash of the request, so a request asked twice (a batch, a
// retry) gets the same answer.
type world struct {
	seed    uint64
	mu      sync.Mutex
	quality map[string]float64 // by title
}

// worldWords is how long the world's answers are, in words: what a model writes for each
// field, taken from the lengths of real answers to cosci's prompts (a generation is about
// 450 tokens, a judgement 250, a review 220, a meta-review 450, the overview 700).
var worldWords = map[string]int{
	"title": 8, "statement": 45, "rationale": 190, "prediction": 25, "critique": 150, "assumption": 40,
	"reasoning": 180, "plan item": 18, "summary": 25, "meta item": 22, "feedback": 120, "overview": 150, "theme note": 40,
}

var (
	reNewID    = regexp.MustCompile(`known as (h-\d+)\.`)
	reStrategy = regexp.MustCompile(`(?m)^Strategy: ([^.]+)\.`)
	reParent   = regexp.MustCompile(`(?m)^Parent \d+, hypothesis [^:]+: (.+)$`)
	reKind     = regexp.MustCompile(`(?m)^Evolution: ([^.]+)\.`)
	reReviewed = regexp.MustCompile(`(?m)^Hypothesis h-\d+: (.+)$`)
	reSide     = regexp.MustCompile(`(?m)^Hypothesis ([AB]) \([^)]+\): (.+)$`)
	reCluster  = regexp.MustCompile(`(?m)^- cluster \d+: (.+)$`)
)

func (w *world) answer(t providertest.Turn) providertest.Reply {
	var text strings.Builder
	for _, m := range t.Messages {
		if m.Role == "user" {
			text.WriteString(m.Text + "\n")
		}
	}
	prompt := text.String()
	rng := w.rand(prompt)
	var v any
	switch t.Agent {
	case providertest.AgentPlan:
		v = map[string]any{"preferences": w.items(rng, 4, "plan item"), "constraints": w.items(rng, 4, "plan item"),
			"evaluation_criteria": w.items(rng, 4, "plan item"), "summary": w.words(rng, "summary")}
	case providertest.AgentHypothesis:
		id := "h-?"
		if m := reNewID.FindStringSubmatch(prompt); m != nil {
			id = m[1]
		}
		q := w.newQuality(rng, prompt)
		title := research.Shorten(id+" "+w.words(rng, "title"), 100)
		w.mu.Lock()
		w.quality[title] = q
		w.mu.Unlock()
		v = map[string]any{"title": title, "statement": w.words(rng, "statement"), "rationale": w.words(rng, "rationale"),
			"testable_predictions": w.items(rng, 3, "prediction")}
	case providertest.AgentReview, providertest.AgentDeepVerification:
		q := 0.0
		if m := reReviewed.FindStringSubmatch(prompt); m != nil {
			q = w.qualityOf(m[1])
		}
		mark := func() float64 { return math.Round(10*min(10, max(0, 5.5+1.2*q+rng.NormFloat64()))) / 10 }
		scores := map[string]float64{"novelty": mark(), "plausibility": mark(), "testability": mark(), "safety": 9}
		verdict := research.VerdictOf((scores["novelty"] + scores["plausibility"] + scores["testability"]) / 3)
		r := map[string]any{"scores": scores, "critique": w.words(rng, "critique"), "verdict": verdict}
		if t.Agent == providertest.AgentDeepVerification {
			var as []map[string]string
			for range 4 {
				as = append(as, map[string]string{"text": w.words(rng, "title"), "verdict": "holds", "note": w.words(rng, "assumption")})
			}
			r["assumptions"] = as
		}
		v = r
	case providertest.AgentComparison:
		qs := map[string]float64{}
		for _, m := range reSide.FindAllStringSubmatch(prompt, -1) {
			qs[m[1]] = w.qualityOf(m[2])
		}
		winner := "B"
		if rng.Float64() < 1/(1+math.Exp(-(qs["A"]-qs["B"]))) {
			winner = "A"
		}
		v = map[string]any{"winner": winner, "reasoning": w.words(rng, "reasoning")}
	case providertest.AgentMetaReview:
		v = map[string]any{"critiques": w.items(rng, 4, "meta item"), "strengths": w.items(rng, 3, "meta item"),
			"feedback": w.words(rng, "feedback"), "delegations": []any{}}
	case providertest.AgentOverview:
		var themes []map[string]any
		for _, m := range reCluster.FindAllStringSubmatch(prompt, -1) {
			themes = append(themes, map[string]any{"title": w.words(rng, "title"), "hypotheses": strings.Split(m[1], ", "), "note": w.words(rng, "theme note")})
		}
		v = map[string]any{"summary": w.words(rng, "overview"), "themes": append([]map[string]any{}, themes...),
			"open_questions": w.items(rng, 4, "prediction"), "suggested_experiments": w.items(rng, 4, "prediction")}
	default:
		return t.Default
	}
	out, _ := json.Marshal(v)
	return providertest.Reply{Text: string(out)}
}

// newQuality is a new hypothesis' hidden quality: drawn by the strategy, as the offline
// simulator draws it, or from its parents by the kind of evolution.
func (w *world) newQuality(rng *rand.Rand, prompt string) float64 {
	if parents := reParent.FindAllStringSubmatch(prompt, -1); len(parents) > 0 {
		var sum, best float64
		best = math.Inf(-1)
		for _, p := range parents {
			q := w.qualityOf(p[1])
			sum += q
			best = max(best, q)
		}
		mean := sum / float64(len(parents))
		kind := ""
		if m := reKind.FindStringSubmatch(prompt); m != nil {
			kind = m[1]
		}
		switch kind {
		case "enhancement through grounding", "improvement of feasibility":
			return mean + 0.15 + 0.4*rng.NormFloat64()
		case "combination":
			return best + 0.1 + 0.5*rng.NormFloat64()
		case "simplification":
			return mean + 0.3*rng.NormFloat64()
		}
		return mean + 0.8*rng.NormFloat64()
	}
	mean := 0.0
	if m := reStrategy.FindStringSubmatch(prompt); m != nil && m[1] != "literature exploration" {
		mean = 0.1
	}
	return mean + rng.NormFloat64()
}

func (w *world) qualityOf(title string) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.quality[strings.TrimSpace(title)]
}

// rand is the world's randomness for one request: the same request, the same draws.
func (w *world) rand(prompt string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(prompt))
	return rand.New(rand.NewPCG(w.seed, h.Sum64()))
}

var worldVocabulary = strings.Fields(`the tau protein spreads between connected neurons through synaptic release
	and uptake while microglia clear aggregates in a manner that depends on activity state and local inflammation
	we propose that a mediator links these processes and that blocking it would slow propagation in vivo which
	can be measured by imaging seeded aggregates in mice across weeks under controlled conditions with known risk`)

func (w *world) words(rng *rand.Rand, field string) string {
	n := worldWords[field]
	out := make([]string, n)
	for i := range out {
		out[i] = worldVocabulary[rng.IntN(len(worldVocabulary))]
	}
	return strings.Join(out, " ")
}

func (w *world) items(rng *rand.Rand, n int, field string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = w.words(rng, field)
	}
	return out
}

// precision is the share of the session's top 10 that is in the true top 10 of its
// competing hypotheses, by hidden quality.
func (w *world) precision(v StateView) float64 {
	var competing []string
	for _, e := range v.Hypotheses {
		if e.Excluded == "" {
			competing = append(competing, e.Title)
		}
	}
	if len(competing) < 10 {
		return 0
	}
	session := competing[:10] // the ranking, best first
	truth := slices.Clone(competing)
	sort.SliceStable(truth, func(i, j int) bool { return w.qualityOf(truth[i]) > w.qualityOf(truth[j]) })
	hit := 0
	for _, t := range session {
		if slices.Contains(truth[:10], t) {
			hit++
		}
	}
	return float64(hit) / 10
}
