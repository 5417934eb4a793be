package workflows

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// envClock is the workflow test environment's clock, for the fake provider: its batches
// take their time on the session's clock.
type envClock struct{ h *harness }

func (c envClock) Now() time.Time { return c.h.env.Now() }

// batchHarness is a harness whose "openai" and "anthropic" providers are the fake APIs,
// batches taking delay on the workflow clock.
func batchHarness(t testing.TB, opts providertest.Options) (*harness, *providertest.Server) {
	t.Helper()
	h := newHarness(t, 0, nil)
	opts.Clock = envClock{h}
	f := providertest.Start(t, opts)
	env := map[string]string{
		"OPENAI_API_KEY": f.OpenAIKey(), "OPENAI_BASE_URL": f.OpenAIBaseURL(),
		"ANTHROPIC_API_KEY": f.AnthropicKey(), "ANTHROPIC_BASE_URL": f.AnthropicBaseURL(),
	}
	h.acts.Providers = &provider.Registry{Env: func(k string) string { return env[k] }, Prices: provider.DefaultPrices()}
	return h, f
}

// TestBatchedSession: with batch on, a session's generation, evolution, reviews and
// matches go through the provider's batch API, on both providers, each batch submitted
// once and read back into the right turns; while a batch runs the session says so; a
// request the batch failed is made as an ordinary call; the batched calls cost half.
func TestBatchedSession(t *testing.T) {
	for _, tc := range []struct{ provider, model, batches string }{
		{"openai", "gpt-6-sol", "openai/completed"},
		{"anthropic", "claude-sonnet-5-5", "anthropic/ended"},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			failed := 0
			h, f := batchHarness(t, providertest.Options{BatchDelay: 40 * time.Minute, Seed: 7,
				FailBatchRequest: func(r providertest.BatchRequest) bool {
					if r.CustomID == "t1" && failed < 2 {
						failed++
						return true
					}
					return false
				}})
			req := goal(10)
			req.Config.Provider, req.Config.Model, req.Config.Batch = tc.provider, tc.model, true
			var waiting *session.BatchWait
			var status Status
			h.at(20*time.Minute, func() {
				waiting = query[session.Progress](h, QueryProgress).Batch
				status = query[Status](h, QueryStatus)
			})
			res := h.run(req)
			if res.State != session.Completed || res.Hypotheses != 10 {
				t.Fatalf("result: %s with %d hypotheses (%s)", res.State, res.Hypotheses, res.StopReason)
			}
			if waiting == nil || status.Batch == nil || waiting.Requests == 0 || waiting.ID == "" || waiting.What == "" {
				t.Fatalf("20 minutes in, progress shows batch %+v and status %+v; want the batch the session waits for", waiting, status.Batch)
			}
			st := f.Stats()
			var batch providertest.Usage
			var ordinary providertest.Usage
			if tc.provider == "openai" {
				batch, ordinary = st.OpenAIBatch, st.OpenAI
			} else {
				batch, ordinary = st.AnthropicBatch, st.Anthropic
			}
			// Every batch the session submitted ended, and the provider saw no other; and
			// the fake's reviews were read as reviews (its safety marks never exclude one).
			submitted := 0
			for _, e := range h.history() {
				if strings.HasPrefix(e.Detail, "submitted ") && strings.Contains(e.Detail, " as batch ") {
					submitted++
				}
				if strings.Contains(e.Detail, "excluded: unsafe") {
					t.Errorf("%s: the fake's reviews score safety 9", e.Detail)
				}
			}
			if submitted == 0 || st.Batches[tc.batches] != submitted {
				t.Errorf("the session submitted %d batches; the provider has %v", submitted, st.Batches)
			}
			// The plan, the meta-reviews and the overview are ordinary calls, and so are
			// the two requests the provider failed in their batches.
			v := query[StateView](h, QueryState, Page{})
			if v.Usage.Batched != batch.Requests || v.Usage.Batched < 30 {
				t.Errorf("%d requests answered from batches; the provider answered %d in batches (and failed %d)", v.Usage.Batched, batch.Requests, failed)
			}
			if want := v.Usage.Requests - v.Usage.Batched - st.Embeddings.Requests; ordinary.Requests != want {
				t.Errorf("the provider answered %d ordinary calls; the session made %d", ordinary.Requests, want)
			}
			if ordinary.Requests < 2+3 { // the plan, a meta-review a round, the overview, and the two failed
				t.Errorf("only %d ordinary calls", ordinary.Requests)
			}
			if failed != 2 {
				t.Errorf("%d requests failed in their batches; want 2", failed)
			}
			// The batched calls cost half: the session's cost is what the provider's
			// counts cost, the batched ones at half the price.
			p := provider.DefaultPrices()
			cost := p.Cost(tc.model, research.Usage{PromptTokens: ordinary.Input, CachedTokens: ordinary.CacheRead, CacheWriteTokens: ordinary.CacheWrite, CompletionTokens: ordinary.Output}) +
				p.Cost(tc.model, research.Usage{PromptTokens: batch.Input, CachedTokens: batch.CacheRead, CacheWriteTokens: batch.CacheWrite, CacheWriteLongTokens: batch.CacheWriteLong, CompletionTokens: batch.Output, Batched: 1}) +
				p.Cost(provider.DefaultEmbeddingModel, research.Usage{PromptTokens: st.Embeddings.Tokens})
			if diff := v.Usage.CostUSD - cost; diff > 1e-9 || diff < -1e-9 {
				t.Errorf("the session's cost $%g; the provider's counts cost $%g", v.Usage.CostUSD, cost)
			}
		})
	}
}

