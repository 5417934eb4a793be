package workflows

// Fitted ratings (since versionFitted): a session's ratings are Bradley–Terry strengths
// fitted to every result it has (tournament.Fit), shown on the Elo scale, and its matches
// are chosen where the top's boundary is uncertain (tournament.Active). Both need every
// result, which lives in the session store with the rest of the tournament's ledger: the
// workflow keeps the results since its last checkpoint, and the Tournament activity fits
// them with the checkpoint's.
//
// A session's rating is decided when it starts and kept for its life (Carried.Rating): a
// session that began with Elo updates, before this version or restored from one that did,
// has no record of which match went which way, so it keeps updating Elo.

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/policy"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// versionFitted gates fitted ratings and active pairing.
const versionFitted = "bradley-terry"

// fitted says the session's ratings are fitted to its results.
func (s *supervisor) fitted() bool { return s.Rating == session.RatingFitted }

// boundaryShrink: the top counts as settled in a round when it has the same members as
// the round before and the standard error at its boundary fell by less than this share.
const boundaryShrink = 0.05

// activeTournament plays a fitted session's tournament for the round: batches of at most
// tournament.Batch model calls, each chosen by the Tournament activity from a fit of every
// result so far, then a last fit for the ratings the round ends with. It returns the ids
// of the debates played.
func (s *supervisor) activeTournament(ctx workflow.Context, budget int) []string {
	var debates []string
	for spent := 0; spent < budget; {
		matches := s.rate(ctx, min(tournament.Batch, budget-spent))
		if len(matches) == 0 {
			break
		}
		for i := range matches {
			s.Scheduled++
			matches[i].N = s.Scheduled
		}
		winners := s.play(ctx, matches)
		judged := 0
		for i, m := range matches {
			spent += max(1, m.Turns)
			if winners[i] == "" {
				continue
			}
			judged++
			s.Results = append(s.Results, tournament.Result{A: m.A, B: m.B, AWon: winners[i] == m.A, Debate: m.Debate})
			debates = s.tally(m, winners[i], debates)
		}
		if judged == 0 {
			break // the session is ending, or every turn failed: the next round tries again
		}
	}
	s.rate(ctx, 0)
	return debates
}

// rate fits the session's ratings to all its results, takes those that moved, and returns
// the next batch of matches, up to budget model calls (none for 0).
func (s *supervisor) rate(ctx workflow.Context, budget int) []tournament.Match {
	if !s.mayGo(ctx) {
		return nil
	}
	in := activities.TournamentInput{SessionID: s.id, Ledger: *s.tournamentLedger(), Budget: budget, Cluster: s.ClusterAt,
		Fitted: true, TopK: s.req.Config.TopK, DebateShare: s.req.Config.DebateShare,
		Seed: uint64(s.req.Config.Seed) ^ uint64(s.Matches)*0x9e3779b97f4a7c15}
	what := fmt.Sprintf("fit the ratings and choose round %d's next matches", s.Rounds)
	if budget == 0 {
		what = fmt.Sprintf("fit the ratings after round %d's matches", s.Rounds)
	}
	out, ok := s.runTournament(ctx, what, "ratings", in)
	if !ok {
		return nil
	}
	for _, id := range workflow.DeterministicKeys(out.Ratings) {
		if i, ok := s.index[id]; ok {
			s.Entries[i].Elo, s.Entries[i].EloSE = out.Ratings[id].Elo, out.Ratings[id].SE
		}
	}
	s.Boundary = out.Boundary
	return out.Matches
}

// topK is the size of the top the supervisor watches: the config's for fitted ratings,
// policy.TopK for Elo sessions as before.
func (s *supervisor) topK() int {
	if s.fitted() {
		return s.req.Config.TopK
	}
	return policy.TopK
}

// settled says whether the top, ids, counts as settled this round: the same members as
// last round and, for fitted ratings, a boundary no longer narrowing.
func (s *supervisor) settled(top []string, k int) bool {
	same := len(top) == k && slices.Equal(top, s.LastTop)
	if s.fitted() {
		same = same && s.Boundary >= s.LastBoundary*(1-boundaryShrink)
		s.LastBoundary = s.Boundary
	}
	return same
}
