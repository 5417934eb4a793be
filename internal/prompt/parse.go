// What every parser shares: finding the JSON object in an answer, and the error that
// says what to change.

package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// MalformedError reports a model answer that does not fit its agent's schema. Problem is
// written to be quoted back to the model in a repair turn, so it says what to change.
type MalformedError struct {
	Agent   string // AgentSupervisor, AgentGeneration, AgentReflection, ...
	Problem string
}

func (e *MalformedError) Error() string {
	return "malformed " + e.Agent + " answer: " + e.Problem
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

// list trims the items of a list field and checks that none is blank and that there are
// from least to most of them.
func list(agent, field string, items []string, least, most int) ([]string, error) {
	out := make([]string, 0, len(items))
	for i, it := range items {
		if it = strings.TrimSpace(it); it == "" {
			return nil, malformed(agent, "%s[%d] is empty; remove it or write it out", field, i)
		}
		out = append(out, it)
	}
	switch {
	case len(out) < least:
		return nil, malformed(agent, "%q has %d items; give at least %d", field, len(out), least)
	case len(out) > most:
		return nil, malformed(agent, "%q has %d items; at most %d: keep the most important", field, len(out), most)
	}
	return out, nil
}