// TestBatchesGoGrouped: a batch's requests that share a prefix go in leaders first. A
// review step's turns are made hypothesis by hypothesis, each by the two review types
// (whose instructions, part of the shared prefix, differ): in the batch the first
// initial review and the first full one lead, then the other initial reviews together
// and then the other full ones. With Activities.KeepBatchOrder (the benchmark's control)
// they alternate, as made. The fake answers a batch's requests in the order they came.
func TestBatchesGoGrouped(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep order %v", keep), func(t *testing.T) {
			var mu sync.Mutex
			kinds := map[string][]bool{} // by batch: each review request's type is full
			answer := func(turn providertest.Turn) providertest.Reply {
				if turn.BatchID != "" && turn.Agent == providertest.AgentReview && len(turn.Messages) > 0 {
					mu.Lock()
					kinds[turn.BatchID] = append(kinds[turn.BatchID], strings.Contains(turn.Messages[0].Text, "A full review weighs"))
					mu.Unlock()
				}
				return turn.Default
			}
			h, _ := batchHarness(t, providertest.Options{Answer: answer, Seed: 7})
			h.acts.KeepBatchOrder = keep
			req := goal(4)
			req.Config.Provider, req.Config.Model, req.Config.Batch = "anthropic", "claude-sonnet-5-5", true
			if res := h.run(req); res.State != session.Completed {
				t.Fatalf("result: %s (%s)", res.State, res.StopReason)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(kinds) == 0 {
				t.Fatal("no review went out in a batch")
			}
			for id, k := range kinds {
				switches := 0
				for i := 1; i < len(k); i++ {
					if k[i] != k[i-1] {
						switches++
					}
				}
				if !keep {
					full := 0
					for _, f := range k {
						if f {
							full++
						}
					}
					// Leaders first: an initial review, a full one, then the other
					// initial reviews, then the other full ones.
					want := []bool{false}
					if full > 0 {
						want = append(want, true)
					}
					for i := 1; i < len(k)-full; i++ {
						want = append(want, false)
					}
					for i := 1; i < full; i++ {
						want = append(want, true)
					}
					if full == 0 || full == len(k) || !slices.Equal(k, want) {
						t.Errorf("batch %s: review types in the order %v (true: full); want both types, leaders first: %v", id, k, want)
					}
				}
				if keep && switches != len(k)-1 {
					t.Errorf("batch %s: review types in the order %v; want them alternating, as made", id, k)
				}
			}
		})
	}
}

