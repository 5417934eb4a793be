package prompt

import (
	"slices"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

func TestGenerate(t *testing.T) {
	tests := []struct {
		name string
		req  research.GenerateRequest
		want []string
		not  []string
	}{
		{
			name: "default strategy, no focus",
			req:  research.GenerateRequest{Goal: goal},
			want: []string{goal, "Strategy: literature exploration.", "ONE", "testable_predictions"},
			not:  []string{"refined", "newest focus", "Recurring critique"},
		},
		{
			name: "focus in the request",
			req:  research.GenerateRequest{Goal: goal, Focus: []string{"consider microglia", "only in vivo evidence"}, Strategy: "analogy"},
			want: []string{goal, "- consider microglia\n- only in vivo evidence", "the last one matters most", "Strategy: analogy.", "addresses the newest focus"},
		},
		{
			name: "focus in the context",
			req:  research.GenerateRequest{Goal: goal, Context: research.Context{Focus: []string{"consider microglia"}}},
			want: []string{"- consider microglia", "addresses the newest focus"},
		},
		{
			name: "debate",
			req:  research.GenerateRequest{Goal: goal, Strategy: research.StrategyDebate},
			want: []string{"Strategy: simulated scientific debate.", "several experts", "converge"},
		},
		{
			name: "assumptions",
			req:  research.GenerateRequest{Goal: goal, Strategy: research.StrategyAssumptions},
			want: []string{"Strategy: iterative assumption identification.", "List the assumptions a testable hypothesis", "build one hypothesis on the"},
		},
		{
			name: "feedback with a meta-review",
			req:  research.GenerateRequest{Goal: goal, Strategy: research.StrategyFeedback, Context: research.Context{MetaReview: meta}},
			want: []string{"Strategy: research expansion from feedback.", "which critique it answers", "Recurring critique from the last round: the proposed mediator", "avoids the recurring critique"},
			not:  []string{"no meta-review yet"},
		},
		{
			name: "feedback before any meta-review",
			req:  research.GenerateRequest{Goal: goal, Strategy: research.StrategyFeedback},
			want: []string{"There is no meta-review yet"},
		},
		{
			name: "the new hypothesis' id, so that each call's prompt is its own",
			req:  research.GenerateRequest{Goal: goal, HypothesisID: "h-0007"},
			want: []string{"The new hypothesis will be known as h-0007."},
		},
		{
			name: "plan",
			req:  research.GenerateRequest{Goal: goal, Context: research.Context{Plan: plan}},
			want: []string{"Evaluation criteria:\n- predicts a measurable change", "does well on its evaluation criteria"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Generate(tt.req).Prompt
			containsAll(t, p, tt.want...)
			containsNone(t, p, tt.not...)
		})
	}
}

func TestParseHypothesis(t *testing.T) {
	testParse(t, AgentGeneration, ParseHypothesis, []parseCase{
		{"good", goodHypothesis, nil},
		{"fenced", "```json\n" + goodHypothesis + "\n```", nil},
		{"text around", "Here is my hypothesis:\n" + goodHypothesis + "\nI hope it helps {really}.", nil},
		{"brace in prose first", "Considering {A, B} I propose: " + goodHypothesis, nil},
		{"missing title", `{"statement": "s", "testable_predictions": ["p"]}`, []string{"no title"}},
		{"missing statement", `{"title": "t", "testable_predictions": ["p"]}`, []string{"no statement"}},
		{"no predictions", `{"title": "t", "statement": "s", "testable_predictions": []}`, []string{"no testable predictions"}},
		{"blank prediction", `{"title": "t", "statement": "s", "testable_predictions": ["p", "  "]}`, []string{"testable_predictions[1]"}},
		{"wrong type", `{"title": "t", "statement": "s", "testable_predictions": "p"}`, []string{"testable_predictions", "an array"}},
		{"truncated", goodHypothesis[:len(goodHypothesis)-20], []string{"truncated"}},
		{"truncated inside fence", "```json\n" + goodHypothesis[:60], []string{"truncated"}},
		{"not JSON", "I think exosomes spread tau.", []string{"no JSON object"}},
		{"invalid JSON", `{title: "t"}`, []string{"no valid JSON object"}},
		{"empty", "", []string{"no JSON object"}},
	}, func(t *testing.T, h research.Hypothesis) {
		want := research.Hypothesis{
			Title:       "Tau seeding via exosomes",
			Statement:   "Exosomes carry tau seeds between neurons.",
			Rationale:   "Exosomal tau is found in CSF.",
			Predictions: []string{"Blocking exosome release slows spread", "CSF exosomes seed tau in vitro"},
		}
		if h.Title != want.Title || h.Statement != want.Statement || h.Rationale != want.Rationale || !slices.Equal(h.Predictions, want.Predictions) {
			t.Errorf("got %+v, want %+v", h, want)
		}
	})
}
