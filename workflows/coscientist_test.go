package workflows

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// TestEveryAgentAtWork runs a session long enough for every agent to act, and checks each
// one's step: the plan, generation by several strategies, reviews (deep verification
// included), proximity, the tournament with debates, evolution with lineage, meta-reviews
// feeding the next prompts, and the final overview.
func TestEveryAgentAtWork(t *testing.T) {
	h := newHarness(t, 0, nil)
	req := goal(24)
	req.Config.ReviewTypes = []string{"initial", "deep_verification"}
	req.Config.DebateShare = 0.5 // debates are off by default (BENCHMARKS.md): turn them on
	res := h.run(req)
	if res.State != session.Completed {
		t.Fatalf("result %+v", res)
	}
	st := query[StateView](h, QueryState, Page{Limit: MaxPageLimit})
	for _, a := range st.Agents {
		if a.Succeeded == 0 {
			t.Errorf("agent %s never succeeded: %+v", a.Agent, a)
		}
	}
	if st.Plan == "" {
		t.Error("no research plan")
	}
	strategies, evolved := map[string]bool{}, 0
	for _, e := range st.Hypotheses {
		switch e.Origin {
		case "generation":
			strategies[e.Strategy] = true
		case "evolution":
			evolved++
			if !slices.Contains(research.EvolutionKinds, e.Strategy) || len(e.Parents) == 0 {
				t.Errorf("evolved %s has kind %q parents %v", e.ID, e.Strategy, e.Parents)
			}
			for _, p := range e.Parents {
				if p >= e.ID {
					t.Errorf("%s evolved from %s, which came later", e.ID, p)
				}
			}
			body, err := h.store.Hypothesis(t.Context(), res.SessionID, e.ID)
			if err != nil || !slices.Equal(body.Parents, e.Parents) {
				t.Errorf("stored %s: parents %v, %v", e.ID, body.Parents, err)
			}
		}
	}
	if len(strategies) < 3 || evolved == 0 {
		t.Errorf("strategies %v, evolved %d: want at least 3 strategies and some evolution", strategies, evolved)
	}
	p := query[session.Progress](h, QueryProgress)
	if p.Debates == 0 || p.MatchesPlayed <= p.Debates || p.MetaReviews == 0 {
		t.Errorf("progress %+v: want debates among the matches, and meta-reviews", p)
	}
	if len(st.MetaReview) == 0 {
		t.Error("the state query shows no meta-review critique")
	}

	// Deep verification decomposed hypotheses into assumptions.
	reviews, err := h.store.Reviews(t.Context(), res.SessionID, st.Hypotheses[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	deep := slices.IndexFunc(reviews, func(r research.Review) bool { return r.Type == "deep_verification" })
	if deep < 0 || len(reviews[deep].Assumptions) == 0 {
		t.Errorf("no deep verification with assumptions for %s: %+v", st.Hypotheses[0].ID, reviews)
	}

	// The meta-review of a round reaches the prompts of the next one.
	meta, err := h.store.MetaReview(t.Context(), res.SessionID, 1)
	if err != nil || len(meta.Critiques) == 0 {
		t.Fatalf("meta-review of round 1: %+v, %v", meta, err)
	}
	h.mu.Lock()
	var later []activities.GenerateInput
	for _, s := range h.starts {
		if s.activity == "Generate" && s.input.Context.MetaReviewRound >= 1 {
			later = append(later, s.input)
		}
	}
	h.mu.Unlock()
	if len(later) == 0 {
		t.Fatal("no generation turn carried a meta-review")
	}
	turn, ok, err := h.store.Turn(t.Context(), res.SessionID, later[0].TurnID)
	if err != nil || !ok || !strings.Contains(turn.Prompt, meta.Critiques[0]) {
		t.Errorf("the prompt of %s does not carry the critique %q:\n%s", later[0].TurnID, meta.Critiques[0], turn.Prompt)
	}

	if _, err := h.store.Overview(t.Context(), res.SessionID); err != nil {
		t.Errorf("no research overview: %v", err)
	}
	report, err := os.ReadFile(res.ReportPath)
	if err != nil || !strings.Contains(string(report), "Research overview") || !strings.Contains(string(report), "elo.svg") {
		t.Errorf("report lacks the overview or the Elo chart: %v", err)
	}
}

// unsafeModel gives one hypothesis a failing safety mark in every review.
type unsafeModel struct {
	*simulator.Offline
	victim string
}

// Answer answers with the methods of unsafeModel, which change some of the simulator's answers.
func (m unsafeModel) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, m, q)
}

func (m unsafeModel) Review(ctx context.Context, req research.ReviewRequest) (research.Review, research.Usage, error) {
	r, u, err := m.Offline.Review(ctx, req)
	if req.Hypothesis.ID == m.victim {
		r.Scores.Safety = 1
	}
	return r, u, err
}

