package simulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

const goal = "Why does tau pathology spread between connected brain regions in Alzheimer's disease?"

func genReq(turn string) research.GenerateRequest {
	return research.GenerateRequest{TurnID: turn, HypothesisID: "h-" + turn, Goal: goal, Strategy: "analogy", Prompt: "generate please", Seed: 42}
}

// generate returns n hypotheses from distinct turns, failing the test on any error.
func generate(t *testing.T, n int) []research.Hypothesis {
	t.Helper()
	var o Offline
	hs := make([]research.Hypothesis, n)
	for i := range hs {
		h, _, err := o.Generate(context.Background(), genReq(fmt.Sprintf("gen-%d", i)))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		hs[i] = h
	}
	return hs
}

func latent(q float64) *float64 { return &q }

// asJSON is a turn's answer in JSON, to compare answers by; err is the turn's own error.
func asJSON(v any, err error) (string, error) {
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func TestDeterminism(t *testing.T) {
	var o Offline
	ctx := context.Background()
	hs := generate(t, 2)
	a, b := hs[0], hs[1]
	tests := []struct {
		name string
		turn func(turnID string) (any, error)
	}{
		// Every answer is the same on a retry; all but the plan (which follows from the
		// goal alone) also differ between turns.
		{"generate", func(id string) (any, error) {
			h, _, err := o.Generate(ctx, genReq(id))
			return h, err
		}},
		{"review", func(id string) (any, error) {
			r, _, err := o.Review(ctx, research.ReviewRequest{TurnID: id, Goal: goal, Type: research.ReviewFull, Hypothesis: a, Seed: 42})
			return r, err
		}},
		{"compare", func(id string) (any, error) {
			c, _, err := o.Compare(ctx, research.CompareRequest{TurnID: id, Goal: goal, A: a, B: b, Seed: 42})
			return c, err
		}},
		{"plan", func(id string) (any, error) {
			p, _, err := o.Plan(ctx, research.PlanRequest{TurnID: id, Goal: goal, Seed: 42})
			return p, err
		}},
		{"debate turn", func(id string) (any, error) {
			d, _, err := o.Debate(ctx, research.DebateRequest{TurnID: id, Goal: goal, A: a, B: b, Turn: 1, Turns: 3, Seed: 42})
			return d, err
		}},
		{"debate verdict", func(id string) (any, error) {
			d, _, err := o.Debate(ctx, research.DebateRequest{TurnID: id, Goal: goal, A: a, B: b, Turn: 3, Turns: 3, Seed: 42})
			return d, err
		}},
		{"evolve", func(id string) (any, error) {
			h, _, err := o.Evolve(ctx, research.EvolveRequest{TurnID: id, HypothesisID: "e-1", Goal: goal, Kind: research.EvolveInspiration, Parents: []research.Hypothesis{a, b}, Seed: 42})
			return h, err
		}},
		{"overview", func(id string) (any, error) {
			ov, _, err := o.Overview(ctx, research.OverviewRequest{TurnID: id, Goal: goal, Top: []research.Hypothesis{a}, Seed: 42})
			return ov, err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := func(id string) string {
				s, err := asJSON(tt.turn(id))
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			first := answer("turn-1")
			if again := answer("turn-1"); again != first {
				t.Errorf("same turn, different answers:\n%s\n%s", first, again)
			}
			if tt.name == "plan" {
				return
			}
			// A comparison has few possible answers, so look for a difference over several turns.
			differs := false
			for i := 2; i < 10 && !differs; i++ {
				differs = answer(fmt.Sprintf("turn-%d", i)) != first
			}
			if !differs {
				t.Errorf("every turn gave the same answer: %s", first)
			}
		})
	}
}

func TestGenerate(t *testing.T) {
	for _, h := range generate(t, 20) {
		if err := h.Check(); err != nil {
			t.Errorf("Check: %v", err)
		}
		if h.Latent == nil {
			t.Errorf("%s: no latent quality", h.ID)
		}
		if n := utf8.RuneCountInString(h.Title); n > 100 {
			t.Errorf("%s: title is %d characters, want at most 100", h.ID, n)
		}
		if n := len(h.Predictions); n < 2 || n > 4 {
			t.Errorf("%s: %d predictions, want 2 to 4", h.ID, n)
		}
		if h.Origin != "generation" || h.Strategy != "analogy" || h.Goal != goal || !strings.HasPrefix(h.ID, "h-gen-") {
			t.Errorf("provenance not copied: %+v", h)
		}
		if _, ok := titleTopic(h.Statement, topics(goal)); !ok {
			t.Errorf("%s: statement does not mention the goal's subject: %s", h.ID, h.Statement)
		}
	}
}

func TestTitlesVary(t *testing.T) {
	titles := map[string]bool{}
	for _, h := range generate(t, 50) {
		titles[h.Title] = true
	}
	if len(titles) < 45 {
		t.Errorf("%d distinct titles in 50 turns, want at least 45", len(titles))
	}
}

func TestGenerateAddressesNewestFocus(t *testing.T) {
	tests := []struct {
		name  string
		focus []string
		want  string // "" means no focus sentence
	}{
		{"no focus", nil, ""},
		{"one", []string{"consider microglia"}, "consider microglia"},
		{"newest of several", []string{"consider microglia", "only in vivo evidence"}, "only in vivo evidence"},
		{"blank newest is skipped", []string{"consider microglia", "  "}, "consider microglia"},
	}
	var o Offline
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := genReq("focus")
			req.Focus = tt.focus
			h, _, err := o.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if strings.Contains(h.Statement, "focus") {
					t.Errorf("statement mentions a focus that was not given: %s", h.Statement)
				}
				return
			}
			if !strings.Contains(h.Statement, tt.want) {
				t.Errorf("statement does not address focus %q: %s", tt.want, h.Statement)
			}
		})
	}
}

