package citation

// Checking a quote against the one record it cites, the way a careful reader does. Both
// are read as the same words (tokens.go): how a passage is written (Unicode forms, case,
// spacing, punctuation, hyphenation, British or American spelling, Greek letters named,
// numbers in words or digits, "P < .01" or "p < 0.01", "10–15%" or "10 to 15%",
// "10⁻⁸", "10<sup>-8</sup>" or "10^-8", "±" or "+/-", "×" or "x", an interval's bounds in
// either order: notation.go) is not what it says. Then:
//
//   - a quote whose words are a run of the record's, or whose pieces between elision
//     marks ("...", "[...]") are runs of it in order, is verified, unless what it leaves
//     out governs what it quotes (context.go): a negation left out before it or in an
//     elided gap makes it contradicted; a hedge, an attribution, a contrast or a
//     limitation left out makes it out of context; an elision that joins sentences that
//     are not next to each other makes it unsupported;
//   - a quote that differs from its closest passage by a negation, a number (a value, its
//     sign, comparator, decimal point, unit, percent or fold) or a direction word says
//     something else than the record, however few words changed: it is contradicted;
//   - one that claims more than its closest passage (a hedge dropped or strengthened,
//     association made causal, a quantifier strengthened, a qualifier dropped) is
//     overstated;
//   - one close to a passage but with another content word changed, dropped or added is
//     altered, as is one that leaves out a statistic in brackets unmarked;
//   - a quote made of two passages joined without an elision mark, or anything else, is
//     unsupported.
//
// Overlap measures alone (how many of a quote's words or word runs the record has) cannot
// tell these apart: inserting "not" into a long quote keeps nine in ten of its word runs.

import (
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/cosci-dev/cosci/internal/research"
)

// Finding is what comparing a quote with its record found.
type Finding struct {
	Verdict string // one of the research.Citation* verdicts but invented
	Note    string
	// Passage is the record's words the quote was read against: the passage closest to
	// an altered, overstated or contradicted quote, the sentences around a verified or
	// out-of-context one (what it leaves out included); "" when none is close.
	Passage string
}

// reading is a finding with the record's tokens [start, end) it was read against (-1
// when none).
type reading struct {
	Finding
	start, end int
}

func verdictOnly(verdict, note string) reading {
	return reading{Finding: Finding{Verdict: verdict, Note: note}, start: -1, end: -1}
}

// checker is the check, with the parts of it a mutation test switches off to show that
// the citation benchmark notices.
type checker struct {
	context bool // read what a quote leaves out around and between its pieces
	values  bool // read numbers as values with their sign, comparator and decimal point
	near    bool // read a quote that is not the record's words against its closest passage, and words in their canonical forms
	// overstated reads a near quote that claims more than its passage (a hedge dropped,
	// association made causal, a quantifier strengthened) as overstated, not altered
	overstated bool
}

// std is the check Compare runs.
var std = checker{context: true, values: true, near: true, overstated: true}

// Bounds on what is aligned, so that a huge record or quote costs bounded time: the
// alignment is quadratic in their lengths. Finding a quote word for word is linear, so it
// reads the whole record (records.go bounds what a result holds).
const (
	maxRecordTokens = 20000
	maxQuoteTokens  = 200
)

// Thresholds of closeness, in edits per word of the quote. A quote is altered (or
// overstated) when at most a quarter of its words differ from the closest passage (one
// word of four): "One changed word in a nine-word quote" is a near-quote, not a false one.
// A contradiction tolerates more drift besides the change of meaning ("did not reduce" for
// "reduced by 40%" adds an auxiliary and drops a preposition), but a change of meaning in a
// passage otherwise far from the quote is not taken for one.
const (
	alteredShare      = 0.25
	contradictedShare = 0.4
	// spliceGap is how many of the record's words two pieces of a quote may skip and
	// still be read as one passage with words dropped (altered) rather than two
	// passages joined (spliced).
	spliceGap = 3
	// minPiece is the fewest words a piece of a spliced quote has: shorter runs are found
	// in any record by chance.
	minPiece = 3
)

// Compare checks a quote against the text of the record it cites (a record's abstract, a
// search hit's snippet, a passage of a full text: any text the quote claims to be from).
func Compare(record, quote string) Finding { return std.compare(record, quote).Finding }

