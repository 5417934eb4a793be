// The meta-review agent's round turn: the recurring critique of a round and the work it
// hands to subagents (delegations).

package prompt

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

// Limits of a meta-review, which its schema states and its parser enforces.
const (
	MaxMetaItems    = 5   // critiques or strengths in a meta-review
	MaxDelegations  = 2   // subagents a meta-review may recommend per round
	MaxReasonLength = 300 // characters in a delegation's reason (it becomes an intention)
)

// MetaReviewSchema is the JSON schema of the meta-review agent's answer.
var MetaReviewSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "critiques": {"type": "array", "maxItems": 5, "items": {"type": "string"}, "description": "the recurring weaknesses, most frequent first"},
    "strengths": {"type": "array", "maxItems": 5, "items": {"type": "string"}, "description": "the recurring strengths, most frequent first"},
    "feedback": {"type": "string", "description": "one paragraph addressed to the generation and reflection agents"},
    "delegations": {
      "type": "array",
      "maxItems": 2,
      "description": "work to hand to subagents, at most 2; empty when nothing deserves it",
      "items": {
        "type": "object",
        "properties": {
          "task": {"type": "string", "enum": ["verify", "evolve"], "description": "verify: deep verification of a promising hypothesis whose assumptions are unchecked; evolve: an evolution line of its own"},
          "hypothesis_id": {"type": "string", "description": "the id of a hypothesis of this round"},
          "reason": {"type": "string", "maxLength": 300, "description": "one sentence: what the subagent should find out"}
        },
        "required": ["task", "hypothesis_id", "reason"],
        "additionalProperties": false
      }
    }
  },
  "required": ["critiques", "strengths", "feedback", "delegations"],
  "additionalProperties": false
}`)

var (
	metaReviewTask = template.Must(template.New("metareview").Parse(`
You are the meta-review agent. Read every review and debate of the round below and find what recurs. Group the reviews' critiques by the weakness they name, and list the recurring weaknesses as "critiques", most frequent first (at most 5). List the recurring strengths likewise. Then write "feedback": one paragraph addressed to the generation agent (what to propose next and what to avoid) and to the reflection agent (what to check more closely).
Last, you may hand work to subagents, which pursue it on their own while the session goes on. List it in "delegations" as [{"task", "hypothesis_id", "reason"}], at most 2, each on a hypothesis of this round named by its id: task "verify" for a promising hypothesis whose assumptions no review has checked yet (a deep verification of it alone), task "evolve" for one worth a line of its own (evolve it, then evolve the result, and so on). Say in "reason", in one short sentence, what the subagent should find out. A subagent costs as much as a round: leave "delegations" empty unless a hypothesis clearly deserves one, and always when the round names no hypothesis.
Answer with one JSON object that matches the answer schema, and nothing else.
`))
	metaReviewOwn = template.Must(template.New("metareview-own").Parse(`
