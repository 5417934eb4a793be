// The meta-review agent's answers: the recurring critique of a round, with the work it
// hands to subagents, and the research overview at the end.

package simulator

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

type metaReviewAnswer struct {
	Critiques   []string              `json:"critiques"`
	Strengths   []string              `json:"strengths"`
	Feedback    string                `json:"feedback"`
	Delegations []research.Delegation `json:"delegations"`
}

// writeMetaReview groups the weaknesses and strengths a round's reviews and debates name,
// and counts each once per review or debate; it recommends subagents as writeDelegations
// says.
func writeMetaReview(req research.MetaReviewRequest) metaReviewAnswer {
	var weak, strong tally
	accepted, rejected := 0, 0
	for _, r := range req.Reviews {
		ws := clauses(r.Critique, "weakness is that ")
		for _, c := range clauses(r.Critique, "Safety concern: ") {
			ws = append(ws, "the hypothesis raises a safety concern: "+c)
		}
		if slices.ContainsFunc(r.Assumptions, func(a research.Assumption) bool { return a.Verdict == "fails" }) {
			ws = append(ws, "a key assumption fails on deep verification")
		}
		if len(ws) == 0 { // a critique in its own words: its last sentence says the most
			ws = append(ws, lastSentence(r.Critique))
		}
		weak.add(ws...)
		strong.add(clauses(r.Critique, "strength is that ")...)
		switch r.Verdict {
		case "accept":
			accepted++
		case "reject":
			rejected++
		}
	}
	decided := 0
	for _, d := range req.Debates {
		weak.add(clauses(d.Reasoning, "weakness is that ")...)
		strong.add(clauses(d.Reasoning, "strength is that ")...)
		if d.Winner != "" {
			decided++
		}
	}
	total, noun := len(req.Reviews)+len(req.Debates), "reviews"
	if len(req.Debates) > 0 {
		noun = "reviews and debates"
	}
	a := metaReviewAnswer{Critiques: []string{}, Strengths: []string{}, Delegations: writeDelegations(req)}
	for _, g := range weak.top(prompt.MaxMetaItems) {
		a.Critiques = append(a.Critiques, fmt.Sprintf("%s (%d of %d %s)", capitalise(g.text), g.n, total, noun))
	}
	for _, g := range strong.top(prompt.MaxMetaItems) {
		a.Strengths = append(a.Strengths, fmt.Sprintf("%s (%d of %d %s)", capitalise(g.text), g.n, total, noun))
	}

	if len(a.Critiques) == 0 {
		a.Feedback = fmt.Sprintf("Round %d left nothing that recurs (%d reviews, %d debates). To the generation agent: keep proposing diverse, testable hypotheses. To the reflection agent: name the main weakness of every hypothesis, so that the next meta-review can find what recurs.",
			req.Round, len(req.Reviews), len(req.Debates))
		return a
	}
	first := weak.top(2)
	var b strings.Builder
	fmt.Fprintf(&b, "To the generation agent: in round %d the most frequent weakness was that %s (%d of %d %s); make each new hypothesis one that %s.",
		req.Round, first[0].text, first[0].n, total, noun, remedy(first[0].text))
	if len(first) > 1 {
		fmt.Fprintf(&b, " Next came that %s; a hypothesis that %s avoids it.", first[1].text, remedy(first[1].text))
	}
	if s := strong.top(1); len(s) > 0 {
		fmt.Fprintf(&b, " Keep what worked: %s.", s[0].text)
	}
	fmt.Fprintf(&b, " To the reflection agent: look first for the recurring weakness (%s) and say plainly when a hypothesis repeats it; this round %d of %d reviews accepted their hypothesis and %d rejected it",
		first[0].text, accepted, len(req.Reviews), rejected)
	if len(req.Debates) > 0 {
		fmt.Fprintf(&b, ", and %d of %d debates reached a verdict", decided, len(req.Debates))
	}
	b.WriteString(".")
	a.Feedback = b.String()
	return a
}

