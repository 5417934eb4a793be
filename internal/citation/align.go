package citation

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/cosci-dev/cosci/internal/research"
)

// An alignment of a quote with the record's passage closest to it: the fewest word edits
// (a word changed, added or left out) that turn some passage of the record into the quote.
type alignment struct {
	cost       int    // the edits, a statistic in brackets left out costing none
	start, end int    // the passage: record tokens [start, end)
	edits      []edit // in the quote's order
	// forms are the words that differ only in form ("reduce" for "reduced"): they cost
	// nothing in the alignment, but the quote is not the record's words.
	forms []edit
}

// edit is one word edit: rec is the record's word (nil when the quote adds one), quote
// the quote's (nil when the quote leaves one out); ri is rec's index in the record.
type edit struct {
	rec, quote *token
	ri         int
}

// words are the edit's canonical words ("" for none).
func (e edit) words() (r, q string) {
	if e.rec != nil {
		r = e.rec.word
	}
	if e.quote != nil {
		q = e.quote.word
	}
	return r, q
}

// align finds the passage of the record closest to the quote: an edit distance over words
// in which the passage may start and end anywhere in the record (the quote is aligned
// whole, the record in part). Of alignments as close, it takes the one that matches most
// words: "Colchicine lowers" against "Colchicine may lower" leaves out "may", rather than
// putting "Colchicine" for it.
func align(rec, q []token) alignment {
	m, n := len(q), len(rec)
	if m == 0 || n == 0 {
		return alignment{cost: m}
	}
	// d[i][j]: the fewest edits turning some passage of rec ending at j into q[:i], and of
	// those the most matches (a cell's score is cost<<16 - matches); from[i][j] the step.
	const (
		fromMatch = iota
		fromSub
		fromQuote // the quote adds a word
		fromRec   // the quote leaves a word out
	)
	score := func(cost, matches int32) int32 { return cost<<16 - matches }
	aside := asideMask(rec)
	d := make([][]int32, m+1)
	from := make([][]uint8, m+1)
	for i := range d {
		d[i] = make([]int32, n+1)
		from[i] = make([]uint8, n+1)
		d[i][0] = score(int32(i), 0)
		from[i][0] = fromQuote
	}
	for i := 1; i <= m; i++ {
		for j := 1; j <= n; j++ {
			best, step := d[i-1][j]+score(1, 0), uint8(fromQuote)
			skip := score(1, 0)
			if aside[j-1] {
				skip = 0 // a statistic in brackets left out costs one edit in all (judge)
			}
			if c := d[i][j-1] + skip; c < best {
				best, step = c, fromRec
			}
			if q[i-1].stem == rec[j-1].stem {
				if c := d[i-1][j-1] - 1; c <= best {
					best, step = c, fromMatch
				}
			} else if c := d[i-1][j-1] + score(1, 0); c < best {
				best, step = c, fromSub
			}
			d[i][j], from[i][j] = best, step
		}
	}
	end := 0
	for j := 1; j <= n; j++ {
		if d[m][j] <= d[m][end] { // of passages as close, the longest: it matches more of the quote
			end = j
		}
	}
	cost := (d[m][end] + 0xFFFF) >> 16 // the cost, the matches taken off
	a := alignment{cost: int(cost), end: end}
	i, j := m, end
	for i > 0 {
		switch {
		case j > 0 && from[i][j] == fromMatch:
			if q[i-1].word != rec[j-1].word {
				a.forms = append(a.forms, edit{rec: &rec[j-1], quote: &q[i-1], ri: j - 1})
			}
			i, j = i-1, j-1
		case j > 0 && from[i][j] == fromSub:
			a.edits = append(a.edits, edit{rec: &rec[j-1], quote: &q[i-1], ri: j - 1})
			i, j = i-1, j-1
		case j == 0 || from[i][j] == fromQuote:
			a.edits = append(a.edits, edit{quote: &q[i-1], ri: -1})
			i--
		default:
			a.edits = append(a.edits, edit{rec: &rec[j-1], ri: j - 1})
			j--
		}
	}
	a.start = j
	slices.Reverse(a.edits)
	slices.Reverse(a.forms)
	return a
}

// What an edit does to what the passage says.
const (
	changes     = iota // another content word: the quote is altered
	overstates         // the quote claims more than the passage
	contradicts        // the quote says something else: a negation, a number, a direction
)