func TestUnsafeHypothesisExcluded(t *testing.T) {
	h := newHarness(t, 0, unsafeModel{&simulator.Offline{}, "h-0002"})
	res := h.run(goal(12))
	st := query[StateView](h, QueryState, Page{Limit: MaxPageLimit})
	i := slices.IndexFunc(st.Hypotheses, func(e session.Entry) bool { return e.ID == "h-0002" })
	if i < 0 {
		t.Fatal("h-0002 is missing")
	}
	e := st.Hypotheses[i]
	if !strings.HasPrefix(e.Excluded, "unsafe: ") || !strings.Contains(e.Excluded, "standard floor 3.5") {
		t.Fatalf("h-0002 excluded %q; want the unsafe reason", e.Excluded)
	}
	if e.Wins+e.Losses != 0 || slices.ContainsFunc(res.Top, func(x session.Entry) bool { return x.ID == "h-0002" }) {
		t.Errorf("the unsafe hypothesis played (%d-%d) or ranks in the top", e.Wins, e.Losses)
	}
	if p := query[session.Progress](h, QueryProgress); p.Excluded != 1 {
		t.Errorf("excluded %d, want 1", p.Excluded)
	}
}

// copycat makes one hypothesis a word-for-word copy of another.
type copycat struct {
	*simulator.Offline
	copy, of string
	st       interface {
		Hypothesis(context.Context, string, string) (research.Hypothesis, error)
	}
	session string
}

// Answer answers with the methods of copycat, which change some of the simulator's answers.
func (m copycat) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, m, q)
}

func (m copycat) Generate(ctx context.Context, req research.GenerateRequest) (research.Hypothesis, research.Usage, error) {
	h, u, err := m.Offline.Generate(ctx, req)
	if req.HypothesisID == m.copy {
		orig, oerr := m.st.Hypothesis(ctx, m.session, m.of)
		if oerr != nil {
			return h, u, oerr
		}
		orig.ID = h.ID
		return orig, u, nil
	}
	return h, u, err
}

func TestNearDuplicateExcluded(t *testing.T) {
	h := newHarness(t, 0, nil)
	h.acts.Models["offline"] = copycat{Offline: &simulator.Offline{}, copy: "h-0006", of: "h-0001", st: h.store, session: "default-test-workflow-id"}
	h.run(goal(8))
	st := query[StateView](h, QueryState, Page{Limit: MaxPageLimit})
	i := slices.IndexFunc(st.Hypotheses, func(e session.Entry) bool { return e.ID == "h-0006" })
	if i < 0 || !strings.HasPrefix(st.Hypotheses[i].Excluded, "near-duplicate of h-0001") {
		t.Fatalf("h-0006: %+v; want excluded as a near-duplicate of h-0001", st.Hypotheses[i])
	}
	for _, e := range st.Hypotheses {
		if e.ID != "h-0006" && e.Excluded != "" {
			t.Errorf("%s excluded too: %s", e.ID, e.Excluded)
		}
	}
}

// TestBudgetSuspendsAndResumes: a spent token budget suspends the session with the reason;
// resume is refused until the budget is raised; then the session carries on to the end.
func TestBudgetSuspendsAndResumes(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	req := goal(12)
	req.Config.TokenBudget = 6000
	h.at(time.Hour, func() {
		st := query[Status](h, QueryStatus)
		if st.State != session.Suspended || !strings.HasPrefix(st.Reason, "token budget reached: ") {
			t.Errorf("status %+v; want suspended, token budget reached", st)
		}
		h.update(Resume, nil, func(_ Status, err error) {
			if err == nil || !strings.Contains(err.Error(), "cannot resume: token budget reached") {
				t.Errorf("resume on a spent budget: %v", err)
			}
		})
		h.update(SetBudget, map[string]int{"token_budget": -5}, func(_ Status, err error) {
			if err == nil || !strings.Contains(err.Error(), "must not be negative") {
				t.Errorf("a negative budget: %v", err)
			}
		})
		h.mustUpdate(SetBudget, map[string]int{"token_budget": 0})
		h.mustUpdate(Resume, nil)
	})
	res := h.run(req)
	if res.StopReason != "reached max_hypotheses (12)" || res.Hypotheses != 12 {
		t.Fatalf("result %q with %d hypotheses", res.StopReason, res.Hypotheses)
	}
	var suspended, raised bool
	for _, e := range h.history() {
		suspended = suspended || (e.Kind == session.EventTransition && strings.HasPrefix(e.Detail, "token budget reached"))
		raised = raised || (e.Command == SetBudget && e.Accepted != nil && *e.Accepted)
	}
	if !suspended || !raised {
		t.Errorf("history: suspended for budget %v, budget raised %v", suspended, raised)
	}
}

