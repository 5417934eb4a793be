// Package prompt holds what cosci says to a model, one prompt per agent, and the JSON
// schema of the answer each agent must give. Keeping prompt and schema side by side means
// a change to one is reviewed with the other, and Version names the pair so a session's
// record says which wording produced its hypotheses.
//
// The parsers (ParseHypothesis, ParseReview, ParseComparison) are the only way a model's
// answer enters the domain: they accept the small untidiness models add (a fenced block,
// a sentence before the object) and refuse anything that does not fit the schema.
package prompt

import (
	"bytes"
	"encoding/json"
	"strings"
	"text/template"

	"github.com/cosci-dev/cosci/internal/research"
)

// Version names this set of prompts and schemas. Change it whenever the wording or a
// schema changes, so results produced under different prompts are not mistaken for
// one another.
const Version = "v1"

// Agent names, as used in MalformedError.
const (
	AgentGeneration = "generation"
	AgentReflection = "reflection"
	AgentRanking    = "ranking"
)

// DefaultStrategy is the generation strategy used when a request names none.
const DefaultStrategy = "literature exploration"

// HypothesisSchema is the JSON schema of the generation agent's answer.
var HypothesisSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "title": {"type": "string", "maxLength": 100, "description": "a short name for the hypothesis"},
    "statement": {"type": "string", "description": "the hypothesis itself, in one or two sentences"},
    "rationale": {"type": "string", "description": "why it is plausible, citing mechanisms or evidence"},
    "testable_predictions": {"type": "array", "minItems": 1, "items": {"type": "string"}, "description": "observations that would support or refute it"}
  },
  "required": ["title", "statement", "rationale", "testable_predictions"],
  "additionalProperties": false
}`)

// ReviewSchema is the JSON schema of the reflection agent's answer.
var ReviewSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "scores": {
      "type": "object",
      "properties": {
        "novelty": {"type": "number", "minimum": 0, "maximum": 10},
        "plausibility": {"type": "number", "minimum": 0, "maximum": 10},
        "testability": {"type": "number", "minimum": 0, "maximum": 10},
        "safety": {"type": "number", "minimum": 0, "maximum": 10}
      },
      "required": ["novelty", "plausibility", "testability", "safety"],
      "additionalProperties": false
    },
    "critique": {"type": "string", "description": "the main strengths and weaknesses, in a few sentences"},
    "verdict": {"type": "string", "enum": ["accept", "revise", "reject"]}
  },
  "required": ["scores", "critique", "verdict"],
  "additionalProperties": false
}`)

// ComparisonSchema is the JSON schema of the ranking agent's answer.
var ComparisonSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "winner": {"type": "string", "enum": ["A", "B"]},
    "reasoning": {"type": "string", "description": "why the winner better serves the research goal"}
  },
  "required": ["winner", "reasoning"],
  "additionalProperties": false
}`)

// reviewChecks says, per review type, what the reviewer must check. A type missing here
// (a newer research.ReviewTypes entry) falls back to a general review.
var reviewChecks = map[string]string{
	research.ReviewInitial:          "An initial review is a quick screen: is the hypothesis correct on its face, new, and safe to pursue, without searching the literature.",
	research.ReviewFull:             "A full review weighs the hypothesis against the published literature: what is already known, what it adds, and whether its assumptions hold.",
	research.ReviewDeepVerification: "A deep verification review breaks the hypothesis into its assumptions and checks each one in turn, naming any that is false or unsupported.",
	research.ReviewObservation:      "An observation review asks whether the hypothesis explains observations already reported in the literature that other explanations do not.",
	research.ReviewSimulation:       "A simulation review walks step by step through the proposed mechanism or experiment, as if simulating it, and reports where it would fail.",
	research.ReviewTournament:       "A tournament review draws on what past matches revealed about strong and weak hypotheses for this goal, and judges this one by those lessons.",
}

var (
	generateTmpl = template.Must(template.New("generate").Parse(`You are the generation agent of an AI co-scientist.

