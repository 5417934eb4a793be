// The generation agent: one new hypothesis by one of four strategies. Its answer, a
// hypothesis, is also the evolution agent's (see evolution.go).

package prompt

import (
	"encoding/json"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

// DefaultStrategy is the generation strategy used when a request names none.
const DefaultStrategy = research.StrategyLiterature

// MaxTitleLength is how many characters a hypothesis title may have.
const MaxTitleLength = 100

// HypothesisSchema is the JSON schema of the generation and evolution agents' answer.
var HypothesisSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "title": {"type": "string", "maxLength": 100, "description": "a short name for the hypothesis"},
    "statement": {"type": "string", "description": "the hypothesis itself, in one or two sentences"},
    "rationale": {"type": "string", "description": "why it is plausible, citing mechanisms or evidence, and how the strategy produced it"},
    "testable_predictions": {"type": "array", "minItems": 1, "items": {"type": "string"}, "description": "observations that would support or refute it"}
  },
  "required": ["title", "statement", "rationale", "testable_predictions"],
  "additionalProperties": false
}`)

// GroundedHypothesisSchema is HypothesisSchema with references, for a turn that may call
// tools.
var GroundedHypothesisSchema = Grounded(HypothesisSchema)

// HypothesisSchemaFor returns the schema of a generation or evolution answer: with
// references when the turn may call tools.
func HypothesisSchemaFor(t research.Tooling) json.RawMessage {
	if t.On() {
		return GroundedHypothesisSchema
	}
	return HypothesisSchema
}

// strategyNames are the generation strategies as a prompt names them.
var strategyNames = map[string]string{
	research.StrategyLiterature:  "literature exploration",
	research.StrategyDebate:      "simulated scientific debate",
	research.StrategyAssumptions: "iterative assumption identification",
	research.StrategyFeedback:    "research expansion from feedback",
}

// strategyMethods say, per generation strategy, how to work.
var strategyMethods = map[string]string{
	research.StrategyLiterature:  "Recall what is published about the goal, read the most relevant work critically, and propose a hypothesis that goes beyond it: a link no paper has made, or a mechanism that would reconcile conflicting findings. In the rationale, say which findings it builds on.",
	research.StrategyDebate:      "Imagine several experts from different fields debating the goal. Each proposes a hypothesis; the others attack its weakest point; the proposals are revised turn by turn until the panel converges. Write down the hypothesis they converge on, and in the rationale say who proposed what and what the debate changed.",
	research.StrategyAssumptions: "List the assumptions a testable hypothesis for this goal needs, and check that each is plausible on its own. Then build one hypothesis on the assumptions that survive. In the rationale, name the assumptions it rests on, in order.",
	research.StrategyFeedback:    "Read the meta-review of the last round and the scientist's feedback above. Propose a hypothesis in a direction the session has not covered yet, one that avoids the recurring weaknesses and keeps the recurring strengths. In the rationale, say which critique it answers.",
}

// StrategyName is a generation strategy as a prompt names it ("literature exploration");
// a strategy cosci does not know is named as given.
func StrategyName(strategy string) string {
	if n, ok := strategyNames[strategy]; ok {
		return n
	}
	return strategy
}

var (
	generateTask = template.Must(template.New("generate").Parse(`
You are the generation agent. Propose ONE new, specific and testable hypothesis that serves the goal{{if .Focus}} and addresses the newest focus{{end}}{{if .Plan}}, respects the plan's constraints and does well on its evaluation criteria{{end}}{{if .MetaReview}}, and avoids the recurring critique of the last round{{end}}, working by the strategy named below. Give it a title of at most 100 characters, state it in one or two sentences, say in the rationale why it is plausible and how the strategy produced it, and list the observations that would support or refute it as testable_predictions.
{{.Grounding}}Answer with one JSON object that matches the answer schema, and nothing else.
`))
	generateOwn = template.Must(template.New("generate-own").Parse(`
