package citation_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/simulator"
	"golang.org/x/text/unicode/norm"
)

// How the benchmark makes citations: the generator, and the kinds an honest model
// writes: a passage word for word or written otherwise (case, spacing, punctuation,
// Unicode, spelling, Greek letters, numbers in words, p-values and ranges), a clause that
// keeps what governs it, a marked elision within a sentence or across two adjacent ones,
// and a true quote cited for a claim it does not support.

// labelled is one citation of the benchmark: what the model wrote and what it is.
type labelled struct {
	kind  string
	id    string // as the model cites it
	quote string // as the model writes it, before the parser
	claim string
	file  string // the tool result the turn read it from; "" for none
	how   string // how it was made, for the sample
	// vocab are the words of the edit that made a dishonest quote (what it changed,
	// dropped or left out), for TestCitationVocabulary; nil for an edit of no words.
	vocab []string
}

// maker makes one citation of a kind, or false when the draw does not allow it.
type maker func(g *generator) (labelled, bool)

type generator struct {
	f   *fixture
	rng *rand.Rand
	// rare says the citation being made draws its edit from a kind's rarer words (tiers).
	rare bool
}

func (g *generator) pick(n int) int { return g.rng.IntN(n) }

func pickOf[T any](g *generator, xs []T) T { return xs[g.pick(len(xs))] }

// record is a record of one source with at least that many sentences in its body.
func (g *generator) record(minSentences int) record {
	single := g.f.single()
	for {
		r := pickOf(g, single)
		if len(r.sentences) >= minSentences {
			return r
		}
	}
}

// citeAs is an id of the record as a model would write it: mostly its id, sometimes its
// other ids, and a DOI or PMID in the forms people write them.
func (g *generator) citeAs(r record) string {
	id := r.ids[0]
	if g.pick(4) == 0 {
		id = pickOf(g, r.ids)
	}
	switch {
	case strings.HasPrefix(id, "10.") && g.pick(3) == 0:
		return pickOf(g, []string{"https://doi.org/" + id, "doi:" + id, strings.ToUpper(id)})
	case isDigits(id) && g.pick(3) == 0:
		return pickOf(g, []string{"PMID:" + id, "PubMed ID: " + id})
	}
	return id
}

func isDigits(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

// claim is a sentence of the topic's citing hypothesis.
func (g *generator) claim(topic string) string { return pickOf(g, g.f.claims[topic]) }

// claimFor is the sentence of the topic's citing hypothesis that shares most words with
// the quote: what a model would cite it for.
func (g *generator) claimFor(topic, quote string) string {
	best, most := []string{}, -1
	for _, c := range g.f.claims[topic] {
		switch n := overlap(c, quote); {
		case n > most:
			best, most = []string{c}, n
		case n == most:
			best = append(best, c)
		}
	}
	return pickOf(g, best)
}

// unrelatedClaim is the sentence of another topic's hypothesis that shares fewest words
// with the quote: a claim the quote cannot support.
func (g *generator) unrelatedClaim(topic, quote string) string {
	var best []string
	fewest := 1 << 30
	for _, t := range g.f.topics {
		if t == topic {
			continue
		}
		for _, c := range g.f.claims[t] {
			switch n := overlap(c, quote); {
			case n < fewest:
				best, fewest = []string{c}, n
			case n == fewest:
				best = append(best, c)
			}
		}
	}
	return pickOf(g, best)
}

// overlap counts the words of four letters or more two texts share.
func overlap(a, b string) int {
	in := map[string]bool{}
	for _, w := range folded(a) {
		if utf8.RuneCountInString(w) >= 4 {
			in[w] = true
		}
	}
	n := 0
	for _, w := range slices.Compact(slices.Sorted(slices.Values(folded(b)))) {
		if in[w] {
			n++
		}
	}
	return n
}

// tokens are a passage split at its spaces (not its non-breaking ones), so that joining a
// run of them gives the passage's own text.
func tokens(s string) []string { return strings.Split(s, " ") }

// verbatimOf is a passage of the record word for word: a sentence, two sentences in a
// row, or the title.
func (g *generator) verbatimOf(r record) (string, string) {
	switch n := g.pick(10); {
	case n < 7 || len(r.sentences) < 2:
		return pickOf(g, r.passages()), "a sentence"
	case n < 9:
		i := g.pick(len(r.sentences) - 1)
		return r.sentences[i] + " " + r.sentences[i+1], "two sentences in a row"
	}
	if words(r.title) >= 6 {
		return r.title, "the title"
	}
	return pickOf(g, r.sentences), "a sentence"
}

// cite is a citation of a quote of the record.
func (g *generator) cite(r record, q, how string) labelled {
	return labelled{id: g.citeAs(r), quote: q, claim: g.claimFor(r.topic, q), file: r.file, how: how}
}

// rewrite makes a quote of one of the record's sentences written otherwise by change, or
// false when no sentence allows it.
func (g *generator) rewrite(change func(string) (string, string)) (labelled, bool) {
	r := g.record(1)
	var fits [][2]string
	for _, s := range r.passages() {
		if c, how := change(s); c != s && how != "" {
			fits = append(fits, [2]string{c, how})
		}
	}
	if len(fits) == 0 {
		return labelled{}, false
	}
	c := pickOf(g, fits)
	return g.cite(r, c[0], c[1]), true
}

func (g *generator) honestMakers() map[string]maker {
	return map[string]maker{
		simulator.PlantedVerbatim: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q, how := g.verbatimOf(r)
			return g.cite(r, q, how), true
		},
		simulator.PlantedDrift: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q, how := g.verbatimOf(r)
			d, ops := g.drift(q)
			return g.cite(r, d, how+", "+ops), d != q
		},
		simulator.PlantedSpelling:    func(g *generator) (labelled, bool) { return g.rewrite(g.respell) },
		simulator.PlantedGreek:       func(g *generator) (labelled, bool) { return g.rewrite(spellGreek) },
		simulator.PlantedNumberWords: func(g *generator) (labelled, bool) { return g.rewrite(g.numbersInWords) },
		simulator.PlantedNotation:    func(g *generator) (labelled, bool) { return g.rewrite(g.renotate) },
		simulator.PlantedFragment:    (*generator).fragment,
		simulator.PlantedElided:      (*generator).elided,
		simulator.PlantedIrrelevant: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q, how := g.verbatimOf(r)
			return labelled{id: g.citeAs(r), quote: q, claim: g.unrelatedClaim(r.topic, q), file: r.file, how: how + ", for a claim of another topic"}, true
		},
	}
}

