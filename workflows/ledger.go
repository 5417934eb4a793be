package workflows

// The tournament's ledger: since versionLedger, the pairs that met and the proximity graph
// live in the session store, in the checkpoints, and the workflow keeps only what changed
// since its last checkpoint. A round's matches and the clusters come from the Tournament
// activity, the overview's themes from the Overview activity, and a run that continues as
// new hands over its hypotheses through the checkpoint it wrote just before, which the
// next run reads back a page at a time. So nothing the workflow carries, sends or receives
// grows with the square of the session, and a run carries only ids, numbers and its log's
// tail.
//
// Sessions recorded before keep the whole tournament in the workflow (s.ledger false):
// testdata/session-graph.json is such a history.

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// versionLedger gates the tournament's ledger in the store.
const versionLedger = "tournament-ledger"

// base is the checkpoint the session's changes are kept against: its own latest, or,
// until it writes one, the checkpoint it was restored from. Zero before any.
func (s *supervisor) base() activities.CheckpointRef {
	switch {
	case s.saved == nil:
		return activities.CheckpointRef{}
	case s.Checkpoints > 0:
		return activities.CheckpointRef{Session: s.id, Seq: s.Checkpoints}
	}
	return activities.CheckpointRef{Session: s.lineage.Parent, Seq: s.lineage.Checkpoint}
}

// changed lists the records that differ from the last checkpoint's; all of them before
// the first.
func (s *supervisor) changed() []session.Entry {
	var out []session.Entry
	for i, e := range s.Entries {
		if i >= len(s.saved) || !session.SameEntry(e, s.saved[i]) {
			out = append(out, e)
		}
	}
	return out
}

// tournamentLedger is where the tournament stands, for the activities that need all of it.
func (s *supervisor) tournamentLedger() *activities.Ledger {
	return &activities.Ledger{Base: s.base(), Changed: s.changed(), Played: workflow.DeterministicKeys(s.Played), Edges: s.Edges, Results: s.Results}
}

// schedule chooses the round's matches: in the workflow before the ledger, since then by
// the Tournament activity, which also renumbers the proximity clusters.
func (s *supervisor) schedule(ctx workflow.Context, fresh []string, budget, debateTopK int) []tournament.Match {
	opts := tournament.Options{DebateTopK: debateTopK}
	if !s.ledger {
		var players []tournament.Player
		for _, e := range s.Entries {
			if e.Excluded == "" {
				players = append(players, tournament.Player{ID: e.ID, Elo: e.Elo, Matches: e.Wins + e.Losses, New: slices.Contains(fresh, e.ID)})
			}
		}
		return tournament.Schedule(players, s.similarity, budget, func(x, y string) bool { return s.Played[activities.PairKey(x, y)] }, opts)
	}
	if !s.mayGo(ctx) {
		return nil
	}
	in := activities.TournamentInput{SessionID: s.id, Ledger: *s.tournamentLedger(), New: fresh, Budget: budget, DebateTopK: debateTopK, Cluster: s.ClusterAt}
	out, ok := s.runTournament(ctx, fmt.Sprintf("schedule round %d's matches", s.Rounds), "tournament", in)
	if !ok {
		return nil
	}
	return out.Matches
}

// runTournament runs the Tournament activity on in (summary says what for) and takes the
// proximity clusters it numbered. It says whether it ran; when it did not, the session's
// log says the round has no none ("tournament" for the schedule, "ratings" for a fit).
func (s *supervisor) runTournament(ctx workflow.Context, summary, none string, in activities.TournamentInput) (activities.TournamentResult, bool) {
	actx := workflow.WithActivityOptions(ctx, s.computeOptions(summary))
	var out activities.TournamentResult
	if err := s.untilStored(ctx, s.mayGo, func() error { return workflow.ExecuteActivity(actx, a.Tournament, in).Get(ctx, &out) }); err != nil {
		s.note(fmt.Sprintf("no %s in round %d: %s", none, s.Rounds, errorText(err)))
		return out, false
	}
	for _, id := range workflow.DeterministicKeys(out.Clusters) {
		if i, ok := s.index[id]; ok {
			s.Entries[i].Cluster = out.Clusters[id]
		}
	}
	return out, true
}

// mayGo is mayStart for the supervisor's own coroutine, between the round's parallel
// steps: while the session is suspended there it writes the checkpoints the scientist
// asks for, as parallel's wait does for the turns. Before the ledger it did not, and a
// checkpoint asked for then waited for the resume.
func (s *supervisor) mayGo(ctx workflow.Context) bool {
	if s.ledger {
		s.wait(ctx, func() bool { return s.Life.Effective() != session.Suspended })
	}
	return s.mayStart(ctx)
}

// forget drops the pairs, similarities and results the last checkpoint holds: since the ledger,
// the store keeps them.
func (s *supervisor) forget() {
	if s.ledger {
		s.Played = pairSet{}
		s.Edges = nil
		s.Results = nil
		s.sim = map[string]float64{}
	}
}

// carryOver is what the next run gets: everything but the records, which it reads back
// from the checkpoint just written. This run keeps its own, for queries on it.
func (s *supervisor) carryOver() *Carried {
	c := s.Carried
	c.Entries, c.RankingAt = nil, s.Checkpoints
	return &c
}

// versionPackedRanking gates packed pages of the ranking read back (RankingPage.Packed):
// a run's history holds its hypotheses in about a tenth of the bytes, so a query on a
// finished session, which replays its last run, fetches and decodes that much less.
// Before it, the pages were plain JSON, 500 records each.
const versionPackedRanking = "packed-ranking"

// readRanking reads the hypotheses of checkpoint at, a page at a time (the next run of a
// session that continued as new, or a session restored from another's checkpoint). The
// store must answer: without its hypotheses the session cannot go on, so the read retries
// until it does.
func (s *supervisor) readRanking(ctx workflow.Context, at activities.CheckpointRef) ([]session.Entry, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             fmt.Sprintf("read the hypotheses of checkpoint %d of %s", at.Seq, at.Session),
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
	})
	packed, limit := since(ctx, versionPackedRanking), activities.RankingPageLimit
	if packed {
		limit = activities.PackedPageLimit
	}
	var entries []session.Entry
	for {
		var page activities.RankingPage
		in := activities.RankingInput{Checkpoint: at, Offset: len(entries), Limit: limit, Packed: packed}
		if err := workflow.ExecuteActivity(actx, a.Ranking, in).Get(ctx, &page); err != nil {
			return nil, err
		}
		// A worker from before versionPackedRanking answers unpacked: Entries reads either.
		got, err := page.Entries()
		if err != nil {
			return nil, err
		}
		entries = append(entries, got...)
		if len(got) == 0 || len(entries) >= page.Total {
			return entries, nil
		}
	}
}
