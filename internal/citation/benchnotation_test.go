package citation_test

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The kinds of #43: numbers written as papers typeset them and as people type them, a
// statistic in brackets left out, and a leading quantifier left out. They are made from a
// fixture of their own (testdata/notation), written apart from the check's lists and the
// main fixture, with a generator of their own (its own seed), so that the main kinds'
// draws are what they were.

// The notation kinds: honest, each a sentence of its record written the other way.
const (
	kindExponentPlain   = "exponent-plain"   // "10⁻⁸", "m⁻²", "10<sup>-8</sup>" quoted as "10^-8", "10-8", "m-2"
	kindExponentTypeset = "exponent-typeset" // "10^-12", "m-2", "10-6 M" quoted as "10⁻¹²", "m⁻²", "10⁻⁶ M"
	kindPlusMinus       = "plus-minus"       // "±" quoted as "+/-", and the other way
	kindTimes           = "times"            // "×" quoted as "x", and the other way
	kindIntervalOrder   = "interval-order"   // a confidence interval with its bounds in the other order
	// dishonest, with the verdict each should get
	kindStatDropped       = "stat-dropped"       // a statistic in brackets left out unmarked: altered
	kindQuantifierDropped = "quantifier-dropped" // a fragment without its leading quantifier: out of context
)

var (
	notationHonest    = []string{kindExponentPlain, kindExponentTypeset, kindPlusMinus, kindTimes, kindIntervalOrder}
	notationDishonest = []string{kindStatDropped, kindQuantifierDropped}
)

// notationTopic is the topic of the notation fixture's records; its claims are these.
const notationTopic = "notation"

var notationClaims = []string{
	"Surface colonisers on new substrates grow at rates set by what reaches them per square metre.",
	"Kilns, starters and reefs alike settle into a steady state within weeks of a change.",
	"Slow leaks and slow weathering are measured best as rates per unit area and time.",
	"The effect of a treatment is seen in some units long before it is seen in all.",
}

// quantifierLeads are what the notation fixture's sentences open with to say how many:
// the common words a list may hold, and partitives and counts of words no list holds.
var quantifierLeads = tiers[string]{
	common: []string{"Most", "Some", "Few", "Many", "Several", "A subset of", "The majority of the"},
	rare: []string{"A handful of", "7 of the 31", "A good share of the", "A large part of the", "The bulk of the",
		"A sliver of the", "9 of the 26", "A scattering of the"},
}

// loadNotation adds the notation fixture's results to the trail and its records to
// f.notation (not to f.records: the main kinds do not draw from them).
func (f *fixture) loadNotation(tb interface {
	Helper()
	Fatalf(string, ...any)
}) {
	tb.Helper()
	names, _ := filepath.Glob(filepath.Join("testdata", "notation", "*.json"))
	if len(names) == 0 {
		tb.Fatalf("no notation fixture")
	}
	for _, path := range names {
		name := filepath.Base(path)
		b := readFile(tb, path)
		f.files[name], f.digests[name] = string(b), digest(b)
		recs, err := parseResult(name, b)
		if err != nil || len(recs) == 0 {
			tb.Fatalf("%s: %v (%d records)", name, err, len(recs))
		}
		for _, r := range recs {
			r.file, r.topic = name, notationTopic
			r.title, r.body = oneLine(r.title), oneLine(r.body)
			r.sentences = splitSentences(r.body)
			f.notation = append(f.notation, r)
		}
	}
	f.claims[notationTopic] = notationClaims
}

// notationGenerator draws the notation kinds, with a seed of its own.
func notationGenerator(f *fixture) *generator {
	return &generator{f: f, rng: rand.New(rand.NewPCG(43, 2026))}
}

func notationMakers() map[string]maker {
	return map[string]maker{
		kindExponentPlain:     func(g *generator) (labelled, bool) { return g.renote(g.plainExponents) },
		kindExponentTypeset:   func(g *generator) (labelled, bool) { return g.renote(g.typesetExponents) },
		kindPlusMinus:         func(g *generator) (labelled, bool) { return g.renote(g.plusMinus) },
		kindTimes:             func(g *generator) (labelled, bool) { return g.renote(g.timesSign) },
		kindIntervalOrder:     func(g *generator) (labelled, bool) { return g.renote(swapBounds) },
		kindStatDropped:       (*generator).statDropped,
		kindQuantifierDropped: (*generator).quantifierDropped,
	}
}

