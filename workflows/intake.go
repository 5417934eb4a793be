package workflows

// What enters a round's tournament besides the agents' work: the hypotheses and reviews
// the scientist sent since the last round, and the hypotheses whose turns finished after
// their round's step (deliver sets them aside, takeLate takes them in). The agents' new
// hypotheses come from generate.go and evolve.go.

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// deliver hands a new hypothesis to its parallel step (ids[i]), or, if the step moved on
// while its turn waited for the scientist, to the next round (Late).
func (s *supervisor) deliver(ctx workflow.Context, ids []string, i int, id string) {
	if late(ctx) {
		s.Late = append(s.Late, id)
		return
	}
	ids[i] = id
}

// takeLate takes the hypotheses that arrived after their round's step.
func (s *supervisor) takeLate() []string {
	ids := s.Late
	s.Late = nil
	return ids
}

// storeAdded stores the hypotheses the scientist added since the last round; they enter
// the tournament like any other.
func (s *supervisor) storeAdded(ctx workflow.Context) []string {
	var ids []string
	for len(s.Added) > 0 {
		ad := s.Added[0]
		s.Added = s.Added[1:]
		in := activities.AddHypothesisInput{
			SessionID: s.id, HypothesisID: ad.ID, Scientist: s.req.ScientistID, Goal: s.Goal,
			Title: ad.Cmd.Title, Statement: ad.Cmd.Statement, Rationale: ad.Cmd.Rationale, Predictions: ad.Cmd.Predictions,
		}
		var out activities.GenerateResult
		actx := workflow.WithActivityOptions(ctx, storeOptions("store the scientist's hypothesis "+ad.ID))
		if err := s.untilStored(ctx, s.mayGo, func() error { return workflow.ExecuteActivity(actx, a.AddHypothesis, in).Get(ctx, &out) }); err != nil {
			s.note(fmt.Sprintf("the scientist's hypothesis %s could not be stored: %s", ad.ID, errorText(err)))
			continue
		}
		s.add(session.Entry{ID: ad.ID, Title: ad.Cmd.Title, Origin: "scientist", Strategy: "scientist", Round: s.Rounds, Elo: tournament.InitialElo})
		s.ScientistAdded++
		ids = append(ids, ad.ID)
	}
	return ids
}

// storeManualReviews stores the scientist's reviews and weighs each in like two agent
// reviews: a scientist's judgement counts for more than one pass of the reflection agent.
func (s *supervisor) storeManualReviews(ctx workflow.Context) {
	for len(s.ManualReviews) > 0 {
		cmd := s.ManualReviews[0]
		s.ManualReviews = s.ManualReviews[1:]
		s.ReviewsBy[cmd.HypothesisID]++
		in := activities.ManualReviewInput{
			SessionID: s.id, HypothesisID: cmd.HypothesisID, Scientist: s.req.ScientistID, Index: s.ReviewsBy[cmd.HypothesisID],
			Score: cmd.Score, Verdict: cmd.Verdict, Critique: cmd.Critique,
		}
		var out activities.ReviewResult
		actx := workflow.WithActivityOptions(ctx, storeOptions("store the scientist's review of "+cmd.HypothesisID))
		if err := s.untilStored(ctx, s.mayGo, func() error { return workflow.ExecuteActivity(actx, a.ManualReview, in).Get(ctx, &out) }); err != nil {
			s.note(fmt.Sprintf("the scientist's review of %s could not be stored: %s", cmd.HypothesisID, errorText(err)))
			continue
		}
		e := &s.Entries[s.index[cmd.HypothesisID]]
		e.Score = (e.Score*float64(e.Reviews) + 2*out.Score) / float64(e.Reviews+2)
		e.Reviews += 2
		s.Reviews++
	}
}
