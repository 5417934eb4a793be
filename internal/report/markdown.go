package report

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

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

// table writes the ranking of the hypotheses still competing.
func table(b *bytes.Buffer, v *view) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Ranked hypotheses\n\n")
	if len(v.ranked) == 0 {
		w("No hypothesis is still competing: every one was excluded (see Excluded).\n\n")
		return
	}
	if v.snap.Rating == session.RatingFitted {
		w("Ranked by rating, fitted to every match of the tournament (Bradley–Terry strengths on the Elo scale, ± their standard error); W-L counts matches won and lost.")
	} else {
		w("Ranked by Elo rating from the tournament; W-L counts matches won and lost.")
	}
	if len(v.excluded) > 0 {
		w(" Excluded hypotheses are listed under Excluded, not here.")
	}
	w("\n\n")
	w("| Rank | ID | Title | Elo | W-L | Review score | Origin | Cluster |\n")
	w("|---:|---|---|---:|---:|---:|---|---:|\n")
	for i, e := range v.ranked {
		w("| %d | %s | %s | %s | %d-%d | %s | %s | %s |\n",
			i+1, cell(e.ID), cell(v.title(e.ID)), rating(e), e.Wins, e.Losses, score(e),
			orDash(cell(v.originShort(e.ID))), clusterCell(e.Cluster))
	}
	w("\n")
	if n := len(v.ranked); n > Detailed {
		rest := "the other " + strconv.Itoa(n-Detailed) + " appear"
		if n-Detailed == 1 {
			rest = "the other one appears"
		}
		w("The top %d follow in detail; %s in the table only.\n\n", Detailed, rest)
	}
}

// originShort is the origin and strategy for a table cell: "evolution/combination".
func (v *view) originShort(id string) string {
	o, s := oneLine(v.origin(id)), oneLine(v.strategy(id))
	switch {
	case o == "":
		return s
	case s == "":
		return o
	}
	return o + "/" + s
}

// originLong is the origin and strategy in words: "generation, strategy literature",
// "evolution, kind combination".
func (v *view) originLong(id string) string {
	o, s := oneLine(v.origin(id)), oneLine(v.strategy(id))
	switch {
	case s == "":
		return o
	case o == "evolution" || v.evolved(id):
		return strings.TrimPrefix(o+", kind "+s, ", ")
	}
	return strings.TrimPrefix(o+", strategy "+s, ", ")
}

func clusterCell(c int) string {
	if c == 0 {
		return "–"
	}
	return strconv.Itoa(c)
}

// hypothesis writes the section of one ranked hypothesis.
func hypothesis(b *bytes.Buffer, v *view, rank int, e session.Entry) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	h, ok := v.text(e.ID)

	w("### %d. %s\n\n", rank, mdText(v.title(e.ID)))
	w("- **ID:** %s\n", code(e.ID))
	w("- **Elo:** %s (%d won, %d lost)\n", rating(e), e.Wins, e.Losses)
	w("- **Origin:** %s\n", orDash(mdText(v.originLong(e.ID))))
	if v.evolved(e.ID) {
		w("- **Lineage:** %s\n", v.evolvedFrom(e.ID))
	}
	if c, ok := v.clusterOf(e.ID); ok {
		var others []string
		for _, id := range c.members {
			if id != e.ID {
				others = append(others, code(id))
			}
		}
		w("- **Cluster:** %d, with %s\n", c.id, and(others))
	}
	w("- **Review score:** %s from %s\n\n", score(e), count(e.Reviews, "review"))

	if !ok {
		w("%s\n\n", missing)
	} else {
		w("**Statement.** %s\n\n", mdBlock(orText(h.Statement)))
		w("**Rationale.** %s\n\n", mdBlock(orText(h.Rationale)))
		w("**Testable predictions:**\n\n")
		if len(h.Predictions) == 0 {
			w("None given.\n\n")
		}
		for i, p := range h.Predictions {
			marker := strconv.Itoa(i+1) + ". "
			w("%s%s\n", marker, indent(p, strings.Repeat(" ", len(marker))))
		}
		if len(h.Predictions) > 0 {
			w("\n")
		}
		references(b, v.citations(e.ID))
	}

	reviews := v.in.Reviews[e.ID]
	w("**Reviews:**")
	if len(reviews) == 0 {
		w(" none yet.\n\n")
		return
	}
	w("\n\n")
	for i, r := range reviews {
		if i > 0 {
			w("\n")
		}
		review(b, r)
	}
	w("\n")
}

