package citation_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
	"golang.org/x/text/unicode/norm"
)

// How the benchmark makes citations: the generator, and the kinds an honest model
// writes (verbatim, drifted, elided, cited for another claim, its own text).

// labelled is one citation of the benchmark: what the model wrote and what it is.
type labelled struct {
	kind  string
	id    string // as the model cites it
	quote string // as the model writes it, before the parser
	claim string
	file  string // the tool result the turn read it from; "" for none
	how   string // how it was made, for the sample
}

// maker makes one citation of a kind, or false when the draw does not allow it.
type maker func(g *generator) (labelled, bool)

type generator struct {
	f   *fixture
	rng *rand.Rand
}

func (g *generator) pick(n int) int { return g.rng.IntN(n) }

func pickOf[T any](g *generator, xs []T) T { return xs[g.pick(len(xs))] }

// record is a record of the fixture with at least that many sentences in its body.
func (g *generator) record(minSentences int) record {
	for {
		r := pickOf(g, g.f.records)
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
		return "PMID:" + id
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

// verbatimOf is a passage of the record word for word: a sentence, a clause of one, two
// sentences in a row, or the title.
func (g *generator) verbatimOf(r record) (string, string) {
	ps := r.passages()
	switch n := g.pick(10); {
	case n < 5 || len(r.sentences) == 0:
		return pickOf(g, ps), "a sentence"
	case n < 8:
		s := tokens(pickOf(g, r.sentences))
		if len(s) < 8 {
			return strings.Join(s, " "), "a sentence"
		}
		k := 6 + g.pick(len(s)-6)
		at := g.pick(len(s) - k + 1)
		run := s[at : at+k]
		if last := run[len(run)-1]; strings.Count(last, "(") > strings.Count(last, ")") {
			run = run[:len(run)-1] // not "… by 51.5% (n"
		}
		return strings.Join(run, " "), "a clause"
	case len(r.sentences) >= 2:
		i := g.pick(len(r.sentences) - 1)
		return r.sentences[i] + " " + r.sentences[i+1], "two sentences in a row"
	}
	return r.title, "the title"
}

func (g *generator) makers() map[string]maker {
	return map[string]maker{
		research.PlantedVerbatim: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q, how := g.verbatimOf(r)
			return labelled{id: g.citeAs(r), quote: q, claim: g.claimFor(r.topic, q), file: r.file, how: how}, true
		},
		research.PlantedDrift: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q, how := g.verbatimOf(r)
			d, ops := g.drift(q)
			return labelled{id: g.citeAs(r), quote: d, claim: g.claimFor(r.topic, q), file: r.file, how: how + ", " + ops}, d != q
		},
		research.PlantedElided: (*generator).elided,
		research.PlantedIrrelevant: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q, how := g.verbatimOf(r)
			return labelled{id: g.citeAs(r), quote: q, claim: g.unrelatedClaim(r.topic, q), file: r.file, how: how + ", for a claim of another topic"}, true
		},
		research.PlantedInventedID:  (*generator).inventedID,
		research.PlantedNearMissID:  (*generator).nearMissID,
		research.PlantedOtherRecord: (*generator).otherRecord,
		research.PlantedNegated:     func(g *generator) (labelled, bool) { return g.changed(negate, "negated") },
		research.PlantedNumber:      func(g *generator) (labelled, bool) { return g.changed(g.renumber, "a number changed") },
		research.PlantedDirection:   func(g *generator) (labelled, bool) { return g.changed(flipDirection, "a direction flipped") },
		research.PlantedSpliced:     (*generator).spliced,
		research.PlantedOwnText: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q := g.claim(r.topic)
			c := q
			if g.pick(2) == 0 {
				c = g.claim(r.topic)
			}
			return labelled{id: g.citeAs(r), quote: q, claim: c, file: r.file, how: "a sentence of the citing hypothesis"}, true
		},
		kindEmpty: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q := pickOf(g, []string{"", " ", "\t", "…", "...", "[1]", "ibid.", "Fig. 2B", "n = 14", "p < 0.05", "42%", "tau", "TREM2", "BIN1", "see text"})
			if g.pick(3) == 0 {
				// a word or two of the source
				s := tokens(pickOf(g, r.passages()))
				at := g.pick(len(s))
				q = strings.Join(s[at:min(len(s), at+1+g.pick(2))], " ")
			}
			return labelled{id: g.citeAs(r), quote: q, claim: g.claim(r.topic), file: r.file, how: "empty or very short"}, utf8.RuneCountInString(q) <= 10
		},
	}
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
		{"commas dropped", func(s string) string { return strings.ReplaceAll(s, ",", "") }},
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

var elisionMarks = []string{" ... ", " … ", "…", " [...] ", " […] ", "... "}

// elided leaves a middle out of a passage, marking it: within a sentence, between two
// sentences, or at either end.
func (g *generator) elided() (labelled, bool) {
	r := g.record(1)
	mark := pickOf(g, elisionMarks)
	var q, how string
	switch n := g.pick(10); {
	case n < 5:
		s := tokens(pickOf(g, r.sentences))
		if len(s) < 12 {
			return labelled{}, false
		}
		head := 4 + g.pick(len(s)-11)
		skip := 2 + g.pick(len(s)-head-5)
		q, how = strings.Join(s[:head], " ")+mark+strings.Join(s[head+skip:], " "), "a middle of a sentence left out"
	case n < 8:
		if len(r.sentences) < 3 {
			return labelled{}, false
		}
		i := g.pick(len(r.sentences) - 2)
		j := i + 2 + g.pick(len(r.sentences)-i-2)
		q, how = r.sentences[i]+mark+r.sentences[j], "the sentences between two left out"
	default:
		s := tokens(pickOf(g, r.sentences))
		if len(s) < 9 {
			return labelled{}, false
		}
		k := 6 + g.pick(len(s)-8)
		if g.pick(2) == 0 {
			q, how = strings.TrimSpace(mark)+" "+strings.Join(s[len(s)-k:], " "), "the start of a sentence left out"
		} else {
			q, how = strings.Join(s[:k], " ")+" "+strings.TrimSpace(mark), "the end of a sentence left out"
		}
	}
	return labelled{id: g.citeAs(r), quote: q, claim: g.claimFor(r.topic, q), file: r.file, how: how + fmt.Sprintf(" (%q)", strings.TrimSpace(mark))}, true
}