// TestTerminateCancelsTheBatch: a session terminated while it waits for a batch cancels
// the batch and ends without its answers.
func TestTerminateCancelsTheBatch(t *testing.T) {
	h, f := batchHarness(t, providertest.Options{BatchDelay: -1}) // a batch that never ends by itself
	req := goal(8)
	req.Config.Provider, req.Config.Model, req.Config.Batch = "openai", "gpt-6-sol", true
	h.at(3*time.Hour, func() {
		if p := query[session.Progress](h, QueryProgress); p.Batch == nil {
			t.Error("3 hours in, the session does not say it waits for a batch")
		}
		h.mustUpdate(Terminate, nil)
	})
	res := h.run(req)
	if res.State != session.Completed || !strings.HasPrefix(res.StopReason, "terminated") {
		t.Fatalf("result %s (%s)", res.State, res.StopReason)
	}
	st := f.Stats()
	if st.Batches["openai/cancelled"] != 1 || st.OpenAIBatch.Requests != 0 {
		t.Errorf("batches %v, %d requests answered in batches; want the one batch cancelled", st.Batches, st.OpenAIBatch.Requests)
	}
	if !slices.ContainsFunc(h.history(), func(e session.Event) bool { return strings.Contains(e.Detail, "cancelled: the session is ending") }) {
		t.Error("the history does not say the batch was cancelled")
	}
}

// TestCommandsWhileABatchWaits: a session waiting for a batch takes its commands: it
// suspends, its goal is refined, it resumes, and it finishes. The batch's turns run with
// what they asked (it is paid for); the refinement applies to the calls made after them.
func TestCommandsWhileABatchWaits(t *testing.T) {
	h, f := batchHarness(t, providertest.Options{BatchDelay: 2 * time.Hour})
	req := goal(8)
	req.Config.Provider, req.Config.Model, req.Config.Batch = "openai", "gpt-6-sol", true
	var waiting *session.BatchWait
	h.at(30*time.Minute, func() {
		waiting = query[session.Progress](h, QueryProgress).Batch
		h.mustUpdate(Suspend, nil)
		h.mustUpdate(RefineGoal, map[string]string{"focus": "only in vivo evidence"})
	})
	h.at(5*time.Hour, func() {
		if st := query[Status](h, QueryStatus); st.State != session.Suspended {
			t.Errorf("5 hours in the session is %s; it was suspended", st.State)
		}
		h.mustUpdate(Resume, nil)
	})
	res := h.run(req)
	if res.State != session.Completed || res.Hypotheses != 8 {
		t.Fatalf("result %s with %d hypotheses (%s)", res.State, res.Hypotheses, res.StopReason)
	}
	if waiting == nil {
		t.Fatal("the commands did not come while the session waited for a batch")
	}
	v := query[StateView](h, QueryState, Page{})
	if st := f.Stats(); v.Usage.Batched != st.OpenAIBatch.Requests || v.Usage.Batched < 20 {
		t.Errorf("%d of %d batched answers used", v.Usage.Batched, st.OpenAIBatch.Requests)
	}
	var refined, suspended bool
	for _, e := range h.history() {
		refined = refined || (e.Command == RefineGoal && e.Accepted != nil && *e.Accepted)
		suspended = suspended || (e.Command == Suspend && e.Accepted != nil && *e.Accepted)
	}
	if !refined || !suspended {
		t.Errorf("while the batch waited: suspend accepted %v, refinement accepted %v", suspended, refined)
	}
	// The turns after the batch carry the refinement.
	var later bool
	for _, s := range h.starts {
		later = later || (s.activity == "Generate" && slices.Contains(s.input.Focus, "only in vivo evidence"))
	}
	if !later {
		t.Error("no generation after the refinement carries its focus")
	}
}