Round {{.Round}}.
Reviews ({{len .Reviews}}):
{{range .Reviews}}- {{.}}
{{else}}(none)
{{end}}
Debates ({{len .Debates}}):
{{range .Debates}}- {{.}}
{{else}}(none)
{{end}}
Hypotheses of this round: {{if .Hypotheses}}{{.Hypotheses}}{{else}}(none){{end}}
{{if not .Hypotheses}}There is no hypothesis to hand to a subagent: leave "delegations" empty.
{{end}}`))
)

// MetaReview renders the meta-review agent's prompt: the recurring critique across one
// round's reviews and debates.
func MetaReview(req research.MetaReviewRequest) Text {
	reviews := make([]string, len(req.Reviews))
	for i, r := range req.Reviews {
		var failed []string
		for _, a := range r.Assumptions {
			if a.Verdict == "fails" {
				failed = append(failed, a.Text)
			}
		}
		s := fmt.Sprintf("%s (%s review, %s): %s", r.HypothesisID, r.Type, r.Verdict, oneLine(r.Critique))
		if len(failed) > 0 {
			s += " Failed assumptions: " + strings.Join(failed, "; ") + "."
		}
		reviews[i] = s
	}
	debates := make([]string, len(req.Debates))
	for i, d := range req.Debates {
		s := fmt.Sprintf("%s vs %s, %d turns", d.A, d.B, len(d.Turns))
		if d.Winner != "" {
			s += fmt.Sprintf(", won by %s: %s", d.Winner, oneLine(d.Reasoning))
		} else {
			s += ", undecided"
		}
		debates[i] = s
	}
	own := render(metaReviewOwn, map[string]any{
		"Round":      req.Round,
		"Reviews":    reviews,
		"Debates":    debates,
		"Hypotheses": strings.Join(RoundHypotheses(req), ", "),
	})
	return compose(shared(req.Goal, req.Context), render(metaReviewTask, nil), own)
}

// RoundHypotheses returns the ids of the hypotheses a meta-review request names, in its
// reviews and then its debates, each once, in order of first appearance. They are the
// only hypotheses the meta-review may delegate work on: an id the round did not name is
// one the model made up or misspelt.
func RoundHypotheses(req research.MetaReviewRequest) []string {
	var ids []string
	add := func(id string) {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, r := range req.Reviews {
		add(r.HypothesisID)
	}
	for _, d := range req.Debates {
		add(d.A)
		add(d.B)
	}
	return ids
}

// ParseMetaReview reads the meta-review agent's answer. The caller sets Round.
//
// It keeps the well-formed delegations (see CheckDelegations) but cannot tell whether
// their hypotheses are the round's; ParseMetaReviewFor can, and a caller that has the
// request should use it.
func ParseMetaReview(raw []byte) (research.MetaReview, error) {
	return parseMetaReview(raw, nil)
}

// ParseMetaReviewFor reads the meta-review agent's answer to req, keeping only the
// delegations on hypotheses req names (see RoundHypotheses). The caller sets Round.
func ParseMetaReviewFor(req research.MetaReviewRequest, raw []byte) (research.MetaReview, error) {
	ids := RoundHypotheses(req)
	return parseMetaReview(raw, &ids)
}

// parseMetaReview reads a meta-review; known, when not nil, lists the hypotheses that
// delegations may name.
func parseMetaReview(raw []byte, known *[]string) (research.MetaReview, error) {
	var a struct {
		Critiques *[]string `json:"critiques"`
		Strengths *[]string `json:"strengths"`
		Feedback  string    `json:"feedback"`
		// Raw, so that a badly shaped delegation costs only itself (see delegations).
		Delegations json.RawMessage `json:"delegations"`
	}
	if err := decode(AgentMetaReview, raw, &a); err != nil {
		return research.MetaReview{}, err
	}
	var m research.MetaReview
	var err error
	for _, f := range []struct {
		name string
		v    *[]string
		dst  *[]string
	}{{"critiques", a.Critiques, &m.Critiques}, {"strengths", a.Strengths, &m.Strengths}} {
		if f.v == nil {
			return research.MetaReview{}, malformed(AgentMetaReview, "%q is missing; give a list, empty if nothing recurs", f.name)
		}
		if *f.dst, err = list(AgentMetaReview, f.name, *f.v, 0, MaxMetaItems); err != nil {
			return research.MetaReview{}, err
		}
	}
	if m.Feedback = strings.TrimSpace(a.Feedback); m.Feedback == "" {
		return research.MetaReview{}, malformed(AgentMetaReview, `"feedback" is empty; write a paragraph to the generation and reflection agents`)
	}
	m.Delegations = delegations(a.Delegations, known)
	return m, nil
}

// delegations reads a meta-review's "delegations" leniently: the critique is worth
// keeping whatever the recommendations look like, and a repair turn for a bad one would
// cost more than the subagent is worth. So a field that is missing or not an array means
// none, and an item that is not a delegation object is dropped, as CheckDelegations drops
// the rest of the bad ones.
func delegations(raw json.RawMessage, known *[]string) []research.Delegation {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var ds []research.Delegation
	for _, it := range items {
		var d research.Delegation
		if json.Unmarshal(it, &d) == nil {
			ds = append(ds, d)
		}
	}
	return checkDelegations(ds, known)
}

// CheckDelegations returns the delegations worth starting, tidied: it drops those with a
// task not in research.DelegationTasks, with an empty hypothesis id or one not among
// hypotheses, and repeats of an earlier one, and then keeps the first MaxDelegations. A
// blank reason is filled in, and a long one shortened to MaxReasonLength characters,
// since it becomes the subagent's intention. It returns nil when none is left.
func CheckDelegations(ds []research.Delegation, hypotheses []string) []research.Delegation {
	return checkDelegations(ds, &hypotheses)
}

// checkDelegations is CheckDelegations; a nil known skips the check of the ids.
func checkDelegations(ds []research.Delegation, known *[]string) []research.Delegation {
	var out []research.Delegation
	for _, d := range ds {
		d.Task = strings.ToLower(strings.TrimSpace(d.Task))
		d.Hypothesis = strings.TrimSpace(d.Hypothesis)
		d.Reason = oneLine(d.Reason)
		switch {
		case !slices.Contains(research.DelegationTasks, d.Task),
			d.Hypothesis == "",
			known != nil && !slices.Contains(*known, d.Hypothesis),
			slices.ContainsFunc(out, func(o research.Delegation) bool { return o.Task == d.Task && o.Hypothesis == d.Hypothesis }):
			continue
		}
		if d.Reason == "" {
			d.Reason = defaultReasons[d.Task] + d.Hypothesis
		}
		if utf8.RuneCountInString(d.Reason) > MaxReasonLength {
			d.Reason = string([]rune(d.Reason)[:MaxReasonLength-1]) + "…"
		}
		if out = append(out, d); len(out) == MaxDelegations {
			break
		}
	}
	return out
}

// defaultReasons stand in for a reason the model left blank, followed by the hypothesis id.
var defaultReasons = map[string]string{
	research.DelegateVerify: "The meta-review asks for a deep verification of the assumptions of ",
	research.DelegateEvolve: "The meta-review asks for an evolution line of its own from ",
}

// MetaReviewSpec is the meta-review agent's model call: the recurring critique of a round,
// which carries the round.
var MetaReviewSpec = Spec[research.MetaReviewRequest, research.MetaReview]{
	Agent: AgentMetaReview, Schema: fixed[research.MetaReviewRequest]("meta_review", MetaReviewSchema),
	Parse: func(req research.MetaReviewRequest, raw []byte) (research.MetaReview, error) {
		mr, err := ParseMetaReviewFor(req, raw)
		if err != nil {
			return research.MetaReview{}, err
		}
		mr.Round = req.Round
		return mr, nil
	},
}
