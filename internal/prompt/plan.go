// The supervisor: the research plan every agent follows, written before any hypothesis.

package prompt

import (
	"encoding/json"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

// Limits of the plan, which its schema states and ParsePlan enforces.
const (
	MaxSummaryLength = 200 // characters in the plan's summary
	MaxPlanItems     = 5   // preferences, constraints or criteria in a plan
)

// PlanSchema is the JSON schema of the supervisor's research plan.
var PlanSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "preferences": {"type": "array", "minItems": 1, "maxItems": 5, "items": {"type": "string"}, "description": "what kind of hypotheses the scientist wants (3 to 5)"},
    "constraints": {"type": "array", "minItems": 1, "maxItems": 5, "items": {"type": "string"}, "description": "what every hypothesis must respect (3 to 5)"},
    "evaluation_criteria": {"type": "array", "minItems": 1, "maxItems": 5, "items": {"type": "string"}, "description": "how hypotheses will be judged (3 to 5)"},
    "summary": {"type": "string", "maxLength": 200, "description": "the plan in one sentence"}
  },
  "required": ["preferences", "constraints", "evaluation_criteria", "summary"],
  "additionalProperties": false
}`)

var planTask = template.Must(template.New("plan").Parse(`
You are the supervisor. Before any hypothesis is generated, turn the research goal into a research plan that every agent will follow. Write:
- preferences: 3 to 5 statements of what kind of hypotheses the scientist wants (mechanistic, novel, close to the clinic, ...);
- constraints: 3 to 5 statements of what every hypothesis must respect (scope, methods, ethics and safety);
- evaluation_criteria: 3 to 5 criteria the reviewers and judges will apply;
- summary: the plan in one sentence of at most 200 characters.
Read them from the goal; do not invent requirements the goal does not imply. Answer with one JSON object that matches the answer schema, and nothing else.
`))

// Plan renders the supervisor's prompt: the research plan for req.Goal. It is all prefix:
// nothing in it is the call's own.
func Plan(req research.PlanRequest) Text {
	return compose(shared(req.Goal, research.Context{}), render(planTask, nil), "")
}

// ParsePlan reads the supervisor's research plan.
func ParsePlan(raw []byte) (research.Plan, error) {
	var a struct {
		Preferences []string `json:"preferences"`
		Constraints []string `json:"constraints"`
		Criteria    []string `json:"evaluation_criteria"`
		Summary     string   `json:"summary"`
	}
	if err := decode(AgentSupervisor, raw, &a); err != nil {
		return research.Plan{}, err
	}
	var p research.Plan
	var err error
	if p.Preferences, err = list(AgentSupervisor, "preferences", a.Preferences, 1, MaxPlanItems); err != nil {
		return research.Plan{}, err
	}
	if p.Constraints, err = list(AgentSupervisor, "constraints", a.Constraints, 1, MaxPlanItems); err != nil {
		return research.Plan{}, err
	}
	if p.Criteria, err = list(AgentSupervisor, "evaluation_criteria", a.Criteria, 1, MaxPlanItems); err != nil {
		return research.Plan{}, err
	}
	p.Summary = strings.TrimSpace(a.Summary)
	switch n := utf8.RuneCountInString(p.Summary); {
	case n == 0:
		return research.Plan{}, malformed(AgentSupervisor, `"summary" is empty; state the plan in one sentence`)
	case n > MaxSummaryLength:
		return research.Plan{}, malformed(AgentSupervisor, `"summary" is %d characters; at most %d: one short sentence`, n, MaxSummaryLength)
	}
	return p, nil
}

// PlanSpec is the supervisor's model call: the research plan.
var PlanSpec = Spec[research.PlanRequest, research.Plan]{
	Agent: AgentSupervisor, Schema: fixed[research.PlanRequest]("research_plan", PlanSchema), Parse: parsed[research.PlanRequest](ParsePlan),
}