Research goal:
{{.Goal}}
{{if .Focus}}
The scientist has refined the goal. Their focus, oldest first; the last one matters most:
{{range .Focus}}- {{.}}
{{end}}{{end}}
Strategy: {{.Strategy}}. Use it to propose ONE new, specific and testable hypothesis that serves the goal{{if .Focus}} and addresses the newest focus{{end}}.

Answer with one JSON object and nothing else, matching this schema:
{{.Schema}}
`))

	reviewTmpl = template.Must(template.New("review").Parse(`You are the reflection agent of an AI co-scientist. Review one hypothesis.

Research goal:
{{.Goal}}

Review type: {{.Type}}. {{.Checks}}

Hypothesis {{.H.ID}}: {{.H.Title}}
Statement: {{.H.Statement}}
Rationale: {{.H.Rationale}}
Testable predictions:
{{range .H.Predictions}}- {{.}}
{{end}}
Score novelty, plausibility, testability and safety, each from 0 to 10. In the critique, name the main weakness. Give the verdict "accept" if the hypothesis is ready to test, "revise" if it could be with changes, "reject" otherwise.

Answer with one JSON object and nothing else, matching this schema:
{{.Schema}}
`))

	compareTmpl = template.Must(template.New("compare").Parse(`You are the ranking agent of an AI co-scientist. Judge a match between two hypotheses.

Research goal:
{{.Goal}}
{{range .Pair}}
Hypothesis {{.Label}} ({{.H.ID}}): {{.H.Title}}
Statement: {{.H.Statement}}
Rationale: {{.H.Rationale}}
Testable predictions:
{{range .H.Predictions}}- {{.}}
{{end}}{{end}}
Which hypothesis better serves the research goal: more novel, more plausible, easier to test, and safe? Debate the strengths and weaknesses of each, then decide. There is no tie.

Answer with one JSON object and nothing else, matching this schema; "winner" is "A" or "B":
{{.Schema}}
`))
)

// Generate renders the generation agent's prompt: one new hypothesis for the goal.
func Generate(req research.GenerateRequest) string {
	strategy := strings.TrimSpace(req.Strategy)
	if strategy == "" {
		strategy = DefaultStrategy
	}
	return render(generateTmpl, map[string]any{
		"Goal":     req.Goal,
		"Focus":    req.Focus,
		"Strategy": strategy,
		"Schema":   compact(HypothesisSchema),
	})
}

// Review renders the reflection agent's prompt: a review of type reviewType (one of
// research.ReviewTypes) of hypothesis h.
func Review(goal, reviewType string, h research.Hypothesis) string {
	checks, ok := reviewChecks[reviewType]
	if !ok {
		checks = "Judge the hypothesis as a whole: is it correct, new, testable and safe?"
	}
	return render(reviewTmpl, map[string]any{
		"Goal":   goal,
		"Type":   reviewType,
		"Checks": checks,
		"H":      h,
		"Schema": compact(ReviewSchema),
	})
}

// Compare renders the ranking agent's prompt: which of a (labelled "A") and b (labelled
// "B") better serves the goal. The labels, not the ids, are what the model answers with,
// so a model cannot misspell an id into a winner that was not in the match.
func Compare(goal string, a, b research.Hypothesis) string {
	type labelled struct {
		Label string
		H     research.Hypothesis
	}
	return render(compareTmpl, map[string]any{
		"Goal":   goal,
		"Pair":   []labelled{{"A", a}, {"B", b}},
		"Schema": compact(ComparisonSchema),
	})
}

// render executes a template that is known to be well formed; the tests run every one,
// so a failure here is a bug in this package, not in the caller's input.
func render(t *template.Template, data any) string {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		panic("prompt: template " + t.Name() + ": " + err.Error())
	}
	return b.String()
}

// compact returns a schema on one line, keeping its field order: it costs fewer prompt
// tokens than the indented form kept in source for people to read.
func compact(schema json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, schema); err != nil {
		panic("prompt: schema is not JSON: " + err.Error())
	}
	return b.String()
}