func (c checker) compare(record, quote string) reading {
	rec := c.tokenize(record, 0)
	pieces := c.elided(quote)
	if len(pieces) == 0 {
		return verdictOnly(research.CitationUnsupported, "the quote has no words to check")
	}
	var r reading
	if spans, ok := inOrder(rec, pieces, 0); ok {
		r = c.readAt(rec, spans)
		// The same words may stand in the record more than once, governed in one place
		// and not in another ("no evidence that X reduced Y" in the abstract, "X reduced
		// Y" in the results): the quote is read at the place that holds it best.
		for n := 1; n < maxPlaces && r.Verdict != research.CitationVerified; n++ {
			next, ok := inOrder(rec, pieces, spans[len(spans)-1][0]+1)
			if !ok {
				break
			}
			spans = next
			if o := c.readAt(rec, spans); rank(o.Verdict) < rank(r.Verdict) {
				r = o
			}
		}
	} else if len(pieces) == 1 {
		r = c.compareWhole(rec, pieces[0])
	} else {
		r = c.compareElided(rec, pieces)
	}
	if r.Passage == "" && r.start >= 0 && r.end > r.start && r.Verdict != research.CitationUnsupported {
		s, _ := sentenceOf(rec, r.start)
		_, e := sentenceOf(rec, r.end-1)
		r.Passage = span(rec, s, e)
	}
	return r
}

// maxPlaces bounds the places of the record a quote's words are read at.
const maxPlaces = 8

// readAt reads a quote found word for word at spans: verified, unless what it leaves out
// there governs it.
func (c checker) readAt(rec []token, spans [][2]int) reading {
	r := reading{Finding: Finding{Verdict: research.CitationVerified}, start: spans[0][0], end: spans[len(spans)-1][1]}
	if c.context {
		r = worse(r, readContext(rec, spans))
	}
	return r
}

// inOrder finds each piece word for word after the one before it, each as close to the
// next as the record allows (a short piece may be found in many places: the one nearest
// what follows it is the one quoted), the last piece at from or after.
func inOrder(rec []token, pieces [][]token, from int) ([][2]int, bool) {
	last := pieces[len(pieces)-1]
	for at := from; at < len(rec); {
		i, j := find(rec, last, at)
		if i < 0 {
			return nil, false
		}
		spans := make([][2]int, len(pieces))
		spans[len(pieces)-1] = [2]int{i, j}
		ok := true
		for k := len(pieces) - 2; k >= 0 && ok; k-- {
			spans[k], ok = findBefore(rec, pieces[k], spans[k+1][0])
		}
		if ok {
			return spans, true
		}
		at = i + 1
	}
	return nil, false
}

// findBefore is the last run of the record spelling q that ends at or before end.
func findBefore(rec, q []token, end int) ([2]int, bool) {
	best, found := [2]int{}, false
	for at := 0; at < end; {
		i, j := find(rec, q, at)
		if i < 0 || j > end {
			break
		}
		best, found = [2]int{i, j}, true
		at = i + 1
	}
	return best, found
}

// compareWhole checks a quote without elision marks that is not a run of the record.
func (c checker) compareWhole(rec, q []token) reading {
	if !c.near {
		return verdictOnly(research.CitationUnsupported, "the record does not hold these words")
	}
	if len(rec) > maxRecordTokens {
		// Only the record's beginning is aligned: a passage past it that the quote
		// paraphrases would be missed, so nothing is called contradicted or altered on
		// the strength of the beginning alone.
		f := c.compareWhole(rec[:maxRecordTokens], q)
		if f.Verdict != research.CitationUnsupported {
			f = verdictOnly(research.CitationUnsupported, fmt.Sprintf("the record does not hold this word for word; only its first %d words were compared for a near match", maxRecordTokens))
		}
		return f
	}
	// Two passages joined are unsupported whatever else differs; words dropped inside one
	// passage are not a splice (spliced says which is which).
	if gap, ok := spliced(rec, q); ok {
		return verdictOnly(research.CitationUnsupported, "the quote joins passages of the record that do not follow each other ("+gap+") without marking what it leaves out")
	}
	a := align(rec, q)
	r := c.judge(a, rec, len(q))
	if r.Verdict != research.CitationUnsupported && c.context {
		r = worse(r, readContext(rec, [][2]int{{a.start, a.end}}))
	}
	return r
}

// compareElided checks a quote whose pieces, separated by elision marks, are not all
// runs of the record in order: each piece is read as a quote of its own, in the record's
// order, and what the marks leave out is read too.
func (c checker) compareElided(rec []token, pieces [][]token) reading {
	worst := reading{Finding: Finding{Verdict: research.CitationVerified}, start: -1, end: -1}
	var spans [][2]int
	at := 0
	for n, p := range pieces {
		i, j := find(rec, p, at)
		if i < 0 {
			if i, _ := find(rec, p, 0); i >= 0 {
				return verdictOnly(research.CitationUnsupported, fmt.Sprintf("piece %d of the elided quote comes before the piece it follows in the record", n+1))
			}
			f := c.compareWhole(rec, p)
			if f.Verdict == research.CitationUnsupported || f.start < at {
				return verdictOnly(research.CitationUnsupported, fmt.Sprintf("piece %d of the elided quote: %s", n+1, f.Note))
			}
			f.Note = fmt.Sprintf("piece %d of the elided quote: %s", n+1, f.Note)
			worst = worse(worst, f)
			i, j = f.start, f.end
		}
		spans = append(spans, [2]int{i, j})
		at = j
	}
	if worst.start < 0 {
		worst.start, worst.end = spans[0][0], spans[len(spans)-1][1]
	}
	if c.context {
		worst = worse(worst, readContext(rec, spans))
	}
	return worst
}

