package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
)

const testGoal = "Find drug targets for tau propagation"

// debating wraps the offline simulator, counts its debate turns, and can name a winner
// that was not in the debate.
type debating struct {
	simulator.Offline
	calls     int
	badWinner bool
}

// Answer answers with the methods of debating, which change some of the simulator's answers.
func (d *debating) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, d, q)
}

func (d *debating) Debate(ctx context.Context, req research.DebateRequest) (research.DebateAnswer, research.Usage, error) {
	d.calls++
	ans, u, err := d.Offline.Debate(ctx, req)
	if d.badWinner && ans.Winner != "" {
		ans.Winner = "h-9999"
	}
	return ans, u, err
}

func turnOf(id string) Turn {
	return Turn{SessionID: "s-1", TurnID: id, Goal: testGoal, Provider: "offline", Seed: 7}
}

// run executes an activity and decodes its result into out (which may be nil).
func run(t *testing.T, env *testsuite.TestActivityEnvironment, fn, in, out any) error {
	t.Helper()
	v, err := env.ExecuteActivity(fn, in)
	if err != nil {
		return err
	}
	if out != nil {
		if err := v.Get(out); err != nil {
			t.Fatal(err)
		}
	}
	return nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// errorType is the application error type of an activity failure, and whether it may be retried.
func errorType(err error) (string, bool) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return "", true
	}
	return app.Type(), !app.NonRetryable()
}

// seed generates hypotheses h-0001..h-000n in session s-1.
func seed(t *testing.T, env *testsuite.TestActivityEnvironment, a *Activities, n int) []string {
	t.Helper()
	var ids []string
	for i := 1; i <= n; i++ {
		in := generateInput(fmt.Sprintf("generate-h-%04d", i))
		in.HypothesisID = fmt.Sprintf("h-%04d", i)
		must(t, run(t, env, a.Generate, in, nil))
		ids = append(ids, in.HypothesisID)
	}
	return ids
}

func TestPlan(t *testing.T) {
	env, a := newActivities(t, &simulator.Offline{})
	var first, again PlanResult
	must(t, run(t, env, a.Plan, turnOf("plan"), &first))
	must(t, run(t, env, a.Plan, turnOf("plan"), &again))
	p, err := a.Store.Plan(t.Context(), "s-1")
	if err != nil {
		t.Fatal(err)
	}
	if first.Summary == "" || first.Summary != p.Summary || again != first || first.Usage.Requests != 1 {
		t.Errorf("plan result %+v, again %+v, stored %+v", first, again, p)
	}
	if len(p.Criteria) < 3 || !strings.Contains(strings.Join(p.Criteria, " "), "tau propagation") {
		t.Errorf("stored plan %+v", p)
	}
	turn, ok, _ := a.Store.Turn(t.Context(), "s-1", "plan")
	if !ok || turn.Agent != AgentSupervisor || !strings.Contains(turn.Prompt, testGoal) {
		t.Errorf("turn record %+v", turn)
	}
}

