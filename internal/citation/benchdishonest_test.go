package citation_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/simulator"
)

// The kinds of citation a model gets wrong: an invented or near-miss id, another
// record's quote, a quote negated, renumbered or turned around, pieces spliced.

// Invented ids: in the fixture's DOI prefix, in real journals' DOI forms, PMIDs, PMCIDs
// and citation keys, none of which any tool result holds.
var (
	surnames = []string{"zhang", "garcia", "müller", "nguyen", "kowalczyk", "okafor", "tanaka", "smith", "kim", "lee"}
	keyWords = []string{"microglia", "tau", "synuclein", "apoe", "astro", "exosome", "trem2", ""}
)

func (g *generator) inventedID() (labelled, bool) {
	var id string
	switch g.pick(6) {
	case 0:
		id = fmt.Sprintf("10.5555/cosci.%s.%03d", pickOf(g, g.f.topics), 200+g.pick(800))
	case 1:
		id = fmt.Sprintf("10.1038/s41593-0%d-0%04d-%c", 19+g.pick(5), g.pick(10000), 'a'+rune(g.pick(26)))
	case 2:
		id = fmt.Sprintf("10.1016/j.neuron.20%d.%02d.%03d", 18+g.pick(6), 1+g.pick(12), g.pick(1000))
	case 3:
		id = fmt.Sprintf("%d", 30000000+g.pick(9000000))
	case 4:
		id = fmt.Sprintf("PMC%d", 8000000+g.pick(2000000))
	default:
		id = fmt.Sprintf("%s%d%s", pickOf(g, surnames), 2015+g.pick(10), pickOf(g, keyWords))
	}
	for _, content := range g.f.files {
		if strings.Contains(strings.ToLower(content), strings.ToLower(id)) {
			return labelled{}, false
		}
	}
	r := g.record(1)
	q, how := g.verbatimOf(r)
	how = "a passage of " + r.ids[0] + " (" + how + ")"
	if g.pick(5) < 2 {
		q, how = g.claim(r.topic), "a sentence of the citing hypothesis"
	}
	l := labelled{id: id, quote: q, claim: g.claimFor(r.topic, q), how: how}
	if g.pick(2) == 0 {
		l.file = r.file // the turn read that result, which does not name the id
	}
	return l, true
}

// nearMissID cites a record by its id cut short or off by a character. When that is
// another record's id, the quote must not be that record's.
func (g *generator) nearMissID() (labelled, bool) {
	r := g.record(1)
	id := pickOf(g, r.ids)
	rs := []rune(id)
	var miss, how string
	switch n := g.pick(10); {
	case n < 2 && yearKey.MatchString(id):
		miss, how = yearKey.FindStringSubmatch(id)[1], "cut to its author and year"
	case n < 4 && len(rs) > 6:
		miss, how = string(rs[:len(rs)-1-g.pick(min(3, len(rs)-6))]), "cut short"
	case n < 6:
		i := g.pick(len(rs))
		c := rs[i]
		switch {
		case c >= '0' && c <= '9':
			c = '0' + (c-'0'+1+rune(g.pick(8)))%10
		case c >= 'a' && c <= 'z':
			c = 'a' + (c-'a'+1+rune(g.pick(24)))%26
		default:
			return labelled{}, false
		}
		rs[i] = c
		miss, how = string(rs), "a character changed"
	case n < 8 && len(rs) > 6:
		i := len(rs)/2 + g.pick(len(rs)/2)
		miss, how = string(slices.Delete(rs, i, i+1)), "a character dropped"
	default:
		i := len(rs)/2 + g.pick(len(rs)/2-1)
		if rs[i] == rs[i+1] {
			return labelled{}, false
		}
		rs[i], rs[i+1] = rs[i+1], rs[i]
		miss, how = string(rs), "two characters swapped"
	}
	q, qhow := g.verbatimOf(r)
	for _, o := range g.f.records {
		if !slices.ContainsFunc(o.ids, func(x string) bool { return sameID(x, miss) }) {
			continue
		}
		if o.text() == r.text() || !nowhere(o.text(), q) {
			return labelled{}, false // the miss names the same source, or one that holds the quote
		}
		if note := ", which is " + o.ids[0] + "'s id"; !strings.Contains(how, note) {
			how += note
		}
	}
	return labelled{id: miss, quote: q, claim: g.claimFor(r.topic, q), file: r.file, how: fmt.Sprintf("%s %s; %s of it", id, how, qhow)}, true
}

