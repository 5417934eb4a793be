package simulator

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

var (
	testPlan = &research.Plan{
		Preferences: []string{"mechanistic"},
		Constraints: []string{"no human experiments"},
		Criteria:    []string{"Predicts a measurable change in tau spread"},
		Summary:     "s",
	}
	testMeta = &research.MetaReview{
		Round:     2,
		Critiques: []string{"The proposed mediator has not been observed directly (7 of 12 reviews)", "Too vague"},
		Feedback:  "Name measurable mediators.",
	}
)

// TestGenerateStrategies: the rationale says how the strategy produced the hypothesis. Its
// wording varies (wording.go), so each check names what any wording holds, or the
// wordings it may take.
func TestGenerateStrategies(t *testing.T) {
	tests := []struct {
		name     string
		strategy string
		context  research.Context
		want     []string   // in the rationale
		oneOf    [][]string // one of each list is in the rationale
	}{
		{"literature", research.StrategyLiterature, research.Context{}, nil, [][]string{literatureOpeners}},
		{"default is literature", "", research.Context{}, nil, [][]string{literatureOpeners}},
		{"debate", research.StrategyDebate, research.Context{}, []string{"simulated", "debate"},
			[][]string{{"objected that", "countered that", "doubted it, since"}, weaknesses}},
		{"assumptions", research.StrategyAssumptions, research.Context{}, []string{"(1) ", "(2) ", "(3) "},
			[][]string{assumptionOpeners, {"Together they imply", "If all three hold", "Jointly they entail"}}},
		{"feedback with a meta-review", research.StrategyFeedback, research.Context{MetaReview: testMeta},
			[]string{"meta-review", "recurring critique", "round 2", "the proposed mediator has not been observed directly", "names a mediator that can be measured directly"}, nil},
		{"feedback before a meta-review", research.StrategyFeedback, research.Context{}, []string{"no meta-review yet"}, nil},
		{"unknown", "analogy", research.Context{}, []string{"Following the analogy strategy: "}, nil},
		{"plan criterion", research.StrategyLiterature, research.Context{Plan: testPlan}, []string{"plan's criterion", "predicts a measurable change in tau spread."}, nil},
		{"toward", research.StrategyLiterature, research.Context{Feedback: []string{"away from: exosomes", "toward: synaptic release"}}, []string{"It moves toward synaptic release, as the scientist asked."}, nil},
		{"away from", research.StrategyLiterature, research.Context{Feedback: []string{"away from: exosomes."}}, []string{"It steers away from exosomes, as the scientist asked."}, nil},
	}
	var o Offline
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range 5 {
				req := genReq(fmt.Sprint("strategy-", i))
				req.Strategy, req.Context = tt.strategy, tt.context
				h, _, err := o.Generate(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range tt.want {
					if !strings.Contains(h.Rationale, w) {
						t.Errorf("rationale does not contain %q: %s", w, h.Rationale)
					}
				}
				for _, alts := range tt.oneOf {
					if !slices.ContainsFunc(alts, func(w string) bool { return strings.Contains(h.Rationale, w) }) {
						t.Errorf("rationale contains none of %q: %s", alts, h.Rationale)
					}
				}
				if h.Strategy != tt.strategy {
					t.Errorf("Strategy = %q, want %q", h.Strategy, tt.strategy)
				}
			}
		})
	}
	// The focus may come in the context too.
	req := genReq("ctx-focus")
	req.Context.Focus = []string{"consider microglia"}
	if h, _, _ := o.Generate(context.Background(), req); !strings.Contains(h.Statement, "newest focus: consider microglia") {
		t.Errorf("statement ignores the context's focus: %s", h.Statement)
	}
}

