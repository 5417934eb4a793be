package citation_test

// The citation benchmark: labelled citations of real-shaped tool results, made by the
// ways models really get citations wrong (and the ways honest ones are written
// otherwise), each run through Check. Run it with
//
//	go test ./internal/citation -run 'TestCitation' -v
//
// and, to read what it makes, -citation.sample N prints N citations of each kind.

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
)

var sample = flag.Int("citation.sample", 0, "print this many labelled citations of each kind")

// kindEmpty is the benchmark's own kind: an empty or very short quote, which the parser
// refuses before any check sees it.
const kindEmpty = "empty"

// honestKinds must not be flagged; dishonestKinds must be penalised. An irrelevant quote
// is verbatim: the check verifies it, and the review's support judgement is what
// catches it.
var (
	honestKinds = []string{
		simulator.PlantedVerbatim, simulator.PlantedDrift, simulator.PlantedSpelling, simulator.PlantedGreek,
		simulator.PlantedNumberWords, simulator.PlantedNotation, simulator.PlantedFragment, simulator.PlantedElided,
		simulator.PlantedIrrelevant, kindExponentPlain, kindExponentTypeset, kindPlusMinus, kindTimes, kindIntervalOrder,
	}
	dishonestKinds = []string{
		simulator.PlantedInventedID, simulator.PlantedNearMissID, simulator.PlantedOtherRecord,
		simulator.PlantedNegated, simulator.PlantedNumber, simulator.PlantedDirection, simulator.PlantedSpliced,
		simulator.PlantedOwnText, simulator.PlantedHedgeDropped, simulator.PlantedCausal, simulator.PlantedQuantifier,
		simulator.PlantedEntity, simulator.PlantedSpecies, simulator.PlantedUnit, simulator.PlantedSign,
		simulator.PlantedDecimal, simulator.PlantedContextDropped, simulator.PlantedElidedNegation,
		simulator.PlantedElidedDistant, simulator.PlantedUnsplit, kindEmpty, kindStatDropped, kindQuantifierDropped,
	}
	benchKinds = slices.Concat(honestKinds, dishonestKinds)
	// vocabKinds are the dishonest kinds made by an edit of words: at least half of each
	// one's edits are of words the check's lists do not hold (TestCitationVocabulary).
	// The others' edits are of ids, of structure (a splice, an elision's span, a result
	// that names several sources) or of the citing text's own words.
	vocabKinds = []string{
		simulator.PlantedNegated, simulator.PlantedNumber, simulator.PlantedDirection, simulator.PlantedHedgeDropped,
		simulator.PlantedCausal, simulator.PlantedQuantifier, simulator.PlantedEntity, simulator.PlantedSpecies,
		simulator.PlantedUnit, simulator.PlantedSign, simulator.PlantedDecimal, simulator.PlantedContextDropped,
		simulator.PlantedElidedNegation, kindQuantifierDropped,
	}
)

// perKind is how many citations of each kind the benchmark makes.
const perKind = 40

// Targets: every dishonest kind penalised at least minPenalised of the time; every honest
// kind flagged at most maxHonestFlagged of the time, and never contradicted or out of
// context (a verdict that accuses an honest quote).
const (
	minPenalised     = 0.95
	maxHonestFlagged = 0.02
)

func dishonest(kind string) bool { return slices.Contains(dishonestKinds, kind) }

// expectation is the verdict a dishonest kind's citations should get (any of verdicts:
// the check's word for what is wrong with them), and the least share of them that must
// get it: a penalty alone does not say the check read the kind right (with the overstated
// rule off, a quote without its hedge is still penalised, as altered).
type expectation struct {
	verdicts []string
	share    float64
}