// review writes one review as a list item: who, what kind, the verdict and marks, the
// critique and, for a deep verification, every assumption with its verdict.
func review(b *bytes.Buffer, r research.Review) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	kind := "*" + orDash(mdText(r.Type)) + "*"
	if manual(r) {
		kind += " — manual review by the scientist " + mdText(r.Reviewer)
	}
	s := r.Scores
	marks := "unscored"
	if s != (research.Scores{}) {
		marks = fmt.Sprintf("overall %s/10 (novelty %s, plausibility %s, testability %s, safety %s)",
			mark(s.Overall()), mark(s.Novelty), mark(s.Plausibility), mark(s.Testability), mark(s.Safety))
	}
	w("- %s: %s, %s\n", kind, orDash(mdText(r.Verdict)), marks)
	if strings.TrimSpace(r.Critique) != "" {
		w("\n  %s\n", indent(r.Critique, "  "))
	}
	if len(r.Assumptions) > 0 {
		w("\n  Assumptions checked:\n\n")
		for _, a := range r.Assumptions {
			line := fmt.Sprintf("**%s:** %s", orDash(mdText(a.Verdict)), mdText(orText(a.Text)))
			if n := mdText(a.Note); n != "" {
				line += " — " + n
			}
			w("  - %s\n", line)
		}
	}
}

// manual says whether a review is the scientist's own rather than an agent's.
func manual(r research.Review) bool {
	return r.Reviewer != "" && r.Reviewer != "agent"
}

// evolvedFrom says where an evolved hypothesis came from: "evolved from `a` and `b` by
// combination".
func (v *view) evolvedFrom(id string) string {
	ps := v.parents(id)
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = code(p)
	}
	s := "evolved from " + and(names)
	if k := mdText(v.strategy(id)); k != "" {
		s += " by " + k
	}
	return s
}

// ref names a hypothesis in a list: its id, title and standing.
func (v *view) ref(id string) string {
	s := code(id)
	if s == "" {
		s = "–"
	}
	s += " " + mdText(v.title(id))
	e, ok := v.entry[id]
	switch {
	case !ok:
		s += " (not in the final ranking)"
	case e.Excluded != "":
		s += " (excluded, Elo " + elo(e.Elo) + ")"
	default:
		s += " (rank " + strconv.Itoa(v.rank[id]) + ", Elo " + elo(e.Elo) + ")"
	}
	return s
}

// lineage writes, for every evolved hypothesis, the tree of what it was evolved from.
// Each tree is rooted at a hypothesis nothing else was evolved from (the newest ideas),
// in report order; a hypothesis whose own lineage was already drawn says so instead of
// drawing it again, so shared ancestry does not multiply.
func lineage(b *bytes.Buffer, v *view) {
	var evolved []string
	isParent := map[string]bool{}
	for _, e := range v.all() {
		if v.evolved(e.ID) {
			evolved = append(evolved, e.ID)
			for _, p := range v.parents(e.ID) {
				isParent[p] = true
			}
		}
	}
	if len(evolved) == 0 {
		return
	}
	section(b, "Lineage", "How the evolved hypotheses descend from earlier ones. Each line reads \"hypothesis ← the hypotheses it was evolved from\", and the lines indented under it trace those in turn.")
	drawn := map[string]bool{}
	var walk func(id string, depth int, path map[string]bool)
	walk = func(id string, depth int, path map[string]bool) {
		pad := strings.Repeat("  ", depth)
		line := pad + "- " + v.ref(id)
		ps := v.parents(id)
		switch {
		case path[id]:
			fmt.Fprintf(b, "%s (a cycle in the recorded lineage)\n", line)
			return
		case len(ps) == 0:
			fmt.Fprintf(b, "%s\n", line)
			return
		case drawn[id]:
			fmt.Fprintf(b, "%s ← %s (traced above)\n", line, v.fromShort(id))
			return
		}
		drawn[id] = true
		fmt.Fprintf(b, "%s ← %s\n", line, v.fromShort(id))
		path[id] = true
		for _, p := range ps {
			walk(p, depth+1, path)
		}
		delete(path, id)
	}
	for _, id := range evolved {
		if !isParent[id] {
			walk(id, 0, map[string]bool{})
		}
	}
	// Hypotheses only in cycles have no root above them; draw what is left.
	for _, id := range evolved {
		if !drawn[id] {
			walk(id, 0, map[string]bool{})
		}
	}
	b.WriteString("\n")
}

// fromShort is "`a`, `b` by combination".
func (v *view) fromShort(id string) string {
	ps := v.parents(id)
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = code(p)
	}
	s := strings.Join(names, ", ")
	if k := mdText(v.strategy(id)); k != "" {
		s += " by " + k
	}
	return s
}

// section starts a section of the report: its heading and a line on what it shows.
func section(b *bytes.Buffer, title, intro string) {
	fmt.Fprintf(b, "## %s\n\n%s\n\n", title, intro)
}