func TestStrategyLatent(t *testing.T) {
	tests := []struct {
		strategy string
		context  research.Context
		mean, sd float64
	}{
		{research.StrategyLiterature, research.Context{}, 0, 1},
		{research.StrategyDebate, research.Context{}, 0.1, 0.9},
		{research.StrategyAssumptions, research.Context{}, 0.1, 1},
		{research.StrategyFeedback, research.Context{}, 0, 1},
		{research.StrategyFeedback, research.Context{MetaReview: testMeta}, 0.2, 1},
	}
	var o Offline
	const n = 3000
	for _, tt := range tests {
		mean, sd := strategyLatent(tt.strategy, tt.context)
		if mean != tt.mean || sd != tt.sd {
			t.Errorf("strategyLatent(%s) = N(%g, %g), want N(%g, %g)", tt.strategy, mean, sd, tt.mean, tt.sd)
		}
		m, s := meanSD(t, n, func(i int) (research.Hypothesis, error) {
			req := genReq(fmt.Sprint("latent-", i))
			req.Strategy, req.Context = tt.strategy, tt.context
			h, _, err := o.Generate(context.Background(), req)
			return h, err
		})
		if math.Abs(m-tt.mean) > 0.06 || math.Abs(s-tt.sd) > 0.06 {
			t.Errorf("%s: latent quality has mean %.3f and sd %.3f, want about %g and %g", tt.strategy, m, s, tt.mean, tt.sd)
		}
	}
}

// meanSD returns the mean and standard deviation of the latent quality of n hypotheses,
// the i-th returned by next(i), failing the test on any error.
func meanSD(t *testing.T, n int, next func(i int) (research.Hypothesis, error)) (mean, sd float64) {
	t.Helper()
	var sum, sq float64
	for i := range n {
		h, err := next(i)
		if err != nil {
			t.Fatal(err)
		}
		sum, sq = sum+*h.Latent, sq+*h.Latent**h.Latent
	}
	mean = sum / float64(n)
	return mean, math.Sqrt(sq/float64(n) - mean*mean)
}

func TestDeepVerification(t *testing.T) {
	var o Offline
	failRate := func(q float64) float64 {
		fails, total := 0, 0
		for i := range 300 {
			h := research.Hypothesis{ID: fmt.Sprint("h-", i), Title: "Exosomes spread tau", Statement: "s", Predictions: []string{"Blocking exosomes slows spread."}, Latent: latent(q)}
			r, _, err := o.Review(context.Background(), research.ReviewRequest{TurnID: fmt.Sprint("dv-", i), Type: research.ReviewDeepVerification, Hypothesis: h})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(r.Assumptions); n < 3 || n > 5 {
				t.Fatalf("%d assumptions, want 3 to 5", n)
			}
			anyFails := false
			for _, a := range r.Assumptions {
				if !slices.Contains(research.AssumptionVerdicts, a.Verdict) || a.Text == "" || a.Note == "" {
					t.Fatalf("assumption %+v", a)
				}
				if a.Verdict == "fails" {
					fails++
					anyFails = true
				}
				total++
			}
			if anyFails != strings.Contains(r.Critique, "An assumption fails: ") {
				t.Errorf("critique and assumptions disagree about a failure: %s", r.Critique)
			}
		}
		return float64(fails) / float64(total)
	}
	low, mid, high := failRate(-1.5), failRate(0), failRate(1.5)
	if !(low > mid+0.2 && mid > high+0.05) {
		t.Errorf("share of failing assumptions: %.2f at low quality, %.2f at average, %.2f at high; want it to fall clearly with quality", low, mid, high)
	}
}