// expected holds each dishonest kind to its verdict. Most kinds are held to 90% or 95%
// of it. Direction, causal, quantifier and unit edits are drawn three times in five
// from words no list of the check's holds (tiers), which the check can read only as a
// content word changed, altered: their own verdict is held to 30% (about the common
// tier's two in five, with room for a common word the check reads otherwise).
var expected = map[string]expectation{
	simulator.PlantedInventedID:     {[]string{research.CitationInvented}, 0.95},
	simulator.PlantedNearMissID:     {[]string{research.CitationInvented, research.CitationUnsupported}, 0.95},
	simulator.PlantedOtherRecord:    {[]string{research.CitationUnsupported}, 0.95},
	simulator.PlantedNegated:        {[]string{research.CitationContradicted}, 0.9},
	simulator.PlantedNumber:         {[]string{research.CitationContradicted}, 0.95},
	simulator.PlantedDirection:      {[]string{research.CitationContradicted}, 0.3},
	simulator.PlantedSpliced:        {[]string{research.CitationUnsupported}, 0.9},
	simulator.PlantedOwnText:        {[]string{research.CitationUnsupported}, 0.9},
	simulator.PlantedHedgeDropped:   {[]string{research.CitationOverstated}, 0.9},
	simulator.PlantedCausal:         {[]string{research.CitationOverstated}, 0.3},
	simulator.PlantedQuantifier:     {[]string{research.CitationOverstated, research.CitationOutOfContext}, 0.3},
	simulator.PlantedEntity:         {[]string{research.CitationAltered, research.CitationContradicted}, 0.95},
	simulator.PlantedSpecies:        {[]string{research.CitationAltered}, 0.95},
	simulator.PlantedUnit:           {[]string{research.CitationContradicted}, 0.3},
	simulator.PlantedSign:           {[]string{research.CitationContradicted}, 0.95},
	simulator.PlantedDecimal:        {[]string{research.CitationContradicted}, 0.95},
	simulator.PlantedContextDropped: {[]string{research.CitationOutOfContext, research.CitationContradicted}, 0.95},
	simulator.PlantedElidedNegation: {[]string{research.CitationOutOfContext, research.CitationContradicted}, 0.95},
	simulator.PlantedElidedDistant:  {[]string{research.CitationUnsupported}, 0.95},
	simulator.PlantedUnsplit:        {[]string{research.CitationUnsupported}, 0.95},
	kindEmpty:                       {[]string{"refused"}, 0.95},
	kindStatDropped:                 {[]string{research.CitationAltered}, 0.95},
	kindQuantifierDropped:           {[]string{research.CitationOutOfContext}, 0.95},
}

// share is how many of a kind's citations got one of its expected verdicts.
func (e expectation) got(tl *tally) int {
	n := 0
	for _, v := range e.verdicts {
		n += tl.verdicts[v]
	}
	return n
}

