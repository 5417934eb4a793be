package citation

// Checking a quote against the one record it cites, the way a careful reader does. The
// record and the quote are first put in the same form: Unicode compatibility forms (NFKC:
// ligatures, full-width letters, "…" as "..."), case, apostrophes inside words, and every
// run of spacing and punctuation; and words may be joined or split where either text has a
// hyphen, a space or a line end ("neuro- inflammation", "plaque associated"). None of that
// changes what a passage says. Then:
//
//   - a quote whose words are a run of the record's words is verified; so is one whose
//     pieces, between elision marks ("...", "[...]"), are runs of the record in order;
//   - a quote that differs from its closest passage by a negation, a number or a direction
//     word (increase/decrease, promotes/inhibits, higher/lower, ...) says something else
//     than the record, however few words changed: it is contradicted;
//   - a quote made of two passages joined without an elision mark is unsupported;
//   - a quote close to a passage but not equal (a word changed, dropped or added) is
//     altered: a warning, and the report shows the passage;
//   - anything else is unsupported.
//
// Overlap measures alone (how many of a quote's words or word runs the record has) cannot
// tell these apart: inserting "not" into a long quote keeps nine in ten of its word runs.

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
	"golang.org/x/text/unicode/norm"

	"github.com/cosci-dev/cosci/internal/research"
)

// Finding is what comparing a quote with its record found.
type Finding struct {
	Verdict string // research.CitationVerified, Altered, Contradicted or Unsupported
	Note    string
	// Passage is the record's passage closest to an altered or contradicted quote.
	Passage string
}

// Bounds on what is aligned, so that a huge record or quote costs bounded time: the
// alignment is quadratic in their lengths. Finding a quote word for word is linear, so it
// reads the whole record (records.go bounds what a result holds).
const (
	maxRecordTokens = 20000
	maxQuoteTokens  = 200
)

// Thresholds of closeness, in edits per word of the quote. A quote is altered when at
// most a quarter of its words differ from the closest passage (one word of four): "One
// changed word in a nine-word quote" is a near-quote, not a false one. A contradiction
// tolerates more drift besides the change of meaning ("did not reduce" for "reduced by
// 40%" adds an auxiliary and drops a preposition), but a change of meaning in a passage
// otherwise far from the quote is not taken for one. Words that differ only in form
// ("reduce", "reduced") cost nothing in the alignment; a quote whose only differences are
// such is altered.
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

// Compare checks a quote against the text of the record it cites.
func Compare(record, quote string) Finding {
	rec := tokenize(record, 0)
	pieces := elided(quote)
	if len(pieces) == 0 {
		return Finding{Verdict: research.CitationUnsupported, Note: "the quote has no words to check"}
	}
	if len(pieces) > 1 {
		return compareElided(rec, pieces)
	}
	return compareWhole(rec, pieces[0])
}

// compareWhole checks a quote without elision marks.
func compareWhole(rec, q []token) Finding {
	if i, _ := find(rec, q, 0); i >= 0 {
		return Finding{Verdict: research.CitationVerified}
	}
	if len(rec) > maxRecordTokens {
		// Only the record's beginning is aligned: a passage past it that the quote
		// paraphrases would be missed, so nothing is called contradicted or altered on
		// the strength of the beginning alone.
		f := compareWhole(rec[:maxRecordTokens], q)
		if f.Verdict != research.CitationUnsupported {
			f = Finding{Verdict: research.CitationUnsupported, Note: fmt.Sprintf("the record does not hold this word for word; only its first %d words were compared for a near match", maxRecordTokens)}
		}
		return f
	}
	// Two passages joined are unsupported whatever else differs; words dropped inside one
	// passage are not a splice (spliced says which is which).
	if gap, ok := spliced(rec, q); ok {
		return Finding{Verdict: research.CitationUnsupported, Note: "the quote joins passages of the record that do not follow each other (" + gap + ") without marking what it leaves out"}
	}
	a := align(rec, q)
	meaning := a.meaningful()
	if len(meaning) > 0 && float64(a.cost-len(meaning)) <= contradictedShare*float64(len(q)) {
		return Finding{Verdict: research.CitationContradicted, Passage: a.passage(rec),
			Note: "the record says " + strings.Join(meaning, "; ")}
	}
	switch {
	case a.cost == 0 && a.forms > 0:
		return Finding{Verdict: research.CitationAltered, Passage: a.passage(rec), Note: "the record's words in other forms"}
	case a.cost > 0 && float64(a.cost) <= alteredShare*float64(len(q)):
		return Finding{Verdict: research.CitationAltered, Passage: a.passage(rec),
			Note: fmt.Sprintf("close to the record's words, not equal: %s", strings.Join(a.changes(), "; "))}
	}
	return Finding{Verdict: research.CitationUnsupported, Note: "the record does not say this"}
}

