package workflows

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/notify"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// priced is the offline model with a price: each call costs perToken dollars a token, or,
// with unpriced, comes back without a price as a model the price table lacks does.
type priced struct {
	simulator.Offline
	perToken float64
	unpriced bool
}

// Answer answers with the methods of priced, which price the simulator's answers.
func (m *priced) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, m, q)
}

// billed makes one call of the offline model and prices what it spent, as meter records it.
func billed[Q, T any](m *priced, call func(context.Context, Q) (T, research.Usage, error), ctx context.Context, req Q) (T, research.Usage, error) {
	v, u, err := call(ctx, req)
	if m.unpriced {
		u.Unpriced = u.Requests
	} else {
		u.CostUSD = float64(u.Tokens()) * m.perToken
	}
	return v, u, err
}

func (m *priced) Plan(ctx context.Context, req research.PlanRequest) (research.Plan, research.Usage, error) {
	return billed(m, m.Offline.Plan, ctx, req)
}

func (m *priced) Generate(ctx context.Context, req research.GenerateRequest) (research.Hypothesis, research.Usage, error) {
	return billed(m, m.Offline.Generate, ctx, req)
}

func (m *priced) Review(ctx context.Context, req research.ReviewRequest) (research.Review, research.Usage, error) {
	return billed(m, m.Offline.Review, ctx, req)
}

func (m *priced) Compare(ctx context.Context, req research.CompareRequest) (research.Comparison, research.Usage, error) {
	return billed(m, m.Offline.Compare, ctx, req)
}

func (m *priced) Debate(ctx context.Context, req research.DebateRequest) (research.DebateAnswer, research.Usage, error) {
	return billed(m, m.Offline.Debate, ctx, req)
}

func (m *priced) Evolve(ctx context.Context, req research.EvolveRequest) (research.Hypothesis, research.Usage, error) {
	return billed(m, m.Offline.Evolve, ctx, req)
}

func (m *priced) MetaReview(ctx context.Context, req research.MetaReviewRequest) (research.MetaReview, research.Usage, error) {
	return billed(m, m.Offline.MetaReview, ctx, req)
}

func (m *priced) Overview(ctx context.Context, req research.OverviewRequest) (research.Overview, research.Usage, error) {
	return billed(m, m.Offline.Overview, ctx, req)
}