// valid checks a labelled citation against what its kind promises, with this benchmark's
// own reading of the records (benchlabels_test.go): an honest quote is in its record as
// its kind says; a dishonest one is made as its kind says.
func (f *fixture) valid(l labelled) error {
	var rec *record
	for _, list := range [][]record{f.records, f.notation} {
		for i := range list {
			r := &list[i]
			if r.file == l.file && slices.ContainsFunc(r.ids, func(x string) bool { return sameID(x, l.id) }) {
				rec = r
			}
		}
	}
	q := l.quote
	if l.kind != kindEmpty && (utf8.RuneCountInString(strings.TrimSpace(q)) < 30 || words(q) < 5 || utf8.RuneCountInString(q) > prompt.MaxQuoteLength) {
		return fmt.Errorf("a quote of %d characters and %d words", utf8.RuneCountInString(q), words(q))
	}
	if rec == nil && l.kind != simulator.PlantedInventedID && l.kind != simulator.PlantedNearMissID && l.kind != kindEmpty {
		return fmt.Errorf("%s names no record of %s", l.id, l.file)
	}
	if rec != nil && rec.mixed != (l.kind == simulator.PlantedUnsplit) {
		return fmt.Errorf("a %s citation of a record that names several sources: %v", l.kind, rec.mixed)
	}
	text := func() string { return rec.text() }
	switch l.kind {
	case simulator.PlantedVerbatim, simulator.PlantedIrrelevant, simulator.PlantedFragment, simulator.PlantedContextDropped, simulator.PlantedUnsplit:
		if !strings.Contains(text(), q) {
			return fmt.Errorf("not word for word in its record")
		}
	case simulator.PlantedDrift:
		if !within(text(), q) || strings.Contains(text(), q) {
			return fmt.Errorf("not a drifted passage of its record")
		}
	case simulator.PlantedSpelling, simulator.PlantedGreek, simulator.PlantedNumberWords, simulator.PlantedNotation:
		if within(text(), q) || !within(rewritten(text()), rewritten(q)) {
			return fmt.Errorf("not a passage of its record written otherwise")
		}
	case simulator.PlantedElided, simulator.PlantedElidedNegation, simulator.PlantedElidedDistant:
		if !ellipsis.MatchString(q) || !elidedWithin(text(), q) {
			return fmt.Errorf("not an elided passage of its record")
		}
	case simulator.PlantedInventedID:
		for _, r := range f.records {
			if slices.ContainsFunc(r.ids, func(x string) bool { return sameID(x, l.id) }) {
				return fmt.Errorf("%s is %s's id", l.id, r.file)
			}
		}
	case simulator.PlantedNearMissID:
		if rec != nil && !nowhere(rec.text(), q) {
			return fmt.Errorf("%s names a record that holds the quote", l.id)
		}
	case simulator.PlantedSign, simulator.PlantedDecimal:
		// a sign, a comparator or a decimal point is no letter or digit: the quote
		// differs from every passage of its record in the characters it writes
		if strings.Contains(oneLine(text()), oneLine(q)) {
			return fmt.Errorf("its record holds the quote")
		}
	case simulator.PlantedOtherRecord, simulator.PlantedNegated, simulator.PlantedNumber, simulator.PlantedDirection,
		simulator.PlantedSpliced, simulator.PlantedOwnText, simulator.PlantedHedgeDropped, simulator.PlantedCausal,
		simulator.PlantedQuantifier, simulator.PlantedEntity, simulator.PlantedSpecies, simulator.PlantedUnit:
		if !nowhere(text(), q) {
			return fmt.Errorf("its record holds the quote")
		}
		if l.kind == simulator.PlantedOwnText {
			for _, r := range f.records {
				if !nowhere(r.text(), q) {
					return fmt.Errorf("%s holds the hypothesis' sentence", r.ids[0])
				}
			}
		}
		if l.kind == simulator.PlantedSpliced && ellipsis.MatchString(q) {
			return fmt.Errorf("a splice with an elision mark")
		}
	case kindExponentPlain, kindExponentTypeset, kindPlusMinus, kindTimes, kindIntervalOrder, kindStatDropped, kindQuantifierDropped:
		if rec.topic != notationTopic || !validNotation(l.kind, rec, q) {
			return fmt.Errorf("not a %s quote of its record", l.kind)
		}
	case kindEmpty:
		if utf8.RuneCountInString(q) > 10 {
			return fmt.Errorf("a quote of %d characters is not very short", utf8.RuneCountInString(q))
		}
	default:
		return fmt.Errorf("unknown kind")
	}
	return nil
}

// generate makes perKind citations of every kind, the same every run.
func generate(tb testing.TB, f *fixture) []labelled {
	tb.Helper()
	g := &generator{f: f, rng: rand.New(rand.NewPCG(37, 2026))}
	makers := g.makers()
	maps.Copy(makers, g.honestMakers())
	maps.Copy(makers, g.claimMakers())
	maps.Copy(makers, notationMakers())
	gn := notationGenerator(f) // the notation kinds draw with a seed of their own
	var out []labelled
	for _, kind := range benchKinds {
		g := g
		if slices.Contains(notationHonest, kind) || slices.Contains(notationDishonest, kind) {
			g = gn
		}
		n := 0
		for tries := 0; n < perKind && tries < 200*perKind; tries++ {
			g.rare = n%5 < 3
			l, ok := makers[kind](g)
			if !ok {
				continue
			}
			l.kind = kind
			if err := f.valid(l); err != nil {
				continue // the draw did not make what the kind promises; draw again
			}
			out = append(out, l)
			n++
		}
		if n < perKind {
			tb.Fatalf("made %d citations of kind %s; want %d", n, kind, perKind)
		}
	}
	return out
}

// parse reads a citation as the parser reads a model's answer: the reference as the
// session stores it, or the parser's refusal.
func parse(l labelled) (research.Reference, error) {
	raw, err := json.Marshal(map[string]any{
		"title": "A hypothesis", "statement": l.claim, "rationale": l.claim, "testable_predictions": []string{"a prediction"},
		"references": []map[string]string{{"id": l.id, "quote": l.quote, "claim": l.claim}},
	})
	if err != nil {
		return research.Reference{}, err
	}
	h, err := prompt.ParseHypothesis(raw)
	if err != nil {
		return research.Reference{}, err
	}
	if len(h.References) != 1 {
		return research.Reference{}, fmt.Errorf("the parser kept %d references", len(h.References))
	}
	return h.References[0], nil
}