Strategy: {{.Strategy}}. {{.Method}}{{if .ID}}
The new hypothesis will be known as {{.ID}}.{{end}}
`))
)

// Generate renders the generation agent's prompt: one new hypothesis for the goal, by
// req.Strategy (one of research.Strategies; DefaultStrategy when empty), in req.Context.
// The focus is req.Focus, or req.Context.Focus when req.Focus is empty.
func Generate(req research.GenerateRequest) Text {
	strategy := strings.TrimSpace(req.Strategy)
	if strategy == "" {
		strategy = DefaultStrategy
	}
	method, ok := strategyMethods[strategy]
	if !ok {
		method = "Follow it as its name suggests."
	}
	c := req.Context
	if len(req.Focus) > 0 {
		c.Focus = req.Focus
	}
	if strategy == research.StrategyFeedback && c.MetaReview == nil {
		method += " There is no meta-review yet: expand on the scientist's feedback and the plan instead."
	}
	task := render(generateTask, map[string]any{
		"Focus":      newest(c.Focus) != "",
		"Plan":       c.Plan != nil,
		"MetaReview": hasMetaReview(c),
		"Grounding":  grounding(req.Tooling, "the hypothesis"),
	})
	own := render(generateOwn, map[string]any{"Strategy": StrategyName(strategy), "Method": method, "ID": req.HypothesisID})
	return compose(shared(req.Goal, c), task, own)
}

// ParseHypothesis reads a generation agent's answer. The result has only the fields a
// model writes (title, statement, rationale, predictions); the caller sets the rest.
func ParseHypothesis(raw []byte) (research.Hypothesis, error) {
	return parseHypothesis(AgentGeneration, raw)
}

func parseHypothesis(agent string, raw []byte) (research.Hypothesis, error) {
	var a struct {
		Title       string     `json:"title"`
		Statement   string     `json:"statement"`
		Rationale   string     `json:"rationale"`
		Predictions []string   `json:"testable_predictions"`
		References  []ModelRef `json:"references"`
	}
	refs, err := decodeGrounded(agent, raw, &a, &a.References)
	if err != nil {
		return research.Hypothesis{}, err
	}
	h := research.Hypothesis{
		Title:      strings.TrimSpace(a.Title),
		Statement:  strings.TrimSpace(a.Statement),
		Rationale:  strings.TrimSpace(a.Rationale),
		References: refs,
	}
	for i, p := range a.Predictions {
		p = strings.TrimSpace(p)
		if p == "" {
			return research.Hypothesis{}, malformed(agent, "testable_predictions[%d] is empty; remove it or state a prediction", i)
		}
		h.Predictions = append(h.Predictions, p)
	}
	if err := h.Check(); err != nil {
		return research.Hypothesis{}, malformed(agent, "%v; give title, statement, rationale and at least one testable prediction", err)
	}
	if n := utf8.RuneCountInString(h.Title); n > MaxTitleLength {
		return research.Hypothesis{}, malformed(agent, "the title is %d characters; at most %d: shorten it and put the detail in the statement", n, MaxTitleLength)
	}
	return h, nil
}

// GenerateSpec is the generation agent's model call: one hypothesis, which carries the
// request's id, goal and strategy, and Origin "generation".
var GenerateSpec = Spec[research.GenerateRequest, research.Hypothesis]{
	Agent: AgentGeneration,
	Schema: func(req research.GenerateRequest) (string, json.RawMessage) {
		return "hypothesis", hypothesisSchema(req.Tooling, req.Context)
	},
	Parse: func(req research.GenerateRequest, raw []byte) (research.Hypothesis, error) {
		h, err := ParseHypothesis(raw)
		if err != nil {
			return research.Hypothesis{}, err
		}
		h.ID, h.Goal, h.Origin, h.Strategy = req.HypothesisID, req.Goal, "generation", req.Strategy
		return h, nil
	},
}