func TestSafetyFlag(t *testing.T) {
	var o Offline
	const n = 3000
	unsafe := 0
	for i := range n {
		h := research.Hypothesis{ID: fmt.Sprintf("h-%04d", i), Title: "t", Statement: "s", Predictions: []string{"p"}, Latent: latent(-2)}
		var safety []float64
		for _, typ := range research.ReviewTypes {
			r, _, err := o.Review(context.Background(), research.ReviewRequest{TurnID: "rev-" + h.ID + "-" + typ, Type: typ, Hypothesis: h, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			safety = append(safety, r.Scores.Safety)
			if r.Scores.Safety < 3 {
				if !strings.Contains(r.Critique, "Safety concern: ") || r.Verdict != "reject" {
					t.Errorf("unsafe review names no concern or does not reject: %s (%s)", r.Critique, r.Verdict)
				}
			} else if r.Scores.Safety < 4 {
				t.Errorf("a safe hypothesis got safety %.1f; safe ones stay at 4 or above", r.Scores.Safety)
			}
		}
		flagged := safety[0] < 3
		for _, s := range safety {
			if (s < 3) != flagged {
				t.Fatalf("%s: reviews disagree about safety: %v", h.ID, safety)
			}
		}
		if flagged {
			unsafe++
		}
	}
	if rate := float64(unsafe) / n; rate < 0.02 || rate > 0.04 {
		t.Errorf("%.3f of hypotheses unsafe, want about 0.03", rate)
	}
}

func TestDebate(t *testing.T) {
	var o Offline
	hs := generate(t, 2)
	a, b := hs[0], hs[1]
	const turns = 5
	var transcript []research.DebateTurn
	for turn := 1; turn <= turns; turn++ {
		ans, u, err := o.Debate(context.Background(), research.DebateRequest{
			TurnID: fmt.Sprint("debate-1-", turn), Goal: goal, A: a, B: b, Transcript: transcript, Turn: turn, Turns: turns, Prompt: "p", Seed: 3,
		})
		if err != nil {
			t.Fatal(err)
		}
		if u.Requests != 1 || ans.Turn.Turn != turn || ans.Turn.Argument == "" {
			t.Fatalf("turn %d: %+v, usage %+v", turn, ans, u)
		}
		want, cites := "judge", ""
		switch {
		case turn == turns:
		case turn%2 == 1:
			want, cites = "A", "Hypothesis A ("+a.ID
		default:
			want, cites = "B", "Hypothesis B ("+b.ID
		}
		if ans.Turn.Speaker != want {
			t.Errorf("turn %d spoken by %q, want %q", turn, ans.Turn.Speaker, want)
		}
		if cites != "" && !strings.Contains(ans.Turn.Argument, cites) {
			t.Errorf("turn %d does not cite its hypothesis (%q): %s", turn, cites, ans.Turn.Argument)
		}
		if turn > 1 && turn < turns && !strings.Contains(ans.Turn.Argument, fmt.Sprintf("point in turn %d", turn-1)) {
			t.Errorf("turn %d does not answer turn %d: %s", turn, turn-1, ans.Turn.Argument)
		}
		if turn < turns && ans.Winner != "" {
			t.Errorf("turn %d names a winner", turn)
		}
		if turn == turns && ((ans.Winner != a.ID && ans.Winner != b.ID) || ans.Reasoning == "") {
			t.Errorf("verdict %+v names no winner among %s, %s", ans, a.ID, b.ID)
		}
		transcript = append(transcript, ans.Turn)
	}
}

func TestDebateJudgeIsSharper(t *testing.T) {
	var o Offline
	const n, gap = 3000, 1.0
	better := research.Hypothesis{ID: "better", Title: "Better", Statement: "s", Predictions: []string{"p"}, Latent: latent(gap / 2)}
	worse := research.Hypothesis{ID: "worse", Title: "Worse", Statement: "s", Predictions: []string{"p"}, Latent: latent(-gap / 2)}
	wins := 0
	for i := range n {
		req := research.DebateRequest{TurnID: fmt.Sprint("judge-", i), Goal: goal, A: better, B: worse, Turn: 3, Turns: 3, Seed: 9}
		if i%2 == 1 {
			req.A, req.B = worse, better
		}
		ans, _, err := o.Debate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if ans.Winner == "better" {
			wins++
		}
	}
	rate, want := float64(wins)/n, debateWinProbability(gap/2, -gap/2)
	if math.Abs(rate-want) > 0.035 || rate <= winProbability(gap/2, -gap/2)+0.02 {
		t.Errorf("the better hypothesis won %.3f of debates, want %.3f ± 0.035, more than a single comparison's %.3f", rate, want, winProbability(gap/2, -gap/2))
	}
}

func TestEvolve(t *testing.T) {
	var o Offline
	hs := generate(t, 2)
	p1, p2 := hs[0], hs[1]
	for _, kind := range append(slices.Clone(research.EvolutionKinds), "mutation") {
		t.Run(kind, func(t *testing.T) {
			parents := []research.Hypothesis{p1, p2}
			if kind == research.EvolveGrounding || kind == research.EvolveFeasibility || kind == research.EvolveSimplification {
				parents = parents[:1]
			}
			h, u, err := o.Evolve(context.Background(), research.EvolveRequest{
				TurnID: "evolve-" + kind, HypothesisID: "h-e", Goal: goal, Kind: kind, Parents: parents, Context: research.Context{MetaReview: testMeta}, Seed: 4,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Check(); err != nil || u.Requests != 1 {
				t.Fatalf("%v, usage %+v", err, u)
			}
			var ids []string
			for _, p := range parents {
				ids = append(ids, p.ID)
			}
			if h.ID != "h-e" || h.Origin != "evolution" || h.Strategy != kind || h.Goal != goal || !slices.Equal(h.Parents, ids) || h.Latent == nil {
				t.Errorf("provenance: %+v", h)
			}
			if n := utf8.RuneCountInString(h.Title); n > 100 {
				t.Errorf("title is %d characters", n)
			}
			if !strings.Contains(h.Rationale, p1.ID) || !strings.Contains(h.Rationale, "Evolved") {
				t.Errorf("rationale does not say what it took from %s: %s", p1.ID, h.Rationale)
			}
			if !strings.Contains(h.Rationale, "recurring critique") {
				t.Errorf("rationale ignores the meta-review: %s", h.Rationale)
			}
		})
	}
	if _, _, err := o.Evolve(context.Background(), research.EvolveRequest{TurnID: "none", Kind: research.EvolveGrounding}); err == nil {
		t.Error("Evolve without parents succeeded, want an error")
	}
}

func TestEvolvedLatent(t *testing.T) {
	var o Offline
	qa, qb := 0.4, -0.2
	pa := research.Hypothesis{ID: "a", Title: "A", Statement: "s", Predictions: []string{"p"}, Latent: latent(qa)}
	pb := research.Hypothesis{ID: "b", Title: "B", Statement: "s", Predictions: []string{"p"}, Latent: latent(qb)}
	mean := (qa + qb) / 2
	tests := []struct {
		kind     string
		mean, sd float64
	}{
		{research.EvolveGrounding, mean + 0.15, 0.4},
		{research.EvolveFeasibility, mean + 0.15, 0.4},
		{research.EvolveCombination, qa + 0.1, 0.5},
		{research.EvolveSimplification, mean, 0.3},
		{research.EvolveInspiration, mean, 0.8},
		{research.EvolveOutOfBox, mean, 0.8},
	}
	const n = 2000
	for _, tt := range tests {
		m, s := meanSD(t, n, func(i int) (research.Hypothesis, error) {
			h, _, err := o.Evolve(context.Background(), research.EvolveRequest{TurnID: fmt.Sprint("ev-", i), Goal: goal, Kind: tt.kind, Parents: []research.Hypothesis{pa, pb}})
			return h, err
		})
		if math.Abs(m-tt.mean) > 0.05 || math.Abs(s-tt.sd) > 0.05 {
			t.Errorf("%s: latent mean %.3f sd %.3f, want about %.3f and %.2f", tt.kind, m, s, tt.mean, tt.sd)
		}
	}
}

func TestPlan(t *testing.T) {
	var o Offline
	tests := []struct {
		goal    string
		n       int // items per list
		mention string
	}{
		{goal, 5, "the spread of tau pathology"},
		{"Explain antimicrobial resistance in soil", 4, "antimicrobial resistance"},
		{"Why do naked mole-rats resist cancer?", 3, "cancer resistance in naked mole-rats"},
		{"Why is it so?", 3, "the system under study"},
	}
	for _, tt := range tests {
		p, u, err := o.Plan(context.Background(), research.PlanRequest{TurnID: "plan", Goal: tt.goal, Prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Preferences) != tt.n || len(p.Constraints) != tt.n || len(p.Criteria) != tt.n || u.Requests != 1 {
			t.Errorf("%q: %d preferences, %d constraints, %d criteria; want %d each", tt.goal, len(p.Preferences), len(p.Constraints), len(p.Criteria), tt.n)
		}
		if n := utf8.RuneCountInString(p.Summary); n == 0 || n > 200 || strings.Count(p.Summary, ". ") > 0 {
			t.Errorf("summary is not one sentence of at most 200 characters: %q", p.Summary)
		}
		if !strings.Contains(p.Summary+p.Preferences[0]+p.Criteria[0], tt.mention) {
			t.Errorf("plan for %q does not mention %q: %+v", tt.goal, tt.mention, p)
		}
	}
}
