// The evolution agent: a new hypothesis derived from the best, by one of six kinds.

package prompt

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	"github.com/cosci-dev/cosci/internal/research"
)

// evolutionNames are the evolution kinds as a prompt names them.
var evolutionNames = map[string]string{
	research.EvolveGrounding:      "enhancement through grounding",
	research.EvolveFeasibility:    "improvement of feasibility",
	research.EvolveInspiration:    "inspiration from existing hypotheses",
	research.EvolveCombination:    "combination",
	research.EvolveSimplification: "simplification",
	research.EvolveOutOfBox:       "out-of-the-box thinking",
}

// evolutionMethods say, per evolution kind, what to change.
var evolutionMethods = map[string]string{
	research.EvolveGrounding:      "Find the weakest, least supported part of the parent. Tie it to published evidence, fill the gaps in its reasoning, and keep what is already strong.",
	research.EvolveFeasibility:    "Make the parent testable with the methods, models and budgets that exist now. Replace any experiment that is impractical by one that can be run, and keep the core idea.",
	research.EvolveInspiration:    "Write a NEW hypothesis inspired by the parents, not a copy of any: keep what made them strong and explore a direction none of them took.",
	research.EvolveCombination:    "Merge the best parts of the parents into one coherent hypothesis. Say which part comes from which parent.",
	research.EvolveSimplification: "Write the simplest version of the parent that still explains what it explains and can still be tested. Drop whatever is not needed.",
	research.EvolveOutOfBox:       "Move away from the parents: propose a divergent hypothesis for the same question, using an analogy, a mechanism or a scale they do not consider.",
}

// EvolutionName is an evolution kind as a prompt names it ("enhancement through
// grounding"); a kind cosci does not know is named as given.
func EvolutionName(kind string) string {
	if n, ok := evolutionNames[kind]; ok {
		return n
	}
	return strings.ReplaceAll(kind, "_", " ")
}

var (
	evolveTask = template.Must(template.New("evolve").Parse(`
You are the evolution agent. You never edit a hypothesis: you write a new one that will compete with its parents. Write ONE new, specific and testable hypothesis from the parents below, by the kind of evolution named below{{if .Plan}}, that respects the plan's constraints{{end}}{{if .MetaReview}} and avoids the recurring critique of the last round{{end}}. Give it a title of at most 100 characters; in the rationale, say what you took from which parent (by id) and what you changed.
{{.Grounding}}Answer with one JSON object that matches the answer schema, and nothing else.
`))
	evolveOwn = template.Must(template.New("evolve-own").Parse(`{{range .Parents}}
{{.}}{{end}}
Evolution: {{.Kind}}. {{.Method}}{{if .ID}}
The new hypothesis will be known as {{.ID}}.{{end}}
`))
)

// Evolve renders the evolution agent's prompt: a new hypothesis of kind req.Kind (one of
// research.EvolutionKinds) from req.Parents, in req.Context.
func Evolve(req research.EvolveRequest) Text {
	method, ok := evolutionMethods[req.Kind]
	if !ok {
		method = "Improve on the parents as the kind's name suggests."
	}
	parents := make([]string, len(req.Parents))
	for i, p := range req.Parents {
		parents[i] = hypothesisText(fmt.Sprintf("Parent %d, hypothesis %s", i+1, p.ID), p)
	}
	task := render(evolveTask, map[string]any{
		"Plan":       req.Context.Plan != nil,
		"MetaReview": hasMetaReview(req.Context),
		"Grounding":  grounding(req.Tooling, "the new hypothesis"),
	})
	own := render(evolveOwn, map[string]any{"Parents": parents, "Kind": EvolutionName(req.Kind), "Method": method, "ID": req.HypothesisID})
	return compose(shared(req.Goal, req.Context), task, own)
}

// ParseEvolved reads an evolution agent's answer: a hypothesis, as ParseHypothesis reads
// it, whose errors name the evolution agent. The caller sets Origin, Strategy and Parents.
func ParseEvolved(raw []byte) (research.Hypothesis, error) {
	return parseHypothesis(AgentEvolution, raw)
}

// EvolveSpec is the evolution agent's model call: a new hypothesis from req.Parents, which
// carries the request's id, goal and kind (as Strategy), its parents' ids, and Origin
// "evolution".
var EvolveSpec = Spec[research.EvolveRequest, research.Hypothesis]{
	Agent: AgentEvolution,
	Schema: func(req research.EvolveRequest) (string, json.RawMessage) {
		return "hypothesis", hypothesisSchema(req.Tooling, req.Context)
	},
	Parse: func(req research.EvolveRequest, raw []byte) (research.Hypothesis, error) {
		h, err := ParseEvolved(raw)
		if err != nil {
			return research.Hypothesis{}, err
		}
		h.ID, h.Goal, h.Origin, h.Strategy = req.HypothesisID, req.Goal, "evolution", req.Kind
		h.Parents = nil
		for _, p := range req.Parents {
			h.Parents = append(h.Parents, p.ID)
		}
		return h, nil
	},
}
