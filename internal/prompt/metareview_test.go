package prompt

import (
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

func TestMetaReview(t *testing.T) {
	req := research.MetaReviewRequest{
		Goal:  goal,
		Round: 4,
		Reviews: []research.Review{
			{HypothesisID: "h-7", Type: "full", Verdict: "revise", Critique: "The main weakness is that\nthe mediator is unseen."},
			{HypothesisID: "h-9", Type: "deep_verification", Verdict: "reject", Critique: "Weak.", Assumptions: []research.Assumption{
				{Text: "tau is released at synapses", Verdict: "holds"},
				{Text: "release depends on activity", Verdict: "fails"},
			}},
		},
		Debates: []research.Debate{{A: "h-7", B: "h-9", Turns: make([]research.DebateTurn, 3), Winner: "h-9", Reasoning: "B is testable."}},
	}
	p := MetaReview(req).Prompt
	containsAll(t, p, goal, "Round 4.", "Reviews (2):", "- h-7 (full review, revise): The main weakness is that the mediator is unseen.",
		"Failed assumptions: release depends on activity.", "Debates (1):", "- h-7 vs h-9, 3 turns, won by h-9: B is testable.",
		"most frequent first", "generation agent", "reflection agent", `"feedback"`,
		"Hypotheses of this round: h-7, h-9\n", `"delegations"`, "at most 2", `task "verify" for a promising hypothesis whose assumptions`,
		`task "evolve" for one worth a line of its own`, `"reason"`)
	containsNone(t, p, "tau is released at synapses", "no hypothesis to hand")
	empty := MetaReview(research.MetaReviewRequest{Goal: goal, Round: 1}).Prompt
	containsAll(t, empty, "Reviews (0):\n(none)", "Debates (0):\n(none)", "Hypotheses of this round: (none)", `There is no hypothesis to hand to a subagent: leave "delegations" empty.`)
}

func TestRoundHypotheses(t *testing.T) {
	tests := []struct {
		name string
		req  research.MetaReviewRequest
		want []string
	}{
		{"empty", research.MetaReviewRequest{}, nil},
		{"reviews, then debates, each once", research.MetaReviewRequest{
			Reviews: []research.Review{{HypothesisID: "h-2"}, {HypothesisID: "h-1"}, {HypothesisID: "h-2"}, {HypothesisID: " "}},
			Debates: []research.Debate{{A: "h-1", B: "h-3"}, {A: "h-4", B: "h-2"}},
		}, []string{"h-2", "h-1", "h-3", "h-4"}},
		{"debates only", research.MetaReviewRequest{Debates: []research.Debate{{A: "h-5", B: "h-6"}}}, []string{"h-5", "h-6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RoundHypotheses(tt.req); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseMetaReview(t *testing.T) {
	const good = `{"critiques": ["mediator unseen (5 of 9 reviews)", "effect too small"], "strengths": ["falsifiable"], "feedback": "Propose mediators that can be imaged."}`
	testParse(t, AgentMetaReview, ParseMetaReview, []parseCase{
		{"good", good, nil},
		{"nothing recurs", `{"critiques": [], "strengths": [], "feedback": "Carry on."}`, nil},
		{"critiques missing", `{"strengths": [], "feedback": "f"}`, []string{`"critiques" is missing`}},
		{"strengths missing", `{"critiques": [], "feedback": "f"}`, []string{`"strengths" is missing`}},
		{"blank critique", strings.Replace(good, `"effect too small"`, `""`, 1), []string{"critiques[1] is empty"}},
		{"too many critiques", `{"critiques": ["a", "b", "c", "d", "e", "f"], "strengths": [], "feedback": "f"}`, []string{`"critiques" has 6 items`}},
		{"no feedback", strings.Replace(good, "Propose mediators that can be imaged.", "", 1), []string{`"feedback" is empty`}},
		{"critiques as string", `{"critiques": "many", "strengths": [], "feedback": "f"}`, []string{"critiques", "an array"}},
		{"not JSON", "Too vague.", []string{"no JSON object"}},
	}, func(t *testing.T, m research.MetaReview) {
		if m.Feedback == "" || m.Critiques == nil || m.Strengths == nil {
			t.Errorf("got %+v", m)
		}
	})
}

// TestParseMetaReviewDelegations: a bad delegation is dropped, not the whole answer; the
// critique is worth keeping whatever the recommendations look like.
func TestParseMetaReviewDelegations(t *testing.T) {
	req := research.MetaReviewRequest{
		Reviews: []research.Review{{HypothesisID: "h-1"}, {HypothesisID: "h-2"}},
		Debates: []research.Debate{{A: "h-2", B: "h-3"}},
	}
	answer := func(delegations string) string {
		return `{"critiques": ["vague"], "strengths": [], "feedback": "Be specific.", "delegations": ` + delegations + `}`
	}
	verify1 := research.Delegation{Task: research.DelegateVerify, Hypothesis: "h-1", Reason: "best of the round"}
	evolve3 := research.Delegation{Task: research.DelegateEvolve, Hypothesis: "h-3", Reason: "worth a line"}
	long := strings.Repeat("why ", 100)
	tests := []struct {
		name string
		raw  string
		want []research.Delegation
	}{
		{"good", answer(`[{"task": "verify", "hypothesis_id": "h-1", "reason": "best of the round"}, {"task": "evolve", "hypothesis_id": "h-3", "reason": "worth a line"}]`),
			[]research.Delegation{verify1, evolve3}},
		{"none", answer(`[]`), nil},
		{"field missing", `{"critiques": [], "strengths": [], "feedback": "f"}`, nil},
		{"null", answer(`null`), nil},
		{"not an array", answer(`"verify h-1"`), nil},
		{"unknown task", answer(`[{"task": "replicate", "hypothesis_id": "h-2", "reason": "r"}, {"task": "verify", "hypothesis_id": "h-1", "reason": "best of the round"}]`),
			[]research.Delegation{verify1}},
		{"unknown id", answer(`[{"task": "verify", "hypothesis_id": "h-9", "reason": "r"}, {"task": "evolve", "hypothesis_id": "h-3", "reason": "worth a line"}]`),
			[]research.Delegation{evolve3}},
		{"empty id", answer(`[{"task": "verify", "hypothesis_id": " ", "reason": "r"}]`), nil},
		{"item not an object", answer(`["verify h-1", {"task": "verify", "hypothesis_id": "h-1", "reason": "best of the round"}]`),
			[]research.Delegation{verify1}},
		{"field of the wrong type", answer(`[{"task": "verify", "hypothesis_id": 1, "reason": "r"}]`), nil},
		{"too many", answer(`[{"task": "verify", "hypothesis_id": "h-1", "reason": "best of the round"}, {"task": "evolve", "hypothesis_id": "h-3", "reason": "worth a line"}, {"task": "evolve", "hypothesis_id": "h-2", "reason": "r"}]`),
			[]research.Delegation{verify1, evolve3}},
		{"bad ones do not count toward the limit", answer(`[{"task": "x", "hypothesis_id": "h-1", "reason": "r"}, {"task": "verify", "hypothesis_id": "h-9", "reason": "r"}, {"task": "verify", "hypothesis_id": "h-1", "reason": "best of the round"}, {"task": "evolve", "hypothesis_id": "h-3", "reason": "worth a line"}]`),
			[]research.Delegation{verify1, evolve3}},
		{"repeat", answer(`[{"task": "verify", "hypothesis_id": "h-1", "reason": "best of the round"}, {"task": "verify", "hypothesis_id": "h-1", "reason": "again"}]`),
			[]research.Delegation{verify1}},
		{"tidied", answer(`[{"task": " Verify ", "hypothesis_id": " h-1 ", "reason": "best\n of the   round"}]`), []research.Delegation{verify1}},
		{"blank reason", answer(`[{"task": "evolve", "hypothesis_id": "h-2", "reason": ""}]`),
			[]research.Delegation{{Task: research.DelegateEvolve, Hypothesis: "h-2", Reason: "The meta-review asks for an evolution line of its own from h-2"}}},
		{"long reason", answer(`[{"task": "verify", "hypothesis_id": "h-1", "reason": "` + long + `"}]`),
			[]research.Delegation{{Task: research.DelegateVerify, Hypothesis: "h-1", Reason: string([]rune(strings.TrimSpace(long))[:MaxReasonLength-1]) + "…"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMetaReviewFor(req, []byte(tt.raw))
			if err != nil {
				t.Fatalf("ParseMetaReviewFor: %v", err)
			}
			if !slices.Equal(m.Delegations, tt.want) {
				t.Errorf("delegations:\n%q\nwant\n%q", m.Delegations, tt.want)
			}
			if m.Feedback == "" {
				t.Errorf("the critique was lost: %+v", m)
			}
		})
	}

	// Without the request, ParseMetaReview cannot check ids, but checks everything else.
	raw := answer(`[{"task": "verify", "hypothesis_id": "h-9", "reason": "r"}, {"task": "fork", "hypothesis_id": "h-1", "reason": "r"}]`)
	if m, err := ParseMetaReview([]byte(raw)); err != nil || len(m.Delegations) != 1 || m.Delegations[0].Hypothesis != "h-9" {
		t.Errorf("ParseMetaReview: %+v, %v", m.Delegations, err)
	}
	// A request that names no hypothesis admits no delegation.
	if m, err := ParseMetaReviewFor(research.MetaReviewRequest{}, []byte(raw)); err != nil || m.Delegations != nil {
		t.Errorf("ParseMetaReviewFor an empty round: %+v, %v", m.Delegations, err)
	}
}

func TestCheckDelegations(t *testing.T) {
	ds := []research.Delegation{
		{Task: "verify", Hypothesis: "h-1", Reason: "r"},
		{Task: "evolve", Hypothesis: "h-2", Reason: "r"},
		{Task: "evolve", Hypothesis: "h-1", Reason: "r"},
	}
	tests := []struct {
		name  string
		known []string
		want  []string // "task hypothesis"
	}{
		{"all known: the first two", []string{"h-1", "h-2"}, []string{"verify h-1", "evolve h-2"}},
		{"one unknown", []string{"h-1"}, []string{"verify h-1", "evolve h-1"}},
		{"none known", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range CheckDelegations(ds, tt.known) {
				got = append(got, d.Task+" "+d.Hypothesis)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
