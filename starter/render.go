package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/vouch"
	"github.com/cosci-dev/cosci/workflows"
)

// Everything starter prints for a person is rendered here, from plain structs, so it can be
// tested without a server: a session's status, state, ranking, history, result and list
// (a running session's progress in render_progress.go, the graph in graph_render.go; what a
// terminal may show of any of it in terminal.go).

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// when shows a session's RFC 3339 time to the second, in UTC.
func when(stamp string) string {
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil || t.IsZero() {
		return or(stamp, "-")
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func timeLimitText(d research.Duration) string {
	if d == 0 {
		return "none"
	}
	return d.String()
}

// stateOf names a session's state; during a checkpoint, with the state it returns to.
func stateOf(s workflows.Status) string {
	if s.After != "" {
		return fmt.Sprintf("%s (then %s)", s.State, s.After)
	}
	return string(s.State)
}

func renderStatus(w io.Writer, s workflows.Status) error {
	t := newTable(w)
	fmt.Fprintf(t, "session\t%s\n", s.SessionID)
	fmt.Fprintf(t, "state\t%s\n", stateOf(s))
	if s.Reason != "" {
		fmt.Fprintf(t, "reason\t%s\n", oneLine(s.Reason))
	}
	fmt.Fprintf(t, "scientist\t%s\n", oneLine(s.ScientistID))
	fmt.Fprintf(t, "goal\t%s\n", research.Shorten(s.Goal, 200))
	fmt.Fprintf(t, "started\t%s\n", when(s.StartedAt))
	fmt.Fprintf(t, "updated\t%s\n", when(s.UpdatedAt))
	waitingRows(t, s.SessionID, s.Waiting)
	if s.Batch != nil {
		fmt.Fprintf(t, "waiting for\t%s\n", batchText(s.Batch, time.Now()))
	}
	return t.Flush()
}

// waitingRows lists the tool calls that wait for the scientist, with how to answer, and
// each call's whole arguments: what the scientist approves. What the model wrote is
// escaped (printable), so it cannot move the cursor or recolour the terminal.
func waitingRows(t io.Writer, id string, ws []session.WaitingCall) {
	for _, w := range ws {
		what := printable(w.Tool)
		if w.Brief != "" && w.Arguments == "" {
			what += ": " + printable(w.Brief)
		}
		fmt.Fprintf(t, "waiting for you\t%s %s (since %s; starter answer-tool %s --call %s --approve | --reject)\n", printable(w.ID), what, when(w.Since), id, printable(w.ID))
		for _, line := range strings.Split(w.Arguments, "\n") {
			if line != "" {
				fmt.Fprintf(t, "\t  %s\n", printable(line))
			}
		}
	}
}

// oneLine is a free text on one line: its newlines and other white space as single spaces,
// so that it cannot start a line of its own in a table.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func renderState(w io.Writer, v workflows.StateView) error {
	t := newTable(w)
	fmt.Fprintf(t, "session\t%s (%s)\n", v.SessionID, v.State)
	fmt.Fprintf(t, "scientist\t%s\n", oneLine(v.ScientistID))
	fmt.Fprintf(t, "goal\t%s\n", research.Shorten(v.Goal, 300))
	for _, r := range v.Refinements {
		var parts []string
		if r.Goal != "" {
			parts = append(parts, "goal: "+research.Shorten(r.Goal, 120))
		}
		if r.Focus != "" {
			parts = append(parts, "focus: "+research.Shorten(r.Focus, 120))
		}
		fmt.Fprintf(t, "refined\t%s  %s\n", when(r.Time), strings.Join(parts, "; "))
	}
	fmt.Fprintf(t, "config\t%s\n", configText(v.Config))
	if v.Plan != "" {
		fmt.Fprintf(t, "plan\t%s\n", research.Shorten(v.Plan, 300))
	}
	for i, c := range v.MetaReview {
		label := ""
		if i == 0 {
			label = "meta-review"
		}
		fmt.Fprintf(t, "%s\t- %s\n", label, research.Shorten(c, 200))
	}
	if share := topShareText(v.TopShare); share != "" {
		fmt.Fprintf(t, "top 10\t%s\n", share)
	}
	fmt.Fprintf(t, "usage\t%s\n", usageText(v.Usage))
	fmt.Fprintf(t, "budget\t%s\n", budgetText(v.Usage, v.TokenBudget))
	if v.Config.BudgetUSD > 0 {
		fmt.Fprintf(t, "\t%s\n", dollarBudgetText(v.Usage, v.Config.BudgetUSD))
	}
	if v.StopReason != "" {
		fmt.Fprintf(t, "stop reason\t%s\n", oneLine(v.StopReason))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if len(v.Agents) > 0 {
		fmt.Fprintln(w)
		t = newTable(w)
		fmt.Fprintln(t, "AGENT\tTURNS\tOK\tFAILED\tTOKENS\tCOST")
		for _, a := range v.Agents {
			fmt.Fprintf(t, "%s\t%d\t%d\t%d\t%s\t$%s\n", a.Agent, a.Turns, a.Succeeded, a.Failed, research.Thousands(a.Usage.Tokens()), research.Dollars(a.Usage.CostUSD))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	if v.Total == 0 {
		_, err := fmt.Fprintln(w, "no hypotheses yet")
		return err
	}
	if err := renderRanking(w, v.Hypotheses, v.Offset, true); err != nil {
		return err
	}
	return pageFooter(w, "hypotheses", v.Offset, len(v.Hypotheses), v.Total)
}

func configText(c research.Config) string {
	s := fmt.Sprintf("max %d hypotheses, time limit %s, reviews %s, safety %s, provider %s",
		c.MaxHypotheses, timeLimitText(c.TimeLimit), or(strings.Join(c.ReviewTypes, "+"), "-"), or(c.SafetyLevel, "-"), or(c.Provider, "-"))
	if c.Model != "" {
		s += " (model " + c.Model + ")"
	}
	if c.TokenBudget > 0 {
		s += ", token budget " + research.Thousands(c.TokenBudget)
	}
	return s + ", seed " + strconv.FormatInt(c.Seed, 10)
}

func usageText(u research.Usage) string {
	text := fmt.Sprintf("%d prompt + %d completion tokens in %d requests", u.PromptTokens, u.CompletionTokens, u.Requests)
	if c := cacheText(u); c != "" {
		text += " (" + c + ")"
	}
	if u.CostUSD > 0 {
		text += fmt.Sprintf(", about $%s", research.Dollars(u.CostUSD))
	}
	if u.Unpriced > 0 {
		text += fmt.Sprintf("; %d requests on a model the workers have no price for, whose cost is unknown (give one with the worker's --prices)", u.Unpriced)
	}
	return text
}

// dollarBudgetText is the cost against the dollar budget.
func dollarBudgetText(u research.Usage, budget float64) string {
	return fmt.Sprintf("$%s of $%s spent (%.0f%%); $%s left", research.Dollars(u.CostUSD), research.Dollars(budget),
		100*u.CostUSD/budget, research.Dollars(max(budget-u.CostUSD, 0)))
}

// cacheText says how much of the prompt the provider's cache served or took, or "".
func cacheText(u research.Usage) string {
	var parts []string
	if u.CachedTokens > 0 {
		parts = append(parts, fmt.Sprintf("%d%% of the prompt from cache", u.CachedPercent()))
	}
	if u.CacheWriteTokens > 0 {
		parts = append(parts, fmt.Sprintf("%d written to cache", u.CacheWriteTokens))
	}
	if u.Batched > 0 {
		parts = append(parts, fmt.Sprintf("%d requests batched", u.Batched))
	}
	return strings.Join(parts, ", ")
}

// budgetText is the tokens used against the budget.
func budgetText(u research.Usage, budget int) string {
	used := u.PromptTokens + u.CompletionTokens
	if budget <= 0 {
		return research.Thousands(used) + " tokens used; no budget (no cap)"
	}
	return fmt.Sprintf("%s of %s tokens used (%.0f%%); %s left", research.Thousands(used), research.Thousands(budget),
		100*float64(used)/float64(budget), research.Thousands(max(budget-used, 0)))
}

// origins are the places a hypothesis comes from, in the order the top share lists them.
var origins = []string{"generation", "evolution", "scientist"}

// topShareText says where the top 10 came from: "generation 6 · evolution 3 · scientist 1".
func topShareText(share map[string]int) string {
	if len(share) == 0 {
		return ""
	}
	keys := slices.Clone(origins)
	for _, k := range slices.Sorted(maps.Keys(share)) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, share[k]))
	}
	return strings.Join(parts, " · ")
}

// originText is where a hypothesis came from and how: "evolution/combination".
func originText(e session.Entry) string {
	s := or(e.Origin, "-")
	if e.Strategy != "" {
		s += "/" + e.Strategy
	}
	return s
}

// lineageText is an evolved hypothesis' parents: "← h-0003, h-0007".
func lineageText(e session.Entry) string {
	if len(e.Parents) == 0 {
		return "-"
	}
	return "← " + strings.Join(e.Parents, ", ")
}

// renderRanking prints ranked hypotheses; offset is the rank of the first one, minus one.
// The full table (the state's) adds the review score, the proximity cluster and the
// lineage. Excluded hypotheses are marked in the table and their reasons listed under it.
func renderRanking(w io.Writer, entries []session.Entry, offset int, full bool) error {
	t := newTable(w)
	if full {
		fmt.Fprintln(t, "RANK\tID\tELO\tW-L\tSCORE\tORIGIN\tCLUSTER\tLINEAGE\tTITLE")
	} else {
		fmt.Fprintln(t, "RANK\tID\tELO\tW-L\tORIGIN\tTITLE")
	}
	var excluded []session.Entry
	for i, e := range entries {
		fmt.Fprintf(t, "%d\t%s\t%.0f\t%d-%d\t", offset+i+1, e.ID, e.Elo, e.Wins, e.Losses)
		if full {
			score := "-"
			if e.Reviews > 0 {
				score = fmt.Sprintf("%.1f", e.Score)
			}
			cluster := "-"
			if e.Cluster > 0 {
				cluster = strconv.Itoa(e.Cluster)
			}
			fmt.Fprintf(t, "%s\t%s\t%s\t%s\t", score, originText(e), cluster, lineageText(e))
		} else {
			fmt.Fprintf(t, "%s\t", originText(e))
		}
		title := research.Shorten(e.Title, 70)
		if e.Excluded != "" {
			title = "[excluded] " + title
			excluded = append(excluded, e)
		}
		fmt.Fprintln(t, title)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, e := range excluded {
		if _, err := fmt.Fprintf(w, "excluded: %s %s\n", e.ID, research.Shorten(e.Excluded, 200)); err != nil {
			return err
		}
	}
	return nil
}

// pageFooter says which slice of a paged list was shown, and how to get the next one.
func pageFooter(w io.Writer, what string, offset, shown, total int) error {
	if shown == 0 {
		_, err := fmt.Fprintf(w, "no %s at offset %d (there are %d)\n", what, offset, total)
		return err
	}
	if offset == 0 && shown == total {
		return nil
	}
	msg := fmt.Sprintf("%s %d-%d of %d", what, offset+1, offset+shown, total)
	if offset+shown < total {
		msg += fmt.Sprintf("; next page: --offset %d", offset+shown)
	}
	_, err := fmt.Fprintln(w, msg)
	return err
}

func renderHistory(w io.Writer, h workflows.HistoryView) error {
	if h.Total == 0 {
		_, err := fmt.Fprintln(w, "no events yet")
		return err
	}
	t := newTable(w)
	for _, e := range h.Events {
		fmt.Fprintf(t, "%d\t%s\t%s\t%s\n", e.Seq, when(e.Time), e.Kind, eventText(h.SessionID, e))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if h.InStore > h.Offset {
		// A long session keeps only its latest events in memory (it continues as new).
		fmt.Fprintf(w, "events 1-%d are in the session store's events.jsonl on the worker's machine; the session keeps the later ones (--offset %d)\n", h.InStore, h.InStore)
		if len(h.Events) == 0 {
			return nil
		}
	}
	return pageFooter(w, "events", h.Offset, len(h.Events), h.Total)
}

// eventText is the part of a history line that depends on the kind of event.
func eventText(id string, e session.Event) string {
	var s string
	switch e.Kind {
	case session.EventTransition:
		s = or(e.From, "?") + " -> " + or(e.To, "?")
		if e.Command != "" {
			s += " (" + e.Command + ")"
		}
		if e.Detail != "" {
			s += ": " + e.Detail
		}
	case session.EventCommand:
		s = e.Command
		if e.Via != "" {
			s += " via " + e.Via
		}
		if e.By != "" {
			kind := e.Command
			if e.Via == "conversation" {
				kind = vouch.Confirm // applied from a confirmation: the confirmation is what was signed
			}
			s += " by " + e.By + signature(vouch.Act{Session: id, Kind: kind, By: e.By, Payload: e.Digest, Update: e.Update}, e.Signed, e.Time, " (%s)")
		}
		switch {
		case e.Accepted != nil && !*e.Accepted:
			s += ": REJECTED: " + or(e.Detail, "no reason given")
		case e.Detail != "":
			s += ": " + e.Detail
		}
	case session.EventTurn:
		// The detail names the turn and its hypothesis ("review h-0001 (full)").
		s = e.Detail
		if s == "" {
			s = e.Turn + " " + e.Hypothesis
		}
	default:
		var parts []string
		for _, f := range []string{e.Command, e.Turn, e.Hypothesis, e.Detail} {
			if f != "" {
				parts = append(parts, f)
			}
		}
		s = strings.Join(parts, " ")
	}
	return strings.TrimSpace(research.Shorten(s, 300))
}

// renderResult prints how a session ended and what it found.
func renderResult(w io.Writer, r workflows.Result, link string) error {
	fmt.Fprintf(w, "session %s %s", r.SessionID, r.State)
	if r.StopReason != "" {
		fmt.Fprintf(w, ": %s", oneLine(r.StopReason))
	}
	fmt.Fprintf(w, "\n%d hypotheses generated", r.Hypotheses)
	if len(r.Top) == 0 {
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "; the best %d:\n\n", len(r.Top))
		if err := renderRanking(w, r.Top, 0, false); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	t := newTable(w)
	fmt.Fprintf(t, "report\t%s\n", or(r.ReportPath, "(none written)"))
	if r.Checkpoint != "" {
		fmt.Fprintf(t, "checkpoint\t%s\n", r.Checkpoint)
	}
	fmt.Fprintf(t, "usage\t%s\n", usageText(r.Usage))
	if link != "" {
		fmt.Fprintf(t, "web UI\t%s\n", link)
	}
	return t.Flush()
}

// listRow is one session in `starter list`.
type listRow struct {
	ID         string
	Status     string
	Hypotheses *int64   // nil: not reported yet
	TopElo     *float64 // nil: not reported yet
	CostUSD    *float64 // nil: not reported (sessions started before cost was shown)
	Scientist  string
	Goal       string // the goal the session started with; "" when unknown
	Started    time.Time
}

func renderList(w io.Writer, rows []listRow) error {
	t := newTable(w)
	fmt.Fprintln(t, "SESSION\tSTATUS\tHYPOTHESES\tTOP ELO\tCOST\tSCIENTIST\tSTARTED\tGOAL")
	for _, r := range rows {
		count, elo, cost := "-", "-", "-"
		if r.CostUSD != nil {
			cost = "$" + research.Dollars(*r.CostUSD)
		}
		if r.Hypotheses != nil {
			count = strconv.FormatInt(*r.Hypotheses, 10)
		}
		if r.TopElo != nil && (r.Hypotheses == nil || *r.Hypotheses > 0) {
			elo = fmt.Sprintf("%.0f", *r.TopElo)
		}
		started := "-"
		if !r.Started.IsZero() {
			started = r.Started.UTC().Format("2006-01-02 15:04:05Z")
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, or(oneLine(r.Status), "-"), count, elo, cost, or(oneLine(r.Scientist), "-"), started, or(research.Shorten(r.Goal, 60), "-"))
	}
	return t.Flush()
}

// signature is what a line says of the "by" of a recorded act, in format: nothing when a
// desk's signature of that very act checks with the desk's key (COSCI_DESK_KEY_FILE or
// COSCI_DESK_KEY, where the starter has it); "not signed" when there is no signature, or
// one that is not of this act (any client of the namespace may have written it); and
// "signature not checked" when the starter has no key to check one with: never signed
// for a string it did not check.
func signature(act vouch.Act, sig, recorded, format string) string {
	switch actKey().Of(act, sig, recorded) {
	case vouch.Signed:
		return ""
	case vouch.Unchecked:
		return fmt.Sprintf(format, "signature not checked")
	}
	return fmt.Sprintf(format, "not signed")
}

// actKey is the desk's act key from the environment, nil where the starter has none (or
// one that does not read, which it says once).
var actKey = sync.OnceValue(func() *vouch.Key {
	k, err := vouch.FromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, "starter: signatures not checked:", err)
	}
	return k
})
