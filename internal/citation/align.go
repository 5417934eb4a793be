package citation

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// An alignment of a quote with the record's passage closest to it: the fewest word edits
// (a word changed, added or left out) that turn some passage of the record into the quote.
type alignment struct {
	cost       int
	start, end int    // the passage: record tokens [start, end)
	edits      []edit // in the quote's order
	// forms counts the words that differ only in form ("reduce" for "reduced"): they
	// cost nothing, but the quote is not the record's words.
	forms int
}

// edit is one word edit: rec is the record's word ("" when the quote adds one), quote the
// quote's ("" when the quote leaves one out).
type edit struct{ rec, quote string }

// align finds the passage of the record closest to the quote: an edit distance over words
// in which the passage may start and end anywhere in the record (the quote is aligned
// whole, the record in part).
func align(rec, q []token) alignment {
	m, n := len(q), len(rec)
	if m == 0 || n == 0 {
		return alignment{cost: m}
	}
	// d[i][j]: the fewest edits turning some passage of rec ending at j into q[:i].
	d := make([][]int32, m+1)
	for i := range d {
		d[i] = make([]int32, n+1)
		d[i][0] = int32(i)
	}
	for i := 1; i <= m; i++ {
		for j := 1; j <= n; j++ {
			c := d[i-1][j-1]
			if q[i-1].stem != rec[j-1].stem {
				c++
			}
			d[i][j] = min(c, d[i-1][j]+1, d[i][j-1]+1)
		}
	}
	end := 0
	for j := 1; j <= n; j++ {
		if d[m][j] < d[m][end] {
			end = j
		}
	}
	a := alignment{cost: int(d[m][end]), end: end}
	i, j := m, end
	for i > 0 {
		switch {
		case j > 0 && d[i][j] == d[i-1][j-1] && q[i-1].stem == rec[j-1].stem:
			if q[i-1].word != rec[j-1].word {
				a.forms++
			}
			i, j = i-1, j-1
		case j > 0 && d[i][j] == d[i-1][j-1]+1:
			a.edits = append(a.edits, edit{rec: rec[j-1].word, quote: q[i-1].word})
			i, j = i-1, j-1
		case d[i][j] == d[i-1][j]+1:
			a.edits = append(a.edits, edit{quote: q[i-1].word})
			i--
		default:
			a.edits = append(a.edits, edit{rec: rec[j-1].word})
			j--
		}
	}
	a.start = j
	slices.Reverse(a.edits)
	return a
}

// passage is the record's text that the quote was aligned with.
func (a alignment) passage(rec []token) string { return span(rec, a.start, a.end) }