// reference is the citation as reflection checks it: parsed and tied to the result the
// turn read. Its truth, the kind it was made as, stays in the label (l.kind).
func (f *fixture) reference(tb testing.TB, l labelled) research.Reference {
	tb.Helper()
	ref, err := parse(l)
	if err != nil {
		tb.Fatalf("the parser refused a %s citation (%s, %q): %v", l.kind, l.id, l.quote, err)
	}
	if ref.Claim == "" {
		ref.Claim = l.claim
	}
	if l.file != "" {
		ref.Source = f.digests[l.file]
	}
	return ref
}

// tally is what the check made of one kind's citations.
type tally struct {
	n, flagged, penalised int
	verdicts              map[string]int
	misses                []string
}

// score runs every labelled citation through Check (an empty one through the parser)
// and tallies each kind.
func (f *fixture) score(tb testing.TB, ls []labelled) map[string]*tally {
	trail := f.trail()
	tallies := map[string]*tally{}
	for _, l := range ls {
		tl := tallies[l.kind]
		if tl == nil {
			tl = &tally{verdicts: map[string]int{}}
			tallies[l.kind] = tl
		}
		tl.n++
		if l.kind == kindEmpty {
			if _, err := parse(l); err != nil {
				tl.flagged++
				tl.penalised++
				tl.verdicts["refused"]++
			} else {
				tl.misses = append(tl.misses, fmt.Sprintf("the parser accepted %q", l.quote))
			}
			continue
		}
		ref := f.reference(tb, l)
		c := citation.Check([]research.Reference{ref}, trail)[0].Check
		tl.verdicts[c.Verdict]++
		flagged, penalised := c.Verdict != research.CitationVerified, c.Penalised()
		if flagged {
			tl.flagged++
		}
		if penalised {
			tl.penalised++
		}
		bad := dishonest(l.kind) && !penalised || !dishonest(l.kind) && flagged
		if bad {
			tl.misses = append(tl.misses, fmt.Sprintf("%s (%s): id %q from %s, quote %q: %s [%s]", c.Verdict, l.how, l.id, l.file, ref.Quote, c.Note, c.Passage))
		}
	}
	return tallies
}

// missed are the targets a scoring misses, each with examples.
func missed(tallies map[string]*tally) []string {
	var out []string
	for _, kind := range benchKinds {
		tl := tallies[kind]
		var miss string
		switch {
		case dishonest(kind) && float64(tl.penalised) < minPenalised*float64(tl.n):
			miss = fmt.Sprintf("%s: %d of %d penalised; target ≥ %.0f%%", kind, tl.penalised, tl.n, 100*minPenalised)
		case !dishonest(kind) && float64(tl.flagged) > maxHonestFlagged*float64(tl.n):
			miss = fmt.Sprintf("%s: %d of %d flagged; target ≤ %.0f%%", kind, tl.flagged, tl.n, 100*maxHonestFlagged)
		case dishonest(kind) && float64(expected[kind].got(tl)) < expected[kind].share*float64(tl.n):
			e := expected[kind]
			miss = fmt.Sprintf("%s: %d of %d %s; target ≥ %.0f%%", kind, e.got(tl), tl.n, strings.Join(e.verdicts, " or "), 100*e.share)
		case !dishonest(kind) && tl.verdicts[research.CitationContradicted]+tl.verdicts[research.CitationOutOfContext] > 0:
			miss = fmt.Sprintf("%s: %d contradicted or out of context; target none", kind, tl.verdicts[research.CitationContradicted]+tl.verdicts[research.CitationOutOfContext])
		default:
			continue
		}
		out = append(out, miss+". For example:\n\t"+strings.Join(tl.misses[:min(3, len(tl.misses))], "\n\t"))
	}
	return out
}

