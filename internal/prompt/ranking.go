// The ranking agent: a match judged as a single comparison (Compare) or as a debate
// between two advocates and a judge (Debate).

package prompt

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	"github.com/cosci-dev/cosci/internal/research"
)

// ComparisonSchema is the JSON schema of the ranking agent's answer to a single comparison.
var ComparisonSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "winner": {"type": "string", "enum": ["A", "B"]},
    "reasoning": {"type": "string", "description": "why the winner better serves the research goal"}
  },
  "required": ["winner", "reasoning"],
  "additionalProperties": false
}`)

var (
	compareTask = template.Must(template.New("compare").Parse(`
You are the ranking agent. Judge a match between the two hypotheses below: which better serves the research goal, being more novel, more plausible, easier to test, and safe{{if .Plan}}, by the plan's evaluation criteria{{end}}? Debate the strengths and weaknesses of each, then decide. There is no tie. Judge what each hypothesis says, not how it is written: do not favour the one shown first, the longer one or the more confident one. Answer with one JSON object that matches the answer schema, and nothing else; "winner" is "A" or "B".
`))
	pairOwn = template.Must(template.New("pair").Parse(`{{range .Pair}}
{{.}}{{end}}`))
)

// Compare renders the ranking agent's prompt: which of req.A (labelled "A") and req.B
// (labelled "B") better serves the goal. The labels, not the ids, are what the model
// answers with, so a model cannot misspell an id into a winner that was not in the match.
func Compare(req research.CompareRequest) Text {
	task := render(compareTask, map[string]any{"Plan": req.Context.Plan != nil})
	own := render(pairOwn, map[string]any{"Pair": pair(req.A, req.B)})
	return compose(shared(req.Goal, req.Context), task, own)
}

// ParseComparison reads a ranking agent's answer. winner is "A" or "B", whatever case the
// model wrote it in.
func ParseComparison(raw []byte) (winner, reasoning string, err error) {
	var a ruling
	if err := decode(AgentRanking, raw, &a); err != nil {
		return "", "", err
	}
	return a.read()
}

// ruling is the part of an answer that decides a match: a comparison, or a debate's
// judgement.
type ruling struct {
	Winner    string `json:"winner"`
	Reasoning string `json:"reasoning"`
}

// read checks a ruling: the winner is the label "A" or "B", in any case, and the
// reasoning says why.
func (d ruling) read() (winner, reasoning string, err error) {
	winner = strings.ToUpper(strings.TrimSpace(d.Winner))
	if winner != "A" && winner != "B" {
		return "", "", malformed(AgentRanking, `winner %q is neither "A" nor "B"; name the better hypothesis by its label`, d.Winner)
	}
	if reasoning = strings.TrimSpace(d.Reasoning); reasoning == "" {
		return "", "", malformed(AgentRanking, `"reasoning" is empty; say why the winner better serves the goal`)
	}
	return winner, reasoning, nil
}

// AdvocateSchema is the JSON schema of an advocate's turn in a debate.
var AdvocateSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "argument": {"type": "string", "description": "this turn's case for your hypothesis, answering the other side"}
  },
  "required": ["argument"],
  "additionalProperties": false
}`)

// JudgementSchema is the JSON schema of the judge's turn, the last of a debate.
var JudgementSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "argument": {"type": "string", "description": "the judge's summing-up of the debate"},
    "winner": {"type": "string", "enum": ["A", "B"]},
    "reasoning": {"type": "string", "description": "why the winner better serves the research goal"}
  },
  "required": ["argument", "winner", "reasoning"],
  "additionalProperties": false
}`)

var (
	advocateTask = template.Must(template.New("advocate").Parse(`
You are an advocate in a scientific debate held by the ranking agent: advocate A argues for hypothesis A, advocate B for hypothesis B, and on the last turn a judge decides which hypothesis better serves the research goal. On your turn, make your case in one paragraph: cite your hypothesis' statement or its predictions, and on the opening turn say why it serves the goal better than the other, later answer the other advocate's last point. Be fair: a judge sees through overstatement. Answer with one JSON object that matches the answer schema, and nothing else.
`))
	advocateOwn = template.Must(template.New("advocate-own").Parse(`{{range .Pair}}
{{.}}{{end}}
{{.Transcript}}
You are advocate {{.Side}}: you argue for hypothesis {{.Side}}; advocate {{.Other}} argues for hypothesis {{.Other}}. This is turn {{.Turn}} of {{.Turns}}. {{if .First}}Say why hypothesis {{.Side}} serves the goal better than hypothesis {{.Other}}.{{else}}Answer advocate {{.Other}}'s last point.{{end}}
`))
	judgeTask = template.Must(template.New("judge").Parse(`