// rank orders verdicts from the best to the worst.
func rank(verdict string) int {
	switch verdict {
	case research.CitationVerified:
		return 0
	case research.CitationAltered:
		return 1
	case research.CitationOverstated:
		return 2
	case research.CitationOutOfContext:
		return 3
	case research.CitationUnsupported:
		return 4
	case research.CitationContradicted:
		return 5
	}
	return 6
}

// worse is the worse of two readings.
func worse(a, b reading) reading {
	if rank(b.Verdict) > rank(a.Verdict) {
		return b
	}
	return a
}

// spliced says whether a quote is two or more runs of the record that do not follow each
// other: each piece the longest run of the record the rest of the quote starts with.
func spliced(rec, q []token) (string, bool) {
	var gaps []string
	prev := -1
	for len(q) > 0 {
		n, at := longestPrefix(rec, q)
		if n < minPiece || (n < len(q) && len(q)-n < minPiece && prev >= 0) {
			return "", false
		}
		if prev >= 0 {
			switch {
			case at < prev:
				gaps = append(gaps, "a later piece comes first in the record")
			case at-prev > spliceGap && !asideBetween(rec, prev, at):
				gaps = append(gaps, fmt.Sprintf("%d words apart", at-prev))
			default:
				return "", false // words dropped within one passage: an alteration
			}
		}
		prev, q = at+n, q[n:]
	}
	if len(gaps) == 0 {
		return "", false
	}
	return strings.Join(gaps, "; "), true
}

// asideBetween says whether the record's tokens [from, to) are a statistic in brackets,
// whole: a quote that skips it is one passage with the aside left out, not two joined.
func asideBetween(rec []token, from, to int) bool {
	for _, a := range statisticAsides(rec) {
		if a[0] == from && a[1] == to {
			return true
		}
	}
	return false
}

// longestPrefix finds the longest run of the record that the quote starts with.
func longestPrefix(rec, q []token) (n, at int) {
	for i := range rec {
		k := 0
		for k < len(q) && i+k < len(rec) && rec[i+k].word == q[k].word {
			k++
		}
		if k > n {
			n, at = k, i
		}
	}
	return n, at
}

// find is the first run rec[i:j], from start on, whose words spell q's: the same letters
// in the same order, with words broken at the same places or joined or split where one
// text has a hyphen, a space or a line break ("plaque-associated" for "plaque associated",
// "neuro- inflammation" for "neuroinflammation"). A number is a word of its own ("#2.5#"),
// so no split or join makes one of two. It is -1, -1 when there is none.
func find(rec, q []token, start int) (i, j int) {
	var b strings.Builder
	for _, t := range q {
		b.WriteString(t.word)
	}
	s := b.String()
	if s == "" {
		return -1, -1
	}
	for i := start; i < len(rec); i++ {
		rest := s
		for j := i; j < len(rec) && strings.HasPrefix(rest, rec[j].word); j++ {
			// A join or split must not make or unmake a negation: "not able" is not
			// "notable".
			if rest = rest[len(rec[j].word):]; rest == "" && countNegations(rec[i:j+1]) == countNegations(q) {
				return i, j + 1
			}
		}
	}
	return -1, -1
}

// countNegations counts the negations among words.
func countNegations(ws []token) int {
	n := 0
	for _, w := range ws {
		if negations[w.word] {
			n++
		}
	}
	return n
}

// elisionMark is an elision mark: "...", "…" (NFKC makes it "..."), in brackets or not.
var elisionMark = regexp.MustCompile(`\s*[\[(]?\s*\.\.\.+\s*[\])]?\s*`)

// elided splits a quote at its elision marks into the pieces it quotes, dropping pieces
// with no words.
func (c checker) elided(quote string) [][]token {
	var pieces [][]token
	for _, p := range elisionMark.Split(norm.NFKC.String(exponents(quote)), -1) {
		if t := c.tokenize(p, maxQuoteTokens); len(t) > 0 {
			pieces = append(pieces, t)
		}
	}
	return pieces
}
