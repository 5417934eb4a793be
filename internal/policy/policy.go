// Package policy is the co-scientist supervisor's policy: after each round it reads the
// session's statistics and decides the next round's work (how many hypotheses to generate
// and by which strategies, how many to evolve and how, how many tournament matches) and
// whether to stop. Pure and deterministic, so the workflow can run it and replay it.
package policy

import (
	"fmt"

	"github.com/cosci-dev/cosci/internal/research"
)

// Tuning. Small batches keep suspend, refine-goal and the time limit responsive.
const (
	BatchSize = 4 // new hypotheses per round
	// MatchesPerNewcomer is how many matches each new hypothesis plays in its first round.
	MatchesPerNewcomer = 3
	// RefineMatches is the extra matches per round among established hypotheses, so the top
	// of the ranking keeps being tested as it grows.
	RefineMatches = 6
	// TopK is the size of the top the supervisor watches for convergence.
	TopK = 5
	// ConvergedMinimum: a session is not called converged before it holds this many
	// hypotheses (how many rounds count is the session's config.convergence_rounds).
	ConvergedMinimum = 24
)

// Stats is what the supervisor knows after a round.
type Stats struct {
	Round int // rounds finished
	// Hypotheses counts those that count against Max (config.max_hypotheses), excluded
	// ones too: the agents' own and those taken in from subagents, not the scientist's.
	Hypotheses int
	Max        int
	// InFlight counts hypotheses whose turns are still running as a round begins: a turn
	// whose tool call waits for the scientist outlives its round's step. Each will come
	// in, so each takes a place under Max already.
	InFlight int
	// Intake counts the hypotheses a round took in before it planned (the scientist's, the
	// subagents', those that came in late): newcomers to the tournament like its own.
	Intake int
	// Competing counts the hypotheses still in the tournament; Ranked those that have
	// played at least one match (evolution needs ranked parents).
	Competing, Ranked int
	// Evolved counts the evolved hypotheses; TopEvolved and TopGenerated count where the
	// current top 10 came from. Together they say how well evolution feeds the top.
	Evolved, TopEvolved, TopGenerated int
	MetaReviews                       int // meta-reviews written so far
	TopStableRounds                   int // rounds in a row the top stayed the same (settled, for fitted ratings)
	ConvergenceRounds                 int // how many such rounds mean converged
	// TopK is the size of the top watched (0: the constant TopK); Fitted says the ratings
	// are fitted, so a settled top also stopped narrowing its boundary.
	TopK                    int
	Fitted                  bool
	TokensUsed, TokenBudget int
	// OverBudget is why the budget refused a call this round, or "".
	OverBudget string
}

// Assignment is a number of turns of one kind: a generation strategy or an evolution kind.
type Assignment struct {
	Kind string
	N    int
}

// Plan is the work of one round.
type Plan struct {
	Generate []Assignment // by strategy
	Evolve   []Assignment // by evolution kind
	Matches  int          // the tournament's match budget (a debate counts as one)
}

// NewHypotheses is the total the plan generates and evolves.
func (p Plan) NewHypotheses() int { return total(p.Generate) + total(p.Evolve) }

// Allocate decides the next round's work. Generation rotates through the strategies (the
// feedback strategy only once a meta-review exists). Evolution starts once there are
// ranked hypotheses to evolve; its share of the batch grows when evolved hypotheses are
// over-represented in the top 10 and shrinks when they are not, between 1 and half the batch.
// It never plans more than the room left under Max, counting the hypotheses in flight.
func Allocate(s Stats) Plan {
	room := max(0, s.Max-s.Hypotheses-s.InFlight)
	n := min(BatchSize, room)
	evolve := 0
	if s.Ranked >= 2 && n >= 2 {
		evolve = evolutionShare(s, n)
	}
	strategies := []string{research.StrategyLiterature, research.StrategyDebate, research.StrategyAssumptions}
	if s.MetaReviews > 0 {
		strategies = append(strategies, research.StrategyFeedback)
	}
	newcomers := n + s.Intake
	return Plan{
		Generate: rotate(strategies, s.Round, n-evolve),
		Evolve:   rotate(research.EvolutionKinds, s.Round, evolve),
		Matches:  newcomers*MatchesPerNewcomer + min(RefineMatches, s.Ranked/2),
	}
}

// evolutionShare: one evolved hypothesis per round to start with; more while evolution
// beats generation at reaching the top, fewer while it does not.
func evolutionShare(s Stats, n int) int {
	share := 1
	if s.Evolved > 0 && s.Hypotheses > 0 {
		inTop := s.TopEvolved + s.TopGenerated
		if inTop > 0 {
			topRate := float64(s.TopEvolved) / float64(inTop)
			baseRate := float64(s.Evolved) / float64(s.Hypotheses)
			if topRate > baseRate {
				share = n / 2
			}
		}
	}
	return max(1, min(share, n/2))
}

// rotate spreads n turns over kinds, starting at an offset that moves each round, so every
// kind gets its turn across rounds. Kinds come out in the order they were first assigned.
func rotate(kinds []string, round, n int) []Assignment {
	counts := make([]int, len(kinds))
	for i := range n {
		counts[(round+i)%len(kinds)]++
	}
	var out []Assignment
	for i := range kinds {
		k := (round + i) % len(kinds)
		if counts[k] > 0 {
			out = append(out, Assignment{Kind: kinds[k], N: counts[k]})
		}
	}
	return out
}

func total(as []Assignment) int {
	n := 0
	for _, a := range as {
		n += a.N
	}
	return n
}

// Decision says whether the session should end or pause, and why.
type Decision struct {
	Stop    bool // end the session (final checkpoint, overview, report)
	Suspend bool // pause it gracefully; the scientist can fix the cause and resume
	Reason  string
}

// Decide applies the stop rules. A session that has its hypotheses ends, even on a spent
// budget (its work is done); otherwise a spent token budget suspends it (the scientist may
// raise the budget and resume); a converged one ends. The time limit and the scientist's
// terminate are the workflow's, which owns the clock and the commands.
func Decide(s Stats) Decision {
	switch {
	case s.Hypotheses >= s.Max:
		return Decision{Stop: true, Reason: fmt.Sprintf("reached max_hypotheses (%d)", s.Max)}
	case s.OverBudget != "":
		return Decision{Suspend: true, Reason: s.OverBudget}
	case s.TokenBudget > 0 && s.TokensUsed >= s.TokenBudget:
		return Decision{Suspend: true, Reason: BudgetReason(s.TokensUsed, s.TokenBudget)}
	case s.ConvergenceRounds > 0 && s.TopStableRounds >= s.ConvergenceRounds && s.Hypotheses >= ConvergedMinimum:
		if s.Fitted {
			return Decision{Stop: true, Reason: fmt.Sprintf("converged: the top %d stayed the same and its boundary stopped narrowing for %d rounds", s.TopK, s.TopStableRounds)}
		}
		return Decision{Stop: true, Reason: fmt.Sprintf("converged: the top %d did not change for %d rounds", TopK, s.TopStableRounds)}
	}
	return Decision{}
}

// BudgetReason is the reason a session gives when its token budget is spent.
func BudgetReason(used, budget int) string {
	return fmt.Sprintf("budget exhausted: used %d of %d tokens; raise it with set-budget, then resume", used, budget)
}