// TestContextInPrompts: Generate and Review put the plan and the latest meta-review in
// their prompts when ContextRef asks for them, and leave them out when it does not.
func TestContextInPrompts(t *testing.T) {
	env, a := newActivities(t, &simulator.Offline{})
	ids := seed(t, env, a, 3)
	must(t, run(t, env, a.Plan, turnOf("plan"), nil))
	for _, id := range ids {
		must(t, run(t, env, a.Review, ReviewInput{Turn: turnOf("review-" + id), HypothesisID: id, Type: research.ReviewFull}, nil))
	}
	must(t, run(t, env, a.MetaReview, MetaReviewInput{Turn: turnOf("meta-1"), Round: 1, Hypotheses: ids}, nil))
	plan, err := a.Store.Plan(t.Context(), "s-1")
	must(t, err)
	meta, err := a.Store.MetaReview(t.Context(), "s-1", 1)
	must(t, err)
	if len(meta.Critiques) == 0 {
		t.Fatal("the meta-review found no critique")
	}
	ref := ContextRef{Plan: true, MetaReviewRound: 1, Focus: []string{"microglia"}, Feedback: []string{"toward: synapses"}}
	wants := []string{
		"Evaluation criteria:\n- " + plan.Criteria[0],
		"Recurring critique from the last round: " + meta.Critiques[0],
		"Meta-review feedback: ",
		"- microglia",
		"- toward: synapses",
	}

	gen := generateInput("generate-h-0010")
	gen.HypothesisID, gen.Strategy, gen.Context = "h-0010", research.StrategyFeedback, ref
	must(t, run(t, env, a.Generate, gen, nil))
	rev := ReviewInput{Turn: turnOf("review-h-0010"), HypothesisID: "h-0010", Type: research.ReviewDeepVerification, Context: ref}
	var rr ReviewResult
	must(t, run(t, env, a.Review, rev, &rr))
	bare := ReviewInput{Turn: turnOf("review-h-0010-bare"), HypothesisID: "h-0010", Type: research.ReviewInitial}
	must(t, run(t, env, a.Review, bare, nil))

	for _, turnID := range []string{"generate-h-0010", "review-h-0010"} {
		turn, ok, err := a.Store.Turn(t.Context(), "s-1", turnID)
		if err != nil || !ok {
			t.Fatalf("turn %s: %v, %v", turnID, ok, err)
		}
		for _, w := range wants {
			if !strings.Contains(turn.Prompt, w) {
				t.Errorf("turn %s: prompt does not contain %q:\n%s", turnID, w, turn.Prompt)
			}
		}
	}
	turn, _, _ := a.Store.Turn(t.Context(), "s-1", "review-h-0010-bare")
	for _, w := range wants[:2] {
		if strings.Contains(turn.Prompt, w) {
			t.Errorf("a review without context has %q in its prompt", w)
		}
	}
	// The feedback strategy used the critique, and the review decomposed the hypothesis.
	h, err := a.Store.Hypothesis(t.Context(), "s-1", "h-0010")
	must(t, err)
	if h.Strategy != research.StrategyFeedback || !strings.Contains(h.Rationale, "meta-review's feedback") {
		t.Errorf("hypothesis from feedback: %+v", h)
	}
	reviews, err := a.Store.Reviews(t.Context(), "s-1", "h-0010")
	must(t, err)
	i := slices.IndexFunc(reviews, func(r research.Review) bool { return r.Type == research.ReviewDeepVerification })
	if i < 0 || len(reviews[i].Assumptions) < 3 || reviews[i].Reviewer != "agent" {
		t.Fatalf("stored deep verification: %+v", reviews)
	}
	failed := 0
	for _, as := range reviews[i].Assumptions {
		if as.Verdict == "fails" {
			failed++
		}
	}
	if rr.FailedAssumptions != failed || rr.Safety != reviews[i].Scores.Safety || rr.Safety <= 0 {
		t.Errorf("review result %+v; stored %d failed assumptions, safety %.1f", rr, failed, reviews[i].Scores.Safety)
	}
}

func TestMissingContextIsAnError(t *testing.T) {
	env, a := newActivities(t, &simulator.Offline{})
	in := generateInput("generate-h-0001")
	in.Context = ContextRef{Plan: true}
	err := run(t, env, a.Generate, in, nil)
	if err == nil || !strings.Contains(err.Error(), "research plan") {
		t.Errorf("Generate with a plan that is not there: %v", err)
	}
}

