package report

// The Markdown report, report.md: its frame (renderMarkdown) and the sections on the
// session as a whole: the summary and what it spent, the plan, the overview and the
// meta-review. The sections on the hypotheses are in mdhypotheses.go, the references in
// references.go, and how lists, numbers and text are written in mdformat.go and mdescape.go.

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// missing stands in for a text the store does not hold.
const missing = "(text not in store)"

// titleLength bounds the goal in the report's title, in characters.
const titleLength = 100

// renderMarkdown writes report.md. The sections, in order: title and summary, research
// goal and refinements, research plan, research overview, Elo chart, ranked table, the
// top hypotheses in detail, lineage, clusters, excluded hypotheses, meta-review. Sections
// with nothing to say (no plan, no evolution, ...) are left out.
func renderMarkdown(v *view) []byte {
	var b bytes.Buffer
	snap := v.snap
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	w("# Research report: %s\n\n", mdText(research.Shorten(snap.Goal, titleLength)))
	summary(&b, v)

	w("## Research goal\n\n")
	if len(snap.Refinements) > 0 {
		w("As last refined by the scientist:\n\n")
	}
	w("%s\n\n", quote(snap.Goal))
	if len(snap.Refinements) > 0 {
		w("### Refinements\n\n")
		w("In the order the scientist made them.\n\n")
		for i, r := range snap.Refinements {
			w("%d. %s\n", i+1, orDash(mdText(r.Time)))
			if r.Goal != "" {
				w("   - New goal: %s\n", indent(r.Goal, "     "))
			}
			if r.Focus != "" {
				w("   - Focus: %s\n", indent(r.Focus, "     "))
			}
		}
		w("\n")
	}

	plan(&b, v.in.Plan)

	if len(snap.Hypotheses) == 0 {
		w("## Ranked hypotheses\n\n")
		w("The session produced no hypotheses.\n\n")
		metaReview(&b, v.in.MetaReview)
		return end(b.Bytes())
	}

	overview(&b, v)

	w("## Elo over time\n\n")
	w("The Elo rating of each of the top %d at every checkpoint; a hypothesis's line starts at the checkpoint where it first appears.\n\n", len(v.top()))
	w("![Elo over time](%s)\n\n", ChartFile)

	table(&b, v)

	if len(v.ranked) > 0 {
		w("## Top hypotheses in detail\n\n")
		for i, e := range v.top() {
			hypothesis(&b, v, i+1, e)
		}
	}

	labMarkdown(&b, v)
	lineage(&b, v)
	clusters(&b, v)
	excluded(&b, v)
	metaReview(&b, v.in.MetaReview)
	bibliographySection(&b, v)
	return end(b.Bytes())
}

// end leaves exactly one newline at the end of the report.
func end(md []byte) []byte { return append(bytes.TrimRight(md, "\n"), '\n') }

// summary writes the facts a reader wants before the science: who, when, how far, at
// what cost and why it stopped.
func summary(b *bytes.Buffer, v *view) {
	snap := v.snap
	p := snap.Progress
	items := []struct{ name, value string }{
		{"Session", code(snap.SessionID)},
		{"Scientist", mdText(snap.ScientistID)},
		{"State", mdText(string(snap.State))},
		{"Stop reason", mdText(snap.StopReason)},
		{"Started", mdText(snap.StartedAt)},
		{"Elapsed", mdText(elapsed(snap))},
		{"Provider", provider(snap.Config, mdText)},
		{"Hypotheses", hypothesesCount(v)},
		{"Reviews", strconv.Itoa(p.ReviewsCompleted)},
		{"Matches", strconv.Itoa(p.MatchesPlayed)},
		{"Rounds", strconv.Itoa(p.Rounds)},
		{"Checkpoints", strconv.Itoa(p.Checkpoints)},
		{"Usage", usage(snap.Usage)},
	}
	if c := snap.Config; c.BudgetUSD > 0 || c.TokenBudget > 0 {
		items = append(items, struct{ name, value string }{"Budget", budget(snap.Usage, c)})
	}
	for _, it := range items {
		fmt.Fprintf(b, "- **%s:** %s\n", it.name, orDash(it.value))
	}
	b.WriteString("\n")
	spentBy(b, snap)
}

// budget is what was spent against the session's caps.
func budget(u research.Usage, c research.Config) string {
	var parts []string
	if c.BudgetUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%s of $%s", research.Dollars(u.CostUSD), research.Dollars(c.BudgetUSD)))
	}
	if c.TokenBudget > 0 {
		parts = append(parts, fmt.Sprintf("%s of %s tokens", research.Thousands(u.Tokens()), research.Thousands(c.TokenBudget)))
	}
	return strings.Join(parts, "; ")
}

