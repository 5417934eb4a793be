package prompt

import (
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

func TestOverview(t *testing.T) {
	req := research.OverviewRequest{
		Goal:       goal,
		Top:        []research.Hypothesis{hyp, hyp2},
		Clusters:   [][]string{{"h-7"}, {"h-9", "h-11"}},
		MetaReview: meta,
	}
	p := Overview(req).Prompt
	containsAll(t, p, goal, "1. Hypothesis h-7: Tau seeding", "2. Hypothesis h-9: Synaptic tau", hyp2.Predictions[0],
		"- cluster 1: h-7\n- cluster 2: h-9, h-11", "Recurring critique from the last round: the proposed mediator",
		"one theme per cluster", "open questions", "suggested experiments")
	bare := Overview(research.OverviewRequest{Goal: goal, Top: []research.Hypothesis{hyp}}).Prompt
	containsAll(t, bare, "Clusters of related hypotheses:\n(none)")
	containsNone(t, bare, "Recurring critique")
}

func TestParseOverview(t *testing.T) {
	const good = `{"summary": "Spread follows synapses.", "themes": [{"title": "Synaptic release", "hypotheses": ["h-1", "h-3"], "note": "strongest cluster"}], "open_questions": ["Is release activity-dependent?"], "suggested_experiments": ["Silence neurons and measure tau."]}`
	testParse(t, AgentMetaReview, ParseOverview, []parseCase{
		{"good", good, nil},
		{"no themes", strings.Replace(good, `[{"title": "Synaptic release", "hypotheses": ["h-1", "h-3"], "note": "strongest cluster"}]`, `[]`, 1), nil},
		{"themes missing", `{"summary": "s", "open_questions": ["q"], "suggested_experiments": ["e"]}`, []string{`"themes" is missing`}},
		{"theme without title", strings.Replace(good, `"Synaptic release"`, `""`, 1), []string{"themes[0].title is empty"}},
		{"theme without hypotheses", strings.Replace(good, `["h-1", "h-3"]`, `[]`, 1), []string{`"themes[0].hypotheses" has 0 items`}},
		{"no summary", strings.Replace(good, "Spread follows synapses.", " ", 1), []string{`"summary" is empty`}},
		{"no questions", strings.Replace(good, `["Is release activity-dependent?"]`, `[]`, 1), []string{`"open_questions" has 0 items`}},
		{"too many experiments", strings.Replace(good, `["Silence neurons and measure tau."]`, `["a", "b", "c", "d", "e", "f"]`, 1), []string{`"suggested_experiments" has 6 items`}},
		{"truncated", good[:80], []string{"truncated"}},
	}, func(t *testing.T, o research.Overview) {
		if o.Summary == "" || o.Themes == nil || len(o.OpenQuestions) != 1 || len(o.Experiments) != 1 {
			t.Errorf("got %+v", o)
		}
	})
}
