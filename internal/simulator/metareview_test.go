package simulator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

func TestMetaReview(t *testing.T) {
	var o Offline
	review := func(id, verdict, critique string, as ...research.Assumption) research.Review {
		return research.Review{HypothesisID: id, Type: "full", Verdict: verdict, Critique: critique, Assumptions: as}
	}
	const mediator = "the proposed mediator has not been observed directly"
	const simpler = "the predictions do not rule out a simpler explanation"
	req := research.MetaReviewRequest{
		TurnID: "meta-3", Goal: goal, Round: 3, Prompt: "p",
		Reviews: []research.Review{
			review("h1", "revise", "Full review: x. Its main strength is that its predictions are falsifiable. The main weakness is that "+simpler+"."),
			review("h2", "reject", "Full review: x. Its main strength is that it addresses the goal directly. The main weakness is that "+mediator+"."),
			review("h3", "accept", "Full review: x. Its main strength is that its predictions are falsifiable. The main weakness is that "+mediator+".",
				research.Assumption{Text: "a", Verdict: "fails"}),
			review("h4", "revise", "Initial review: x. The main weakness is that "+mediator+". Safety concern: dual use."),
			review("h5", "revise", "Too vague to test. Needs a dose."),
		},
		Debates: []research.Debate{{A: "h1", B: "h2", Winner: "h1", Reasoning: `Hypothesis A ("t") wins: its strength is that it makes sharper, more falsifiable predictions; hypothesis B's ("u") weakness is that ` + simpler + "."}},
	}
	m, u, err := o.MetaReview(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if m.Round != 3 || u.Requests != 1 {
		t.Errorf("round %d, usage %+v", m.Round, u)
	}
	want := []string{
		"The proposed mediator has not been observed directly (3 of 6 reviews and debates)",
		"The predictions do not rule out a simpler explanation (2 of 6 reviews and debates)",
		"A key assumption fails on deep verification (1 of 6 reviews and debates)",
		"The hypothesis raises a safety concern: dual use (1 of 6 reviews and debates)",
		"Needs a dose (1 of 6 reviews and debates)",
	}
	if !slices.Equal(m.Critiques, want) {
		t.Errorf("critiques:\n%q\nwant\n%q", m.Critiques, want)
	}
	if len(m.Strengths) == 0 || m.Strengths[0] != "Its predictions are falsifiable (2 of 6 reviews and debates)" {
		t.Errorf("strengths: %q", m.Strengths)
	}
	for _, w := range []string{"To the generation agent", "in round 3", mediator, "names a mediator that can be measured directly", "To the reflection agent", "1 of 5 reviews accepted"} {
		if !strings.Contains(m.Feedback, w) {
			t.Errorf("feedback does not contain %q: %s", w, m.Feedback)
		}
	}

	// At most five critiques, however many kinds there are.
	var many []research.Review
	for i := range 12 {
		many = append(many, review(fmt.Sprint("h", i), "revise", fmt.Sprintf("The main weakness is that problem %d is open.", i)))
	}
	if m, _, err := o.MetaReview(context.Background(), research.MetaReviewRequest{TurnID: "many", Reviews: many}); err != nil || len(m.Critiques) != 5 {
		t.Errorf("%d critiques from 12 kinds, %v; want 5", len(m.Critiques), err)
	}
	// Nothing to read is not an error.
	if m, _, err := o.MetaReview(context.Background(), research.MetaReviewRequest{TurnID: "empty", Round: 1}); err != nil || len(m.Critiques) != 0 || m.Feedback == "" {
		t.Errorf("empty round: %+v, %v", m, err)
	}
}

// TestMetaReviewOfSimulatedReviews: the simulator's own reviews make a meta-review whose
// critiques recur.
func TestMetaReviewOfSimulatedReviews(t *testing.T) {
	var o Offline
	var reviews []research.Review
	for _, h := range generate(t, 30) {
		r, _, err := o.Review(context.Background(), research.ReviewRequest{TurnID: "r-" + h.ID, Type: research.ReviewFull, Hypothesis: h})
		if err != nil {
			t.Fatal(err)
		}
		reviews = append(reviews, r)
	}
	m, _, err := o.MetaReview(context.Background(), research.MetaReviewRequest{TurnID: "meta", Round: 1, Reviews: reviews})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Critiques) < 3 || len(m.Strengths) < 3 || !strings.Contains(m.Critiques[0], "of 30 reviews") {
		t.Errorf("meta-review of 30 simulated reviews: %+v", m)
	}
}

