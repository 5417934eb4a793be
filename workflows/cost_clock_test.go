package workflows

// The cost benchmark's clock that moves (turnClock) and the per-agent token figures it
// records for the forecast (writeFigures).

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/cosci-dev/cosci/internal/research"
)

// turnMedians is the median latency of one model turn, by activity, on a model of pace 1:
// the time to the first token (2 to 3 s on a long prompt) and the answer at the 40 to 60
// tokens a second current models write, with the reasoning a thinking model does first.
//   - Compare 8 s: a judgement of about 250 tokens after two hypotheses.
//   - Plan 15 s: a short structured plan from the goal.
//   - Review 20 s: a 220-token review over a long prompt (the citation checks).
//   - Generate, Evolve 30 s: a 450-token hypothesis, with more reasoning before it.
//   - Debate 45 s: several turns (advocates and a judge) in one activity.
//   - MetaReview 40 s: a 450-token synthesis over many reviews.
//   - Overview 60 s: the longest answer (700 tokens) over the whole session.
//   - Proximity 1 s: embeddings, no answer to write.
var turnMedians = map[string]time.Duration{
	"Compare": 8 * time.Second, "Plan": 15 * time.Second, "Review": 20 * time.Second,
	"Generate": 30 * time.Second, "Evolve": 30 * time.Second, "Debate": 45 * time.Second,
	"MetaReview": 40 * time.Second, "Overview": 60 * time.Second, "Proximity": time.Second,
}

// turnSpread is the σ of the latencies' log-normal distribution: with 0.6 a tenth of the
// turns take more than 2.2 times the median, as a loaded API's tail does.
const turnSpread = 0.6

// modelPace scales the medians by model: how long a model takes against the pace-1
// figures. GPT-6 Sol and Claude Sonnet 5.5 both write at about 50 tokens a second, so
// both are 1; a model not named here is 1 too. -cost.latency scales them all.
func modelPace(model string) float64 {
	if p, ok := map[string]float64{"gpt-6-sol": 1, "claude-sonnet-5-5": 1}[model]; ok {
		return p
	}
	return 1
}

// turnClock makes every model turn of a session take a latency on the workflow clock: the
// test environment's mock of the activity waits the drawn time on that clock (AfterFn),
// then runs the real activity, whose requests reach the fake provider at the later time;
// the fake's caches and batches run on the same clock (batchHarness's envClock). Each
// activity draws from its own seeded generator, so the sequence of latencies an agent
// sees is the same in every run (which of two concurrent turns gets which draw is not).
type turnClock struct {
	scale float64

	mu   sync.Mutex
	rngs map[string]*rand.Rand
}

// draw is one turn's latency for the activity.
func (c *turnClock) draw(activity string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rngs == nil {
		c.rngs = map[string]*rand.Rand{}
	}
	rng := c.rngs[activity]
	if rng == nil {
		h := fnv.New64a()
		h.Write([]byte(activity))
		rng = rand.New(rand.NewPCG(30, h.Sum64()))
		c.rngs[activity] = rng
	}
	return time.Duration(c.scale * float64(turnMedians[activity]) * math.Exp(turnSpread*rng.NormFloat64()))
}

// mock makes the harness's current environment run the turns with their latencies.
func (c *turnClock) mock(h *harness) {
	for name, fn := range map[string]any{
		"Plan": h.acts.Plan, "Generate": h.acts.Generate, "Evolve": h.acts.Evolve, "Review": h.acts.Review,
		"Compare": h.acts.Compare, "Debate": h.acts.Debate, "Proximity": h.acts.Proximity,
		"MetaReview": h.acts.MetaReview, "Overview": h.acts.Overview,
	} {
		h.env.OnActivity(fn, mock.Anything, mock.Anything).AfterFn(func() time.Duration { return c.draw(name) }).Return(fn)
	}
}

// run is harness.run with the turns' latencies, and a clock that keeps going across
// continue-as-new: each new run's environment starts where the last one stopped (a new
// environment starts at the wall-clock time, which would make every cache young again).
func (c *turnClock) run(h *harness, req research.Request) Result {
	h.t.Helper()
	return h.runEach(req, func() { c.mock(h) })
}

// agentFigures is what a session's turns of one agent took, per request: the figures the
// forecast (internal/forecast) multiplies by a configuration's hypotheses and prices.
type agentFigures struct {
	RequestsPerHypothesis float64 `json:"requests_per_hypothesis"`
	PromptTokens          float64 `json:"prompt_tokens"`      // mean input tokens, cached or not
	CachedShare           float64 `json:"cached_share"`       // of the input tokens, served from cache
	CacheWriteTokens      float64 `json:"cache_write_tokens"` // mean input tokens written to the cache
	OutputTokens          float64 `json:"output_tokens"`
}

// figures is {model: {mode: {agent: figures}}}, mode "cache" or "cache+batch": the
// sessions at the model's own token counts (not the ×1.2 rows), the cache+batch one at
// the sweep's middle batch delay with the batches caching as the fake's cache does.
func figures(rows []costRow, delays []time.Duration) map[string]map[string]map[string]agentFigures {
	middle := delays[len(delays)/2]
	out := map[string]map[string]map[string]agentFigures{}
	for _, r := range rows {
		if r.scale != 1 || (r.kind == modeBatch && r.realistic && r.delay != middle) || (r.kind != modeCache && r.kind != modeBatch) {
			continue
		}
		agents := map[string]agentFigures{}
		for agent, u := range r.byAgent {
			n := float64(max(1, u.Requests))
			agents[agent] = agentFigures{
				RequestsPerHypothesis: float64(u.Requests) / float64(max(1, r.hypotheses)),
				PromptTokens:          float64(u.Input) / n,
				CachedShare:           u.CachedShare(),
				CacheWriteTokens:      float64(u.CacheWrite) / n,
				OutputTokens:          float64(u.Output) / n,
			}
		}
		if out[r.modelID] == nil {
			out[r.modelID] = map[string]map[string]agentFigures{}
		}
		out[r.modelID][r.kind] = agents
	}
	return out
}

// writeFigures writes the figures as indented JSON, making the file's directory.
func writeFigures(path string, rows []costRow, delays []time.Duration) error {
	data, err := json.MarshalIndent(figures(rows, delays), "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