// clusters writes every proximity cluster with more than one member.
func clusters(b *bytes.Buffer, v *view) {
	if len(v.clusters) == 0 {
		return
	}
	section(b, "Clusters", "Hypotheses the proximity graph found similar, best-ranked cluster first.")
	for _, c := range v.clusters {
		fmt.Fprintf(b, "- Cluster %d (%s)\n", c.id, count(len(c.members), "hypothesis"))
		for _, id := range c.members {
			fmt.Fprintf(b, "  - %s\n", v.ref(id))
		}
	}
	b.WriteString("\n")
}

// excluded writes the hypotheses that no longer compete, with the reason.
func excluded(b *bytes.Buffer, v *view) {
	if len(v.excluded) == 0 {
		return
	}
	section(b, "Excluded", "Hypotheses taken out of the tournament, with the reason.")
	for _, e := range v.excluded {
		fmt.Fprintf(b, "- %s %s (Elo %s): %s\n", orDash(code(e.ID)), mdText(v.title(e.ID)), elo(e.Elo), orDash(mdText(e.Excluded)))
	}
	b.WriteString("\n")
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

// bullets writes a list, or the none text if it is empty (nothing if that is empty too).
func bullets(b *bytes.Buffer, items []string, none string) {
	list(b, items, none, func(int) string { return "- " })
}

func numbered(b *bytes.Buffer, items []string, none string) {
	list(b, items, none, func(i int) string { return strconv.Itoa(i+1) + ". " })
}

func list(b *bytes.Buffer, items []string, none string, marker func(int) string) {
	n := 0
	for _, it := range items {
		if strings.TrimSpace(it) == "" {
			continue
		}
		m := marker(n)
		fmt.Fprintf(b, "%s%s\n", m, indent(it, strings.Repeat(" ", len(m))))
		n++
	}
	switch {
	case n > 0:
		b.WriteString("\n")
	case none != "":
		fmt.Fprintf(b, "%s\n\n", none)
	}
}

// and joins "a", "a and b", "a, b and c".
func and(items []string) string {
	switch len(items) {
	case 0:
		return "–"
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// mark prints a 0-10 score to one decimal at most: "7", "6.5".
func mark(x float64) string { return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64) }

// count says "1 review" or "3 reviews".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "is") {
		return strconv.Itoa(n) + " " + strings.TrimSuffix(noun, "is") + "es" // hypothesis
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func elo(x float64) string { return strconv.FormatFloat(x, 'f', 0, 64) }

// rating is a record's Elo with its standard error when it has one (fitted ratings).
func rating(e session.Entry) string {
	if e.EloSE > 0 {
		return elo(e.Elo) + " ± " + elo(e.EloSE)
	}
	return elo(e.Elo)
}

// score is the mean review score, or a dash for a hypothesis nobody reviewed: 0.0 would
// read as a verdict.
func score(e session.Entry) string {
	if e.Reviews == 0 {
		return "–"
	}
	return strconv.FormatFloat(e.Score, 'f', 1, 64)
}

// hypothesesCount is how many hypotheses the session holds against its max_hypotheses.
// The scientist's own and those a continued session started with do not count against
// it, so when there are any the count says what counted: a session never reads as over
// its limit when it is not.
func hypothesesCount(v *view) string {
	p := v.snap.Progress
	p.HypothesesGenerated = len(v.snap.Hypotheses)
	counted, added, inherited := p.Counts()
	n := strconv.Itoa(counted)
	if limit := v.snap.Config.MaxHypotheses; limit > 0 {
		n += " of at most " + strconv.Itoa(limit)
	}
	if added+inherited > 0 {
		var parts []string
		if inherited > 0 {
			parts = append(parts, strconv.Itoa(inherited)+" from the parent session")
		}
		parts = append(parts, n+" by the agents")
		if added > 0 {
			parts = append(parts, strconv.Itoa(added)+" added by the scientist")
		}
		n = strconv.Itoa(p.HypothesesGenerated) + " (" + strings.Join(parts, ", ") + ")"
	}
	if x := len(v.excluded); x > 0 {
		n += ", " + strconv.Itoa(x) + " excluded"
	}
	return n
}

// provider is the provider and model, the provider's name shown by show (oneLine, or
// mdText for Markdown).
func provider(c research.Config, show func(string) string) string {
	switch {
	case c.Provider == "":
		return ""
	case c.Model == "":
		return show(c.Provider)
	}
	return show(c.Provider) + ", model " + code(c.Model)
}

// elapsed is the progress report's own figure, or, for a snapshot without one, the time
// from start to snapshot.
func elapsed(snap session.Snapshot) string {
	if snap.Progress.Elapsed != "" {
		return oneLine(snap.Progress.Elapsed)
	}
	start, err1 := time.Parse(time.RFC3339Nano, snap.StartedAt)
	end, err2 := time.Parse(time.RFC3339Nano, snap.Time)
	if err1 != nil || err2 != nil || end.Before(start) {
		return ""
	}
	return end.Sub(start).Round(time.Second).String()
}

func usage(u research.Usage) string {
	text := fmt.Sprintf("%s tokens (%s prompt, %s completion) in %s requests",
		research.Thousands(u.PromptTokens+u.CompletionTokens), research.Thousands(u.PromptTokens),
		research.Thousands(u.CompletionTokens), research.Thousands(u.Requests))
	if u.CachedTokens > 0 {
		text += fmt.Sprintf("; %s prompt tokens (%d%%) served from the provider's cache", research.Thousands(u.CachedTokens), u.CachedPercent())
	}
	if u.CacheWriteTokens > 0 {
		text += fmt.Sprintf(", %s written to it", research.Thousands(u.CacheWriteTokens))
	}
	if u.Batched > 0 {
		text += fmt.Sprintf("; %s requests through the provider's batch API", research.Thousands(u.Batched))
	}
	if u.CostUSD > 0 {
		text += fmt.Sprintf("; estimated cost $%s (from the worker's price table)", research.Dollars(u.CostUSD))
	}
	if u.Unpriced > 0 {
		text += fmt.Sprintf("; %s requests on a model without a price, whose cost is unknown and not counted", research.Thousands(u.Unpriced))
	}
	return text
}

// oneLine collapses all whitespace, newlines included, to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cell makes s safe inside a table cell: mdText (below), its "|" escaped so it
// cannot end the cell.
func cell(s string) string { return mdText(s) }

// mdText is a one-line text from a model, a tool or a person as the report shows it:
// literally, whatever Markdown or HTML it holds (see escapeLine).
func mdText(s string) string { return escapeLine(oneLine(s)) }

// mdBlock is a text of several lines, escaped as mdText is, keeping its line breaks (and so
// its paragraphs).
func mdBlock(s string) string {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")), "\n")
	for i, l := range lines {
		lines[i] = escapeLine(l)
	}
	return strings.Join(lines, "\n")
}

// mdEscaper backslash-escapes the punctuation that makes Markdown structure inline:
// links and images ([ ]), code spans, emphasis and strikethrough, table cells, headings'
// closing marks, and the backslash itself so that none of the text's own combines with
// an escape. "<" and ">" become entities, which every renderer decodes and none reads as
// HTML or an autolink.
var mdEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", `*`, `\*`, `[`, `\[`, `]`, `\]`, `#`, `\#`, `~`, `\~`, `|`, `\|`,
	`<`, `&lt;`, `>`, `&gt;`)

// entityRE is an HTML character reference, which Markdown decodes: "&" that starts one
// becomes "&amp;", so "&#106;" stays those characters. Any other "&" is left as written.
var entityRE = regexp.MustCompile(`&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);`)

// blockStartRE is what, at the start of a line, makes a list item, an ordered list's
// number, a setext heading's underline or a thematic break.
var blockStartRE = regexp.MustCompile(`^([-+=]|[0-9]{1,9}[.)])`)

// escapeLine makes one line of untrusted text show as itself in Markdown: its inline
// punctuation escaped (mdEscaper), "_" too where it could start or end emphasis (not
// inside a word: snake_case stays readable), its white space at either end gone (four
// spaces before would make a code block, two after a line break) and a leading list,
// heading or rule marker escaped.
func escapeLine(l string) string {
	l = strings.Trim(l, " \t")
	l = entityRE.ReplaceAllStringFunc(l, func(e string) string { return "&amp;" + e[1:] })
	l = mdEscaper.Replace(l)
	if strings.Contains(l, "_") {
		var b strings.Builder
		rs := []rune(l)
		for i, r := range rs {
			if r == '_' && (i == 0 || i == len(rs)-1 || !wordRune(rs[i-1]) || !wordRune(rs[i+1])) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		l = b.String()
	}
	if m := blockStartRE.FindStringIndex(l); m != nil {
		l = l[:m[1]-1] + `\` + l[m[1]-1:]
	}
	return l
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// code renders s as an inline code span, with a fence longer than any run of backticks
// in s, so ids print verbatim whatever they hold.
func code(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " " // CommonMark strips one space each side
	}
	return fence + s + fence
}

// quote renders an untrusted text as a block quote, keeping its line breaks.
func quote(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "> –"
	}
	lines := strings.Split(mdBlock(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n")
}

// indent is an untrusted text of several lines (mdBlock) kept inside the list item it
// starts in.
func indent(s, prefix string) string {
	return strings.ReplaceAll(mdBlock(s), "\n", "\n"+prefix)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func orText(s string) string {
	if strings.TrimSpace(s) == "" {
		return missing
	}
	return strings.TrimSpace(s)
}
