package workflows

// Budgets that hold: a model call starts only if what the session has spent, what its
// calls in flight are expected to spend and what the call itself is expected to spend
// fit in the token budget and the dollar budget (policy.Budget). Calls run in parallel,
// so a check of what was spent alone would let every call of a round start on the last
// dollar. A call that does not fit is not made; the round goes on without it, and the
// session suspends after the round with the reason, until the scientist raises the
// budget (set-budget) and resumes.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/policy"
	"github.com/cosci-dev/cosci/internal/research"
)

// versionBudget gates budgets that count the calls in flight and the next call's
// estimate. Sessions started before it checked only what was spent, between calls.
const versionBudget = "budget-in-flight"

// errOverBudget is a call that was not made because the budget would not hold it. It is
// not a failure: the turn is neither booked nor counted as failed.
var errOverBudget = errors.New("not started: the budget would not hold it")

// budget is the session's caps.
func (s *supervisor) budget() policy.Budget {
	return policy.Budget{Tokens: s.req.Config.TokenBudget, USD: s.req.Config.BudgetUSD}
}

// expected is what the next call of agent is expected to spend: the most one of its calls
// has spent so far, or, before its first, the most any call has. A mean would let calls
// dearer than the mean, such as a round's first prompts after a long meta-review, overrun
// the budget.
func (s *supervisor) expected(agent string) research.Usage {
	var dearest []research.Usage
	for _, st := range s.Agents {
		dearest = append(dearest, st.Dearest)
	}
	var own research.Usage
	if st := s.stat(agent); st != nil {
		own = st.Dearest
	}
	return policy.Expected(own, dearest)
}

// reserve books what a call of agent is expected to spend before it starts, or refuses
// it when the budget would not hold it: then it notes why, for the session to suspend
// after the round. release gives the reservation back once the call has returned (its
// real usage is added by the caller).
func (s *supervisor) reserve(agent string, next research.Usage) (release func(), err error) {
	if !s.budgets {
		return func() {}, nil
	}
	if why := s.budget().Refuses(agent, s.Usage, s.inFlight, next); why != "" {
		if s.Refused == "" {
			s.note("not started: " + why)
		}
		s.Refused = why
		return nil, errOverBudget
	}
	s.inFlight = s.inFlight.Add(next)
	return func() { s.inFlight = minus(s.inFlight, next) }, nil
}

// minus is a usage less another, for the reservations: never below zero.
func minus(u, v research.Usage) research.Usage {
	u.PromptTokens = max(0, u.PromptTokens-v.PromptTokens)
	u.CompletionTokens = max(0, u.CompletionTokens-v.CompletionTokens)
	u.CostUSD = max(0, u.CostUSD-v.CostUSD)
	return u
}

// spend adds what a call of agent spent to the session's usage and the agent's.
func (s *supervisor) spend(agent string, u research.Usage) {
	s.Usage = s.Usage.Add(u)
	if st := s.stat(agent); st != nil {
		st.Usage = st.Usage.Add(u)
		st.Dearest = policy.Dearest(st.Dearest, u)
	}
}

// stat is an agent's statistics; nil for a name the session does not count.
func (s *supervisor) stat(agent string) *AgentStat {
	i := slices.IndexFunc(s.Agents, func(st AgentStat) bool { return st.Agent == agent })
	if i < 0 {
		return nil
	}
	return &s.Agents[i]
}

// subagentEstimate is what a subagent is expected to spend: the calls its task makes
// (subagent.go), each as expected of its agent.
func (s *supervisor) subagentEstimate(task string) research.Usage {
	var u research.Usage
	add := func(agent string, n int) {
		for range n {
			u = u.Add(s.expected(agent))
		}
	}
	switch task {
	case research.DelegateVerify:
		add(activities.AgentReflection, 2)
	default:
		add(activities.AgentEvolution, lineLength)
		add(activities.AgentRanking, 1)
	}
	return u
}

// spentBy is what each agent spent, for the checkpoint and the report; nil before any
// agent's usage was kept.
func (s *supervisor) spentBy() map[string]research.Usage {
	var out map[string]research.Usage
	for _, st := range s.Agents {
		if st.Usage != (research.Usage{}) {
			if out == nil {
				out = map[string]research.Usage{}
			}
			out[st.Agent] = st.Usage
		}
	}
	return out
}

// costText is what the session's calls cost, against its budgets, for the Web UI: "$0.42
// of $5.00 (8%); 61% of the prompt tokens from the provider's cache; 120 requests
// batched".
func costText(u research.Usage, c research.Config) string {
	text := "$" + research.Dollars(u.CostUSD)
	if c.BudgetUSD > 0 {
		text += fmt.Sprintf(" of $%s (%.0f%%)", research.Dollars(c.BudgetUSD), 100*u.CostUSD/c.BudgetUSD)
	}
	if c.TokenBudget > 0 {
		text += fmt.Sprintf("; %s of %s tokens", research.Thousands(u.Tokens()), research.Thousands(c.TokenBudget))
	}
	if u.CachedTokens > 0 {
		text += fmt.Sprintf("; %d%% of the prompt tokens from the provider's cache", u.CachedPercent())
	}
	if u.Batched > 0 {
		text += fmt.Sprintf("; %d requests batched", u.Batched)
	}
	if u.Unpriced > 0 {
		text += fmt.Sprintf("; %d requests on a model without a price (their cost is unknown, not 0)", u.Unpriced)
	}
	return text
}
