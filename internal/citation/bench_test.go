package citation_test

// The citation benchmark: labelled citations of real-shaped tool results, made by the
// ways models really get citations wrong (and the ways honest ones drift), each run
// through Check. Run it with
//
//	go test ./internal/citation -run TestCitationKinds -v
//
// and, to read what it makes, -citation.sample N prints N citations of each kind.

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

var sample = flag.Int("citation.sample", 0, "print this many labelled citations of each kind")

// kindEmpty is the benchmark's own kind: an empty or very short quote, which the parser
// refuses before any check sees it.
const kindEmpty = "empty"

// benchKinds are the kinds the benchmark makes, honest ones first.
var benchKinds = []string{
	research.PlantedVerbatim, research.PlantedDrift, research.PlantedElided,
	research.PlantedIrrelevant,
	research.PlantedInventedID, research.PlantedNearMissID, research.PlantedOtherRecord,
	research.PlantedNegated, research.PlantedNumber, research.PlantedDirection,
	research.PlantedSpliced, research.PlantedOwnText, kindEmpty,
}

// perKind is how many citations of each kind the benchmark makes.
const perKind = 40

// Targets: the share of each kind the check flags.
const (
	minDishonestFlagged = 0.95
	maxHonestFlagged    = 0.02
)

// valid checks a labelled citation against what its kind promises, with this file's own
// normalisation: an honest quote is in its record; a dishonest one is not, in any spacing.
func (f *fixture) valid(l labelled) error {
	var rec *record
	for i := range f.records {
		r := &f.records[i]
		if r.file == l.file && slices.ContainsFunc(r.ids, func(x string) bool { return sameID(x, l.id) }) {
			rec = r
		}
	}
	q := l.quote
	if l.kind != kindEmpty && (utf8.RuneCountInString(strings.TrimSpace(q)) < 30 || words(q) < 5 || utf8.RuneCountInString(q) > prompt.MaxQuoteLength) {
		return fmt.Errorf("a quote of %d characters and %d words", utf8.RuneCountInString(q), words(q))
	}
	named := func() error {
		if rec == nil {
			return fmt.Errorf("%s names no record of %s", l.id, l.file)
		}
		return nil
	}
	switch l.kind {
	case research.PlantedVerbatim, research.PlantedIrrelevant:
		if err := named(); err != nil {
			return err
		}
		if !strings.Contains(rec.text(), q) {
			return fmt.Errorf("not word for word in its record")
		}
	case research.PlantedDrift:
		if err := named(); err != nil {
			return err
		}
		if !within(rec.text(), q) || strings.Contains(rec.text(), q) {
			return fmt.Errorf("not a drifted passage of its record")
		}
	case research.PlantedElided:
		if err := named(); err != nil {
			return err
		}
		if !ellipsis.MatchString(q) || !elidedWithin(rec.text(), q) {
			return fmt.Errorf("not an elided passage of its record")
		}
	case research.PlantedInventedID:
		for _, r := range f.records {
			if slices.ContainsFunc(r.ids, func(x string) bool { return sameID(x, l.id) }) {
				return fmt.Errorf("%s is %s's id", l.id, r.file)
			}
		}
	case research.PlantedNearMissID:
		if rec != nil && !nowhere(rec.text(), q) {
			return fmt.Errorf("%s names a record that holds the quote", l.id)
		}
	case research.PlantedOtherRecord, research.PlantedNegated, research.PlantedNumber, research.PlantedDirection, research.PlantedSpliced, research.PlantedOwnText:
		if err := named(); err != nil {
			return err
		}
		if !nowhere(rec.text(), q) {
			return fmt.Errorf("its record holds the quote")
		}
		if l.kind == research.PlantedOwnText {
			for _, r := range f.records {
				if !nowhere(r.text(), q) {
					return fmt.Errorf("%s holds the hypothesis' sentence", r.ids[0])
				}
			}
		}
		if l.kind == research.PlantedSpliced && ellipsis.MatchString(q) {
			return fmt.Errorf("a splice with an elision mark")
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
	g := &generator{f: f, rng: rand.New(rand.NewPCG(27, 2026))}
	makers := g.makers()
	var out []labelled
	for _, kind := range benchKinds {
		n := 0
		for tries := 0; n < perKind && tries < 100*perKind; tries++ {
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

// reference is the citation as reflection checks it: parsed, tied to the result the
// turn read, with its hidden truth.
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
	ref.Planted, ref.Fabricated = l.kind, !research.PlantedHonest(l.kind) && l.kind != research.PlantedIrrelevant
	return ref
}

// The fixture's labels hold what their kinds promise (checked again here, apart from the
// generation), every kind has its citations, and the same seed makes the same ones.
func TestCitationFixture(t *testing.T) {
	f := loadFixture(t)
	if len(f.records) < 15 || len(f.topics) < 2 {
		t.Fatalf("%d records in %d topics", len(f.records), len(f.topics))
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
	if again := generate(t, f); !slices.Equal(again, ls) {
		t.Error("the same seed made other citations")
	}
	// A few labels by hand, so that the construction itself is checked.
	tau01 := f.records[slices.IndexFunc(f.records, func(r record) bool { return r.file == "tau-fetch-tau.01.json" })]
	for _, tt := range []struct {
		l    labelled
		want bool
	}{
		{labelled{kind: research.PlantedVerbatim, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density by 92%"}, true},
		{labelled{kind: research.PlantedDrift, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "depletion reduced microglial density by 92 %"}, true},
		{labelled{kind: research.PlantedDrift, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "depletion reduced micro- glial density by 92%"}, true},
		{labelled{kind: research.PlantedNumber, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density by 29%"}, true},
		{labelled{kind: research.PlantedNumber, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density by 92%"}, false},
		{labelled{kind: research.PlantedNegated, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "whereas it did alter tau uptake by microglia in culture"}, true},
		{labelled{kind: research.PlantedElided, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density … by 54%."}, true},
		{labelled{kind: research.PlantedElided, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density … by 45%."}, false},
		{labelled{kind: research.PlantedSpliced, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density by 54%."}, true},
		{labelled{kind: research.PlantedVerbatim, id: "10.5555/cosci.tau.010", file: tau01.file, quote: "Depletion reduced microglial density by 92%"}, false},
	} {
		if err := f.valid(tt.l); (err == nil) != tt.want {
			t.Errorf("%s %q: valid = %v, want %v", tt.l.kind, tt.l.quote, err, tt.want)
		}
	}
}

// TestCitationKinds runs every labelled citation through Check (an empty one through
// the parser) and holds each kind to its target.
func TestCitationKinds(t *testing.T) {
	f := loadFixture(t)
	ls := generate(t, f)
	trail := f.trail()
	type tally struct {
		n, flagged int
		verdicts   map[string]int
		misses     []string
	}
	tallies := map[string]*tally{}
	printed := map[string]int{}
	for _, l := range ls {
		tl := tallies[l.kind]
		if tl == nil {
			tl = &tally{verdicts: map[string]int{}}
			tallies[l.kind] = tl
		}
		tl.n++
		if *sample > printed[l.kind] {
			printed[l.kind]++
			t.Logf("sample %s (%s): id %q, from %q\n\tquote %q\n\tclaim %q", l.kind, l.how, l.id, l.file, l.quote, l.claim)
		}
		if l.kind == kindEmpty {
			_, err := parse(l)
			if err != nil {
				tl.flagged++
				tl.verdicts["refused"]++
			} else {
				tl.verdicts["accepted"]++
				tl.misses = append(tl.misses, fmt.Sprintf("the parser accepted %q", l.quote))
			}
			continue
		}
		ref := f.reference(t, l)
		c := citation.Check([]research.Reference{ref}, trail)[0]
		tl.verdicts[c.Verdict]++
		flagged := c.Verdict != research.CitationVerified
		if flagged {
			tl.flagged++
		}
		if flagged != dishonest(l.kind) {
			tl.misses = append(tl.misses, fmt.Sprintf("%s (%s): id %q from %s, quote %q: %s %s", c.Verdict, l.how, l.id, l.file, ref.Quote, c.Note, c.Passage))
		}
	}
	verdicts := []string{research.CitationVerified, research.CitationAltered, research.CitationContradicted, research.CitationUnsupported, research.CitationInvented}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| kind | n | flagged | target | %s |\n|---|---:|---:|---|%s\n", strings.Join(verdicts, " | "), strings.Repeat("---:|", len(verdicts)))
	for _, kind := range benchKinds {
		tl := tallies[kind]
		share := float64(tl.flagged) / float64(tl.n)
		target, ok := fmt.Sprintf("≤ %.0f%%", 100*maxHonestFlagged), share <= maxHonestFlagged
		if dishonest(kind) {
			target, ok = fmt.Sprintf("≥ %.0f%%", 100*minDishonestFlagged), share >= minDishonestFlagged
		}
		cells := make([]string, len(verdicts))
		for i, v := range verdicts {
			cells[i] = fmt.Sprint(tl.verdicts[v])
		}
		if kind == kindEmpty {
			cells = []string{fmt.Sprintf("refused by the parser: %d of %d", tl.verdicts["refused"], tl.n), "", "", "", ""}
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f%% | %s | %s |\n", kind, tl.n, 100*share, target, strings.Join(cells, " | "))
		if !ok {
			t.Errorf("%s: %d of %d flagged (%.0f%%); target %s. For example:\n\t%s", kind, tl.flagged, tl.n, 100*share, target, strings.Join(tl.misses[:min(3, len(tl.misses))], "\n\t"))
		}
	}
	t.Log(b.String())
}

// dishonest says whether the check (or, for an empty quote, the parser) must flag a kind.
// An irrelevant quote is verbatim: the check verifies it, and the review's support
// judgement is what catches it.
func dishonest(kind string) bool {
	return !research.PlantedHonest(kind) && kind != research.PlantedIrrelevant
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