// compareElided checks a quote whose pieces are separated by elision marks: each piece is
// checked as a quote of its own, they must come in the record's order, and what a mark
// leaves out must not be a negation that reverses the sentence ("did [not] reduce").
func compareElided(rec []token, pieces [][]token) Finding {
	worst := Finding{Verdict: research.CitationVerified}
	at, prev := 0, 0
	for n, p := range pieces {
		i, j := find(rec, p, at)
		if i < 0 {
			if i, _ := find(rec, p, 0); i >= 0 {
				return Finding{Verdict: research.CitationUnsupported, Note: fmt.Sprintf("piece %d of the elided quote comes before the piece it follows in the record", n+1)}
			}
			f := compareWhole(rec, p)
			if f.Verdict != research.CitationVerified && rank(f.Verdict) > rank(worst.Verdict) {
				f.Note = fmt.Sprintf("piece %d of the elided quote: %s", n+1, f.Note)
				worst = f
			}
			continue
		}
		if n > 0 {
			if w := reversingGap(rec[at:i]); w != "" {
				return Finding{Verdict: research.CitationContradicted, Passage: span(rec, prev, j),
					Note: fmt.Sprintf("the elision leaves out %q, which reverses the sentence", w)}
			}
		}
		at, prev = j, i
	}
	return worst
}

// auxiliaries are the words a negation leans on ("did not", "was not", "may not").
var auxiliaries = setOf("do", "does", "did", "is", "was", "were", "are", "be", "been", "has", "have", "had",
	"can", "could", "may", "might", "will", "would", "should", "must")

// reversingGap is the negation an elision leaves out when that is all it leaves out
// (with its auxiliary): "X did [not] reduce Y" says the opposite of the record, while
// "X did [not change the] number" only drops words.
func reversingGap(gap []token) string {
	neg := ""
	for _, t := range gap {
		switch {
		case negations[t.word]:
			neg = t.word
		case !auxiliaries[t.word]:
			return ""
		}
	}
	return neg
}

// rank orders verdicts from the best to the worst.
func rank(verdict string) int {
	switch verdict {
	case research.CitationVerified:
		return 0
	case research.CitationAltered:
		return 1
	case research.CitationUnsupported:
		return 2
	}
	return 3
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
			case at-prev > spliceGap:
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
// "neuro- inflammation" for "neuroinflammation"). It is -1, -1 when there is none.
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

// A token is a word of a normalised text, with where it lies in that text, so the
// record's passage can be shown as the record wrote it.
type token struct {
	word, stem string
	start, end int
	text       *string
}

var (
	// elision marks: "...", "…" (NFKC makes it "..."), in brackets or not.
	elisionMark = regexp.MustCompile(`\s*[\[(]?\s*\.\.\.+\s*[\])]?\s*`)
	// an apostrophe inside a word: "Alzheimer's", "didn't".
	innerApostrophe = regexp.MustCompile(`(\pL)['\x{2019}\x{02BC}](\pL)`)
)

// normalise puts a text in the form quotes are compared in, keeping its case (the tokens
// are lowered) so that a passage reads as the record wrote it.
func normalise(s string) string {
	s = norm.NFKC.String(s)
	s = strings.ReplaceAll(s, "\u00AD", "") // a soft hyphen is only a place to break
	return innerApostrophe.ReplaceAllString(s, "$1$2")
}

// tokenize is a text's words, at most limit of them (0: all).
func tokenize(s string, limit int) []token {
	text := normalise(s)
	var out []token
	start := -1
	flush := func(end int) {
		if start >= 0 && (limit <= 0 || len(out) < limit) {
			w := strings.ToLower(text[start:end])
			out = append(out, token{word: w, stem: stem(w), start: start, end: end, text: &text})
		}
		start = -1
	}
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(text))
	return out
}

// stem is a word's English stem (Snowball's, the stemmer the library's index uses), so
// that "reduce" and "reduced" align.
func stem(w string) string {
	env := snowballstem.NewEnv(w)
	english.Stem(env)
	return env.Current()
}

// elided splits a quote at its elision marks into the pieces it quotes, dropping pieces
// with no words.
func elided(quote string) [][]token {
	var pieces [][]token
	for _, p := range elisionMark.Split(norm.NFKC.String(quote), -1) {
		if t := tokenize(p, maxQuoteTokens); len(t) > 0 {
			pieces = append(pieces, t)
		}
	}
	return pieces
}

// span is the record's text from its token i to its token j (exclusive).
func span(rec []token, i, j int) string {
	if i >= j || j > len(rec) {
		return ""
	}
	return strings.Join(strings.Fields((*rec[i].text)[rec[i].start:rec[j-1].end]), " ")
}