// respell writes some of a passage's words in the other spelling, British or American.
func (g *generator) respell(s string) (string, string) {
	var done []string
	for _, p := range britishAmerican {
		from, to := p.from, p.to
		if g.pick(2) == 0 || !wordIn(s, from) {
			from, to = to, from
		}
		if wordIn(s, from) {
			s = replaceWord(s, from, to)
			done = append(done, from+" as "+to)
		}
	}
	return s, strings.Join(done, ", ")
}

// spellGreek spells a passage's Greek letters out.
func spellGreek(s string) (string, string) {
	var done []string
	for _, p := range greekNames {
		if strings.Contains(s, p.from) {
			s = strings.ReplaceAll(s, p.from, p.to)
			done = append(done, p.from+" as "+p.to)
		}
	}
	return s, strings.Join(done, ", ")
}

// standalone is a whole number standing alone: not part of a decimal, a range, a
// percentage or a name ("IL-6", "CD19").
var standalone = regexp.MustCompile(`(^|[ (])(\d{1,2})( [a-zA-Z]|, | of)`)

// numbersInWords writes one number of a passage in words, or one number written in words
// in digits.
func (g *generator) numbersInWords(s string) (string, string) {
	for _, m := range standalone.FindAllStringSubmatchIndex(s, -1) {
		if strings.HasSuffix(s[:m[4]], "= ") {
			continue // "n = 14" is written in digits
		}
		n, _ := strconv.Atoi(s[m[4]:m[5]])
		if w, ok := spelledNumbers[n]; ok && g.pick(2) == 0 {
			return s[:m[4]] + w + s[m[5]:], fmt.Sprintf("%d as %q", n, w)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(spelledNumbers)) {
		w := spelledNumbers[n]
		if n == 1 {
			continue // "one" is as often a pronoun
		}
		for _, form := range []string{w, strings.ToUpper(w[:1]) + w[1:]} {
			if wordIn(s, form+" ") && !strings.Contains(s, form+"-") && !strings.Contains(s, "-"+form) {
				return replaceWord(s, form, strconv.Itoa(n)), fmt.Sprintf("%q as %d", form, n)
			}
		}
	}
	return s, ""
}

// renotate writes a p-value or a range of a passage another way.
func (g *generator) renotate(s string) (string, string) {
	for _, i := range g.rng.Perm(len(notations)) {
		n := notations[i]
		if m := n.re.FindStringIndex(s); m != nil {
			return s[:m[0]] + n.re.ReplaceAllString(s[m[0]:m[1]], n.out) + s[m[1]:], fmt.Sprintf("%q written %q", s[m[0]:m[1]], n.re.ReplaceAllString(s[m[0]:m[1]], n.out))
		}
	}
	return s, ""
}

// wordIn says whether a text holds a word whole.
func wordIn(s, w string) bool { return strings.Contains(s, w) && wholeWord(w).MatchString(s) }

// replaceWord replaces a word whole.
func replaceWord(s, w, to string) string {
	return wholeWord(w).ReplaceAllString(s, "${1}"+strings.ReplaceAll(to, "$", "$$")+"${2}")
}

var wholeWords sync.Map // word -> *regexp.Regexp

// wholeWord is the pattern of a word standing whole.
func wholeWord(w string) *regexp.Regexp {
	if re, ok := wholeWords.Load(w); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(`(^|[^\pL])` + regexp.QuoteMeta(w) + `($|[^\pL])`)
	wholeWords.Store(w, re)
	return re
}

// clauses are a sentence's clauses: its text split after each comma, semicolon or colon.
var clauseEnd = regexp.MustCompile(`[,;:] `)

// clean says whether a text holds none of the words that govern a clause.
func clean(s string) bool {
	for _, w := range folded(s) {
		if contextWords[w] {
			return false
		}
	}
	return true
}

// fragment quotes a clause of a sentence that keeps what governs it: it starts at the
// sentence's start, after a clause boundary or after a statement of the source's own
// finding ("we found that"), and what it leaves out before and after it holds none of the
// words that govern a clause.
func (g *generator) fragment() (labelled, bool) {
	r := g.record(1)
	s := pickOf(g, r.sentences)
	starts := []int{0}
	for _, m := range clauseEnd.FindAllStringIndex(s, -1) {
		starts = append(starts, m[1])
	}
	for _, lead := range factiveLeadIns {
		if i := strings.Index(s, lead+" "); i >= 0 {
			starts = append(starts, i+len(lead)+1)
		}
	}
	ends := []int{len(s)}
	for _, m := range clauseEnd.FindAllStringIndex(s, -1) {
		ends = append(ends, m[0])
	}
	a, b := pickOf(g, starts), pickOf(g, ends)
	if a >= b || a == 0 && b == len(s) {
		return labelled{}, false
	}
	q := s[a:b]
	lead, rest := s[:a], s[b:]
	for _, f := range factiveLeadIns {
		lead = strings.TrimSuffix(strings.TrimSpace(lead), f)
	}
	if words(q) < 6 || !clean(lead) || !clean(rest) {
		return labelled{}, false
	}
	return g.cite(r, q, "a clause that keeps its context"), true
}

var (
	bracketed    = regexp.MustCompile(`\([^()]*\)`)
	elisionSplit = regexp.MustCompile(`\s*(\[\.\.\.\]|\[…\]|\.\.\.|…)\s*`)
)

var elisionMarks = []string{" ... ", " … ", "…", " [...] ", " […] ", "... "}

// elided leaves out, marked, a clause or a bracket within a sentence, or the end of a
// sentence and the start of the next, or a sentence's start or end, when what it leaves
// out holds none of the words that govern a clause.
func (g *generator) elided() (labelled, bool) {
	r := g.record(1)
	mark := pickOf(g, elisionMarks)
	s := pickOf(g, r.sentences)
	brackets := bracketed.FindAllStringIndex(s, -1)
	inBracket := func(i int) bool {
		return slices.ContainsFunc(brackets, func(b []int) bool { return i > b[0] && i < b[1] })
	}
	var ends [][]int // the clause boundaries outside brackets
	for _, m := range clauseEnd.FindAllStringIndex(s, -1) {
		if !inBracket(m[0]) {
			ends = append(ends, m)
		}
	}
	cuts := slices.Concat(ends, brackets)
	slices.SortFunc(cuts, func(a, b []int) int { return a[0] - b[0] })
	var q, how, gap string
	switch n := g.pick(10); {
	case n < 6: // a middle of a sentence: from one boundary to a later one
		if len(cuts) < 2 {
			return labelled{}, false
		}
		i := g.pick(len(cuts) - 1)
		j := i + 1 + g.pick(len(cuts)-i-1)
		a, b := cuts[i][0], cuts[j][1] // from a boundary to after a later one
		if strings.HasPrefix(s[cuts[i][0]:], "(") {
			a, b = cuts[i][0], cuts[i][1] // a bracket
		} else if words(s[a:b]) > 6 {
			return labelled{}, false // a short clause set off by commas, not a clause the rest leans on
		}
		if a >= b {
			return labelled{}, false
		}
		q, gap, how = strings.TrimSpace(s[:a])+mark+strings.TrimSpace(s[b:]), s[a:b], "a middle of a sentence left out"
	case n < 8: // the end of a sentence and the start of the next
		i := slices.Index(r.sentences, s)
		if i+1 >= len(r.sentences) || len(ends) == 0 {
			return labelled{}, false
		}
		c := ends[g.pick(len(ends))][0]
		q, gap, how = strings.TrimSpace(s[:c])+mark+r.sentences[i+1], s[c:], "the end of a sentence left out before the next"
	default: // a sentence's end
		if len(ends) == 0 {
			return labelled{}, false
		}
		c := ends[g.pick(len(ends))][0]
		q, gap, how = strings.TrimSpace(s[:c])+" "+strings.TrimSpace(mark), s[c:], "the end of a sentence left out"
	}
	if first := elisionSplit.Split(q, 2)[0]; !clean(gap) || words(q) < 6 || words(first) > 0 && words(first) < 5 {
		return labelled{}, false
	}
	return labelled{id: g.citeAs(r), quote: q, claim: g.claimFor(r.topic, q), file: r.file, how: how + fmt.Sprintf(" (%q)", strings.TrimSpace(mark))}, true
}

// drift changes a quote's case, spacing, punctuation, Unicode forms or hyphenation, and
// none of its words.
func (g *generator) drift(q string) (string, string) {
	type op struct {
		name string
		do   func(string) string
	}
	ops := []op{
		{"lower case", strings.ToLower},
		{"first letter lower case", func(s string) string {
			r, n := utf8.DecodeRuneInString(s)
			return string(unicode.ToLower(r)) + s[n:]
		}},
		{"a word in capitals", func(s string) string {
			t := tokens(s)
			i := g.pick(len(t))
			t[i] = strings.ToUpper(t[i])
			return strings.Join(t, " ")
		}},
		{"spaces doubled", func(s string) string { return strings.ReplaceAll(s, " ", "  ") }},
		{"a line break", func(s string) string {
			t := tokens(s)
			if len(t) < 3 {
				return s
			}
			i := 1 + g.pick(len(t)-2)
			return strings.Join(t[:i], " ") + "\n" + strings.Join(t[i:], " ")
		}},
		{"non-breaking spaces plain", func(s string) string { return strings.ReplaceAll(s, "\u00a0", " ") }},
		{"commas dropped", func(s string) string { return textComma.ReplaceAllString(s, "$1") }},
		{"final stop dropped", func(s string) string { return strings.TrimSuffix(s, ".") }},
		{"a space before the stop", func(s string) string {
			if strings.HasSuffix(s, ".") {
				return strings.TrimSuffix(s, ".") + " ."
			}
			return s
		}},
		{"parentheses dropped", strings.NewReplacer("(", "", ")", "").Replace},
		{"dashes as hyphens", strings.NewReplacer("–", "-", "—", "-", "−", "-", "\u2011", "-").Replace},
		{"hyphens as spaces", func(s string) string { return compoundHyphen.ReplaceAllString(s, "$1 $2") }},
		{"straight quotes", strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`).Replace},
		{"curly quotes", strings.NewReplacer("'", "’").Replace},
		{"quoted in curly quotes", func(s string) string { return "“" + s + "”" }},
		{"micro sign as mu", strings.NewReplacer("µ", "μ").Replace},
		{"mu as micro sign", strings.NewReplacer("μ", "µ").Replace},
		{"ligatures", strings.NewReplacer("fi", "ﬁ", "fl", "ﬂ").Replace},
		{"decomposed", norm.NFD.String},
		{"hyphenated at a line break", func(s string) string { return g.hyphenate(s, "-\n") }},
		{"a soft hyphen", func(s string) string { return g.hyphenate(s, "\u00ad") }},
	}
	var names []string
	d := q
	for range 1 + g.pick(3) {
		o := pickOf(g, ops)
		if e := o.do(d); e != d {
			d = e
			names = append(names, o.name)
		}
	}
	return d, strings.Join(names, ", ")
}

// textComma is a comma of the text, not of a number ("1,024").
var textComma = regexp.MustCompile(`,(\D)`)

// compoundHyphen is the hyphen of a compound such as "co-cultured".
var compoundHyphen = regexp.MustCompile(`(\pL)-(\pL)`)

// hyphenate breaks a long word of the quote in two with the mark.
func (g *generator) hyphenate(s, mark string) string {
	t := tokens(s)
	var long []int
	for i, w := range t {
		if utf8.RuneCountInString(w) >= 9 && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 {
			long = append(long, i)
		}
	}
	if len(long) == 0 {
		return s
	}
	i := pickOf(g, long)
	r := []rune(t[i])
	at := 3 + g.pick(len(r)-5)
	t[i] = string(r[:at]) + mark + string(r[at:])
	return strings.Join(t, " ")
}
