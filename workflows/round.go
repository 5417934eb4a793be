package workflows

// A round of the session, as the paper's loop runs it: the supervisor's plan once; then
// what the scientist and late turns bring in (intake.go), generation (generate.go) and
// evolution (evolve.go) of new hypotheses, their proximity to the others (proximity.go),
// reflection's reviews (review.go), the tournament (rank.go) and the meta-review
// (metareview.go), which also writes the research overview at the end. Each agent step is
// one or more provider turns (turns.go), sent in a batch where the session batches
// (batch.go).

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/policy"
	"github.com/cosci-dev/cosci/internal/session"
)

// round is one pass of the research loop, as the supervisor planned it.
func (s *supervisor) round(ctx workflow.Context) {
	var work policy.Plan
	if !s.exactCap {
		work = policy.Allocate(s.stats())
	}
	finished := s.Rounds
	s.Rounds++
	if s.Plan == "" {
		s.makePlan(ctx)
	}
	fresh := s.storeAdded(ctx)
	fresh = append(fresh, s.storeImports(ctx)...)
	fresh = append(fresh, s.takeLate()...)
	if s.exactCap {
		// The work is planned once the intake is in, so it fills the room that is left
		// (limits.go), with the strategies rotating by the rounds finished as before.
		st := s.stats()
		st.Round, st.Intake = finished, len(fresh)
		work = policy.Allocate(st)
	}
	fresh = append(fresh, s.generate(ctx, work.Generate)...)
	fresh = append(fresh, s.evolve(ctx, work.Evolve)...)
	s.proximity(ctx, fresh)
	reviewed := s.review(ctx, fresh)
	s.storeManualReviews(ctx)
	debates := s.tournament(ctx, fresh, work.Matches)
	delegations := s.metaReview(ctx, reviewed, debates)
	s.watchTop()
	s.publish(ctx)

	if work.NewHypotheses() > 0 && len(fresh) == 0 {
		s.Barren++
		if s.Barren >= maxBarrenRounds && s.Life.Effective() == session.Active {
			s.suspendBecause(ctx, fmt.Sprintf("no hypothesis came out of %d rounds; last error: %s. Fix the provider, then resume", s.Barren, s.LastError))
			s.Barren = 0
		}
	} else {
		s.Barren = 0
	}
	// A milestone: the round's evolution and tournament are done.
	if err := s.checkpoint(ctx, fmt.Sprintf("round %d", s.Rounds)); err != nil && s.Life.Effective() == session.Active {
		if !s.storeFault(ctx, err) {
			s.suspendBecause(ctx, "checkpoint failed: "+err.Error()+". Fix the session store, then resume")
		}
		return
	}
	// Deferred work: subagents start only now that the turn that asked for them has
	// completed, from the checkpoint just written.
	if s.hasSubagents() {
		s.delegate(ctx, delegations)
	}
}

// makePlan asks the supervisor's one provider turn for the research plan: preferences,
// constraints and evaluation criteria, which every later prompt carries.
func (s *supervisor) makePlan(ctx workflow.Context) {
	if !s.mayGo(ctx) {
		return
	}
	in := s.turnInput("plan")
	out, err := turn(ctx, s, activities.AgentSupervisor, "plan the research", in, "", a.Plan, in)
	if err != nil {
		return
	}
	s.spend(activities.AgentSupervisor, out.Usage)
	s.Plan = out.Summary
	if s.Plan == "" {
		s.Plan = "(plan without summary)"
	}
	s.note("research plan: " + s.Plan)
}