// TestDebate: a 3-turn debate makes a transcript of advocate A, advocate B and the judge,
// with a verdict; re-running a turn, by turn ID or after a lost turn record, asks the
// model nothing more.
func TestDebate(t *testing.T) {
	m := &debating{}
	env, a := newActivities(t, m)
	seed(t, env, a, 2)
	in := func(n int) DebateInput {
		return DebateInput{Turn: turnOf(fmt.Sprintf("debate-d1-%d", n)), DebateID: "d1", A: "h-0001", B: "h-0002", Number: n, Of: 3}
	}
	var results []DebateResult
	for n := 1; n <= 3; n++ {
		var r DebateResult
		must(t, run(t, env, a.Debate, in(n), &r))
		results = append(results, r)
	}
	if m.calls != 3 {
		t.Fatalf("%d model calls for 3 turns", m.calls)
	}
	d, err := a.Store.Debate(t.Context(), "s-1", "d1")
	must(t, err)
	var speakers []string
	for i, turn := range d.Turns {
		speakers = append(speakers, turn.Speaker)
		if turn.Turn != i+1 || turn.Argument == "" {
			t.Errorf("turn %d: %+v", i+1, turn)
		}
	}
	if !slices.Equal(speakers, []string{"A", "B", "judge"}) || d.A != "h-0001" || d.B != "h-0002" {
		t.Fatalf("transcript %+v", d)
	}
	if d.Winner == "" || d.Reasoning == "" || results[2].Winner != d.Winner {
		t.Errorf("verdict: stored %q (%q), returned %q", d.Winner, d.Reasoning, results[2].Winner)
	}
	if results[0].Winner != "" || results[1].Winner != "" || results[0].Usage.Requests != 1 {
		t.Errorf("advocate turns: %+v", results[:2])
	}
	if turn, ok, _ := a.Store.Turn(t.Context(), "s-1", "debate-d1-2"); !ok || turn.Agent != AgentRanking || !strings.Contains(turn.Prompt, "Turn 1, advocate A") {
		t.Errorf("turn record of turn 2: %+v", turn)
	}

	// A retried turn with the same ID returns its stored result.
	var again DebateResult
	must(t, run(t, env, a.Debate, in(3), &again))
	// A retry whose turn record was lost (a new turn ID here) finds its turn in the transcript.
	lost := in(2)
	lost.TurnID = "debate-d1-2-retry"
	must(t, run(t, env, a.Debate, lost, nil))
	lostLast := in(3)
	lostLast.TurnID = "debate-d1-3-retry"
	var last DebateResult
	must(t, run(t, env, a.Debate, lostLast, &last))
	if m.calls != 3 || again != results[2] || last.Winner != d.Winner {
		t.Errorf("re-run turns called the model %d times (want 3 in all); results %+v, %+v", m.calls, again, last)
	}
	if d2, _ := a.Store.Debate(t.Context(), "s-1", "d1"); len(d2.Turns) != 3 || d2.Winner != d.Winner {
		t.Errorf("re-running turns changed the transcript: %+v", d2)
	}
}

func TestDebateRefusals(t *testing.T) {
	env, a := newActivities(t, &debating{badWinner: true})
	seed(t, env, a, 3)
	tests := []struct {
		name     string
		in       DebateInput
		wantType string
	}{
		{"turn out of order", DebateInput{Turn: turnOf("x1"), DebateID: "d", A: "h-0001", B: "h-0002", Number: 2, Of: 3}, ErrInvalidInput},
		{"turn past the end", DebateInput{Turn: turnOf("x2"), DebateID: "d", A: "h-0001", B: "h-0002", Number: 4, Of: 3}, ErrInvalidInput},
		{"against itself", DebateInput{Turn: turnOf("x3"), DebateID: "d", A: "h-0001", B: "h-0001", Number: 1, Of: 3}, ErrInvalidInput},
		{"too short", DebateInput{Turn: turnOf("x4"), DebateID: "d", A: "h-0001", B: "h-0002", Number: 1, Of: 1}, ErrInvalidInput},
		{"judge names an outsider", DebateInput{Turn: turnOf("x5"), DebateID: "short", A: "h-0001", B: "h-0002", Number: 1, Of: 2}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(t, env, a.Debate, tt.in, nil)
			if tt.wantType == "" {
				return
			}
			if typ, retry := errorType(err); typ != tt.wantType || retry {
				t.Errorf("error %v; want a non-retryable %s", err, tt.wantType)
			}
		})
	}
	// The 2-turn debate's first turn passed; its judge names h-9999.
	err := run(t, env, a.Debate, DebateInput{Turn: turnOf("x6"), DebateID: "short", A: "h-0001", B: "h-0002", Number: 2, Of: 2}, nil)
	if typ, retry := errorType(err); typ != ErrMalformedAnswer || retry {
		t.Errorf("a winner outside the debate: %v; want a non-retryable %s", err, ErrMalformedAnswer)
	}
	if d, _ := a.Store.Debate(t.Context(), "s-1", "short"); len(d.Turns) != 1 || d.Winner != "" {
		t.Errorf("a malformed verdict reached the transcript: %+v", d)
	}
	// The same debate id between other hypotheses is refused.
	err = run(t, env, a.Debate, DebateInput{Turn: turnOf("x7"), DebateID: "short", A: "h-0001", B: "h-0003", Number: 2, Of: 2}, nil)
	if typ, _ := errorType(err); typ != ErrInvalidInput {
		t.Errorf("a debate id reused for another pair: %v", err)
	}
}

