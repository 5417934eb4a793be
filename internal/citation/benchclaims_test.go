package citation_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/simulator"
)

// The misquotes real models make most (citation-integrity studies): a claim stated more
// strongly than its source (a hedge dropped, association made causal, a quantifier
// strengthened), a wrong subject (an entity, a species), a number's unit, sign,
// comparator or decimal point changed, and the source's own words lifted out of what
// governs them (a fragment without its hedge or negation, an elision over one, an
// elision joining sentences far apart, a quote of a result that names several sources).

func (g *generator) claimMakers() map[string]maker {
	return map[string]maker{
		simulator.PlantedHedgeDropped: func(g *generator) (labelled, bool) { return g.changed(g.edit(hedgeEdits), "a hedge dropped") },
		simulator.PlantedCausal:       func(g *generator) (labelled, bool) { return g.changed(g.edit(causalEdits), "made causal") },
		simulator.PlantedQuantifier: func(g *generator) (labelled, bool) {
			return g.changed(g.edit(quantifierEdits), "a quantifier strengthened")
		},
		simulator.PlantedEntity:         func(g *generator) (labelled, bool) { return g.changed(g.wordEdit(entityEdits), "an entity swapped") },
		simulator.PlantedSpecies:        func(g *generator) (labelled, bool) { return g.changed(g.wordEdit(speciesEdits), "a species swapped") },
		simulator.PlantedUnit:           func(g *generator) (labelled, bool) { return g.changed(g.edit(unitEdits), "a unit changed") },
		simulator.PlantedSign:           func(g *generator) (labelled, bool) { return g.changed(g.resign(), "a sign or comparator changed") },
		simulator.PlantedDecimal:        func(g *generator) (labelled, bool) { return g.changed(g.shiftDecimal, "a decimal point moved") },
		simulator.PlantedContextDropped: (*generator).contextDropped,
		simulator.PlantedElidedNegation: (*generator).elidedNegation,
		simulator.PlantedElidedDistant:  (*generator).elidedDistant,
		simulator.PlantedUnsplit:        (*generator).unsplit,
	}
}

// wordEdit is edit for whole words.
func (g *generator) wordEdit(table []swap) func(string) (string, string, []string, bool) {
	return func(s string) (string, string, []string, bool) {
		for _, i := range g.rng.Perm(len(table)) {
			e := table[i]
			if wordIn(s, e.from) {
				return replaceWord(s, e.from, e.to), fmt.Sprintf("%q → %q", e.from, e.to), vocabOf(e.from, e.to), true
			}
		}
		return s, "", nil, false
	}
}

// signed is a number with its sign: "−0.52", "-0.02", or one a sign may be put before
// ("r = 0.41", "ratio 0.77").
var signed = regexp.MustCompile(`(^|[ (=])([−-]?)(\d+\.\d+)\b`)

// resign changes a number's sign (two times in three), or turns a comparison around.
func (g *generator) resign() func(string) (string, string, []string, bool) {
	if g.pick(3) == 0 {
		return g.edit(comparatorEdits)
	}
	return func(s string) (string, string, []string, bool) {
		ms := signed.FindAllStringSubmatchIndex(s, -1)
		if len(ms) > 0 {
			m := ms[len(ms)-1]
			sign, num := s[m[4]:m[5]], s[m[6]:m[7]]
			to := "−"
			if sign != "" {
				to = ""
			}
			return s[:m[4]] + to + s[m[5]:], fmt.Sprintf("%s%s → %s%s", sign, num, to, num), []string{sign + num, to + num}, true
		}
		return s, "", nil, false
	}
}

// decimal is a number with a decimal point.
var decimal = regexp.MustCompile(`(^|[ (=−-])(\d+)\.(\d+)\b`)

// shiftDecimal moves or drops a number's decimal point: "2.5" as "25", "0.05" as "0.5".
func (g *generator) shiftDecimal(s string) (string, string, []string, bool) {
	ms := decimal.FindAllStringSubmatchIndex(s, -1)
	if len(ms) == 0 {
		return s, "", nil, false
	}
	m := ms[g.pick(len(ms))]
	whole, frac := s[m[4]:m[5]], s[m[6]:m[7]]
	old := whole + "." + frac
	var to string
	switch {
	case whole != "0" && g.pick(3) > 0:
		to = whole + frac // the point dropped: "2.5" as "25", "1.8-fold" as "18-fold"
	case len(frac) > 1:
		to = whole + frac[:1] + "." + frac[1:] // one place right: "0.05" as "0.5"
	case whole != "0":
		to = whole[:len(whole)-1] + "." + whole[len(whole)-1:] + frac // one place left: "12.4" as "1.24"
	default:
		to = frac // "0.5" as "5"
	}
	to = strings.TrimLeft(to, "0")
	if to == "" || strings.HasPrefix(to, ".") {
		to = "0" + to
	}
	if to == old {
		return s, "", nil, false
	}
	return s[:m[4]] + to + s[m[7]:], fmt.Sprintf("%s → %s", old, to), []string{old, to}, true
}

