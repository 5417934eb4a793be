package session

import (
	"fmt"
	"strings"
)

// Counts splits a session's hypotheses by whether they count against max_hypotheses: the
// agents' own (counted), the scientist's (added) and those a continued or forked session
// started with (inherited). A progress written before Counted was kept holds hypotheses
// beyond the scientist's and the inherited ones with Counted 0: then all but the
// scientist's counted, as they did.
func (p Progress) Counts() (counted, added, inherited int) {
	counted, added, inherited = p.Counted, p.Added, p.Inherited
	if counted == 0 && p.HypothesesGenerated > added+inherited {
		counted = p.HypothesesGenerated - added - inherited
	}
	return counted, added, inherited
}

// HypothesesText is the hypothesis count as status lines show it: "20/20" when every
// hypothesis counts against max_hypotheses, and otherwise the total with what counts
// named, so that a session with the scientist's own never reads as over its limit:
// "21 (20/20 by the agents, 1 by the scientist)".
func (p Progress) HypothesesText() string {
	counted, added, inherited := p.Counts()
	of := fmt.Sprint(counted)
	if p.MaxHypotheses > 0 {
		of += fmt.Sprintf("/%d", p.MaxHypotheses)
	}
	if added == 0 && inherited == 0 {
		return of
	}
	var parts []string
	if inherited > 0 {
		parts = append(parts, fmt.Sprintf("%d from the parent session", inherited))
	}
	parts = append(parts, of+" by the agents")
	if added > 0 {
		parts = append(parts, fmt.Sprintf("%d by the scientist", added))
	}
	return fmt.Sprintf("%d (%s)", p.HypothesesGenerated, strings.Join(parts, ", "))
}
