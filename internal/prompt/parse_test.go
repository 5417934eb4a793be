package prompt

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

const goodHypothesis = `{"title": "Tau seeding via exosomes", "statement": "Exosomes carry tau seeds between neurons.", "rationale": "Exosomal tau is found in CSF.", "testable_predictions": ["Blocking exosome release slows spread", "CSF exosomes seed tau in vitro"]}`

// wantMalformed checks that err is a *MalformedError for agent whose problem mentions each of words.
func wantMalformed(t *testing.T, err error, agent string, words ...string) {
	t.Helper()
	var me *MalformedError
	if !errors.As(err, &me) {
		t.Fatalf("error = %v (%T), want *MalformedError", err, err)
	}
	if me.Agent != agent {
		t.Errorf("Agent = %q, want %q", me.Agent, agent)
	}
	for _, w := range words {
		if !strings.Contains(me.Problem, w) {
			t.Errorf("Problem %q does not mention %q", me.Problem, w)
		}
	}
}

func TestParseHypothesis(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		wantErr []string // words the problem must mention; nil means the answer is good
	}{
		{"good", goodHypothesis, nil},
		{"fenced", "```json\n" + goodHypothesis + "\n```", nil},
		{"text around", "Here is my hypothesis:\n" + goodHypothesis + "\nI hope it helps {really}.", nil},
		{"brace in prose first", "Considering {A, B} I propose: " + goodHypothesis, nil},
		{"missing title", `{"statement": "s", "testable_predictions": ["p"]}`, []string{"no title"}},
		{"missing statement", `{"title": "t", "testable_predictions": ["p"]}`, []string{"no statement"}},
		{"no predictions", `{"title": "t", "statement": "s", "testable_predictions": []}`, []string{"no testable predictions"}},
		{"blank prediction", `{"title": "t", "statement": "s", "testable_predictions": ["p", "  "]}`, []string{"testable_predictions[1]"}},
		{"wrong type", `{"title": "t", "statement": "s", "testable_predictions": "p"}`, []string{"testable_predictions", "an array"}},
		{"truncated", goodHypothesis[:len(goodHypothesis)-20], []string{"truncated"}},
		{"truncated inside fence", "```json\n" + goodHypothesis[:60], []string{"truncated"}},
		{"not JSON", "I think exosomes spread tau.", []string{"no JSON object"}},
		{"invalid JSON", `{title: "t"}`, []string{"no valid JSON object"}},
		{"empty", "", []string{"no JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHypothesis([]byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, AgentGeneration, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatalf("ParseHypothesis: %v", err)
			}
			want := research.Hypothesis{
				Title:       "Tau seeding via exosomes",
				Statement:   "Exosomes carry tau seeds between neurons.",
				Rationale:   "Exosomal tau is found in CSF.",
				Predictions: []string{"Blocking exosome release slows spread", "CSF exosomes seed tau in vitro"},
			}
			if h.Title != want.Title || h.Statement != want.Statement || h.Rationale != want.Rationale || !slices.Equal(h.Predictions, want.Predictions) {
				t.Errorf("got %+v, want %+v", h, want)
			}
		})
	}
}

func TestParseReview(t *testing.T) {
	const good = `{"scores": {"novelty": 7, "plausibility": 6.5, "testability": 8, "safety": 10}, "critique": "Sound, but the dose is unclear.", "verdict": "accept"}`
	tests := []struct {
		name    string
		raw     string
		wantErr []string
	}{
		{"good", good, nil},
		{"fenced", "```json\n" + good + "\n```", nil},
		{"verdict in capitals", strings.Replace(good, `"accept"`, `"ACCEPT"`, 1), nil},
		{"zero score is a score", strings.Replace(good, `"novelty": 7`, `"novelty": 0`, 1), nil},
		{"missing scores", `{"critique": "c", "verdict": "accept"}`, []string{`"scores" is missing`}},
		{"missing one score", strings.Replace(good, `"testability": 8, `, "", 1), []string{"scores.testability is missing"}},
		{"score above 10", strings.Replace(good, `"safety": 10`, `"safety": 11`, 1), []string{"scores.safety is 11", "0 to 10"}},
		{"negative score", strings.Replace(good, `"novelty": 7`, `"novelty": -1`, 1), []string{"scores.novelty is -1"}},
		{"score as string", strings.Replace(good, `"novelty": 7`, `"novelty": "high"`, 1), []string{"scores.novelty", "a number"}},
		{"bad verdict", strings.Replace(good, `"accept"`, `"maybe"`, 1), []string{`"maybe"`, "accept, revise, reject"}},
		{"missing verdict", strings.Replace(good, `, "verdict": "accept"`, "", 1), []string{`verdict ""`}},
		{"empty critique", strings.Replace(good, "Sound, but the dose is unclear.", " ", 1), []string{`"critique" is empty`}},
		{"truncated", good[:40], []string{"truncated"}},
		{"not JSON", "Accept. Scores: 7/10.", []string{"no JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseReview([]byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, AgentReflection, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatalf("ParseReview: %v", err)
			}
			if r.Verdict != "accept" || r.Critique != "Sound, but the dose is unclear." || r.Scores.Plausibility != 6.5 {
				t.Errorf("got %+v", r)
			}
		})
	}
}

func TestParseComparison(t *testing.T) {
	tests := []struct {
		name       string
		raw        string
		wantWinner string
		wantErr    []string
	}{
		{"A wins", `{"winner": "A", "reasoning": "A is testable."}`, "A", nil},
		{"lower-case b", `{"winner": "b", "reasoning": "B is testable."}`, "B", nil},
		{"fenced", "After debate:\n```json\n{\"winner\": \"B\", \"reasoning\": \"r\"}\n```", "B", nil},
		{"winner by id", `{"winner": "h-3", "reasoning": "r"}`, "", []string{`"h-3"`, `"A" nor "B"`}},
		{"missing winner", `{"reasoning": "r"}`, "", []string{`winner ""`}},
		{"missing reasoning", `{"winner": "A"}`, "", []string{`"reasoning" is empty`}},
		{"winner as number", `{"winner": 1, "reasoning": "r"}`, "", []string{"winner", "a string"}},
		{"truncated", `{"winner": "A", "reas`, "", []string{"truncated"}},
		{"not JSON", "A wins.", "", []string{"no JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			winner, reasoning, err := ParseComparison([]byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, AgentRanking, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatalf("ParseComparison: %v", err)
			}
			if winner != tt.wantWinner || reasoning == "" {
				t.Errorf("got (%q, %q), want winner %q", winner, reasoning, tt.wantWinner)
			}
		})
	}
}

func TestMalformedErrorMessage(t *testing.T) {
	err := &MalformedError{Agent: AgentRanking, Problem: `winner "C" is neither "A" nor "B"`}
	if got, want := err.Error(), `malformed ranking answer: winner "C" is neither "A" nor "B"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
