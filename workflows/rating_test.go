package workflows

import (
	"testing"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// TestFittedRatings: a session records every result with who was shown first, its
// ratings are the fit of those results, the judge sees each hypothesis first about as
// often as second, and a judge's bias towards the first shown is fitted as such instead of
// being taken for strength.
func TestFittedRatings(t *testing.T) {
	h := newHarness(t, 0, &simulator.Offline{FirstBias: 1})
	res := h.run(goal(48))
	snap, err := h.store.LatestCheckpoint(t.Context(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	checkFitted(t, snap)
	if len(snap.Results) != snap.Progress.MatchesPlayed || len(snap.Results) < 100 {
		t.Fatalf("%d results recorded for %d matches played; want them all, and a real tournament", len(snap.Results), snap.Progress.MatchesPlayed)
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