func TestEvolve(t *testing.T) {
	env, a := newActivities(t, &simulator.Offline{})
	seed(t, env, a, 2)
	in := EvolveInput{Turn: turnOf("evolve-h-0003"), HypothesisID: "h-0003", Kind: research.EvolveCombination, Parents: []string{"h-0002", "h-0001"}}
	var r GenerateResult
	must(t, run(t, env, a.Evolve, in, &r))
	h, err := a.Store.Hypothesis(t.Context(), "s-1", "h-0003")
	must(t, err)
	if r.HypothesisID != "h-0003" || r.Title != h.Title || r.Usage.Requests != 1 {
		t.Errorf("result %+v", r)
	}
	if h.Origin != "evolution" || h.Strategy != research.EvolveCombination || !slices.Equal(h.Parents, []string{"h-0002", "h-0001"}) || h.Goal != testGoal {
		t.Errorf("provenance of the evolved hypothesis: %+v", h)
	}
	if !strings.Contains(h.Rationale, "h-0002") || !strings.Contains(h.Rationale, "h-0001") {
		t.Errorf("rationale does not say what came from which parent: %s", h.Rationale)
	}
	turn, ok, _ := a.Store.Turn(t.Context(), "s-1", "evolve-h-0003")
	if !ok || turn.Agent != AgentEvolution || !strings.Contains(turn.Prompt, "Parent 1, hypothesis h-0002") {
		t.Errorf("turn record %+v", turn)
	}
	for _, p := range []string{"h-0001", "h-0002"} {
		if parent, _ := a.Store.Hypothesis(t.Context(), "s-1", p); parent.Origin != "generation" || len(parent.Parents) != 0 {
			t.Errorf("evolution changed parent %s: %+v", p, parent)
		}
	}

	bad := []EvolveInput{
		{Turn: turnOf("e1"), HypothesisID: "h-0004", Kind: "mutation", Parents: []string{"h-0001"}},
		{Turn: turnOf("e2"), HypothesisID: "h-0004", Kind: research.EvolveGrounding},
		{Turn: turnOf("e3"), HypothesisID: "h-0001", Kind: research.EvolveGrounding, Parents: []string{"h-0001"}},
	}
	for _, in := range bad {
		if typ, retry := errorType(run(t, env, a.Evolve, in, nil)); typ != ErrInvalidInput || retry {
			t.Errorf("%+v: error type %q, want a non-retryable %s", in, typ, ErrInvalidInput)
		}
	}
}