// favourite is a judge with a fixed taste: the lower id always wins, so the top of the
// ranking settles and the session converges.
type favourite struct{ *simulator.Offline }

// Answer answers with the methods of favourite, which change some of the simulator's answers.
func (m favourite) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, m, q)
}

func (m favourite) Compare(ctx context.Context, req research.CompareRequest) (research.Comparison, research.Usage, error) {
	c, u, err := m.Offline.Compare(ctx, req)
	c.Winner = min(req.A.ID, req.B.ID)
	return c, u, err
}

func (m favourite) Debate(ctx context.Context, req research.DebateRequest) (research.DebateAnswer, research.Usage, error) {
	d, u, err := m.Offline.Debate(ctx, req)
	if d.Winner != "" {
		d.Winner = min(req.A.ID, req.B.ID)
	}
	return d, u, err
}

func TestConvergence(t *testing.T) {
	h := newHarness(t, 0, favourite{&simulator.Offline{}})
	res := h.run(goal(400))
	if !strings.HasPrefix(res.StopReason, "converged: the top 10 stayed the same and its boundary stopped narrowing for 4 rounds") {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	if res.Hypotheses >= 400 {
		t.Errorf("%d hypotheses: a converged session should stop well short of its maximum", res.Hypotheses)
	}
}

// TestScientistCommands: add-hypothesis, review and feedback, valid and invalid, by update
// and by signal; none of the invalid ones harms the session.
func TestScientistCommands(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	score := 9.0
	h.at(2*time.Second, func() {
		h.update(AddHypothesis, map[string]any{"title": "Microglial pruning spreads tau", "statement": "Microglia carry tau between synapses.",
			"testable_predictions": []string{"Depleting microglia slows spread"}}, func(st Status, err error) {
			if err != nil || !strings.HasPrefix(st.Detail, "added as h-") {
				t.Errorf("add-hypothesis: %+v, %v", st, err)
			}
		})
		h.update(AddHypothesis, map[string]any{"title": "No predictions", "statement": "S"}, func(_ Status, err error) {
			if err == nil || !strings.Contains(err.Error(), "no testable predictions") {
				t.Errorf("add-hypothesis without predictions: %v", err)
			}
		})
		h.update(Review, map[string]any{"hypothesis_id": "h-0999", "score": 5}, func(_ Status, err error) {
			if err == nil || !strings.Contains(err.Error(), `no hypothesis "h-0999"`) {
				t.Errorf("review of a missing hypothesis: %v", err)
			}
		})
		h.mustUpdate(Feedback, map[string]string{"toward": "in vivo models", "away": "cell lines"})
		h.env.SignalWorkflow(Feedback, map[string]string{"sideways": "x"}) // rejected, recorded
	})
	h.at(10*time.Second, func() { // once h-0001 exists
		h.mustUpdate(Review, map[string]any{"hypothesis_id": "h-0001", "score": score, "critique": "Strong mechanism."})
	})
	res := h.run(goal(12))
	if res.State != session.Completed {
		t.Fatalf("result %+v", res)
	}
	st := query[StateView](h, QueryState, Page{Limit: MaxPageLimit})
	i := slices.IndexFunc(st.Hypotheses, func(e session.Entry) bool { return e.Origin == "scientist" })
	if i < 0 {
		t.Fatal("the scientist's hypothesis is not in the session")
	}
	mine := st.Hypotheses[i]
	if mine.Title != "Microglial pruning spreads tau" || mine.Reviews == 0 || mine.Wins+mine.Losses == 0 {
		t.Errorf("the scientist's hypothesis %+v: want it reviewed and played like any other", mine)
	}
	reviews, err := h.store.Reviews(t.Context(), res.SessionID, "h-0001")
	if err != nil || !slices.ContainsFunc(reviews, func(r research.Review) bool { return r.Reviewer == "ada" && r.Critique == "Strong mechanism." }) {
		t.Errorf("the scientist's review of h-0001 is not stored: %+v, %v", reviews, err)
	}
	h.mu.Lock()
	steered := false
	for _, s := range h.starts {
		if s.activity == "Generate" && slices.Contains(s.input.Context.Feedback, "toward: in vivo models") &&
			slices.Contains(s.input.Context.Feedback, "away from: cell lines") {
			steered = true
		}
	}
	h.mu.Unlock()
	if !steered {
		t.Error("no generation turn after the feedback carried it")
	}
	if !slices.ContainsFunc(h.history(), func(e session.Event) bool {
		return e.Command == Feedback && e.Via == "signal" && !*e.Accepted && strings.Contains(e.Detail, `does not take "sideways"`)
	}) {
		t.Error("the malformed feedback signal is not recorded as rejected")
	}
}

func TestUnsafeRefinementRefused(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	h.at(3*time.Second, func() {
		h.update(RefineGoal, map[string]string{"goal": "Design a bioweapon from tau aggregates"}, func(_ Status, err error) {
			if err == nil || !strings.Contains(err.Error(), "cannot refine-goal: research_goal: refused by the standard safety screen") {
				t.Errorf("an unsafe refinement: %v", err)
			}
		})
		h.env.SignalWorkflow(Terminate, nil)
	})
	h.run(goal(40))
	if st := query[StateView](h, QueryState); st.Goal != goal(0).ResearchGoal || len(st.Refinements) != 0 {
		t.Errorf("the unsafe refinement changed the session: goal %q, refinements %v", st.Goal, st.Refinements)
	}
}

func TestUnsafeGoalRefused(t *testing.T) {
	h := newHarness(t, 0, nil)
	req := goal(4)
	req.ResearchGoal = "Enhance the transmissibility of avian influenza in mammals"
	h.env.ExecuteWorkflow(ResearchSession, req, (*Carried)(nil))
	err := h.env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "refused by the standard safety screen") {
		t.Fatalf("error %v; want the safety screen's refusal", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.starts) != 0 {
		t.Errorf("an unsafe goal ran %d activities", len(h.starts))
	}
}

// refused is a provider that refuses the worker's key on every turn.
type refused struct{ *simulator.Offline }

// Answer answers with the methods of refused, which change some of the simulator's answers.
func (m refused) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, m, q)
}