// meaningful describes the edits that change what the passage says, not only how: a
// negation added or left out, a number changed, a direction word turned around or dropped.
func (a alignment) meaningful() []string {
	var out []string
	for _, e := range a.edits {
		if s := reverses(e); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// changes describes every edit, for an altered quote's note.
func (a alignment) changes() []string {
	var out []string
	for _, e := range a.edits {
		switch {
		case e.rec == "":
			out = append(out, fmt.Sprintf("adds %q", e.quote))
		case e.quote == "":
			out = append(out, fmt.Sprintf("leaves out %q", e.rec))
		default:
			out = append(out, fmt.Sprintf("%q for %q", e.quote, e.rec))
		}
		if len(out) == 5 && len(a.edits) > 5 {
			out = append(out, fmt.Sprintf("and %d more", len(a.edits)-5))
			break
		}
	}
	return out
}

// reverses says how an edit changes the passage's meaning, or "" if it does not.
func reverses(e edit) string {
	r, q := e.rec, e.quote
	switch {
	case r != "" && q != "" && (negates(r, q) || negates(q, r)):
		return fmt.Sprintf("%q where the quote says %q", r, q)
	case negations[r] != negations[q] && (negations[r] || negations[q]):
		if r == "" {
			return fmt.Sprintf("no %q, which the quote adds", q)
		}
		if q == "" {
			return fmt.Sprintf("%q, which the quote leaves out", r)
		}
		return fmt.Sprintf("%q where the quote says %q", r, q)
	case numeric(q) && r == "":
		return fmt.Sprintf("no %q, which the quote adds", q)
	case r != "" && q != "" && (numeric(r) || numeric(q)):
		return fmt.Sprintf("%q where the quote says %q", r, q)
	}
	ar, wr := direction(r)
	aq, wq := direction(q)
	switch {
	case ar != 0 && aq != 0 && (ar != aq || wr != wq):
		return fmt.Sprintf("%q where the quote says %q", r, q)
	case ar != 0 && q == "":
		return fmt.Sprintf("%q, which the quote leaves out", r)
	case aq != 0 && r == "":
		return fmt.Sprintf("no %q, which the quote adds", q)
	}
	return ""
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

// negations are the words that turn a statement into its negation (apostrophes are
// dropped inside words before comparing, so "didn't" is "didnt"; "non" is the first half
// of "non-carriers").
var negations = setOf("not", "no", "non", "never", "none", "neither", "nor", "without", "cannot", "nothing", "nobody",
	"absent", "absence", "lack", "lacks", "lacked", "lacking", "fail", "fails", "failed", "unable",
	"didnt", "doesnt", "dont", "isnt", "wasnt", "werent", "arent", "couldnt", "wont", "wouldnt",
	"hasnt", "havent", "hadnt", "shouldnt", "neednt")

// numberWords are numbers written out.
var numberWords = setOf("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "fifteen", "twenty", "thirty", "forty", "fifty", "hundred", "thousand", "million",
	"half", "twice", "thrice", "double", "doubled", "triple", "tripled", "dozen", "single", "first", "second", "third")

// numeric says whether a word is a number.
func numeric(w string) bool {
	return numberWords[w] || strings.ContainsFunc(w, unicode.IsDigit)
}

// Direction words, on two axes: how much or how active something is (increases, promotes;
// decreases, inhibits), and whether an outcome gets better or worse (improves, alleviates;
// worsens, exacerbates). A word replaced by one of the same axis and way is a paraphrase;
// by one of the other way or the other axis, it says something else. Stems of five letters
// or more match any word they begin; shorter words match whole.
var directions = []struct {
	axis, way int
	words     []string
}{
	{1, +1, []string{"increas", "elevat", "raise", "raising", "enhanc", "augment", "amplif", "higher", "more",
		"greater", "gain", "gains", "rise", "rises", "rose", "risen", "boost", "up", "larger", "upregulat", "exceed",
		"promot", "activat", "stimulat", "potentiat", "induc", "facilitat", "accelerat", "agonis", "agoniz",
		"faster", "positiv", "strong", "major"}},
	{1, -1, []string{"decreas", "reduc", "lower", "diminish", "less", "fewer", "smaller", "loss", "lost", "lose",
		"declin", "drop", "dropped", "fell", "fall", "falls", "deplet", "lessen", "downregulat", "down",
		"inhibit", "suppress", "block", "prevent", "abolish", "abrogat", "slow", "slower", "slowed", "slows",
		"antagonis", "antagoniz", "attenuat", "negativ", "weak", "minor"}},
	{2, +1, []string{"improv", "alleviat", "ameliorat", "rescu", "protect", "mitigat", "benefit", "restor"}},
	{2, -1, []string{"worsen", "exacerbat", "aggravat", "impair", "harm", "damag", "deteriorat"}},
}

// direction is the axis and way a word points, or 0, 0.
func direction(w string) (axis, way int) {
	if w == "" {
		return 0, 0
	}
	for _, d := range directions {
		if slices.ContainsFunc(d.words, func(s string) bool { return w == s || (len(s) >= 5 && strings.HasPrefix(w, s)) }) {
			return d.axis, d.way
		}
	}
	return 0, 0
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
