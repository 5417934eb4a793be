package workflows

// max_hypotheses, held exactly. A hypothesis enters a session in five ways: the agents
// generate it, evolve it, a subagent's evolution line brings it in (storeImports), a turn
// that waited for the scientist's answer to a tool call brings it in late (takeLate), or
// the scientist adds it. The first four count against max_hypotheses; the scientist's do
// not (they asked for it), nor do those a continued or forked session starts with (a new
// session has limits of its own).
//
// Before versionExactCap a round planned its work before it took in the subagents'
// hypotheses, so it could plan up to the limit and then add an import on top of it; and a
// turn still waiting for the scientist held no place, so the next round planned one more.
// Since, a round plans after its intake, counting the turns in flight.

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/internal/session"
)

// versionExactCap: max_hypotheses holds on every path by which a hypothesis enters. Asked
// at the start of every run, so a long session adopts it when it continues as new.
const versionExactCap = "exact-max-hypotheses"

// made counts the hypotheses that count against max_hypotheses.
func (s *supervisor) made() int { return s.Generated + s.Evolved }

// committed counts those made and, since versionExactCap, those whose turns are running.
func (s *supervisor) committed() int {
	if s.exactCap {
		return s.made() + s.making
	}
	return s.made()
}

// full says the session has, or will have once its turns in flight are in, its
// max_hypotheses: nothing more may be started or taken in.
func (s *supervisor) full() bool { return s.committed() >= s.req.Config.MaxHypotheses }

// awaitingOnlyInFlight says the only hypotheses the session still lacks are those of
// turns waiting for the scientist: another round would make nothing, so the supervisor
// waits for them instead (or for the scientist's own work, which gets its round).
func (s *supervisor) awaitingOnlyInFlight() bool {
	return s.exactCap && s.making > 0 && s.full() && len(s.Added) == 0 && len(s.ManualReviews) == 0
}

// awaitInFlight waits until the turns in flight are in, the session is no longer active
// (suspended, ending) or the scientist sent work; the loop then decides again.
func (s *supervisor) awaitInFlight(ctx workflow.Context) {
	s.wait(ctx, func() bool {
		return s.making == 0 || s.Life.Effective() != session.Active || len(s.Added) > 0 || len(s.ManualReviews) > 0
	})
}