// spentAgents are the agents in the order a round runs them, for the cost table.
var spentAgents = []string{"supervisor", "generation", "evolution", "proximity", "reflection", "ranking", "meta-review"}

// spentBy writes what each agent's calls spent, when the checkpoint says.
func spentBy(b *bytes.Buffer, snap session.Snapshot) {
	if len(snap.SpentBy) == 0 {
		return
	}
	b.WriteString("| agent | requests | prompt tokens | from cache | completion tokens | cost |\n|---|---:|---:|---:|---:|---:|\n")
	names := append([]string(nil), spentAgents...)
	for _, name := range slices.Sorted(maps.Keys(snap.SpentBy)) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		u, ok := snap.SpentBy[name]
		if !ok {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | $%s |\n", cell(name), research.Thousands(u.Requests), research.Thousands(u.PromptTokens),
			research.Thousands(u.CachedTokens), research.Thousands(u.CompletionTokens), research.Dollars(u.CostUSD))
	}
	b.WriteString("\n")
}

// plan writes the supervisor's research plan, if there is one.
func plan(b *bytes.Buffer, p *research.Plan) {
	if p == nil {
		return
	}
	b.WriteString("## Research plan\n\n")
	if s := strings.TrimSpace(p.Summary); s != "" {
		fmt.Fprintf(b, "%s\n\n", mdBlock(s))
	}
	for _, part := range []struct {
		name  string
		items []string
	}{
		{"Preferences", p.Preferences},
		{"Constraints", p.Constraints},
		{"Evaluation criteria", p.Criteria},
	} {
		fmt.Fprintf(b, "### %s\n\n", part.name)
		bullets(b, part.items, "None stated.")
	}
}

// overview writes the research overview: the Overview agent's, or, without one, the top
// hypotheses grouped by proximity cluster.
func overview(b *bytes.Buffer, v *view) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Research overview\n\n")
	o := v.in.Overview
	if o == nil {
		fallbackOverview(b, v)
		return
	}
	if s := strings.TrimSpace(o.Summary); s != "" {
		w("%s\n\n", mdBlock(s))
	}
	for i, t := range o.Themes {
		name := mdText(t.Title)
		if name == "" {
			name = "Theme " + strconv.Itoa(i+1)
		}
		w("### %s\n\n", name)
		if s := strings.TrimSpace(t.Note); s != "" {
			w("%s\n\n", mdBlock(s))
		}
		if len(t.Hypotheses) == 0 {
			w("No hypotheses named.\n\n")
			continue
		}
		for _, id := range t.Hypotheses {
			w("- %s\n", v.ref(id))
		}
		w("\n")
	}
	if len(o.OpenQuestions) > 0 {
		w("### Open questions\n\n")
		bullets(b, o.OpenQuestions, "")
	}
	if len(o.Experiments) > 0 {
		w("### Suggested experiments\n\n")
		bullets(b, o.Experiments, "")
	}
}

// fallbackOverview groups the top hypotheses by proximity cluster, best group first.
func fallbackOverview(b *bytes.Buffer, v *view) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	top := v.top()
	if len(top) == 0 {
		w("No overview was written, and no hypothesis is still competing.\n\n")
		return
	}
	w("No overview was written for this session. These are the top %d hypotheses, grouped by proximity cluster (similar ideas together), best group first.\n\n", len(top))
	groups, loose := byCluster(top)
	for _, g := range groups {
		w("### Cluster %d\n\n", g.id)
		for _, id := range g.members {
			w("- %s\n", v.ref(id))
		}
		w("\n")
	}
	if len(loose) > 0 {
		if len(groups) > 0 {
			w("### Not clustered\n\n")
		}
		for _, id := range loose {
			w("- %s\n", v.ref(id))
		}
		w("\n")
	}
}

// section starts a section of the report: its heading and a line on what it shows.
func section(b *bytes.Buffer, title, intro string) {
	fmt.Fprintf(b, "## %s\n\n%s\n\n", title, intro)
}

// metaReview writes the latest meta-review, if there is one.
func metaReview(b *bytes.Buffer, m *research.MetaReview) {
	if m == nil {
		return
	}
	fmt.Fprintf(b, "## Meta-review (round %d)\n\n", m.Round)
	b.WriteString("The recurring critique across the round's reviews and matches, as fed back to the agents.\n\n")
	b.WriteString("### Recurring critiques\n\n")
	numbered(b, m.Critiques, "None found.")
	b.WriteString("### Strengths\n\n")
	bullets(b, m.Strengths, "None found.")
	if f := strings.TrimSpace(m.Feedback); f != "" {
		fmt.Fprintf(b, "### Feedback to the agents\n\n%s\n\n", mdBlock(f))
	}
}