func TestMetaReviewAndOverview(t *testing.T) {
	env, a := newActivities(t, &simulator.Offline{})
	ids := seed(t, env, a, 4)
	for _, id := range ids {
		for _, typ := range []string{research.ReviewInitial, research.ReviewDeepVerification} {
			must(t, run(t, env, a.Review, ReviewInput{Turn: turnOf("review-" + id + "-" + typ), HypothesisID: id, Type: typ}, nil))
		}
	}
	for n := 1; n <= 3; n++ {
		must(t, run(t, env, a.Debate, DebateInput{Turn: turnOf(fmt.Sprint("debate-", n)), DebateID: "d1", A: ids[0], B: ids[1], Number: n, Of: 3}, nil))
	}
	var mr MetaReviewResult
	must(t, run(t, env, a.MetaReview, MetaReviewInput{Turn: turnOf("meta-2"), Round: 2, Hypotheses: ids, Debates: []string{"d1", "never-started"}}, &mr))
	stored, err := a.Store.MetaReview(t.Context(), "s-1", 2)
	must(t, err)
	if mr.Round != 2 || stored.Round != 2 || len(stored.Critiques) == 0 || stored.Feedback == "" || mr.Usage.Requests != 1 {
		t.Fatalf("result %+v, stored %+v", mr, stored)
	}
	if len(mr.Critiques) != min(3, len(stored.Critiques)) {
		t.Errorf("%d critiques in the result, %d stored; want at most 3", len(mr.Critiques), len(stored.Critiques))
	}
	for i, c := range mr.Critiques {
		if n := utf8.RuneCountInString(c); n > 120 || !strings.HasPrefix(stored.Critiques[i], strings.TrimSuffix(c, "…")) {
			t.Errorf("critique %d (%d characters) %q is not a prefix of %q of at most 120", i, n, c, stored.Critiques[i])
		}
	}
	if !strings.Contains(stored.Critiques[0], "of 9 reviews and debates") {
		t.Errorf("the meta-review did not read the 8 reviews and 1 debate: %q", stored.Critiques)
	}
	// Round 2: the simulator hands a verification of a hypothesis of the round to a
	// subagent, and the result carries what the store holds.
	if len(mr.Delegations) != 1 || !slices.Equal(mr.Delegations, stored.Delegations) ||
		mr.Delegations[0].Task != research.DelegateVerify || !slices.Contains(ids, mr.Delegations[0].Hypothesis) || mr.Delegations[0].Reason == "" {
		t.Errorf("delegations in the result %+v, stored %+v; want one verification of one of %q", mr.Delegations, stored.Delegations, ids)
	}

	var ov OverviewResult
	// The themes are the activity's own: the top compared with one another (the clusters
	// a caller passes are not a reader's grouping).
	in := OverviewInput{Turn: turnOf("overview"), Top: ids, Clusters: [][]string{{ids[0], ids[1], ids[2], ids[3]}}, Context: ContextRef{MetaReviewRound: 2}}
	must(t, run(t, env, a.Overview, in, &ov))
	o, err := a.Store.Overview(t.Context(), "s-1")
	must(t, err)
	var themed []string
	for _, th := range o.Themes {
		themed = append(themed, th.Hypotheses...)
	}
	slices.Sort(themed)
	if ov.Themes != len(o.Themes) || len(o.Themes) < 2 || !slices.Equal(themed, slices.Sorted(slices.Values(ids))) || len(o.OpenQuestions) < 3 || len(o.Experiments) < 3 {
		t.Errorf("result %+v, stored %+v", ov, o)
	}
	turn, _, _ := a.Store.Turn(t.Context(), "s-1", "overview")
	if turn.Agent != AgentMetaReview || !strings.Contains(turn.Prompt, "Recurring critique from the last round: "+stored.Critiques[0]) {
		t.Errorf("overview prompt lacks the meta-review:\n%s", turn.Prompt)
	}
	if typ, _ := errorType(run(t, env, a.Overview, OverviewInput{Turn: turnOf("overview-empty")}, nil)); typ != ErrInvalidInput {
		t.Errorf("an overview of nothing: %q", typ)
	}
}

