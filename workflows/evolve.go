package workflows

// Evolution: new hypotheses made from the best ones, by the kinds of evolution the
// supervisor chose for the round (grounding, feasibility, combination, inspiration, ...).

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/policy"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// evolve makes new hypotheses from the best ones. Evolution never edits a hypothesis: each
// result is new, records its parents, and enters the tournament at 1200 like any other.
func (s *supervisor) evolve(ctx workflow.Context, work []policy.Assignment) []string {
	kinds := turnKinds(work)
	best := s.top(3)
	if len(best) == 0 {
		return nil
	}
	lab := s.labRead(ctx)
	parentsOf := func(i int) []string {
		parents := []string{best[i%len(best)].ID}
		if (kinds[i] == research.EvolveCombination || kinds[i] == research.EvolveInspiration) && len(best) > 1 {
			parents = append(parents, best[(i+1)%len(best)].ID)
		}
		return parents
	}
	input := func(i int) activities.EvolveInput {
		id := s.newID()
		return activities.EvolveInput{Turn: s.turnInput("evolve-" + id), HypothesisID: id, Kind: kinds[i], Parents: parentsOf(i), Context: withLab(s.contextRef(), lab)}
	}
	b := submit(ctx, s, "evolutions", activities.AgentEvolution, len(kinds),
		func(i int) bool { return s.batching(activities.AgentEvolution, kinds[i]) }, input)
	defer b.release()
	return s.newHypotheses(ctx, len(kinds), func(ctx workflow.Context, i int) string {
		parents := parentsOf(i)
		in := b.kept(i)
		summary := fmt.Sprintf("evolve %s by %s into %s", strings.Join(parents, " + "), kinds[i], in.HypothesisID)
		e := session.Entry{ID: in.HypothesisID, Origin: "evolution", Strategy: kinds[i], Parents: parents}
		if !hypothesisTurn(ctx, s, activities.AgentEvolution, summary, in.Turn, a.Evolve, in, (*activities.EvolveInput).SetLoop, e) {
			return ""
		}
		s.Evolved++
		return in.HypothesisID
	})
}
