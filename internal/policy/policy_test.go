package policy

import (
	"reflect"
	"strings"
	"testing"
)

func TestAllocate(t *testing.T) {
	tests := []struct {
		name string
		s    Stats
		want Plan
	}{
		{"first round: generation only, literature first",
			Stats{Round: 0, Max: 20},
			Plan{Generate: []Assignment{{"literature", 2}, {"debate", 1}, {"assumptions", 1}}, Matches: 12}},
		{"strategies rotate by round",
			Stats{Round: 1, Max: 20, Hypotheses: 4, Competing: 4, Ranked: 1},
			Plan{Generate: []Assignment{{"debate", 2}, {"assumptions", 1}, {"literature", 1}}, Matches: 12}},
		{"feedback strategy once a meta-review exists; one evolution",
			Stats{Round: 2, Max: 20, Hypotheses: 8, Competing: 8, Ranked: 8, MetaReviews: 1},
			Plan{Generate: []Assignment{{"assumptions", 1}, {"feedback", 1}, {"literature", 1}},
				Evolve: []Assignment{{"inspiration", 1}}, Matches: 16}},
		{"evolution over-represented in the top gets half the batch",
			Stats{Round: 3, Max: 40, Hypotheses: 16, Competing: 16, Ranked: 16, Evolved: 2, TopEvolved: 3, TopGenerated: 7, MetaReviews: 2},
			Plan{Generate: []Assignment{{"feedback", 1}, {"literature", 1}},
				Evolve: []Assignment{{"combination", 1}, {"simplification", 1}}, Matches: 18}},
		{"evolution under-represented stays at one",
			Stats{Round: 3, Max: 40, Hypotheses: 16, Competing: 16, Ranked: 16, Evolved: 8, TopEvolved: 1, TopGenerated: 9, MetaReviews: 2},
			Plan{Generate: []Assignment{{"feedback", 1}, {"literature", 1}, {"debate", 1}},
				Evolve: []Assignment{{"combination", 1}}, Matches: 18}},
		{"last hypothesis: a batch of one, no evolution",
			Stats{Round: 5, Max: 21, Hypotheses: 20, Competing: 20, Ranked: 20},
			Plan{Generate: []Assignment{{"assumptions", 1}}, Matches: 9}},
		{"a turn in flight takes its place: a batch of one",
			Stats{Round: 5, Max: 20, Hypotheses: 18, InFlight: 1, Competing: 18, Ranked: 18},
			Plan{Generate: []Assignment{{"assumptions", 1}}, Matches: 9}},
		{"full with the turns in flight: tournament only",
			Stats{Round: 5, Max: 20, Hypotheses: 17, InFlight: 3, Competing: 17, Ranked: 17},
			Plan{Matches: 6}},
		{"hypotheses taken in play their newcomers' matches",
			Stats{Round: 4, Max: 20, Hypotheses: 17, Intake: 2, Competing: 19, Ranked: 16},
			Plan{Generate: []Assignment{{"debate", 1}, {"assumptions", 1}}, Evolve: []Assignment{{"simplification", 1}}, Matches: 21}},
		{"full: tournament only",
			Stats{Round: 6, Max: 20, Hypotheses: 20, Competing: 18, Ranked: 18},
			Plan{Matches: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Allocate(tt.s); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Allocate = %+v\n want %+v", got, tt.want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name string
		s    Stats
		want Decision
	}{
		{"keep going", Stats{Max: 20, Hypotheses: 8}, Decision{}},
		{"max reached", Stats{Max: 20, Hypotheses: 20}, Decision{Stop: true, Reason: "reached max_hypotheses (20)"}},
		{"budget spent suspends", Stats{Max: 20, Hypotheses: 12, TokensUsed: 1000, TokenBudget: 900},
			Decision{Suspend: true, Reason: "budget exhausted: used 1000 of 900 tokens; raise it with set-budget, then resume"}},
		{"a finished session ends even on a spent budget", Stats{Max: 20, Hypotheses: 20, TokensUsed: 1000, TokenBudget: 900},
			Decision{Stop: true, Reason: "reached max_hypotheses (20)"}},
		{"no budget means no cap", Stats{Max: 20, Hypotheses: 8, TokensUsed: 1 << 30}, Decision{}},
		{"converged", Stats{Max: 100, Hypotheses: 30, TopStableRounds: 4, ConvergenceRounds: 4},
			Decision{Stop: true, Reason: "converged: the top 5 did not change for 4 rounds"}},
		{"settled, fitted ratings", Stats{Max: 100, Hypotheses: 30, TopStableRounds: 4, ConvergenceRounds: 4, TopK: 10, Fitted: true},
			Decision{Stop: true, Reason: "converged: the top 10 stayed the same and its boundary stopped narrowing for 4 rounds"}},
		{"stable but too young to call converged", Stats{Max: 100, Hypotheses: 12, TopStableRounds: 6, ConvergenceRounds: 4}, Decision{}},
		{"stable, but the session asked for longer", Stats{Max: 100, Hypotheses: 30, TopStableRounds: 6, ConvergenceRounds: 10}, Decision{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.s); got != tt.want {
				t.Errorf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
	if !strings.Contains(BudgetReason(1, 2), "set-budget") {
		t.Error("the budget reason does not say how to go on")
	}
}