// writeDelegations recommends subagents on a fixed schedule, so that tests and benchmarks
// know when a session forks one: on every second round a deep verification of the round's
// best-scored hypothesis, and on every third an evolution line of the runner-up, if the
// round has one. Hypotheses are ranked by the mean overall score of their reviews this
// round; one that was only debated ranks after every reviewed one.
func writeDelegations(req research.MetaReviewRequest) []research.Delegation {
	out := []research.Delegation{} // the schema wants the field, empty or not
	type scored struct {
		id   string
		mean float64
		n    int
	}
	var ranked []scored
	for _, id := range prompt.RoundHypotheses(req) {
		s := scored{id: id}
		for _, r := range req.Reviews {
			if r.HypothesisID == id {
				s.mean += r.Scores.Overall()
				s.n++
			}
		}
		if s.n > 0 {
			s.mean /= float64(s.n)
		}
		ranked = append(ranked, s)
	}
	slices.SortStableFunc(ranked, func(a, b scored) int {
		switch {
		case (a.n > 0) != (b.n > 0):
			return b.n - a.n // reviewed first; only the sign matters
		case a.mean > b.mean:
			return -1
		case a.mean < b.mean:
			return 1
		}
		return 0
	})
	standing := func(s scored, rank string) string {
		if s.n == 0 {
			return fmt.Sprintf("%s is the round's %s, debated but not yet reviewed", s.id, rank)
		}
		return fmt.Sprintf("%s is the round's %s (%.1f of 10)", s.id, rank, s.mean)
	}
	if req.Round < 1 || len(ranked) == 0 {
		return out
	}
	if req.Round%2 == 0 {
		out = append(out, research.Delegation{Task: research.DelegateVerify, Hypothesis: ranked[0].id,
			Reason: standing(ranked[0], "best") + ": check its assumptions one by one before it leads further."})
	}
	if req.Round%3 == 0 && len(ranked) > 1 {
		out = append(out, research.Delegation{Task: research.DelegateEvolve, Hypothesis: ranked[1].id,
			Reason: standing(ranked[1], "runner-up") + ": explore a line of evolution from it on its own."})
	}
	return out
}

// tally counts texts, case-insensitively, keeping the first spelling and order of arrival.
type tally struct {
	groups []group
	index  map[string]int
}

type group struct {
	text string
	n    int
}

// add counts each distinct text of one review or debate once.
func (t *tally) add(texts ...string) {
	if t.index == nil {
		t.index = map[string]int{}
	}
	seen := map[string]bool{}
	for _, s := range texts {
		key := strings.ToLower(trimDot(strings.TrimSpace(s)))
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		if i, ok := t.index[key]; ok {
			t.groups[i].n++
			continue
		}
		t.index[key] = len(t.groups)
		t.groups = append(t.groups, group{trimDot(strings.TrimSpace(s)), 1})
	}
}

// top returns at most n groups, most frequent first, ties in order of arrival.
func (t *tally) top(n int) []group {
	out := slices.Clone(t.groups)
	slices.SortStableFunc(out, func(a, b group) int { return b.n - a.n })
	return out[:min(n, len(out))]
}

// clauses returns what follows each occurrence of marker in text, up to the end of its
// clause (a semicolon or the end of the sentence).
func clauses(text, marker string) []string {
	var out []string
	for {
		i := strings.Index(text, marker)
		if i < 0 {
			return out
		}
		text = text[i+len(marker):]
		end := len(text)
		if j := strings.Index(text, ". "); j >= 0 {
			end = j
		}
		if j := strings.IndexByte(text[:end], ';'); j >= 0 {
			end = j
		}
		if c := trimDot(strings.TrimSpace(text[:end])); c != "" {
			out = append(out, c)
		}
		text = text[end:]
	}
}

// lastSentence returns the last sentence of a text, without its full stop.
func lastSentence(text string) string {
	text = trimDot(strings.TrimSpace(text))
	if i := strings.LastIndex(text, ". "); i >= 0 {
		text = text[i+2:]
	}
	return text
}

