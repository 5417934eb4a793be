package prompt

import (
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

func TestPlan(t *testing.T) {
	p := Plan(research.PlanRequest{Goal: goal}).Prompt
	containsAll(t, p, "supervisor", goal, "preferences", "constraints", "evaluation_criteria", "3 to 5", "at most 200 characters", "summary:")
}

func TestParsePlan(t *testing.T) {
	const good = `{"preferences": ["mechanistic", "novel"], "constraints": ["no human experiments"], "evaluation_criteria": ["testable in mice", "explains spread"], "summary": "Mechanistic hypotheses on tau spread."}`
	testParse(t, AgentSupervisor, ParsePlan, []parseCase{
		{"good", good, nil},
		{"fenced", "Plan:\n```json\n" + good + "\n```", nil},
		{"missing criteria", strings.Replace(good, `"evaluation_criteria": ["testable in mice", "explains spread"], `, "", 1), []string{`"evaluation_criteria" has 0 items`}},
		{"empty constraints", strings.Replace(good, `["no human experiments"]`, `[]`, 1), []string{`"constraints" has 0 items`}},
		{"blank preference", strings.Replace(good, `"novel"`, `" "`, 1), []string{"preferences[1] is empty"}},
		{"too many", strings.Replace(good, `["mechanistic", "novel"]`, `["a", "b", "c", "d", "e", "f"]`, 1), []string{`"preferences" has 6 items`, "at most 5"}},
		{"no summary", strings.Replace(good, "Mechanistic hypotheses on tau spread.", "", 1), []string{`"summary" is empty`}},
		{"long summary", strings.Replace(good, "Mechanistic hypotheses on tau spread.", strings.Repeat("w ", 101), 1), []string{`"summary" is 201 characters`}},
		{"criteria as string", strings.Replace(good, `["testable in mice", "explains spread"]`, `"testable"`, 1), []string{"evaluation_criteria", "an array"}},
		{"truncated", good[:50], []string{"truncated"}},
		{"not JSON", "Study tau.", []string{"no JSON object"}},
	}, func(t *testing.T, p research.Plan) {
		if !slices.Equal(p.Preferences, []string{"mechanistic", "novel"}) || len(p.Constraints) != 1 || len(p.Criteria) != 2 || p.Summary == "" {
			t.Errorf("got %+v", p)
		}
	})
}
