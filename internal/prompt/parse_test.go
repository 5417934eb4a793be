package prompt

import (
	"errors"
	"strings"
	"testing"
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

// parseCase is one answer for a parser.
type parseCase struct {
	name    string
	raw     string
	wantErr []string // words the problem must mention; nil means the answer is good
}

// testParse runs parse on each case as a subtest. A malformed answer must fail with a
// *MalformedError for agent; a good one must parse, and check judges what it gave.
func testParse[T any](t *testing.T, agent string, parse func([]byte) (T, error), cases []parseCase, check func(t *testing.T, got T)) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse([]byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, agent, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatalf("a good answer was refused: %v", err)
			}
			check(t, got)
		})
	}
}

func TestMalformedErrorMessage(t *testing.T) {
	err := &MalformedError{Agent: AgentRanking, Problem: `winner "C" is neither "A" nor "B"`}
	if got, want := err.Error(), `malformed ranking answer: winner "C" is neither "A" nor "B"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