// renote quotes a sentence of a notation record written otherwise by change, or false
// when the sentence drawn does not allow it.
func (g *generator) renote(change func(string) (string, string)) (labelled, bool) {
	r := pickOf(g, g.f.notation)
	s := pickOf(g, r.sentences)
	q, how := change(s)
	if q == s || how == "" {
		return labelled{}, false
	}
	return g.cite(r, q, how), true
}

var (
	superscriptRun = regexp.MustCompile(`[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+`)
	supTagRE       = regexp.MustCompile(`<sup>\s*([-−]?\d+)\s*</sup>`)
	caretPower     = regexp.MustCompile(`\^(-?\d+)`)
	tenHyphen      = regexp.MustCompile(`\b10-(\d+)\b`)
	unitHyphen     = regexp.MustCompile(`\b([a-z]{1,3})-(\d)\b`)
	timesSpaced    = regexp.MustCompile(`(\d) × (\d)`)
	xSpaced        = regexp.MustCompile(`(\d) x (\d)`)
	intervalTo     = regexp.MustCompile(`CI (-?[\d.]+) to (-?[\d.]+)`)
	bracketAside   = regexp.MustCompile(` \([^()]*\d[^()]*\)`)
)

var toSuperscript = strings.NewReplacer("-", "⁻", "0", "⁰", "1", "¹", "2", "²", "3", "³", "4", "⁴", "5", "⁵", "6", "⁶",
	"7", "⁷", "8", "⁸", "9", "⁹")

var fromSuperscript = strings.NewReplacer("⁻", "-", "⁺", "+", "⁰", "0", "¹", "1", "²", "2", "³", "3", "⁴", "4", "⁵", "5",
	"⁶", "6", "⁷", "7", "⁸", "8", "⁹", "9")

// plainExponents writes a typeset sentence's exponents (superscripts and <sup> tags) in
// plain text: after a caret, or a negative one with a hyphen, as people type them.
func (g *generator) plainExponents(s string) (string, string) {
	hyphen := g.pick(2) == 0
	plain := func(exp string) string {
		if hyphen && strings.HasPrefix(exp, "-") {
			return exp
		}
		return "^" + exp
	}
	out := supTagRE.ReplaceAllStringFunc(s, func(m string) string {
		return plain(strings.ReplaceAll(supTagRE.FindStringSubmatch(m)[1], "−", "-"))
	})
	out = superscriptRun.ReplaceAllStringFunc(out, func(m string) string { return plain(fromSuperscript.Replace(m)) })
	if out == s {
		return s, ""
	}
	if g.pick(2) == 0 {
		out = timesSpaced.ReplaceAllString(out, "$1 x $2")
	}
	if hyphen {
		return out, "exponents typed with a hyphen or a caret"
	}
	return out, "exponents typed with a caret"
}

// typesetExponents writes a plain sentence's exponents ("^-12", "10-6", "m-2") as
// superscripts, as a quote copied from the typeset paper has them.
func (g *generator) typesetExponents(s string) (string, string) {
	out := caretPower.ReplaceAllStringFunc(s, func(m string) string { return toSuperscript.Replace(m[1:]) })
	out = tenHyphen.ReplaceAllStringFunc(out, func(m string) string { return "10" + toSuperscript.Replace(m[2:]) })
	out = unitHyphen.ReplaceAllStringFunc(out, func(m string) string {
		sub := unitHyphen.FindStringSubmatch(m)
		return sub[1] + toSuperscript.Replace("-"+sub[2])
	})
	if out == s {
		return s, ""
	}
	if g.pick(2) == 0 {
		out = xSpaced.ReplaceAllString(out, "$1 × $2")
	}
	return out, "exponents as superscripts"
}

// plusMinus writes "±" as "+/-", or "+/-" as "±".
func (g *generator) plusMinus(s string) (string, string) {
	switch {
	case strings.Contains(s, "±"):
		return strings.ReplaceAll(s, "±", pickOf(g, []string{"+/-", "+/−"})), "± typed +/-"
	case strings.Contains(s, "+/-"):
		return strings.ReplaceAll(s, "+/-", "±"), "+/- as ±"
	}
	return s, ""
}

// timesSign writes "×" as "x", or "x" between numbers as "×".
func (g *generator) timesSign(s string) (string, string) {
	if out := timesSpaced.ReplaceAllString(s, pickOf(g, []string{"$1 x $2", "${1}x$2"})); out != s {
		return out, "× typed x"
	}
	if out := xSpaced.ReplaceAllString(s, "$1 × $2"); out != s {
		return out, "x as ×"
	}
	return s, ""
}

