package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// The report's sections on the hypotheses themselves: the ranked table, the top ones in
// detail with their reviews, lineage, clusters and the excluded.

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