func TestReview(t *testing.T) {
	var o Offline
	hs := generate(t, 200)
	plausibility := make([]float64, len(hs))
	for i, h := range hs {
		typ := research.ReviewTypes[i%len(research.ReviewTypes)]
		r, _, err := o.Review(context.Background(), research.ReviewRequest{TurnID: "rev-" + h.ID, Goal: goal, Type: typ, Hypothesis: h, Seed: 42})
		if err != nil {
			t.Fatal(err)
		}
		if r.HypothesisID != h.ID || r.Type != typ {
			t.Errorf("review of %s as %s came back as %s, %s", h.ID, typ, r.HypothesisID, r.Type)
		}
		if !strings.Contains(strings.ToLower(r.Critique), strings.ReplaceAll(typ, "_", " ")) {
			t.Errorf("critique does not name the review type %s: %s", typ, r.Critique)
		}
		want := "reject"
		switch o := r.Scores.Overall(); {
		case r.Scores.Safety < 3: // unsafe: rejected whatever its other marks
		case o >= 6.5:
			want = "accept"
		case o >= 4:
			want = "revise"
		}
		if r.Verdict != want {
			t.Errorf("overall %.2f (safety %.1f) gave verdict %s, want %s", r.Scores.Overall(), r.Scores.Safety, r.Verdict, want)
		}
		if !strings.Contains(r.Critique, "main strength is that") || !strings.Contains(r.Critique, "main weakness is that") {
			t.Errorf("critique names no strength or weakness: %s", r.Critique)
		}
		if (typ == research.ReviewDeepVerification) != (len(r.Assumptions) > 0) {
			t.Errorf("%s review has %d assumptions", typ, len(r.Assumptions))
		}
		plausibility[i] = r.Scores.Plausibility
	}

	// Reviews must carry signal: the better half (by latent quality) scores higher.
	idx := make([]int, len(hs))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return *hs[idx[i]].Latent < *hs[idx[j]].Latent })
	mean := func(is []int) float64 {
		s := 0.0
		for _, i := range is {
			s += plausibility[i]
		}
		return s / float64(len(is))
	}
	bottom, top := mean(idx[:100]), mean(idx[100:])
	if top <= bottom+1 {
		t.Errorf("mean plausibility: top half %.2f, bottom half %.2f; want the top clearly higher", top, bottom)
	}
}

