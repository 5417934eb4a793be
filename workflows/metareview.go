package workflows

// Meta-review: the round's recurring critique, which the next round's prompts carry, and
// the research overview the session ends with.

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/research"
)

// metaReview asks for the recurring critique of the round; the next round's generation and
// reflection prompts carry it.
func (s *supervisor) metaReview(ctx workflow.Context, reviewed, debates []string) []research.Delegation {
	if len(reviewed) == 0 && len(debates) == 0 {
		return nil
	}
	if !s.mayGo(ctx) {
		return nil
	}
	in := activities.MetaReviewInput{Turn: s.turnInput(fmt.Sprintf("meta-review-round-%d", s.Rounds)), Round: s.Rounds, Hypotheses: reviewed, Debates: debates, Context: withLab(s.contextRef(), s.labRead(ctx))}
	out, err := turn(ctx, s, activities.AgentMetaReview, fmt.Sprintf("meta-review of round %d", s.Rounds), in.Turn, "", a.MetaReview, in)
	if err != nil {
		return nil
	}
	s.spend(activities.AgentMetaReview, out.Usage)
	s.MetaRound = out.Round
	s.MetaCritiques = out.Critiques
	return out.Delegations
}

// overview asks the meta-review agent for the final research overview: the top hypotheses
// by cluster, open questions, suggested experiments. It runs even for a terminated session,
// since it is what the scientist reads; a spent budget or a failure leaves the report's own
// fallback overview.
func (s *supervisor) overview(ctx workflow.Context) {
	top := s.top(10)
	if len(top) == 0 || s.budgetSpent() {
		return
	}
	var ids []string
	for _, e := range top {
		ids = append(ids, e.ID)
	}
	in := activities.OverviewInput{Turn: s.turnInput("overview"), Top: ids, Context: s.contextRef(), EmbeddingModel: s.req.Config.EmbeddingModel, EmbeddingProvider: s.req.Config.EmbeddingProvider}
	if s.ledger {
		in.Ledger = s.tournamentLedger() // the activity groups them by the stored graph
	} else {
		in.Clusters = proximity.Themes(ids, s.Edges)
	}
	out, err := turn(ctx, s, activities.AgentMetaReview, "write the research overview", in.Turn, "", a.Overview, in)
	if err == nil {
		s.spend(activities.AgentMetaReview, out.Usage)
	}
}