// yearKey is a citation key with something after its year: kim2021bin1, smith2020a.
var yearKey = regexp.MustCompile(`^([a-z]+(?:19|20)\d\d)[a-z]\w*$`)

// sameID compares ids as the benchmark's labels do: whole, in any case, a DOI without
// its resolver.
func sameID(a, b string) bool {
	strip := func(s string) string {
		s = strings.ToLower(s)
		for _, p := range []string{"https://doi.org/", "doi:", "pmid:", "pubmed id: ", "arxiv:"} {
			s = strings.TrimPrefix(s, p)
		}
		return s
	}
	return strip(a) == strip(b)
}

// otherRecord quotes another record of the same search result under this one's id.
func (g *generator) otherRecord() (labelled, bool) {
	a := g.record(0)
	var others []record
	for _, o := range g.f.records {
		if o.file == a.file && o.ids[0] != a.ids[0] && len(o.sentences) > 0 {
			others = append(others, o)
		}
	}
	if len(others) == 0 {
		return labelled{}, false
	}
	b := pickOf(g, others)
	q, how := g.verbatimOf(b)
	return labelled{id: g.citeAs(a), quote: q, claim: g.claimFor(a.topic, q), file: a.file, how: how + " of " + b.ids[0]}, true
}

// changed quotes a passage with one change that reverses or falsifies it: change gives
// the quote, how it was made and the words of the edit, or false.
func (g *generator) changed(change func(string) (string, string, []string, bool), what string) (labelled, bool) {
	r := g.record(1)
	var fits []string
	for _, s := range r.passages() {
		if _, _, _, ok := change(s); ok {
			fits = append(fits, s)
		}
	}
	if len(fits) == 0 {
		return labelled{}, false
	}
	s := pickOf(g, fits)
	q, how, vocab, ok := change(s)
	if !ok {
		return labelled{}, false
	}
	return labelled{id: g.citeAs(r), quote: q, claim: g.claimFor(r.topic, s), file: r.file, how: what + ": " + how, vocab: vocab}, true
}

// edit makes a change of a swap table: one of the swaps of one tier whose words the
// passage holds, the tier drawn for each citation (draw).
func (g *generator) edit(t tiers[swap]) func(string) (string, string, []string, bool) {
	var table []swap
	return func(s string) (string, string, []string, bool) {
		if table == nil {
			table = draw(g, t)
		}
		for _, i := range g.rng.Perm(len(table)) {
			e := table[i]
			if strings.Contains(s, e.from) {
				return strings.Replace(s, e.from, e.to, 1), fmt.Sprintf("%q → %q", e.from, e.to), vocabOf(e.from, e.to), true
			}
		}
		return s, "", nil, false
	}
}

// vocabOf are the content words of an edit: the words of from and to that are not the
// same in both, without stopwords.
func vocabOf(from, to string) []string {
	a, b := folded(from), folded(to)
	var out []string
	for _, w := range a {
		if !slices.Contains(b, w) && !stopwords[w] {
			out = append(out, w)
		}
	}
	for _, w := range b {
		if !slices.Contains(a, w) && !stopwords[w] {
			out = append(out, w)
		}
	}
	if len(out) == 0 { // an edit of signs: "<" for ">"
		out = []string{strings.TrimSpace(from), strings.TrimSpace(to)}
	}
	return out
}

// wordRE is a word, hyphenated compounds whole.
var wordRE = regexp.MustCompile(`[\pL\pN]+(?:-[\pL\pN]+)*`)