// TestBudgetsHoldExactly: a session's budget is never overspent, though a round's calls
// run in parallel: each starts only if what was spent, what the calls in flight are
// expected to spend and its own estimate fit. At the limit the session suspends with the
// reason; it cannot resume until the budget is raised; then it carries on to the end. The
// cost shows in the queries, per agent too.
func TestBudgetsHoldExactly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget func(*research.Config)
		raise  map[string]any
		reason string
		spent  func(research.Usage, research.Config) bool // within the budget
	}{
		{"dollars", func(c *research.Config) { c.BudgetUSD = 0.05 }, map[string]any{"budget_usd": 0}, "budget reached: $",
			func(u research.Usage, c research.Config) bool { return u.CostUSD <= c.BudgetUSD }},
		{"tokens", func(c *research.Config) { c.TokenBudget = 20000 }, map[string]any{"token_budget": 0}, "token budget reached: ",
			func(u research.Usage, c research.Config) bool { return u.Tokens() <= c.TokenBudget }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &priced{perToken: 1e-6}
			h := newHarness(t, time.Second, m)
			hook := listen(t, h)
			req := goal(16)
			tc.budget(&req.Config)
			var atLimit research.Usage
			var reason string
			h.at(2*time.Hour, func() {
				st := query[Status](h, QueryStatus)
				v := query[StateView](h, QueryState, Page{})
				p := query[session.Progress](h, QueryProgress)
				atLimit, reason = v.Usage, st.Reason
				if st.State != session.Suspended || !strings.HasPrefix(st.Reason, tc.reason) {
					t.Errorf("status %s (%s); want suspended, %s...", st.State, st.Reason, tc.reason)
				}
				if p.CostUSD != v.Usage.CostUSD || p.BudgetUSD != req.Config.BudgetUSD || p.TokenBudget != req.Config.TokenBudget {
					t.Errorf("progress shows $%g of $%g and a budget of %d tokens; state $%g", p.CostUSD, p.BudgetUSD, p.TokenBudget, v.Usage.CostUSD)
				}
				var byAgent research.Usage
				for _, a := range v.Agents {
					byAgent = byAgent.Add(a.Usage)
				}
				if byAgent.Tokens() != v.Usage.Tokens() {
					t.Errorf("the agents spent %d tokens, the session %d", byAgent.Tokens(), v.Usage.Tokens())
				}
				h.update(Resume, nil, func(_ Status, err error) {
					if err == nil || !strings.Contains(err.Error(), "cannot resume: ") {
						t.Errorf("resume at the limit: %v", err)
					}
				})
				h.mustUpdate(SetBudget, tc.raise)
				h.mustUpdate(Resume, nil)
			})
			res := h.run(req)
			if !tc.spent(atLimit, req.Config) {
				t.Errorf("spent %+v at the limit; the budget is %d tokens, $%g", atLimit, req.Config.TokenBudget, req.Config.BudgetUSD)
			}
			// The limit was reached, not stopped short of by much: within one round's calls.
			if atLimit.Requests < 10 {
				t.Errorf("suspended after %d requests", atLimit.Requests)
			}
			if n := h.mostAtOnce(); n < 2 {
				t.Errorf("at most %d turns started at once; the test needs parallel calls", n)
			}
			if res.StopReason != "reached max_hypotheses (16)" || res.Hypotheses != 16 {
				t.Fatalf("result %q with %d hypotheses", res.StopReason, res.Hypotheses)
			}
			if !slices.ContainsFunc(h.history(), func(e session.Event) bool { return e.Kind == session.EventTransition && e.Detail == reason }) {
				t.Errorf("the history does not say why the session suspended (%q)", reason)
			}
			// The webhook heard that the session needed a person, why, and that it ended.
			got := hook.events()
			if len(got) != 2 || got[0].Event != "suspended" || got[0].Reason != reason || got[0].State != string(session.Suspended) ||
				got[1].Event != "completed" || got[1].Reason != res.StopReason || !strings.Contains(got[1].Text, res.SessionID) {
				t.Errorf("the webhook heard %+v; want the suspension for %q, then the completion", got, reason)
			}
		})
	}
}

// webhook is a lab's webhook, as a test server that keeps what it is told.
type webhook struct {
	mu   sync.Mutex
	seen []notify.Event
}

func (w *webhook) events() []notify.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

// listen gives the harness's worker a webhook and returns what the webhook hears.
func listen(t *testing.T, h *harness) *webhook {
	w := &webhook{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var e notify.Event
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			rw.WriteHeader(http.StatusBadRequest)
			return
		}
		w.mu.Lock()
		w.seen = append(w.seen, e)
		w.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	hook, err := notify.NewWebhook(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	hook.Text = true // the lab opted in (worker --notify-text): the tests read the reasons
	h.acts.Webhook = hook
	return w
}

// TestDollarBudgetOnAnUnpricedModel: a dollar budget cannot be kept on a model whose cost
// is unknown, so the session suspends after the first call says so, naming what to do.
func TestDollarBudgetOnAnUnpricedModel(t *testing.T) {
	h := newHarness(t, time.Second, &priced{unpriced: true})
	req := goal(12)
	req.Config.BudgetUSD = 5
	h.at(time.Hour, func() {
		st := query[Status](h, QueryStatus)
		v := query[StateView](h, QueryState, Page{})
		if st.State != session.Suspended || !strings.Contains(st.Reason, "came back without a price") || !strings.Contains(st.Reason, "--prices") {
			t.Errorf("status %s (%s); want suspended for an unpriced model", st.State, st.Reason)
		}
		if v.Usage.Requests != 1 || v.Usage.Unpriced != 1 {
			t.Errorf("usage %+v: the session should stop after its first call", v.Usage)
		}
		h.mustUpdate(Terminate, nil)
	})
	h.run(req)
}