func TestAddHypothesis(t *testing.T) {
	env, a := newActivities(t, &simulator.Offline{})
	in := AddHypothesisInput{
		SessionID: "s-1", HypothesisID: "h-s1", Scientist: "ada", Goal: testGoal,
		Title: "Microglia prune tau", Statement: "Microglia prune tau-laden synapses.", Predictions: []string{"Depleting microglia slows spread."},
	}
	var r, again GenerateResult
	must(t, run(t, env, a.AddHypothesis, in, &r))
	must(t, run(t, env, a.AddHypothesis, in, &again))
	h, err := a.Store.Hypothesis(t.Context(), "s-1", "h-s1")
	must(t, err)
	if !reflect.DeepEqual(r, again) || r.HypothesisID != "h-s1" || r.Title != in.Title || r.Usage != (research.Usage{}) {
		t.Errorf("results %+v, %+v", r, again)
	}
	if h.Origin != "scientist" || h.Strategy != "scientist" || h.Statement != in.Statement || h.Goal != testGoal || h.Latent != nil {
		t.Errorf("stored %+v", h)
	}
	seed(t, env, a, 1)
	taken := in
	taken.HypothesisID = "h-0001"
	noStatement := in
	noStatement.HypothesisID, noStatement.Statement = "h-s2", " "
	for _, bad := range []AddHypothesisInput{taken, noStatement} {
		if typ, retry := errorType(run(t, env, a.AddHypothesis, bad, nil)); typ != ErrInvalidInput || retry {
			t.Errorf("%+v: error type %q, want a non-retryable %s", bad, typ, ErrInvalidInput)
		}
	}
	if _, err := a.Store.Hypothesis(t.Context(), "s-1", "h-s2"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a hypothesis without a statement was stored: %v", err)
	}
}

func TestManualReview(t *testing.T) {
	score := func(x float64) *float64 { return &x }
	tests := []struct {
		name        string
		score       *float64
		verdict     string
		wantScore   float64
		wantVerdict string
		wantErr     bool
	}{
		{"high score", score(8.5), "", 8.5, "accept", false},
		{"accept threshold", score(6.5), "", 6.5, "accept", false},
		{"just below accept", score(6.4), "", 6.4, "revise", false},
		{"revise threshold", score(4), "", 4, "revise", false},
		{"low score", score(1), "", 1, "reject", false},
		{"zero is a score", score(0), "", 0, "reject", false},
		{"accept alone", nil, "accept", 8, "accept", false},
		{"revise alone", nil, "Revise", 5, "revise", false},
		{"reject alone", nil, "reject", 2, "reject", false},
		{"both kept as given", score(3), "accept", 3, "accept", false},
		{"neither", nil, "", 0, "", true},
		{"score above 10", score(11), "", 0, "", true},
		{"negative score", score(-1), "", 0, "", true},
		{"unknown verdict", nil, "maybe", 0, "", true},
	}
	env, a := newActivities(t, &simulator.Offline{})
	seed(t, env, a, 1)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ManualReviewInput{SessionID: "s-1", HypothesisID: "h-0001", Scientist: "ada", Index: i, Score: tt.score, Verdict: tt.verdict, Critique: "Seen it before."}
			var r ReviewResult
			err := run(t, env, a.ManualReview, in, &r)
			if tt.wantErr {
				if typ, retry := errorType(err); typ != ErrInvalidInput || retry {
					t.Errorf("error %v; want a non-retryable %s", err, ErrInvalidInput)
				}
				return
			}
			must(t, err)
			if r.Score != tt.wantScore || r.Verdict != tt.wantVerdict || r.Safety != 10 || r.Type != "scientist" || r.HypothesisID != "h-0001" {
				t.Errorf("result %+v; want score %g, verdict %s, safety 10", r, tt.wantScore, tt.wantVerdict)
			}
			reviews, err := a.Store.Reviews(t.Context(), "s-1", "h-0001")
			must(t, err)
			var mine []research.Review
			for _, rv := range reviews {
				if rv.Type == "scientist" {
					mine = append(mine, rv)
				}
			}
			got := mine[len(mine)-1] // stored in index order
			want := research.Scores{Novelty: tt.wantScore, Plausibility: tt.wantScore, Testability: tt.wantScore, Safety: tt.wantScore}
			if got.Scores != want || got.Verdict != tt.wantVerdict || got.Reviewer != "ada" || got.Critique != "Seen it before." {
				t.Errorf("stored %+v", got)
			}
		})
	}
	// A manual review never replaces an agent's review of the same index.
	must(t, run(t, env, a.Review, ReviewInput{Turn: turnOf("review-h-0001"), HypothesisID: "h-0001", Type: research.ReviewInitial}, nil))
	must(t, run(t, env, a.ManualReview, ManualReviewInput{SessionID: "s-1", HypothesisID: "h-0001", Scientist: "ada", Index: 0, Verdict: "reject"}, nil))
	reviews, _ := a.Store.Reviews(t.Context(), "s-1", "h-0001")
	if slices.IndexFunc(reviews, func(r research.Review) bool { return r.Type == research.ReviewInitial && r.Reviewer == "agent" }) < 0 {
		t.Errorf("the agent's review is gone: %+v", reviews)
	}
	err := run(t, env, a.ManualReview, ManualReviewInput{SessionID: "s-1", HypothesisID: "h-nope", Verdict: "accept"}, nil)
	if typ, _ := errorType(err); typ != ErrInvalidInput {
		t.Errorf("review of an unknown hypothesis: %v", err)
	}
}