// judge gives the verdict of a quote of n words that is not the record's words, from its
// alignment with the closest passage.
func (c checker) judge(a alignment, rec []token, n int) reading {
	var contra, over, all []string
	left := map[int]bool{} // the record's words the quote leaves out
	for _, e := range a.edits {
		if e.quote == nil {
			left[e.ri] = true
		}
	}
	asides, extra := droppedAsides(rec, left)
	// A statistic in brackets left out whole is one edit; the alignment skipped its words
	// for nothing (a.cost), and any other word of it left out counts.
	cost := max(a.cost, len(a.edits)-extra)
	for _, e := range a.edits {
		class, what := classify(e)
		if class == contradicts && e.quote == nil && (e.rec.word == "percent" || e.rec.word == "fold") && left[e.ri-1] {
			class = changes // the number is left out with it: a number dropped, not changed
		}
		if as, ok := asides[e.ri]; ok && e.quote == nil {
			if as[0] != e.ri {
				continue // the aside is named once, at its first word
			}
			class, what = changes, fmt.Sprintf("the statistic %q in brackets, which the quote leaves out", span(rec, as[0], as[1]))
		}
		switch class {
		case contradicts:
			contra = append(contra, what)
		case overstates:
			over = append(over, what)
		}
		if len(all) < 5 {
			all = append(all, what)
		} else if len(all) == 5 {
			all = append(all, "...")
		}
	}
	// Association made causal, however the words align: "were associated with" for
	// "caused" may pair "caused" with "were".
	var assoc, cause *token
	for _, e := range a.edits {
		if e.rec != nil && associations[e.rec.word] {
			assoc = e.rec
		}
		if e.quote != nil && causes[e.quote.word] && (e.rec == nil || !causes[e.rec.word]) {
			cause = e.quote
		}
	}
	if assoc != nil && cause != nil && !slices.ContainsFunc(over, func(s string) bool { return strings.HasPrefix(s, "causal") }) {
		over = append(over, fmt.Sprintf("causal %q for the record's %q", cause.surface(), assoc.surface()))
	}
	r := reading{start: a.start, end: a.end}
	r.Passage = span(rec, a.start, a.end)
	switch {
	case len(contra) > 0 && float64(cost-len(contra)) <= contradictedShare*float64(n):
		r.Verdict, r.Note = research.CitationContradicted, "the record says "+strings.Join(contra, "; ")
	case cost == 0 && len(a.forms) > 0:
		var fs []string
		for _, f := range a.forms[:min(5, len(a.forms))] {
			fs = append(fs, fmt.Sprintf("%q for %q", f.quote.surface(), f.rec.surface()))
		}
		r.Verdict, r.Note = research.CitationAltered, "the record's words in other forms: "+strings.Join(fs, "; ")
	case c.overstated && len(over) > 0 && float64(cost-len(over)) <= contradictedShare*float64(n):
		r.Verdict, r.Note = research.CitationOverstated, "the quote claims more than the record: "+strings.Join(over, "; ")
	case cost > 0 && float64(cost) <= alteredShare*float64(n):
		r.Verdict, r.Note = research.CitationAltered, "close to the record's words, not equal: "+strings.Join(all, "; ")
	default:
		return verdictOnly(research.CitationUnsupported, "the record does not say this")
	}
	return r
}

// classify says what an edit does to the passage's meaning, and how, in words.
func classify(e edit) (int, string) {
	r, q := e.words()
	rs, qs := "", ""
	if e.rec != nil {
		rs = e.rec.surface()
	}
	if e.quote != nil {
		qs = e.quote.surface()
	}
	instead := fmt.Sprintf("%q where the quote says %q", rs, qs)
	leftOut := fmt.Sprintf("%q, which the quote leaves out", rs)
	added := fmt.Sprintf("no %q, which the quote adds", qs)
	describe := func() string {
		switch {
		case r == "":
			return added
		case q == "":
			return leftOut
		}
		return instead
	}
	// A negation added, left out or turned around.
	if r != "" && q != "" && (negates(r, q) || negates(q, r)) || negations[r] != negations[q] && (negations[r] || negations[q]) {
		return contradicts, describe()
	}
	// A number: its value, sign or decimal point; a comparator; a unit, percent or fold.
	switch {
	case numeric(e.quote) && r == "", r != "" && q != "" && (numeric(e.rec) || numeric(e.quote)):
		return contradicts, describe()
	case comparator(r) || comparator(q):
		return contradicts, describe()
	case r != "" && q != "" && units[r] && units[q] && !strings.HasPrefix(r, q) && !strings.HasPrefix(q, r):
		return contradicts, describe()
	case (r == "percent" || r == "fold") && q == "", (q == "percent" || q == "fold") && r == "":
		return contradicts, describe()
	}
	// A direction turned around, or left out.
	ar, wr := direction(r)
	aq, wq := direction(q)
	switch {
	case ar != 0 && aq != 0 && (ar != aq || wr != wq):
		return contradicts, describe()
	case ar != 0 && q == "":
		return contradicts, describe()
	case aq != 0 && r == "":
		return contradicts, describe()
	}
	// A claim made stronger than the record's.
	weak := hedges[r] || limitations[r]
	switch {
	case weak && q == "":
		return overstates, fmt.Sprintf("it leaves out the record's %q", rs)
	case weak && !hedges[q] && !limitations[q]:
		return overstates, fmt.Sprintf("%q for the record's %q", qs, rs)
	case associations[r] && causes[q]:
		return overstates, fmt.Sprintf("causal %q for the record's %q", qs, rs)
	case quantity(r) >= 0 && !universal(r) && (q == "" || quantity(q) > quantity(r)):
		return overstates, fmt.Sprintf("it generalises the record's %q", rs)
	case boosters[q] && !boosters[r]:
		return overstates, fmt.Sprintf("%q, which the record does not say", qs)
	case qualifier(r) && (q == "" || !qualifier(q)):
		return overstates, fmt.Sprintf("it leaves out the record's qualifier %q", rs)
	}
	return changes, describe()
}

// negates says whether a is b with a negating prefix: "nonsignificant", "unchanged".
func negates(a, b string) bool {
	for _, p := range []string{"non", "un", "in", "im", "dis"} {
		if len(b) >= 4 && a == p+b {
			return true
		}
	}
	return false
}

// numeric says whether a token is a number: a value, a word with a digit (IL-6's "6",
// "p301s"), or a number word.
func numeric(t *token) bool {
	if t == nil {
		return false
	}
	return t.kind == numberToken || numberWords[t.word] || strings.ContainsFunc(t.word, unicode.IsDigit)
}

// comparator says whether a word compares: "<", "≥", "=", "±", "~".
func comparator(w string) bool {
	switch w {
	case "<", ">", "<=", ">=", "=", "!=", "±", "~":
		return true
	}
	return false
}
