package workflows

// Reflection: every enabled review type on each new hypothesis, and the safety floor that
// excludes an unsafe one.

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/research"
)

// review runs every enabled review type on each new hypothesis, and excludes one whose
// safety score falls below the session's safety floor. It returns the ids it reviewed.
func (s *supervisor) review(ctx workflow.Context, fresh []string) []string {
	ids := slices.DeleteFunc(slices.Clone(fresh), func(id string) bool { return s.Entries[s.index[id]].Excluded != "" })
	types := s.req.Config.ReviewTypes
	floor := research.SafetyFloor(s.req.Config.SafetyLevel)
	// Turn i reviews ids[i/len(types)] by types[i%len(types)].
	input := func(i int) activities.ReviewInput {
		id, typ := ids[i/len(types)], types[i%len(types)]
		return activities.ReviewInput{Turn: s.turnInput("review-" + id + "-" + typ), HypothesisID: id, Type: typ, Context: s.contextRef()}
	}
	// A batched turn runs with the input it was submitted with: what it asked is paid
	// for, and a refinement meanwhile applies to the calls made after it.
	b := submit(ctx, s, "reviews", activities.AgentReflection, len(ids)*len(types),
		func(i int) bool { return s.batching(activities.AgentReflection, types[i%len(types)]) }, input)
	defer b.release()
	s.parallel(ctx, len(ids)*len(types), func(ctx workflow.Context, i int) {
		id, typ := ids[i/len(types)], types[i%len(types)]
		if !s.mayStart(ctx) {
			return
		}
		in := b.input(i)
		tools := s.toolsFor(activities.AgentReflection, typ)
		out, err := toolTurn(ctx, s, activities.AgentReflection, fmt.Sprintf("review %s (%s)", id, typ), in.Turn, id, a.Review, in, tools, (*activities.ReviewInput).SetLoop)
		if err != nil {
			return
		}
		s.spend(activities.AgentReflection, out.Usage)
		e := &s.Entries[s.index[id]]
		e.Score = (e.Score*float64(e.Reviews) + out.Score) / float64(e.Reviews+1)
		e.Reviews++
		e.Flagged = max(e.Flagged, out.Invented+out.Unsupported) // every review checks the same citations
		s.Reviews++
		if out.Safety < floor && e.Excluded == "" {
			e.Excluded = fmt.Sprintf("unsafe: the %s review scored its safety %.1f, below the %s floor %.1f",
				typ, out.Safety, s.req.Config.SafetyLevel, floor)
			s.note(id + " excluded: " + e.Excluded)
		}
	})
	return ids
}