You are the judge of a scientific debate held by the ranking agent: advocate A argued for hypothesis A, advocate B for hypothesis B. Sum the debate up in "argument". Then decide which hypothesis better serves the research goal: more novel, more plausible, easier to test, and safe{{if .Plan}}, by the plan's evaluation criteria{{end}}. Weigh the arguments, not their eloquence. There is no tie. Answer with one JSON object that matches the answer schema, and nothing else; "winner" is "A" or "B".
`))
	judgeOwn = template.Must(template.New("judge-own").Parse(`{{range .Pair}}
{{.}}{{end}}
{{.Transcript}}
This is the last turn ({{.Turn}} of {{.Turns}}).
`))
)

// DebateSpeaker returns who speaks on a turn of a debate of the given length: advocates
// "A" and "B" alternate, A first, and the last turn is the "judge"'s.
func DebateSpeaker(turn, turns int) string {
	switch {
	case turn >= turns:
		return "judge"
	case turn%2 == 1:
		return "A"
	default:
		return "B"
	}
}

// Debate renders one turn of a debate between req.A and req.B: an advocate's turn, or, on
// the last turn (req.Turn == req.Turns), the judge's, who answers with the label ("A" or
// "B") of the winner.
func Debate(req research.DebateRequest) Text {
	speaker := DebateSpeaker(req.Turn, req.Turns)
	data := map[string]any{
		"Plan":       req.Context.Plan != nil,
		"Pair":       pair(req.A, req.B),
		"Transcript": transcriptText(req.Transcript),
		"Turn":       req.Turn,
		"Turns":      req.Turns,
	}
	prefix := shared(req.Goal, req.Context)
	if speaker == "judge" {
		return compose(prefix, render(judgeTask, data), render(judgeOwn, data))
	}
	other := "B"
	if speaker == "B" {
		other = "A"
	}
	data["Side"], data["Other"] = speaker, other
	data["First"] = len(req.Transcript) == 0
	return compose(prefix, render(advocateTask, data), render(advocateOwn, data))
}

// ParseAdvocate reads an advocate's turn in a debate: the argument.
func ParseAdvocate(raw []byte) (argument string, err error) {
	var a struct {
		Argument string `json:"argument"`
	}
	if err := decode(AgentRanking, raw, &a); err != nil {
		return "", err
	}
	if argument = strings.TrimSpace(a.Argument); argument == "" {
		return "", malformed(AgentRanking, `"argument" is empty; make the case for your hypothesis`)
	}
	return argument, nil
}

// ParseJudgement reads the judge's turn, the last of a debate. winner is "A" or "B",
// whatever case the model wrote it in.
func ParseJudgement(raw []byte) (argument, winner, reasoning string, err error) {
	var a struct {
		Argument string `json:"argument"`
		ruling
	}
	if err := decode(AgentRanking, raw, &a); err != nil {
		return "", "", "", err
	}
	if argument = strings.TrimSpace(a.Argument); argument == "" {
		return "", "", "", malformed(AgentRanking, `"argument" is empty; sum the debate up`)
	}
	if winner, reasoning, err = a.read(); err != nil {
		return "", "", "", err
	}
	return argument, winner, reasoning, nil
}

// pair renders two hypotheses labelled A and B, with their ids.
func pair(a, b research.Hypothesis) []string {
	return []string{
		hypothesisText(fmt.Sprintf("Hypothesis A (%s)", a.ID), a),
		hypothesisText(fmt.Sprintf("Hypothesis B (%s)", b.ID), b),
	}
}

// transcriptText renders a debate so far.
func transcriptText(turns []research.DebateTurn) string {
	if len(turns) == 0 {
		return "Transcript so far: none; the debate opens with this turn.\n"
	}
	var b strings.Builder
	b.WriteString("Transcript so far:\n")
	for _, t := range turns {
		who := "advocate " + t.Speaker
		if t.Speaker == "judge" {
			who = "judge"
		}
		fmt.Fprintf(&b, "Turn %d, %s: %s\n", t.Turn, who, oneLine(t.Argument))
	}
	return b.String()
}

// labelled is the id of the hypothesis a match's label ("A" or "B") names.
func labelled(label string, a, b research.Hypothesis) string {
	if label == "B" {
		return b.ID
	}
	return a.ID
}

// CompareSpec is the ranking agent's model call for a single comparison: the model answers
// with the label "A" or "B", which the comparison turns into the hypothesis' id.
var CompareSpec = Spec[research.CompareRequest, research.Comparison]{
	Agent: AgentRanking, Schema: fixed[research.CompareRequest]("comparison", ComparisonSchema),
	Parse: func(req research.CompareRequest, raw []byte) (research.Comparison, error) {
		label, reasoning, err := ParseComparison(raw)
		if err != nil {
			return research.Comparison{}, err
		}
		return research.Comparison{A: req.A.ID, B: req.B.ID, Winner: labelled(label, req.A, req.B), Reasoning: reasoning}, nil
	},
}

// DebateSpec is the ranking agent's model call for one turn of a debate: an advocate's
// argument, or on the last turn the judge's summing-up and verdict, whose label becomes
// the winner's id.
var DebateSpec = Spec[research.DebateRequest, research.DebateAnswer]{
	Agent: AgentRanking,
	Schema: func(req research.DebateRequest) (string, json.RawMessage) {
		if DebateSpeaker(req.Turn, req.Turns) != "judge" {
			return "advocate", AdvocateSchema
		}
		return "judgement", JudgementSchema
	},
	Parse: func(req research.DebateRequest, raw []byte) (research.DebateAnswer, error) {
		speaker := DebateSpeaker(req.Turn, req.Turns)
		turn := research.DebateTurn{Turn: req.Turn, Speaker: speaker}
		if speaker != "judge" {
			arg, err := ParseAdvocate(raw)
			if err != nil {
				return research.DebateAnswer{}, err
			}
			turn.Argument = arg
			return research.DebateAnswer{Turn: turn}, nil
		}
		arg, label, reasoning, err := ParseJudgement(raw)
		if err != nil {
			return research.DebateAnswer{}, err
		}
		turn.Argument = arg
		return research.DebateAnswer{Turn: turn, Winner: labelled(label, req.A, req.B), Reasoning: reasoning}, nil
	},
	Check: func(req research.DebateRequest) error {
		if req.Turn < 1 || req.Turns < 1 {
			return fmt.Errorf("debate turn %d of %d does not exist; number turns from 1", req.Turn, req.Turns)
		}
		return nil
	},
}