// TestNoBatchAPI: on an OpenAI-compatible server without the batch endpoints (a local
// one), a session with batch on makes its calls one by one, and after the first refusal
// stops asking for batches.
func TestNoBatchAPI(t *testing.T) {
	f := providertest.New(providertest.Options{})
	refused := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/files") || strings.HasPrefix(r.URL.Path, "/v1/batches") {
			mu.Lock()
			refused++
			mu.Unlock()
			http.NotFound(w, r)
			return
		}
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h := newHarness(t, 0, nil)
	env := map[string]string{"OPENAI_API_KEY": f.OpenAIKey(), "OPENAI_BASE_URL": srv.URL + "/v1"}
	h.acts.Providers = &provider.Registry{Env: func(k string) string { return env[k] }, Prices: provider.DefaultPrices()}
	req := goal(8)
	req.Config.Provider, req.Config.Model, req.Config.Batch = "openai", "gpt-6-sol", true
	res := h.run(req)
	if res.State != session.Completed || res.Hypotheses != 8 {
		t.Fatalf("result %s with %d hypotheses (%s)", res.State, res.Hypotheses, res.StopReason)
	}
	if st := f.Stats(); refused != 1 || st.OpenAIBatch.Requests != 0 || res.Usage.Batched != 0 || st.OpenAI.Requests == 0 {
		t.Errorf("%d batch requests refused, %d answered in batches, %d ordinary; want one refusal and every call ordinary", refused, st.OpenAIBatch.Requests, st.OpenAI.Requests)
	}
	if !slices.ContainsFunc(h.history(), func(e session.Event) bool { return strings.HasPrefix(e.Detail, "no batches for this session: ") }) {
		t.Error("the history does not say the provider has no batches")
	}
}

// TestStepBatchInput: a turn that went out in its step's batch runs with the input it was
// submitted with, naming the batch; any other makes its input as it starts; and a step
// whose inputs name new hypotheses (kept) keeps an input made for a batch that did not go
// out. The submitted request itself is left as it went out.
func TestStepBatchInput(t *testing.T) {
	const name = "round-1-hypotheses-1"
	fresh := func(int) activities.GenerateInput { return activities.GenerateInput{HypothesisID: "h-fresh"} }
	for _, tc := range []struct {
		name              string
		inBatch           bool
		batch             string
		kept              bool
		wantID, wantBatch string
	}{
		{"in a batch that went out", true, name, false, "h-0001", name},
		{"in a batch that did not go out", true, "", false, "h-fresh", ""},
		{"not in the batch", false, name, false, "h-fresh", ""},
		{"kept, in a batch that went out", true, name, true, "h-0001", name},
		{"kept, in a batch that did not go out", true, "", true, "h-0001", ""},
		{"kept, not in the batch", false, name, true, "h-fresh", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			submitted := &activities.GenerateInput{HypothesisID: "h-0001"}
			b := &stepBatch[activities.GenerateInput]{made: []*activities.GenerateInput{nil}, name: tc.batch, fresh: fresh}
			if tc.inBatch {
				b.made[0] = submitted
			}
			got := b.input(0)
			if tc.kept {
				got = b.kept(0)
			}
			if got.HypothesisID != tc.wantID || got.Batch != tc.wantBatch {
				t.Errorf("input %s in batch %q; want %s in batch %q", got.HypothesisID, got.Batch, tc.wantID, tc.wantBatch)
			}
			if submitted.Batch != "" {
				t.Errorf("the submitted request now names batch %q", submitted.Batch)
			}
		})
	}
}

// TestBatchRequest: each input a batch takes goes out in its own field of the request,
// and its turn is the one that names the batch.
func TestBatchRequest(t *testing.T) {
	gen, evo, rev, cmp := &activities.GenerateInput{}, &activities.EvolveInput{}, &activities.ReviewInput{}, &activities.CompareInput{}
	for _, tc := range []struct {
		name string
		req  func() (activities.BatchTurn, *activities.Turn)
		want activities.BatchTurn
		turn *activities.Turn
	}{
		{"generate", func() (activities.BatchTurn, *activities.Turn) { return request(gen) }, activities.BatchTurn{Generate: gen}, &gen.Turn},
		{"evolve", func() (activities.BatchTurn, *activities.Turn) { return request(evo) }, activities.BatchTurn{Evolve: evo}, &evo.Turn},
		{"review", func() (activities.BatchTurn, *activities.Turn) { return request(rev) }, activities.BatchTurn{Review: rev}, &rev.Turn},
		{"compare", func() (activities.BatchTurn, *activities.Turn) { return request(cmp) }, activities.BatchTurn{Compare: cmp}, &cmp.Turn},
	} {
		got, turn := tc.req()
		if got != tc.want || turn != tc.turn {
			t.Errorf("%s: request %+v, turn %p; want %+v, turn %p", tc.name, got, turn, tc.want, tc.turn)
		}
	}
}