// contextDropped quotes the clause a passage governs without what governs it: the clause
// after a hedge, an attribution or a negation ("It has been claimed that X" as "X"), or a
// finding without the limit that follows it ("X, but only in Y" as "X").
func (g *generator) contextDropped() (labelled, bool) {
	r := g.record(1)
	s := pickOf(g, r.sentences)
	if g.rare || g.pick(2) == 0 {
		govs := draw(g, governors)
		for _, i := range g.rng.Perm(len(govs)) {
			gov := govs[i]
			at := strings.Index(s, gov+" ")
			if at < 0 {
				continue
			}
			rest := s[at+len(gov)+1:]
			end := len(rest)
			if m := clauseEnd.FindStringIndex(rest); m != nil {
				end = m[0]
			}
			q := strings.TrimRight(rest[:end], ".")
			if words(q) < 5 || len(q) < 30 {
				return labelled{}, false
			}
			l := g.cite(r, q, fmt.Sprintf("the clause after %q", gov))
			l.vocab = vocabOf(gov, "")
			return l, true
		}
		return labelled{}, false
	}
	for _, i := range g.rng.Perm(len(limits)) {
		lim := limits[i]
		at := strings.Index(s, lim)
		if at < 0 {
			continue
		}
		start := 0
		if m := clauseEnd.FindAllStringIndex(s[:at], -1); len(m) > 0 && g.pick(2) == 0 {
			start = m[len(m)-1][1]
		}
		q := s[start:at]
		if words(q) < 5 || len(q) < 30 {
			return labelled{}, false
		}
		l := g.cite(r, q, fmt.Sprintf("without the %q that follows", strings.Trim(lim, ", ")))
		l.vocab = vocabOf(lim, "")
		return l, true
	}
	return labelled{}, false
}

// elidedNegation leaves out, marked, a negation or a hedge and what it leans on: "X did
// not reduce Y" as "X did ... reduce Y", "neither A nor B" as "A ... B".
func (g *generator) elidedNegation() (labelled, bool) {
	r := g.record(1)
	s := pickOf(g, r.sentences)
	mark := pickOf(g, elisionMarks)
	negs := draw(g, negators)
	for _, i := range g.rng.Perm(len(negs)) {
		neg := negs[i]
		at := strings.Index(s, neg)
		if at < 0 || at > 0 && s[at-1] != ' ' && s[at-1] != '(' {
			continue
		}
		before, after := strings.TrimSpace(s[:at]), strings.TrimSpace(s[at+len(neg):])
		q := before + mark + after
		if before == "" {
			q = strings.TrimSpace(mark) + " " + after // "Neither ..." left out at the start
		}
		if words(before) > 12 { // a reader quotes the clause, not the whole sentence
			b := tokens(before)
			before = strings.Join(b[len(b)-6:], " ")
			q = before + mark + after
		}
		if words(q) < 6 || len(q) < 30 {
			return labelled{}, false
		}
		l := g.cite(r, q, fmt.Sprintf("%q elided", strings.TrimSpace(neg)))
		l.vocab = vocabOf(neg, "")
		return l, true
	}
	return labelled{}, false
}

// elidedDistant joins, marked, two passages of sentences that are not next to each other.
func (g *generator) elidedDistant() (labelled, bool) {
	r := g.record(3)
	ss := r.sentences
	i := g.pick(len(ss) - 2)
	j := i + 2 + g.pick(len(ss)-i-2)
	a, b := ss[i], ss[j]
	if g.pick(2) == 0 { // the first clause of the later sentence
		if m := clauseEnd.FindStringIndex(b); m != nil && words(b[:m[0]]) >= 4 {
			b = b[:m[0]]
		}
	}
	q := a + pickOf(g, elisionMarks) + b
	return g.cite(r, q, fmt.Sprintf("sentences %d and %d joined by an elision", i+1, j+1)), true
}

// unsplit quotes a result in prose that names several sources, citing one of them: the
// result does not say which source its sentences are.
func (g *generator) unsplit() (labelled, bool) {
	var mixed []record
	for _, r := range g.f.records {
		if r.mixed {
			mixed = append(mixed, r)
		}
	}
	if len(mixed) == 0 {
		return labelled{}, false
	}
	r := pickOf(g, mixed)
	ss := slices.DeleteFunc(slices.Clone(r.sentences), func(s string) bool { return words(s) < 6 })
	q := pickOf(g, ss)
	return labelled{id: pickOf(g, r.ids), quote: q, claim: g.claimFor(r.topic, q), file: r.file, how: "a sentence of a result naming " + strings.Join(r.ids, " and ")}, true
}
