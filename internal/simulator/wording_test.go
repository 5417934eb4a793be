package simulator

import (
	"fmt"
	"strings"
	"testing"
)

// TestEveryKindHasItsWordings: each mechanism, effect, context and mediator a hypothesis
// may be drawn with has phrasings of its own (a kind without would always read the same),
// and no effect's phrasing is a verb a goal is read by (a title would read as a clause).
func TestEveryKindHasItsWordings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kinds []string
		has   func(string) bool
	}{
		{"mechanism", mechanisms, func(k string) bool { return len(mechanismWords[k]) > 0 }},
		{"effect", effects, func(k string) bool { return len(effectWords[k]) > 0 }},
		{"context", contexts, func(k string) bool { return len(contextWords[k]) > 0 }},
		{"mediator", mediators, func(k string) bool { return len(mediatorWords[k]) > 0 }},
	} {
		for _, k := range tc.kinds {
			if !tc.has(k) {
				t.Errorf("the %s %q has no wordings", tc.name, k)
			}
		}
	}
	for k, alts := range effectWords {
		for _, a := range append(alts, k) {
			for _, w := range strings.Fields(a) {
				if _, verb := verbs[w]; verb {
					t.Errorf("effect %q: %q is a verb of goals", k, w)
				}
			}
		}
	}
	if len(reasonWords) != len(reasons) || len(predictionWords) != len(predictions) {
		t.Errorf("%d reason and %d prediction wordings for %d reasons and %d predictions", len(reasonWords), len(predictionWords), len(reasons), len(predictions))
	}
}

// TestWordingLeavesTheClaimAlone: the wording has a stream of its own. Two hypotheses
// drawn from the same state of a turn's stream but worded from different streams claim the
// same thing (the same strategy, the same number of predictions) and leave the turn's stream
// in the same state, so that whatever the turn draws next (a grounded turn's references)
// does not depend on how the hypothesis was worded.
func TestWordingLeavesTheClaimAlone(t *testing.T) {
	for i := range 20 {
		req := genReq(fmt.Sprint("claim-", i))
		other := req
		other.TurnID += "-worded-otherwise"
		r1, r2 := newRand(req.Seed, req.TurnID), newRand(req.Seed, req.TurnID)
		a, b := writeHypothesis(r1, req), writeHypothesis(r2, other)
		if a.Statement == b.Statement {
			t.Errorf("%s: the same statement from two wording streams: %s", req.TurnID, a.Statement)
		}
		if len(a.Predictions) != len(b.Predictions) {
			t.Errorf("%s: %d and %d predictions", req.TurnID, len(a.Predictions), len(b.Predictions))
		}
		if x, y := r1.Uint64(), r2.Uint64(); x != y {
			t.Errorf("%s: the turn's stream is left in another state by another wording", req.TurnID)
		}
	}
}