// swapBounds writes a confidence interval with its upper bound first.
func swapBounds(s string) (string, string) {
	out := intervalTo.ReplaceAllString(s, "CI $2 to $1")
	if out == s {
		return s, ""
	}
	return out, "the interval's bounds in the other order"
}

// statDropped quotes a sentence without a statistic in brackets within it (not at its
// end: a quote that stops before a closing statistic leaves nothing out of what it says).
func (g *generator) statDropped() (labelled, bool) {
	r := pickOf(g, g.f.notation)
	s := pickOf(g, r.sentences)
	var mid [][]int
	for _, m := range bracketAside.FindAllStringIndex(s, -1) {
		if rest := strings.TrimSpace(s[m[1]:]); len(rest) > 1 {
			mid = append(mid, m)
		}
	}
	if len(mid) == 0 {
		return labelled{}, false
	}
	m := pickOf(g, mid)
	q := s[:m[0]] + s[m[1]:]
	l := g.cite(r, q, "the statistic "+strings.TrimSpace(s[m[0]:m[1]])+" left out")
	return l, true
}

// quantifierDropped quotes a sentence from after the quantifier it opens with.
func (g *generator) quantifierDropped() (labelled, bool) {
	r := pickOf(g, g.f.notation)
	s := pickOf(g, r.sentences)
	lead := slices.IndexFunc(draw(g, quantifierLeads), func(q string) bool { return strings.HasPrefix(s, q+" ") })
	if lead < 0 {
		return labelled{}, false
	}
	phrase := draw(g, quantifierLeads)[lead]
	q := s[len(phrase)+1:]
	if g.pick(2) == 0 {
		q = strings.TrimSuffix(q, ".")
	}
	l := g.cite(r, q, "without its leading "+strconv.Quote(phrase))
	for _, w := range folded(phrase) {
		if !stopwords[w] {
			l.vocab = append(l.vocab, w)
		}
	}
	return l, true
}

// renotated is a text as this benchmark reads numbers, apart from the check: exponents
// after a caret (superscripts, <sup> tags, a hyphen after 10 or a short word), "±" for
// "+/-", "×" between numbers, an interval's bounds in ascending order, spaces collapsed.
func renotated(s string) string {
	s = strings.ReplaceAll(s, "−", "-")
	s = supTagRE.ReplaceAllString(s, "^$1")
	s = superscriptRun.ReplaceAllStringFunc(s, func(m string) string { return "^" + fromSuperscript.Replace(m) })
	s = strings.ReplaceAll(s, "+/-", "±")
	s = regexp.MustCompile(`(\d) ?[x×] ?(\d)`).ReplaceAllString(s, "$1×$2")
	s = tenHyphen.ReplaceAllString(s, "10^-$1")
	s = unitHyphen.ReplaceAllString(s, "$1^-$2")
	s = intervalTo.ReplaceAllStringFunc(s, func(m string) string {
		sub := intervalTo.FindStringSubmatch(m)
		a, _ := strconv.ParseFloat(sub[1], 64)
		b, _ := strconv.ParseFloat(sub[2], 64)
		if a > b {
			return "CI " + sub[2] + " to " + sub[1]
		}
		return m
	})
	return oneLine(s)
}

// validNotation checks a notation kind's citation against its record, by this
// benchmark's reading: written otherwise, the same numbers; a statistic left out; a
// quantifier left out.
func validNotation(kind string, rec *record, q string) bool {
	text := rec.text()
	switch kind {
	case kindStatDropped:
		if strings.Contains(text, q) {
			return false
		}
		for _, m := range bracketAside.FindAllStringIndex(text, -1) {
			if strings.Contains(text[:m[0]]+text[m[1]:], q) {
				return true
			}
		}
		return false
	case kindQuantifierDropped:
		for _, s := range rec.sentences {
			for _, lead := range slices.Concat(quantifierLeads.common, quantifierLeads.rare) {
				if strings.HasPrefix(s, lead+" "+q) {
					return true
				}
			}
		}
		return false
	}
	return !strings.Contains(oneLine(text), oneLine(q)) && strings.Contains(renotated(text), renotated(q))
}

func readFile(tb interface {
	Helper()
	Fatalf(string, ...any)
}, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return b
}

// digest is the digest the audit trail would give a result.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