func TestJudgeFollowsBradleyTerry(t *testing.T) {
	var o Offline
	tests := []struct {
		gap     float64
		wantMin float64 // the win rate must at least reach this
	}{
		{0.2, 0.5},
		{2.0, 0.85},
	}
	const n = 2000
	prev := 0.0
	for _, tt := range tests {
		better := research.Hypothesis{ID: "better", Title: "Better", Statement: "s", Latent: latent(tt.gap / 2)}
		worse := research.Hypothesis{ID: "worse", Title: "Worse", Statement: "s", Latent: latent(-tt.gap / 2)}
		wins := 0
		for i := range n {
			req := research.CompareRequest{TurnID: fmt.Sprintf("match-%d", i), Goal: goal, A: better, B: worse, Seed: 7}
			if i%2 == 1 { // half the time the better one is B, so position cannot help
				req.A, req.B = worse, better
			}
			c, _, err := o.Compare(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if c.A != req.A.ID || c.B != req.B.ID || (c.Winner != c.A && c.Winner != c.B) {
				t.Fatalf("comparison %+v does not match request %s vs %s", c, req.A.ID, req.B.ID)
			}
			if c.Winner == "better" {
				wins++
			}
		}
		rate := float64(wins) / n
		want := winProbability(tt.gap/2, -tt.gap/2)
		if math.Abs(rate-want) > 0.04 || rate <= prev || rate < tt.wantMin {
			t.Errorf("gap %.1f: better won %.3f of matches, want %.3f ± 0.04 and more than %.3f at the smaller gap", tt.gap, rate, want, prev)
		}
		prev = rate
	}
}

func TestQualityWithoutLatent(t *testing.T) {
	scientist := research.Hypothesis{Statement: "Microglia prune tau-laden synapses."}
	if quality(scientist) != quality(scientist) {
		t.Error("quality of the same statement differs between calls")
	}
	other := research.Hypothesis{Statement: "Astrocytes clear extracellular tau."}
	if quality(scientist) == quality(other) {
		t.Error("different statements have the same quality")
	}
	if q := quality(research.Hypothesis{Statement: "x", Latent: latent(1.5)}); q != 1.5 {
		t.Errorf("quality ignores Latent: got %v, want 1.5", q)
	}
	// Over many statements the pseudo-quality should look standard normal.
	var sum, sq float64
	for i := range 2000 {
		q := quality(research.Hypothesis{Statement: fmt.Sprintf("statement %d", i)})
		sum, sq = sum+q, sq+q*q
	}
	mean := sum / 2000
	if sd := math.Sqrt(sq/2000 - mean*mean); math.Abs(mean) > 0.1 || math.Abs(sd-1) > 0.1 {
		t.Errorf("pseudo-quality has mean %.2f and sd %.2f, want about 0 and 1", mean, sd)
	}
}

// everyTurn runs one turn of every agent and returns their errors.
func everyTurn(o *Offline, ctx context.Context, id string, h research.Hypothesis) []error {
	_, _, errG := o.Generate(ctx, research.GenerateRequest{TurnID: id, Goal: goal})
	_, _, errR := o.Review(ctx, research.ReviewRequest{TurnID: id, Type: research.ReviewDeepVerification, Hypothesis: h})
	_, _, errC := o.Compare(ctx, research.CompareRequest{TurnID: id, A: h, B: h})
	_, _, errP := o.Plan(ctx, research.PlanRequest{TurnID: id, Goal: goal})
	_, _, errD := o.Debate(ctx, research.DebateRequest{TurnID: id, A: h, B: h, Turn: 1, Turns: 3})
	_, _, errJ := o.Debate(ctx, research.DebateRequest{TurnID: id, A: h, B: h, Turn: 3, Turns: 3})
	_, _, errE := o.Evolve(ctx, research.EvolveRequest{TurnID: id, Goal: goal, Kind: research.EvolveGrounding, Parents: []research.Hypothesis{h}})
	_, _, errM := o.MetaReview(ctx, research.MetaReviewRequest{TurnID: id, Goal: goal})
	_, _, errO := o.Overview(ctx, research.OverviewRequest{TurnID: id, Goal: goal, Top: []research.Hypothesis{h}})
	return []error{errG, errR, errC, errP, errD, errJ, errE, errM, errO}
}

func TestErrorRate(t *testing.T) {
	h := research.Hypothesis{ID: "h", Title: "t", Statement: "s", Predictions: []string{"p"}}
	tests := []struct {
		rate     float64
		wantFail bool
	}{
		{0, false},
		{1, true},
	}
	for _, tt := range tests {
		o := Offline{ErrorRate: tt.rate}
		ctx := context.Background()
		for i := range 50 {
			id := fmt.Sprint(i)
			for _, err := range everyTurn(&o, ctx, id, h) {
				if tt.wantFail != errors.Is(err, ErrSimulated) {
					t.Fatalf("ErrorRate %v: error %v", tt.rate, err)
				}
				if !tt.wantFail && err != nil {
					t.Fatalf("ErrorRate %v: unexpected error %v", tt.rate, err)
				}
			}
		}
	}
}

// TestErrorSeed: with a seed, which calls fail depends only on the seed, the turn and how
// often it was called; retries of a turn still fail independently, at the rate asked.
func TestErrorSeed(t *testing.T) {
	pattern := func(seed uint64) (fails string) {
		o := &Offline{ErrorRate: 0.3, ErrorSeed: seed}
		for i := range 400 {
			for attempt := range 5 {
				if errors.Is(o.turn(context.Background(), "generation", fmt.Sprint("t-", i)), ErrSimulated) {
					fails += fmt.Sprint(i, ".", attempt, " ")
				}
			}
		}
		return fails
	}
	a, b := pattern(7), pattern(7)
	if a != b {
		t.Fatal("the same seed failed different calls")
	}
	if a == pattern(8) {
		t.Error("seeds 7 and 8 failed the same calls")
	}
	n := strings.Count(a, " ")
	if n < 500 || n > 700 { // 0.3 of 2,000 calls is 600, sd 20
		t.Errorf("%d of 2000 calls failed at rate 0.3", n)
	}
}

func TestLatencyHonoursCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h := research.Hypothesis{ID: "h", Title: "t", Statement: "s", Predictions: []string{"p"}}
	for _, latency := range []time.Duration{0, time.Hour} {
		o := Offline{Latency: latency}
		for _, err := range everyTurn(&o, ctx, "t", h) {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Latency %v with a cancelled context: error %v, want context.Canceled", latency, err)
			}
		}
	}
}

func TestUsage(t *testing.T) {
	var o Offline
	tests := []struct {
		prompt     string
		wantPrompt int
	}{
		{"", 1},
		{"abc", 1},
		{strings.Repeat("x", 400), 100},
	}
	for _, tt := range tests {
		req := genReq("usage")
		req.Prompt = tt.prompt
		h, u, err := o.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if u.PromptTokens != tt.wantPrompt || u.Requests != 1 {
			t.Errorf("prompt of %d bytes: usage %+v, want %d prompt tokens and 1 request", len(tt.prompt), u, tt.wantPrompt)
		}
		// The completion is the answer's JSON: a little longer than its text.
		if text := len(h.Title + h.Statement + h.Rationale + strings.Join(h.Predictions, "")); u.CompletionTokens < text/4 || u.CompletionTokens > text/4+60 {
			t.Errorf("%d completion tokens for %d bytes of text", u.CompletionTokens, text)
		}
	}
}