func TestOverview(t *testing.T) {
	var o Offline
	hs := generate(t, 4)
	// Make two titles share words, as related hypotheses do.
	hs[0].Title, hs[2].Title = "Phase separation drives tau spread", "Phase separation limits tau spread at boundaries"
	req := research.OverviewRequest{
		TurnID: "overview", Goal: goal, Top: hs, Prompt: "p",
		Clusters:   [][]string{{hs[2].ID, hs[0].ID}, {hs[1].ID}, {hs[3].ID}},
		MetaReview: testMeta,
	}
	ov, u, err := o.Overview(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if u.Requests != 1 || ov.Summary == "" || !strings.Contains(ov.Summary, hs[0].ID) {
		t.Errorf("summary %q, usage %+v", ov.Summary, u)
	}
	if len(ov.Themes) != 3 {
		t.Fatalf("%d themes for 3 clusters", len(ov.Themes))
	}
	if th := ov.Themes[0]; th.Title != "Phase separation tau spread" || !slices.Equal(th.Hypotheses, req.Clusters[0]) || !strings.Contains(th.Note, "best ranked is "+hs[0].ID) {
		t.Errorf("first theme %+v", th)
	}
	if th := ov.Themes[1]; th.Title != hs[1].Title && !strings.HasPrefix(hs[1].Title, th.Title) {
		t.Errorf("a one-hypothesis theme is titled %q, want its hypothesis' title %q", th.Title, hs[1].Title)
	}
	if n := len(ov.OpenQuestions); n < 3 || n > 5 {
		t.Errorf("%d open questions, want 3 to 5", n)
	}
	if !strings.Contains(strings.Join(ov.OpenQuestions, " "), "recurring critique") {
		t.Errorf("open questions ignore the meta-review: %q", ov.OpenQuestions)
	}
	if n := len(ov.Experiments); n < 3 || n > 5 {
		t.Errorf("%d experiments, want 3 to 5", n)
	}
	for i, e := range ov.Experiments[:min(len(hs), len(ov.Experiments))] {
		if want := fmt.Sprintf("To test %s: %s", hs[i].ID, hs[i].Predictions[0]); e != want {
			t.Errorf("experiment %d = %q, want %q", i, e, want)
		}
	}
	// One hypothesis without clusters still gets 3 questions and 3 experiments.
	ov, _, err = o.Overview(context.Background(), research.OverviewRequest{TurnID: "one", Goal: goal, Top: hs[:1]})
	if err != nil || len(ov.Themes) != 0 || len(ov.OpenQuestions) != 3 || len(ov.Experiments) < 3 {
		t.Errorf("overview of one hypothesis: %+v, %v", ov, err)
	}
}

// TestMetaReviewDelegations: the simulator recommends a verification of the round's
// best-scored hypothesis on every second round and an evolution line of the runner-up on
// every third, and nothing when the round names no hypothesis.
func TestMetaReviewDelegations(t *testing.T) {
	var o Offline
	scored := func(id string, s float64) research.Review {
		return research.Review{HypothesisID: id, Type: "full", Verdict: "revise", Critique: "The main weakness is that it is vague.",
			Scores: research.Scores{Novelty: s, Plausibility: s, Testability: s, Safety: s}}
	}
	// h-2 has the best mean (8), h-3 comes second (7: 9 and 5), h-1 last; h-4 was only debated.
	reviews := []research.Review{scored("h-1", 4), scored("h-2", 8), scored("h-3", 9), scored("h-3", 5)}
	debates := []research.Debate{{A: "h-4", B: "h-1", Winner: "h-4", Reasoning: "r"}}
	tests := []struct {
		name    string
		round   int
		reviews []research.Review
		debates []research.Debate
		want    []string // "task hypothesis"
	}{
		{"round 1", 1, reviews, debates, nil},
		{"round 2: verify the best", 2, reviews, debates, []string{"verify h-2"}},
		{"round 3: evolve the runner-up", 3, reviews, debates, []string{"evolve h-3"}},
		{"round 4", 4, reviews, debates, []string{"verify h-2"}},
		{"round 5", 5, reviews, debates, nil},
		{"round 6: both", 6, reviews, debates, []string{"verify h-2", "evolve h-3"}},
		{"round 6, one hypothesis: no other to evolve", 6, reviews[:1], nil, []string{"verify h-1"}},
		{"round 6, nothing reviewed: debated ones in order", 6, nil, debates, []string{"verify h-4", "evolve h-1"}},
		{"round 6, empty round", 6, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := research.MetaReviewRequest{TurnID: fmt.Sprint("meta-", tt.round), Goal: goal, Round: tt.round, Reviews: tt.reviews, Debates: tt.debates, Seed: 3}
			m, _, err := o.MetaReview(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range m.Delegations {
				got = append(got, d.Task+" "+d.Hypothesis)
				if d.Reason == "" || utf8.RuneCountInString(d.Reason) > 150 || !strings.HasPrefix(d.Reason, d.Hypothesis+" is the round's ") {
					t.Errorf("reason %q: want a short one naming %s", d.Reason, d.Hypothesis)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("delegations %q, want %q", got, tt.want)
			}
			again, _, _ := o.MetaReview(context.Background(), req)
			if !slices.Equal(again.Delegations, m.Delegations) {
				t.Errorf("a replayed turn recommends %+v, then %+v", m.Delegations, again.Delegations)
			}
		})
	}
	m, _, _ := o.MetaReview(context.Background(), research.MetaReviewRequest{TurnID: "m", Round: 6, Reviews: reviews})
	if want := "h-2 is the round's best (8.0 of 10): check its assumptions one by one before it leads further."; m.Delegations[0].Reason != want {
		t.Errorf("reason %q, want %q", m.Delegations[0].Reason, want)
	}
}
