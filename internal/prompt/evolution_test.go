package prompt

import (
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

func TestEvolve(t *testing.T) {
	for _, kind := range research.EvolutionKinds {
		t.Run(kind, func(t *testing.T) {
			p := Evolve(research.EvolveRequest{Goal: goal, Kind: kind, Parents: []research.Hypothesis{hyp, hyp2}}).Prompt
			containsAll(t, p, goal, "Evolution: "+EvolutionName(kind)+".", evolutionMethods[kind],
				"Parent 1, hypothesis h-7: Tau seeding via exosomes", "Parent 2, hypothesis h-9: Synaptic tau release",
				hyp.Predictions[0], "what you took from which parent")
		})
	}
	containsAll(t, Evolve(research.EvolveRequest{Goal: goal, Kind: "mutation", Parents: []research.Hypothesis{hyp}}).Prompt, "Evolution: mutation.", "as the kind's name suggests")
}

func TestParseEvolved(t *testing.T) {
	h, err := ParseEvolved([]byte(goodHypothesis))
	if err != nil || h.Title != "Tau seeding via exosomes" {
		t.Fatalf("ParseEvolved = %+v, %v", h, err)
	}
	_, err = ParseEvolved([]byte(`{"title": "t", "testable_predictions": ["p"]}`))
	wantMalformed(t, err, AgentEvolution, "no statement")
	long := strings.Replace(goodHypothesis, "Tau seeding via exosomes", strings.Repeat("x", 101), 1)
	_, err = ParseHypothesis([]byte(long))
	wantMalformed(t, err, AgentGeneration, "title is 101 characters", "at most 100")
}
