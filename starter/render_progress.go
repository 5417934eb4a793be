package main

// A running session's progress as starter shows it: the table of `starter progress`, the
// bar and lines of `starter watch`, and the batch and cost a session waits on.

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// elapsed shows a progress' elapsed time to the second.
func elapsed(p session.Progress) string {
	return (time.Duration(p.ElapsedSeconds * float64(time.Second))).Round(time.Second).String()
}

// batchText says what batch a session waits for: "a batch of 40 matches (batch_abc),
// submitted 12 min ago".
func batchText(b *session.BatchWait, now time.Time) string {
	text := fmt.Sprintf("a batch of %d %s (%s)", b.Requests, b.What, b.ID)
	if at, err := time.Parse(time.RFC3339Nano, b.Submitted); err == nil {
		text += ", submitted " + ago(now.Sub(at))
	}
	return text
}

// ago is a past duration as a person says it.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%.1f h ago", d.Hours())
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}

func renderProgress(w io.Writer, p session.Progress) error {
	t := newTable(w)
	fmt.Fprintf(t, "state\t%s\n", p.State)
	fmt.Fprintf(t, "hypotheses\t%s\n", p.HypothesesText())
	fmt.Fprintf(t, "reviews\t%d\n", p.ReviewsCompleted)
	fmt.Fprintf(t, "matches\t%d\n", p.MatchesPlayed)
	fmt.Fprintf(t, "rounds\t%d\n", p.Rounds)
	fmt.Fprintf(t, "failed turns\t%d\n", p.TurnsFailed)
	fmt.Fprintf(t, "cost\t%s\n", spentText(p))
	fmt.Fprintf(t, "elapsed\t%s\n", elapsed(p))
	fmt.Fprintf(t, "checkpoints\t%d\n", p.Checkpoints)
	if p.LastCheckpoint != "" {
		fmt.Fprintf(t, "last checkpoint\t%s\n", when(p.LastCheckpoint))
	}
	if p.ToolCalls > 0 {
		fmt.Fprintf(t, "tool calls\t%d (%d failed or errors)\n", p.ToolCalls, p.ToolErrors)
	}
	for _, w := range p.Waiting {
		fmt.Fprintf(t, "waiting for you\t%s %s %s (since %s)\n", printable(w.ID), printable(w.Tool), printable(w.Brief), when(w.Since))
	}
	if p.Batch != nil {
		fmt.Fprintf(t, "waiting for\t%s\n", batchText(p.Batch, time.Now()))
	}
	return t.Flush()
}

// progressDescription is what the watch bar shows beside the hypothesis count: the state,
// reviews, matches, elapsed time and, once known, each agent's turns.
func progressDescription(id string, p session.Progress, agents []workflows.AgentStat) string {
	state := string(p.State)
	if p.State == session.Suspended {
		state = "SUSPENDED (starter resume " + id + ")"
	}
	s := fmt.Sprintf("%s · %d reviews · %d matches · %s", state, p.ReviewsCompleted, p.MatchesPlayed, elapsed(p))
	if p.CostUSD > 0 || p.BudgetUSD > 0 {
		s += " · $" + research.Dollars(p.CostUSD)
		if p.BudgetUSD > 0 {
			s += " of $" + research.Dollars(p.BudgetUSD)
		}
	}
	if p.ToolCalls > 0 {
		s += fmt.Sprintf(" · %d tool calls", p.ToolCalls)
	}
	if n := len(p.Waiting); n > 0 {
		s += fmt.Sprintf(" · %d WAITING for you (starter status %s)", n, id)
	}
	if p.Batch != nil {
		s += fmt.Sprintf(" · waiting for a batch of %d %s", p.Batch.Requests, p.Batch.What)
	}
	if a := agentTurns(agents); a != "" {
		s += " · " + a
	}
	return s
}

// progressLine is watch's output when stdout is not a terminal: one line per change.
func progressLine(id string, p session.Progress, agents []workflows.AgentStat) string {
	return fmt.Sprintf("hypotheses %s · %s", p.HypothesesText(), progressDescription(id, p, agents))
}

// agentAbbrev shortens the agents' names for the watch line.
var agentAbbrev = map[string]string{
	"generation":  "gen",
	"reflection":  "rev",
	"review":      "rev",
	"ranking":     "rank",
	"evolution":   "evo",
	"proximity":   "prox",
	"meta-review": "meta",
	"meta_review": "meta",
	"metareview":  "meta",
	"supervisor":  "sup",
	"converse":    "conv",
}

// agentTurns is each agent's turn count, compactly: "gen 12 · rev 24 · rank 30".
func agentTurns(agents []workflows.AgentStat) string {
	parts := make([]string, 0, len(agents))
	for _, a := range agents {
		parts = append(parts, fmt.Sprintf("%s %d", or(agentAbbrev[strings.ToLower(a.Agent)], a.Agent), a.Turns))
	}
	return strings.Join(parts, " · ")
}

// spentText is the cost so far against the budgets, for progress: "$0.42 of $5.00 (8%)".
func spentText(p session.Progress) string {
	text := "$" + research.Dollars(p.CostUSD)
	if p.BudgetUSD > 0 {
		text += fmt.Sprintf(" of $%s (%.0f%%)", research.Dollars(p.BudgetUSD), 100*p.CostUSD/p.BudgetUSD)
	}
	if p.TokenBudget > 0 {
		text += fmt.Sprintf("; %s of %s tokens", research.Thousands(p.TokensUsed), research.Thousands(p.TokenBudget))
	} else {
		text += fmt.Sprintf("; %s tokens", research.Thousands(p.TokensUsed))
	}
	return text
}
