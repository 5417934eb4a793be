package workflows

// Generation: the generation agent's new hypotheses, one turn each, by the strategies the
// supervisor chose for the round.

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/policy"
	"github.com/cosci-dev/cosci/internal/session"
)

// generate asks for new hypotheses by the strategies the supervisor chose.
func (s *supervisor) generate(ctx workflow.Context, work []policy.Assignment) []string {
	strategies := turnKinds(work)
	input := func(i int) activities.GenerateInput {
		id := s.newID()
		return activities.GenerateInput{
			Turn:         s.turnInput("generate-" + id),
			HypothesisID: id,
			Focus:        s.recent(s.Focus),
			Strategy:     strategies[i],
			Context:      s.contextRef(),
		}
	}
	// Batched turns are known before they start, their ids with them; the others take
	// their ids as they start, as they always have.
	b := submit(ctx, s, "hypotheses", activities.AgentGeneration, len(strategies),
		func(i int) bool { return s.batching(activities.AgentGeneration, strategies[i]) }, input)
	defer b.release()
	return s.newHypotheses(ctx, len(strategies), func(ctx workflow.Context, i int) string {
		in := b.kept(i)
		summary := fmt.Sprintf("generate hypothesis %d/%d (%s, %s)", s.Generated+s.Evolved+i+1, s.req.Config.MaxHypotheses, in.HypothesisID, strategies[i])
		e := session.Entry{ID: in.HypothesisID, Origin: "generation", Strategy: strategies[i]}
		if !hypothesisTurn(ctx, s, activities.AgentGeneration, summary, in.Turn, a.Generate, in, (*activities.GenerateInput).SetLoop, e) {
			return ""
		}
		s.Generated++
		return in.HypothesisID
	})
}
