package workflows

import (
	"context"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// judgements counts the tournament's comparisons a model was asked for (a subagent's
// evolution line compares too, by turns of another name).
type judgements struct {
	*simulator.Offline
	n *atomic.Int64
}

// Answer answers with the methods of judgements, which change some of the simulator's answers.
func (j judgements) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, j, q)
}

var tournamentTurn = regexp.MustCompile(`^match-[0-9]+-`)

func (j judgements) Compare(ctx context.Context, req research.CompareRequest) (research.Comparison, research.Usage, error) {
	if tournamentTurn.MatchString(req.TurnID) {
		j.n.Add(1)
	}
	return j.Offline.Compare(ctx, req)
}

// TestFittedRatings: a session records every result with who was shown first, each one a
// judgement of its own (a rematch is judged again, not answered from the first meeting's
// turn), its ratings are the fit of those results, the judge sees each hypothesis first
// about as often as second, and a judge's bias towards the first shown is fitted as such
// instead of being taken for strength.
func TestFittedRatings(t *testing.T) {
	asked := judgements{&simulator.Offline{FirstBias: 1}, &atomic.Int64{}}
	h := newHarness(t, 0, asked)
	res := h.run(goal(48))
	snap, err := h.store.LatestCheckpoint(t.Context(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	checkFitted(t, snap)
	if len(snap.Results) != snap.Progress.MatchesPlayed || len(snap.Results) < 100 {
		t.Fatalf("%d results recorded for %d matches played; want them all, and a real tournament", len(snap.Results), snap.Progress.MatchesPlayed)
	}
	if n := asked.n.Load(); n != int64(len(snap.Results)) {
		t.Errorf("the judge was asked %d times for %d results; want a judgement for each", n, len(snap.Results))
	}
	pairs := map[string]int{}
	for _, r := range snap.Results {
		pairs[activities.PairKey(r.A, r.B)]++
	}
	if len(pairs) == len(snap.Results) {
		t.Error("no pair met twice: the test does not see a rematch")
	}
	lead, firstWon := map[string]int{}, 0
	for _, r := range snap.Results {
		lead[r.A]++
		lead[r.B]--
		if r.AWon {
			firstWon++
		}
	}
	for id, l := range lead {
		if l < -2 || l > 2 {
			t.Errorf("%s was shown first %d times more than second; want the positions balanced", id, l)
		}
	}
	// With a bias of 1 logit the first shown wins about 70% of even matches.
	share := float64(firstWon) / float64(len(snap.Results))
	var ids []string
	for _, e := range snap.Hypotheses {
		ids = append(ids, e.ID)
	}
	fit := tournament.Fit(ids, snap.Results)
	t.Logf("%d results; the first shown won %.2f; fitted bias %.2f, scale %.2f", len(snap.Results), share, fit.FirstBias, fit.Scale)
	if share < 0.6 || fit.FirstBias < 0.5 || fit.FirstBias > 1.5 {
		t.Errorf("the first shown won %.2f of %d matches and the fitted bias is %.2f; the judge's is 1", share, len(snap.Results), fit.FirstBias)
	}
	for _, e := range snap.Hypotheses {
		if e.Wins+e.Losses > 0 && e.EloSE <= 0 {
			t.Errorf("%s played %d matches and has no standard error: %+v", e.ID, e.Wins+e.Losses, e)
		}
	}
	if snap.Rating != session.RatingFitted {
		t.Errorf("rating %q", snap.Rating)
	}
}