// delegating wraps the offline simulator and replaces its meta-review's delegations, as
// a model whose answer was parsed without the request could.
type delegating struct {
	simulator.Offline
	delegations []research.Delegation
}

// Answer answers with the methods of delegating, which change some of the simulator's answers.
func (d *delegating) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, d, q)
}

func (d *delegating) MetaReview(ctx context.Context, req research.MetaReviewRequest) (research.MetaReview, research.Usage, error) {
	m, u, err := d.Offline.MetaReview(ctx, req)
	m.Delegations = d.delegations
	return m, u, err
}

// TestMetaReviewDelegations: the activity passes the meta-review's delegations through,
// but only those on the round's hypotheses, and the result says what the store holds.
func TestMetaReviewDelegations(t *testing.T) {
	verify := func(id string) research.Delegation {
		return research.Delegation{Task: research.DelegateVerify, Hypothesis: id, Reason: "check " + id}
	}
	evolve := func(id string) research.Delegation {
		return research.Delegation{Task: research.DelegateEvolve, Hypothesis: id, Reason: "evolve " + id}
	}
	tests := []struct {
		name  string
		given []research.Delegation
		want  []research.Delegation
	}{
		{"none", nil, nil},
		{"passed through", []research.Delegation{verify("h-0001"), evolve("h-0002")}, []research.Delegation{verify("h-0001"), evolve("h-0002")}},
		{"not of the round", []research.Delegation{verify("h-0009"), evolve("h-0002")}, []research.Delegation{evolve("h-0002")}},
		{"unknown task", []research.Delegation{{Task: "replicate", Hypothesis: "h-0001", Reason: "r"}}, nil},
		{"too many", []research.Delegation{verify("h-0001"), evolve("h-0001"), verify("h-0002")}, []research.Delegation{verify("h-0001"), evolve("h-0001")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, a := newActivities(t, &delegating{delegations: tt.given})
			ids := seed(t, env, a, 2)
			for _, id := range ids {
				must(t, run(t, env, a.Review, ReviewInput{Turn: turnOf("review-" + id), HypothesisID: id, Type: research.ReviewFull}, nil))
			}
			var mr MetaReviewResult
			must(t, run(t, env, a.MetaReview, MetaReviewInput{Turn: turnOf("meta-1"), Round: 1, Hypotheses: ids}, &mr))
			stored, err := a.Store.MetaReview(t.Context(), "s-1", 1)
			must(t, err)
			if !slices.Equal(mr.Delegations, tt.want) || !slices.Equal(stored.Delegations, tt.want) {
				t.Errorf("result %+v, stored %+v; want %+v", mr.Delegations, stored.Delegations, tt.want)
			}
			// A re-run turn returns the same delegations, so no subagent is started twice
			// with a different task.
			var again MetaReviewResult
			must(t, run(t, env, a.MetaReview, MetaReviewInput{Turn: turnOf("meta-1"), Round: 1, Hypotheses: ids}, &again))
			if !slices.Equal(again.Delegations, mr.Delegations) {
				t.Errorf("re-run: %+v, first %+v", again.Delegations, mr.Delegations)
			}
		})
	}
}
