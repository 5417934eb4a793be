package activities

// The supervisor's planning turn: the smallest agent, and the example of docs/design.md's
// "Adding an agent" (TestAddingAnAgentExample keeps the two the same).

import (
	"context"
	"errors"
	"strings"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// Plan runs the supervisor's planning turn: the research plan, made once per session from
// the goal, goes to the store, where every later prompt that asks for it finds it.
func (a *Activities) Plan(ctx context.Context, in Turn) (PlanResult, error) {
	return runTurn(ctx, a, planning, in)
}

var planning = declare(agent[Turn, research.PlanRequest, research.Plan, PlanResult]{
	activity: "Plan", label: AgentSupervisor, prompt: prompt.Plan, spec: prompt.PlanSpec, prepare: preparePlan,
})

type planTurn = turn[research.PlanRequest, research.Plan, PlanResult]

// preparePlan needs nothing from the store; it keeps the plan there, and returns its
// summary as the store holds it (an earlier attempt's, if one was stored first).
func preparePlan(ctx context.Context, a *Activities, in Turn, turnID string) (planTurn, error) {
	keep := func(_ research.PlanRequest, p research.Plan, usage research.Usage) (PlanResult, error) {
		if len(p.Criteria) == 0 || strings.TrimSpace(p.Summary) == "" {
			return PlanResult{}, malformed(errors.New("the plan has no evaluation criteria or no summary"))
		}
		if err := a.Store.PutPlan(ctx, in.SessionID, p); err != nil {
			return PlanResult{}, err
		}
		stored, err := a.Store.Plan(ctx, in.SessionID)
		if err != nil {
			return PlanResult{}, err
		}
		return PlanResult{Summary: stored.Summary, Usage: usage}, nil
	}
	req := research.PlanRequest{TurnID: turnID, Goal: in.Goal, Seed: in.Seed}
	return planTurn{req: req, keep: keep}, nil
}