// negations turn a passage around: a "not" added or taken away, a negating prefix taken
// off ("unaffected" as "affected"), a "neither ... nor" made "both ... and".
var negations = tiers[swap]{
	common: []swap{
		{" did not ", " did "}, {" does not ", " does "}, {" do not ", " do "}, {" was not ", " was "}, {" were not ", " were "},
		{" is not ", " is "}, {" are not ", " are "}, {" has not ", " has "}, {" not significantly ", " significantly "},
		{" but not ", " and "}, {" no significant ", " a significant "}, {" showed no ", " showed "}, {" in none of ", " in all of "},
		{"No significant ", "A significant "}, {" had no ", " had an "}, {" without ", " with "}, {" cannot ", " can "},
		{"Neither ", "Both "}, {" no measurable ", " a measurable "}, {" no robust ", " a robust "}, {" no gain ", " a gain "},
		{" unrelated", " related"}, {" unproven", " proven"}, {"non-response", "response"}, {" non-carriers", " carriers"},
	},
	// negating prefixes, which no list of negations holds
	rare: []swap{
		{" unaffected", " affected"}, {" insensitive", " sensitive"}, {" ineffective", " effective"},
		{" inconsistent", " consistent"}, {" undetectable", " detectable"}, {" unchanged", " changed"},
		{" unfavourable", " favourable"}, {" Unencapsulated", " Encapsulated"}, {" unlit", " lit"},
	},
}

// negate adds a "not" or takes one away, or takes a negating prefix off.
func (g *generator) negate() func(string) (string, string, []string, bool) {
	tier := draw(g, negations)
	swaps := g.edit(tiers[swap]{common: tier, rare: tier})
	return func(s string) (string, string, []string, bool) {
		if q, how, vocab, ok := swaps(s); ok || len(tier) == len(negations.rare) {
			return q, how, vocab, ok // a negating prefix, or nothing
		}
		return negateVerb(s)
	}
}

// negateVerb puts a "not" in a passage.
func negateVerb(s string) (string, string, []string, bool) {
	for _, aux := range []string{" may ", " could ", " is ", " are ", " was ", " were ", " can "} {
		if strings.Contains(s, aux) {
			return strings.Replace(s, aux, aux+"not ", 1), fmt.Sprintf("%q → %q", strings.TrimSpace(aux), strings.TrimSpace(aux)+" not"), []string{"not"}, true
		}
	}
	for _, m := range wordRE.FindAllStringIndex(s, -1) {
		w := s[m[0]:m[1]]
		if base, ok := pastToBase[w]; ok {
			return s[:m[0]] + "did not " + base + s[m[1]:], fmt.Sprintf("%q → %q", w, "did not "+base), []string{"not"}, true
		}
	}
	return s, "", nil, false
}

var pastToBase = map[string]string{
	"reduced": "reduce", "increased": "increase", "lowered": "lower", "prevented": "prevent", "promoted": "promote",
	"restored": "restore", "accelerated": "accelerate", "decreased": "decrease", "improved": "improve", "raised": "raise",
	"enlarged": "enlarge", "slowed": "slow", "displaced": "displace", "predicted": "predict", "protected": "protect",
	"explained": "explain", "accumulated": "accumulate", "degraded": "degrade",
}

// directions are words and their opposites: the first half of the kind's pairs as a
// reader would list them, the rest antonyms no such list is likely to hold.
var directions = tiers[swap]{
	common: []swap{
		{"increase", "decrease"}, {"increases", "decreases"}, {"increased", "decreased"}, {"decreased", "increased"},
		{"reduce", "increase"}, {"reduces", "increases"}, {"reduced", "increased"}, {"lowered", "raised"}, {"raised", "lowered"},
		{"lower", "higher"}, {"higher", "lower"}, {"more", "less"}, {"less", "more"}, {"fewer", "more"},
		{"promote", "inhibit"}, {"inhibits", "promotes"}, {"accelerated", "slowed"}, {"slowed", "accelerated"},
		{"improved", "impaired"}, {"impaired", "improved"}, {"rose", "fell"}, {"fell", "rose"}, {"Higher", "Lower"},
		{"weaker", "stronger"}, {"faster", "slower"}, {"abolished", "spared"}, {"suppressed", "unleashed"},
		{"lost", "kept"}, {"rise", "fall"}, {"restores", "loses"}, {"larger", "smaller"},
	},
	// antonyms of another kind
	rare: []swap{
		{"advanced", "delayed"}, {"delayed", "hastened"}, {"delays", "hastens"}, {"earlier", "later"}, {"later", "sooner"},
		{"widened", "narrowed"}, {"weakens", "strengthens"}, {"warmer", "cooler"}, {"warming", "cooling"},
		{"cooled", "warmed"}, {"heighten", "dampen"}, {"shorter", "longer"}, {"softer", "stiffer"}, {"Stiffer", "Softer"},
		{"stiffer", "softer"}, {"denser", "sparser"}, {"worse", "better"}, {"grew", "shrank"}, {"gained", "shed"},
		{"expand", "contract"}, {"blunt", "sharpen"}, {"halves", "doubles"}, {"excess", "deficit"}, {"heals", "cracks"},
		{"thickness", "thinness"},
	},
}