func (refused) Plan(context.Context, research.PlanRequest) (research.Plan, research.Usage, error) {
	return research.Plan{}, research.Usage{}, temporal.NewNonRetryableApplicationError(
		"openai: 401 Unauthorized: check OPENAI_API_KEY in the worker's environment", activities.ErrProviderAuth, nil)
}

// TestProviderAuthSuspends: a provider that refuses the credentials suspends the session
// with its message, at once (no retries); after the fix, resume carries on.
func TestProviderAuthSuspends(t *testing.T) {
	h := newHarness(t, 0, refused{&simulator.Offline{}})
	h.at(time.Hour, func() {
		st := query[Status](h, QueryStatus)
		if st.State != session.Suspended || !strings.Contains(st.Reason, "refused the worker's credentials: openai: 401") {
			t.Errorf("status %+v; want suspended for the credentials", st)
		}
		h.acts.Models["offline"] = &simulator.Offline{} // the key is fixed
		h.mustUpdate(Resume, nil)
	})
	res := h.run(goal(8))
	if res.State != session.Completed || res.Hypotheses != 8 {
		t.Fatalf("result %+v", res)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	plans := 0
	for _, s := range h.starts {
		if s.activity == "Plan" {
			plans++
		}
	}
	if plans != 2 {
		t.Errorf("%d plan turns; want 2: the refused one, not retried, and the one after resume", plans)
	}
}

// parrot evolves every hypothesis into a word-for-word copy of its first parent: the most
// alike an evolved variant can be.
type parrot struct{ *simulator.Offline }

// Answer answers with the methods of parrot, which change some of the simulator's answers.
func (m parrot) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, m, q)
}

func (m parrot) Evolve(ctx context.Context, req research.EvolveRequest) (research.Hypothesis, research.Usage, error) {
	h, u, err := m.Offline.Evolve(ctx, req)
	if err != nil || len(req.Parents) == 0 {
		return h, u, err
	}
	p := req.Parents[0]
	h.Title, h.Statement, h.Rationale, h.Predictions = p.Title, p.Statement, p.Rationale, p.Predictions
	return h, u, nil
}

// TestEvolvedVariantsCompete: an evolved hypothesis is never excluded as a near-duplicate
// of its own ancestor, however alike they read: evolution adds variants that must compete
// with their parents (TestNearDuplicateExcluded: a copy of another's is excluded).
func TestEvolvedVariantsCompete(t *testing.T) {
	h := newHarness(t, 0, nil)
	h.acts.Models["offline"] = parrot{&simulator.Offline{}}
	h.run(goal(16))
	st := query[StateView](h, QueryState, Page{Limit: MaxPageLimit})
	evolved := 0
	for _, e := range st.Hypotheses {
		if e.Origin != "evolution" {
			continue
		}
		evolved++
		for _, p := range e.Parents {
			if strings.HasPrefix(e.Excluded, "near-duplicate of "+p) {
				t.Errorf("%s excluded as a near-duplicate of its parent: %s", e.ID, e.Excluded)
			}
		}
	}
	if evolved == 0 {
		t.Fatal("no hypothesis evolved; the test needs some")
	}
}