// table is the per-kind table BENCHMARKS.md shows.
func table(tallies map[string]*tally) string {
	verdicts := research.CitationVerdicts
	var b strings.Builder
	fmt.Fprintf(&b, "\n| kind | n | flagged | penalised | target | %s |\n|---|---:|---:|---:|---|%s\n", strings.Join(verdicts, " | "), strings.Repeat("---:|", len(verdicts)))
	for _, kind := range benchKinds {
		tl := tallies[kind]
		target := fmt.Sprintf("flagged ≤ %.0f%%", 100*maxHonestFlagged)
		if e := expected[kind]; dishonest(kind) {
			target = fmt.Sprintf("penalised ≥ %.0f%%; %s ≥ %.0f%%", 100*minPenalised, strings.Join(e.verdicts, " or "), 100*e.share)
		}
		cells := make([]string, len(verdicts))
		for i, v := range verdicts {
			cells[i] = fmt.Sprint(tl.verdicts[v])
		}
		if kind == kindEmpty {
			cells = append([]string{fmt.Sprintf("refused by the parser: %d of %d", tl.verdicts["refused"], tl.n)}, make([]string, len(verdicts)-1)...)
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f%% | %.0f%% | %s | %s |\n", kind, tl.n, pct(tl.flagged, tl.n), pct(tl.penalised, tl.n), target, strings.Join(cells, " | "))
	}
	return b.String()
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// TestCitationKinds runs every labelled citation through Check and holds each kind to
// its target: the test fails when one is missed.
func TestCitationKinds(t *testing.T) {
	f := loadFixture(t)
	ls := generate(t, f)
	printed := map[string]int{}
	for _, l := range ls {
		if *sample > printed[l.kind] {
			printed[l.kind]++
			t.Logf("sample %s (%s): id %q, from %q\n\tquote %q\n\tclaim %q", l.kind, l.how, l.id, l.file, l.quote, l.claim)
		}
	}
	tallies := f.score(t, ls)
	for _, m := range missed(tallies) {
		t.Error(m)
	}
	t.Log(table(tallies))
}

// TestCitationMutants runs the benchmark against weakened checks, each missing one thing
// a careful reader does, and fails if any of them meets every target: a benchmark that a
// weaker check passes measures its fixture, not the check.
func TestCitationMutants(t *testing.T) {
	f := loadFixture(t)
	ls := generate(t, f)
	for _, m := range citation.Mutants {
		restore := citation.Weaken(m)
		misses := missed(f.score(t, ls))
		restore()
		if len(misses) == 0 {
			t.Errorf("the %s check meets every target: the benchmark does not notice it", m)
			continue
		}
		var kinds []string
		for _, miss := range misses {
			k, _, _ := strings.Cut(miss, ":")
			kinds = append(kinds, k)
		}
		t.Logf("the %s check misses %d targets: %s", m, len(misses), strings.Join(kinds, ", "))
	}
}

// inCheckLists are the words of the benchmark's edits that the check's lists hold, by
// reading words.go (and the comparators of quote.go): the truth TestCitationVocabulary
// counts by, written by hand so that it does not come from the code under test. Each
// word is under the list that holds it; a word of the edits not here is in none.
var inCheckLists = setOf(
	// negations
	"not", "no", "none", "cannot",
	// hedges
	"may", "might", "could", "suggest", "suggests", "speculate", "proposed", "thought", "believed", "tentatively",
	// limitations; attributions
	"partly", "reported", "widely",
	// associations; causes
	"associated", "correlated", "linked", "cause", "caused", "causes", "drove",
	// boosters and factives
	"all", "prove", "show", "shows", "indicate",
	// quantifiers
	"few", "some", "several", "subset", "many", "most", "majority",
	// directions: how much, and better or worse
	"decreased", "reduce", "reduced", "lower", "less", "smaller", "slower", "increase", "increased", "increases",
	"higher", "larger", "more", "faster", "improved", "impaired",
	// units and their aliases
	"g", "mg", "mm", "mmol", "nmol", "kpa", "mpa", "μg", "μm", "μmol",
	// comparators
	"<", ">",
)

// handListed says whether the hand-written table holds any word of an edit's vocabulary
// entry ("P <" is "p" and "<").
func handListed(v string) bool {
	return slices.ContainsFunc(strings.Fields(strings.ToLower(v)), func(w string) bool { return inCheckLists[w] })
}

// TestCitationVocabulary: at least half of each word-edit kind's citations are made with
// words none of the check's lists hold (by the hand-written table above), so the
// benchmark measures what the check does with words it was not written for. Digits and
// signs count as outside the lists: the check reads numbers as values, not by list. The
// check's own answer (citation.Listed) must agree with the table on every word: a word
// added to a list, or one a list holds that the check no longer reads as listed ("smaller",
// which its spelling rules read as "smaler"), is a change the table must be read again for.
func TestCitationVocabulary(t *testing.T) {
	f := loadFixture(t)
	ls := generate(t, f)
	disagree := map[string]bool{}
	for _, kind := range vocabKinds {
		n, outside := 0, 0
		var inList []string
		for _, l := range ls {
			if l.kind != kind {
				continue
			}
			n++
			if len(l.vocab) == 0 {
				t.Errorf("a %s citation without the words of its edit: %q (%s)", kind, l.quote, l.how)
				continue
			}
			for _, v := range l.vocab {
				if handListed(v) != citation.Listed(v) && !disagree[v] {
					disagree[v] = true
					t.Errorf("%q: the hand-written table says listed %v, the check's lists %v", v, handListed(v), citation.Listed(v))
				}
			}
			if !slices.ContainsFunc(l.vocab, handListed) {
				outside++
			} else if len(inList) < 3 {
				inList = append(inList, strings.Join(l.vocab, " "))
			}
		}
		t.Logf("%s: %d of %d edits of words outside the check's lists", kind, outside, n)
		if 2*outside < n {
			t.Errorf("%s: %d of %d edits outside the check's lists; want at least half (in them: %s)", kind, outside, n, strings.Join(inList, "; "))
		}
	}
}

// TestCitationFixture: the labels hold what their kinds promise (checked again here, apart
// from the generation), the fixture is as large and as varied as the benchmark needs, and
// the same seed makes the same citations.
func TestCitationFixture(t *testing.T) {
	f := loadFixture(t)
	single := f.single()
	if len(single) < 60 || len(f.topics) < 6 {
		t.Fatalf("%d records of one source each, in %d topics; want 60 and 6", len(single), len(f.topics))
	}
	ls := generate(t, f)
	count := map[string]int{}
	for _, l := range ls {
		count[l.kind]++
		if err := f.valid(l); err != nil {
			t.Errorf("%s citation %s %q: %v", l.kind, l.id, l.quote, err)
		}
	}
	for _, kind := range benchKinds {
		if count[kind] < 30 {
			t.Errorf("%d citations of kind %s; want at least 30", count[kind], kind)
		}
	}
	if again := generate(t, f); !slices.EqualFunc(again, ls, func(a, b labelled) bool { return a.quote == b.quote && a.id == b.id && a.kind == b.kind }) {
		t.Error("the same seed made other citations")
	}
	// A few labels by hand, so that the construction itself is checked.
	tau01 := f.records[slices.IndexFunc(f.records, func(r record) bool { return r.file == "tau-fetch-tau.01.json" })]
	for _, tt := range []struct {
		l    labelled
		want bool
	}{
		{labelled{kind: simulator.PlantedVerbatim, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density by 92%"}, true},
		{labelled{kind: simulator.PlantedDrift, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "depletion reduced microglial density by 92 %"}, true},
		{labelled{kind: simulator.PlantedNumber, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density by 29%"}, true},
		{labelled{kind: simulator.PlantedNumber, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density by 92%"}, false},
		{labelled{kind: simulator.PlantedElided, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density … by 54%."}, true},
		{labelled{kind: simulator.PlantedSpliced, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density by 54%."}, true},
		{labelled{kind: simulator.PlantedVerbatim, id: "10.5555/cosci.tau.010", file: tau01.file, quote: "Depletion reduced microglial density by 92%"}, false},
		{labelled{kind: simulator.PlantedUnsplit, id: "10.5555/cosci.mixed.01", file: "mixed-notes-coral.txt", quote: "Both papers conclude that the reef is unlikely to regain its former composition if warming continues."}, true},
		{labelled{kind: simulator.PlantedVerbatim, id: "10.5555/cosci.mixed.01", file: "mixed-notes-coral.txt", quote: "Both papers conclude that the reef is unlikely to regain its former composition if warming continues."}, false},
	} {
		if err := f.valid(tt.l); (err == nil) != tt.want {
			t.Errorf("%s %q: valid = %v, want %v", tt.l.kind, tt.l.quote, err, tt.want)
		}
	}
}

// BenchmarkCheck measures Check per citation over the benchmark's citations.
func BenchmarkCheck(b *testing.B) {
	f := loadFixture(b)
	var refs []research.Reference
	for _, l := range generate(b, f) {
		if l.kind != kindEmpty {
			refs = append(refs, f.reference(b, l))
		}
	}
	trail := f.trail()
	for b.Loop() {
		citation.Check(refs, trail)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(refs)), "ns/citation")
}
