package policy

import (
	"fmt"
	"math"

	"github.com/cosci-dev/cosci/internal/research"
)

// Budget is what a session may spend on model calls: tokens and US dollars, each 0 for no
// cap. A budget holds exactly when a call starts only if what the session has spent, what
// its calls under way are expected to spend and what this call is expected to spend stay
// within it: calls run in parallel, and a check of what was spent alone lets every call of
// a round start on the last dollar.
type Budget struct {
	Tokens int
	USD    float64
}

// On reports whether the budget caps anything.
func (b Budget) On() bool { return b.Tokens > 0 || b.USD > 0 }

// Refuses returns why a call expected to spend next may not start, given what the session
// has spent and what its calls in flight are expected to spend (each a sum of
// research.Usage), or "" when it may. agent names the call's agent, for the reason.
//
// A call with no estimate yet (the session's first) is allowed while anything is left.
// A dollar budget cannot be kept on a model whose price is unknown: once a call came back
// unpriced, no call starts until the worker has a price for it.
func (b Budget) Refuses(agent string, spent, inFlight, next research.Usage) string {
	if b.USD > 0 && spent.Unpriced > 0 {
		return fmt.Sprintf("budget_usd is $%s, but %d model calls came back without a price: the worker's price table has none for the session's model, so its cost cannot be counted. Give the workers a price for it (--prices), then resume", research.Dollars(b.USD), spent.Unpriced)
	}
	if b.Tokens > 0 {
		used, going, more := spent.Tokens(), inFlight.Tokens(), next.Tokens()
		if used+going >= b.Tokens || used+going+more > b.Tokens {
			return fmt.Sprintf("token budget reached: %d of %d tokens used%s, and the next %s call needs about %d; raise it with set-budget, then resume",
				used, b.Tokens, underWay(going > 0, fmt.Sprintf("%d tokens", going)), agent, more)
		}
	}
	if b.USD > 0 {
		used, going, more := spent.CostUSD, inFlight.CostUSD, next.CostUSD
		if used+going >= b.USD || used+going+more > b.USD {
			return fmt.Sprintf("budget reached: $%s of $%s spent%s, and the next %s call costs about $%s; raise it with set-budget, then resume",
				research.Dollars(used), research.Dollars(b.USD), underWay(going > 0, "$"+research.Dollars(going)), agent, research.Dollars(more))
		}
	}
	return ""
}

// underWay says what the calls under way are expected to spend, if anything.
func underWay(some bool, what string) string {
	if !some {
		return ""
	}
	return " (and about " + what + " in calls under way)"
}

// Margin is how much more than the dearest call of its agent so far the next call is
// expected to cost. Prompts grow with the session's context (the plan, then each round's
// meta-review, join every prompt) and answers vary in length: in the workflow tests a
// round's reviews cost up to 40% more than the dearest review of the round before. A
// session so stops a little short of its budget rather than over it.
const Margin = 1.5

// Expected is what the next call of an agent is expected to spend: Margin times the most
// one of that agent's calls has spent (own), or, before its first, the most any agent's
// call has (each of dearest), or nothing before the session's first call. The most, not
// the mean: with a mean, the calls dearer than it would overrun the budget.
func Expected(own research.Usage, dearest []research.Usage) research.Usage {
	most := own
	if most == (research.Usage{}) {
		for _, d := range dearest {
			most = Dearest(most, d)
		}
	}
	return research.Usage{
		PromptTokens:     int(math.Ceil(Margin * float64(most.PromptTokens))),
		CompletionTokens: int(math.Ceil(Margin * float64(most.CompletionTokens))),
		CostUSD:          Margin * most.CostUSD,
	}
}

// Dearest is the larger of two calls' spending, tokens and dollars each.
func Dearest(a, b research.Usage) research.Usage {
	return research.Usage{
		PromptTokens:     max(a.PromptTokens, b.PromptTokens),
		CompletionTokens: max(a.CompletionTokens, b.CompletionTokens),
		CostUSD:          max(a.CostUSD, b.CostUSD),
	}
}