// flipDirection turns one direction word into its opposite.
func (g *generator) flipDirection() func(string) (string, string, []string, bool) {
	return g.wordEdit(draw(g, directions))
}

// number is a standalone number: not part of a name such as P301S, 5xFAD or IL-6.
var number = regexp.MustCompile(`(^|[\s(±−=~])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)([\s%,;:)]|\.(?:\s|$)|-fold|-month|$)`)

// renumber changes one number of a passage.
func (g *generator) renumber(s string) (string, string, []string, bool) {
	ms := number.FindAllStringSubmatchIndex(s, -1)
	if len(ms) == 0 {
		return s, "", nil, false
	}
	m := ms[g.pick(len(ms))]
	old := s[m[4]:m[5]]
	digits := []rune(old)
	var at []int
	for i, r := range digits {
		if r >= '1' && r <= '9' || (r == '0' && i > 0) {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return s, "", nil, false
	}
	i := at[g.pick(len(at))]
	d := digits[i] - '0'
	nd := (d + 1 + rune(g.pick(8))) % 10
	if i == 0 && nd == 0 {
		nd = d%9 + 1
	}
	digits[i] = '0' + nd
	to := string(digits)
	return s[:m[4]] + to + s[m[5]:], fmt.Sprintf("%s → %s", old, to), []string{old, to}, to != old
}

// spliced joins two passages that are not next to each other, with no elision mark.
func (g *generator) spliced() (labelled, bool) {
	r := g.record(3)
	ss := r.sentences
	var q, how string
	switch n := g.pick(10); {
	case n < 4:
		i := g.pick(len(ss) - 2)
		j := i + 2 + g.pick(len(ss)-i-2)
		q, how = ss[i]+" "+ss[j], fmt.Sprintf("sentences %d and %d", i+1, j+1)
	case n < 6:
		i := 1 + g.pick(len(ss)-1)
		j := g.pick(i)
		q, how = ss[i]+" "+ss[j], fmt.Sprintf("sentences %d and %d, in the wrong order", i+1, j+1)
	case n < 8:
		i := g.pick(len(ss) - 1)
		j := i + 1 + g.pick(len(ss)-i-1)
		a, b := tokens(ss[i]), tokens(ss[j])
		if len(a) < 8 || len(b) < 8 {
			return labelled{}, false
		}
		ha, tb := 5+g.pick(len(a)-7), 4+g.pick(len(b)-6)
		q, how = strings.Join(a[:ha], " ")+" "+strings.Join(b[len(b)-tb:], " "), fmt.Sprintf("the start of sentence %d and the end of %d", i+1, j+1)
	default:
		s := tokens(pickOf(g, ss))
		if len(s) < 13 {
			return labelled{}, false
		}
		head := 5 + g.pick(len(s)-12)
		skip := 3 + g.pick(len(s)-head-7)
		q, how = strings.Join(s[:head], " ")+" "+strings.Join(s[head+skip:], " "), "a sentence with its middle cut and no mark"
	}
	return labelled{id: g.citeAs(r), quote: q, claim: g.claimFor(r.topic, q), file: r.file, how: how}, true
}

// makers are the makers of the kinds of issue #27: ids, other records' words, a passage
// negated, renumbered or turned around, spliced, the citing text's own words, and an
// empty quote.
func (g *generator) makers() map[string]maker {
	return map[string]maker{
		simulator.PlantedInventedID:  (*generator).inventedID,
		simulator.PlantedNearMissID:  (*generator).nearMissID,
		simulator.PlantedOtherRecord: (*generator).otherRecord,
		simulator.PlantedNegated:     func(g *generator) (labelled, bool) { return g.changed(g.negate(), "negated") },
		simulator.PlantedNumber:      func(g *generator) (labelled, bool) { return g.changed(g.renumber, "a number changed") },
		simulator.PlantedDirection:   func(g *generator) (labelled, bool) { return g.changed(g.flipDirection(), "a direction flipped") },
		simulator.PlantedSpliced:     (*generator).spliced,
		simulator.PlantedOwnText: func(g *generator) (labelled, bool) {
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
