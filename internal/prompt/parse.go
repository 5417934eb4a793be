package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
)

// MalformedError reports a model answer that does not fit its agent's schema. Problem is
// written to be quoted back to the model in a repair turn, so it says what to change.
type MalformedError struct {
	Agent   string // AgentGeneration, AgentReflection or AgentRanking
	Problem string
}

func (e *MalformedError) Error() string {
	return "malformed " + e.Agent + " answer: " + e.Problem
}

// ParseHypothesis reads a generation agent's answer. The result has only the fields a
// model writes (title, statement, rationale, predictions); the caller sets the rest.
func ParseHypothesis(raw []byte) (research.Hypothesis, error) {
	var a struct {
		Title       string   `json:"title"`
		Statement   string   `json:"statement"`
		Rationale   string   `json:"rationale"`
		Predictions []string `json:"testable_predictions"`
	}
	if err := decode(AgentGeneration, raw, &a); err != nil {
		return research.Hypothesis{}, err
	}
	h := research.Hypothesis{
		Title:     strings.TrimSpace(a.Title),
		Statement: strings.TrimSpace(a.Statement),
		Rationale: strings.TrimSpace(a.Rationale),
	}
	for i, p := range a.Predictions {
		p = strings.TrimSpace(p)
		if p == "" {
			return research.Hypothesis{}, malformed(AgentGeneration, "testable_predictions[%d] is empty; remove it or state a prediction", i)
		}
		h.Predictions = append(h.Predictions, p)
	}
	if err := h.Check(); err != nil {
		return research.Hypothesis{}, malformed(AgentGeneration, "%v; give title, statement, rationale and at least one testable prediction", err)
	}
	return h, nil
}

// ParseReview reads a reflection agent's answer. The result has only the fields a model
// writes (scores, critique, verdict); the caller sets HypothesisID and Type.
func ParseReview(raw []byte) (research.Review, error) {
	// Pointers tell a missing score from a score of 0.
	var a struct {
		Scores *struct {
			Novelty      *float64 `json:"novelty"`
			Plausibility *float64 `json:"plausibility"`
			Testability  *float64 `json:"testability"`
			Safety       *float64 `json:"safety"`
		} `json:"scores"`
		Critique string `json:"critique"`
		Verdict  string `json:"verdict"`
	}
	if err := decode(AgentReflection, raw, &a); err != nil {
		return research.Review{}, err
	}
	if a.Scores == nil {
		return research.Review{}, malformed(AgentReflection, `"scores" is missing; give novelty, plausibility, testability and safety, each from 0 to 10`)
	}
	var r research.Review
	for _, s := range []struct {
		name string
		v    *float64
		dst  *float64
	}{
		{"novelty", a.Scores.Novelty, &r.Scores.Novelty},
		{"plausibility", a.Scores.Plausibility, &r.Scores.Plausibility},
		{"testability", a.Scores.Testability, &r.Scores.Testability},
		{"safety", a.Scores.Safety, &r.Scores.Safety},
	} {
		switch {
		case s.v == nil:
			return research.Review{}, malformed(AgentReflection, "scores.%s is missing; give a number from 0 to 10", s.name)
		case *s.v < 0 || *s.v > 10:
			return research.Review{}, malformed(AgentReflection, "scores.%s is %g; it must be from 0 to 10", s.name, *s.v)
		}
		*s.dst = *s.v
	}
	r.Critique = strings.TrimSpace(a.Critique)
	if r.Critique == "" {
		return research.Review{}, malformed(AgentReflection, `"critique" is empty; say in a few sentences what is strong and what is weak`)
	}
	r.Verdict = strings.ToLower(strings.TrimSpace(a.Verdict))
	if !slices.Contains(research.Verdicts, r.Verdict) {
		return research.Review{}, malformed(AgentReflection, "verdict %q is not one of %s", a.Verdict, strings.Join(research.Verdicts, ", "))
	}
	return r, nil
}

// ParseComparison reads a ranking agent's answer. winner is "A" or "B", whatever case the
// model wrote it in.
func ParseComparison(raw []byte) (winner, reasoning string, err error) {
	var a struct {
		Winner    string `json:"winner"`
		Reasoning string `json:"reasoning"`
	}
	if err := decode(AgentRanking, raw, &a); err != nil {
		return "", "", err
	}
	winner = strings.ToUpper(strings.TrimSpace(a.Winner))
	if winner != "A" && winner != "B" {
		return "", "", malformed(AgentRanking, `winner %q is neither "A" nor "B"; name the better hypothesis by its label`, a.Winner)
	}
	reasoning = strings.TrimSpace(a.Reasoning)
	if reasoning == "" {
		return "", "", malformed(AgentRanking, `"reasoning" is empty; say why the winner better serves the goal`)
	}
	return winner, reasoning, nil
}

func malformed(agent, format string, args ...any) *MalformedError {
	return &MalformedError{Agent: agent, Problem: fmt.Sprintf(format, args...)}
}

// decode finds the JSON object in a model's answer and unmarshals it into v.
//
// Models often wrap the object in a ```json fence or a sentence of prose. Rather than
// strip fences by pattern, decode tries each '{' in turn and takes the first complete
// JSON value that starts there; whatever follows it is ignored. If the value starting at
// a '{' runs off the end of the answer, the answer was cut short: every later '{' lies
// inside that unfinished object, so decode stops and reports the truncation instead of
// mistaking a nested object for the answer.
func decode(agent string, raw []byte, v any) error {
	var first error
	for i := 0; i < len(raw); i++ {
		j := bytes.IndexByte(raw[i:], '{')
		if j < 0 {
			break
		}
		i += j
		var obj json.RawMessage
		err := json.NewDecoder(bytes.NewReader(raw[i:])).Decode(&obj)
		if err == nil {
			return unmarshal(agent, obj, v)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return malformed(agent, "the JSON object is truncated after %d bytes; answer again with the complete object", len(raw)-i)
		}
		if first == nil {
			first = err
		}
	}
	if first != nil {
		return malformed(agent, "no valid JSON object found (%v); answer with one JSON object and nothing else", first)
	}
	return malformed(agent, "the answer contains no JSON object; answer with one JSON object and nothing else")
}

// unmarshal decodes obj into v, turning a type mismatch into a message that names the field.
func unmarshal(agent string, obj json.RawMessage, v any) error {
	err := json.Unmarshal(obj, v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return malformed(agent, "%q is a JSON %s; the schema wants %s", te.Field, te.Value, jsonKind(te.Type))
	default:
		return malformed(agent, "%v; answer with one JSON object matching the schema", err)
	}
}

// jsonKind names a Go type the way the schema does, since the message is for a model.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	default:
		return "an object"
	}
}