// writeOverview writes the research overview: a summary, one theme per cluster, and open
// questions and experiments drawn from the top hypotheses.
func writeOverview(rng *rand.Rand, req research.OverviewRequest) research.Overview {
	byID := map[string]research.Hypothesis{}
	rank := map[string]int{}
	for i, h := range req.Top {
		byID[h.ID], rank[h.ID] = h, i+1
	}
	a := research.Overview{Themes: []research.OverviewTheme{}}
	for _, cluster := range req.Clusters {
		if len(cluster) == 0 {
			continue
		}
		best := cluster[0] // the best-ranked member, or the first if none is ranked
		var titles []string
		for _, id := range cluster {
			if h, ok := byID[id]; ok {
				titles = append(titles, h.Title)
				if r, ok := rank[best]; !ok || rank[id] < r {
					best = id
				}
			}
		}
		th := research.OverviewTheme{Title: commonWords(titles), Hypotheses: slices.Clone(cluster)}
		if th.Title == "" {
			th.Title = "Related to " + best
		}
		if h, ok := byID[best]; ok {
			th.Note = fmt.Sprintf("%d related hypotheses; the best ranked is %s (%q), at rank %d.", len(cluster), best, h.Title, rank[best])
		} else {
			th.Note = fmt.Sprintf("%d related hypotheses.", len(cluster))
		}
		if len(cluster) == 1 {
			th.Note = fmt.Sprintf("A hypothesis with no close relative: %s.", best)
		}
		a.Themes = append(a.Themes, th)
	}

	top := req.Top[0]
	var b strings.Builder
	fmt.Fprintf(&b, "For the goal %q, the tournament ranked %s, %q, first: %s.", req.Goal, top.ID, top.Title, trimDot(lowerFirst(top.Statement)))
	if len(req.Top) > 1 {
		fmt.Fprintf(&b, " It leads %d other strong hypotheses", len(req.Top)-1)
		if len(a.Themes) > 0 {
			names := make([]string, len(a.Themes))
			for i, th := range a.Themes {
				names[i] = lowerFirst(th.Title)
			}
			fmt.Fprintf(&b, ", which group into %d themes: %s", len(a.Themes), strings.Join(names, "; "))
		}
		b.WriteString(".")
	}
	var critique string
	if m := req.MetaReview; m != nil && len(m.Critiques) > 0 {
		critique = trimDot(stripCount(m.Critiques[0]))
		fmt.Fprintf(&b, " The last round's recurring critique was that %s; the open questions below start there.", lowerFirst(critique))
	}
	b.WriteString(" The suggested experiments test the top hypotheses' sharpest predictions.")
	a.Summary = b.String()

	// Open questions: about the leaders, the critique, and what would tell them apart.
	var qs []string
	if critique != "" {
		qs = append(qs, fmt.Sprintf("Can the recurring critique be answered: %s?", lowerFirst(critique)))
	}
	qs = append(qs, fmt.Sprintf("Is the mechanism of %s (%q) a cause of the effect, or a consequence of it?", top.ID, top.Title))
	if len(req.Top) > 1 {
		qs = append(qs, fmt.Sprintf("Which experiment would tell %s apart from %s?", top.ID, req.Top[1].ID))
	}
	for _, h := range req.Top[1:min(3, len(req.Top))] {
		qs = append(qs, fmt.Sprintf("Would %s (%q) hold outside the conditions it was proposed for?", h.ID, h.Title))
	}
	qs = append(qs,
		fmt.Sprintf("Would %s hold outside the conditions it was proposed for?", top.ID),
		fmt.Sprintf("Which of the leading hypotheses' mediators can be measured directly, and with what assay: %s?", strings.Join(firstN(assays, 3), ", ")))
	a.OpenQuestions = qs[:min(prompt.MaxOverviewItems, max(3, len(req.Top)+1), len(qs))]

	// Experiments: each top hypothesis' first prediction, then their second, ...
	want := min(prompt.MaxOverviewItems, max(3, len(req.Top)))
	for round := 0; len(a.Experiments) < want && round < 4; round++ {
		for _, h := range req.Top {
			if round < len(h.Predictions) && len(a.Experiments) < want {
				a.Experiments = append(a.Experiments, fmt.Sprintf("To test %s: %s", h.ID, h.Predictions[round]))
			}
		}
	}
	for len(a.Experiments) < 3 {
		a.Experiments = append(a.Experiments, fmt.Sprintf("Replicate the key result behind %s in an independent system, using %s.", top.ID, pick(rng, assays)))
	}
	return a
}

// commonWords names what a cluster's titles share: the content words that appear in at
// least half of them (and in two, when there are two or more), in the order of the first
// title. One title is its own theme.
func commonWords(titles []string) string {
	if len(titles) == 0 {
		return ""
	}
	if len(titles) == 1 {
		return truncate(titles[0], 80)
	}
	words := func(t string) []string {
		var out []string
		for _, f := range strings.Fields(t) {
			w := strings.ToLower(strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
			if len(w) >= 3 && !stopwords[w] && !titleFiller[w] {
				out = append(out, w)
			}
		}
		return out
	}
	count := map[string]int{}
	for _, t := range titles {
		seen := map[string]bool{}
		for _, w := range words(t) {
			if !seen[w] {
				seen[w] = true
				count[w]++
			}
		}
	}
	need := max(2, (len(titles)+1)/2)
	var common []string
	for _, t := range titles {
		for _, w := range words(t) {
			if count[w] >= need && !slices.Contains(common, w) && len(common) < 6 {
				common = append(common, w)
			}
		}
	}
	return capitalise(strings.Join(common, " "))
}

// titleFiller are the words evolution puts in front of a title; they say nothing about a theme.
var titleFiller = set("grounded feasible combined simplified evolved")
