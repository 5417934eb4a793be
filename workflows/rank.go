package workflows

// Ranking: the round's tournament of single comparisons and multi-turn debates, with Elo
// updates (fitted ratings are in rating.go), and the top's stability, the supervisor's
// convergence signal.

import (
	"fmt"
	"hash/fnv"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// tournament plays the round's matches: newcomers first, then pairs the scheduler finds
// informative (close in Elo, similar, at the top). Top pairs debate over several turns;
// the rest meet in single comparisons. Elo updates apply afterwards in the schedule's
// order, so ratings do not depend on which match finished first. It returns the ids of
// the debates played.
func (s *supervisor) tournament(ctx workflow.Context, fresh []string, budget int) []string {
	if s.fitted() {
		return s.activeTournament(ctx, budget)
	}
	// Debates are for the top of the ranking: the top quarter, at least 2 and at most 10,
	// so a young session does not turn every match into a multi-turn debate.
	matches := s.schedule(ctx, fresh, budget, max(2, min(10, len(s.competing())/4)))
	winners := s.play(ctx, matches)
	var debates []string
	for i, m := range matches {
		if winners[i] == "" {
			continue
		}
		s.Played[activities.PairKey(m.A, m.B)] = true
		s.newPairs = append(s.newPairs, activities.PairKey(m.A, m.B))
		x, y := &s.Entries[s.index[m.A]], &s.Entries[s.index[m.B]]
		x.Elo, y.Elo = tournament.Update(x.Elo, y.Elo, winners[i] == m.A, tournament.K(x.Wins+x.Losses), tournament.K(y.Wins+y.Losses))
		debates = s.tally(m, winners[i], debates)
	}
	return debates
}

// tally counts a judged match: the winner's win, the loser's loss, and, for a debate, its
// id among the round's debates.
func (s *supervisor) tally(m tournament.Match, winner string, debates []string) []string {
	x, y := &s.Entries[s.index[m.A]], &s.Entries[s.index[m.B]]
	if winner == m.A {
		x.Wins++
		y.Losses++
	} else {
		y.Wins++
		x.Losses++
	}
	s.Matches++
	if m.Debate {
		s.Debates++
		debates = append(debates, s.debateID(m))
	}
	return debates
}

// play plays matches at once, a debate or a comparison each, and returns their winners,
// "" for a match cut short.
func (s *supervisor) play(ctx workflow.Context, matches []tournament.Match) []string {
	winners := make([]string, len(matches))
	// Single comparisons go out as one batch when the session batches; debates, a turn at
	// a time, do not.
	batching := s.batching(activities.AgentRanking, "")
	b := submit(ctx, s, "matches", activities.AgentRanking, len(matches),
		func(i int) bool { return batching && !matches[i].Debate },
		func(i int) activities.CompareInput { return s.compareInput(matches[i]) })
	defer b.release()
	s.parallel(ctx, len(matches), func(ctx workflow.Context, i int) {
		if matches[i].Debate {
			winners[i] = s.debate(ctx, matches[i])
		} else {
			winners[i] = s.compare(ctx, matches[i], func() activities.CompareInput { return b.input(i) })
		}
	})
	return winners
}

func (s *supervisor) compareInput(m tournament.Match) activities.CompareInput {
	return activities.CompareInput{Turn: s.turnInput(matchID(m)), A: m.A, B: m.B, Context: s.contextRef()}
}

// compare plays one single comparison, with the input input gives as it starts: the one
// its request went out with in the step's batch, when it did, and otherwise one made then.
func (s *supervisor) compare(ctx workflow.Context, m tournament.Match, input func() activities.CompareInput) string {
	if !s.mayStart(ctx) {
		return ""
	}
	in := input()
	out, err := turn(ctx, s, activities.AgentRanking, fmt.Sprintf("match %s vs %s", m.A, m.B), in.Turn, m.A, a.Compare, in)
	if err != nil {
		return ""
	}
	s.spend(activities.AgentRanking, out.Usage)
	return out.Winner
}

// debate plays a multi-turn debate, one durable turn at a time; the last turn judges. A
// debate cut short (the session ending, a failed turn) has no winner and changes no rating.
func (s *supervisor) debate(ctx workflow.Context, m tournament.Match) string {
	id := s.debateID(m)
	for n := 1; n <= m.Turns; n++ {
		if !s.mayStart(ctx) {
			return ""
		}
		in := activities.DebateInput{Turn: s.turnInput(fmt.Sprintf("%s-turn-%d", id, n)), DebateID: id, A: m.A, B: m.B, Number: n, Of: m.Turns, Context: s.contextRef()}
		summary := fmt.Sprintf("debate %s vs %s, turn %d/%d", m.A, m.B, n, m.Turns)
		out, err := turn(ctx, s, activities.AgentRanking, summary, in.Turn, m.A, a.Debate, in)
		if err != nil {
			return ""
		}
		s.spend(activities.AgentRanking, out.Usage)
		if n == m.Turns {
			return out.Winner
		}
	}
	return ""
}

// matchID and debateID name a match's turn and a debate: by the pair where a pair meets
// once at most, and by the match's number too where it may meet again (fitted ratings), so
// that a rematch is judged afresh instead of answered from the first meeting's stored turn.
// A fitted session's debates also carry a hash of the session's id (ids may be long): a
// continued or forked session gets copies of its parent's debates, numbered by the parent.
func matchID(m tournament.Match) string {
	if m.N > 0 {
		return fmt.Sprintf("match-%d-%s-%s", m.N, m.A, m.B)
	}
	return "match-" + m.A + "-" + m.B
}

func (s *supervisor) debateID(m tournament.Match) string {
	if m.N > 0 {
		h := fnv.New32a()
		h.Write([]byte(s.id))
		return fmt.Sprintf("debate-%08x-%d-%s-%s", h.Sum32(), m.N, m.A, m.B)
	}
	return "debate-" + m.A + "-" + m.B
}

// watchTop counts the rounds the top stayed the same hypotheses (in any order: ratings
// inside the top keep moving) and, for fitted ratings, its boundary stopped narrowing:
// the supervisor's convergence signal.
func (s *supervisor) watchTop() {
	k := s.topK()
	var top []string
	for _, e := range s.top(k) {
		top = append(top, e.ID)
	}
	slices.Sort(top)
	if s.settled(top, k) {
		s.TopStable++
	} else {
		s.TopStable = 0
	}
	s.LastTop = top
}
