package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	citecheck "github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/testcheck"
)

// A search that lists three records, and two of them fetched, as cosci's literature
// server gives them.
const (
	plantHits = `{"query":"microglia tau","total":3,"results":[
 {"id":"10.5555/cosci.tau.010","title":"Loss of TREM2 accelerates tau seeding","snippet":"Trem2-deficient mice showed 2.5-fold higher tau seeding in dystrophic neurites at 3 months."},
 {"id":"kim2021bin1","title":"BIN1 limits tau uptake","snippet":"Knockdown of BIN1 in cultured neurons increased the internalisation of tau fibrils by 37% and enlarged early endosomes."},
 {"id":"10.5555/cosci.tau.02","title":"Sleep and tau","snippet":"In humans, one night without sleep increased CSF tau by 51.5% in eight volunteers."}],
 "passages":[
 {"id":"10.5555/cosci.tau.02","passage":"10.5555/cosci.tau.02#p3.2","page":3,"section":"results","title":"Sleep and tau","text":"Sleep deprivation raised interstitial tau in mice by twofold within a day. Chronic sleep loss accelerated the spread of tau pathology from the hippocampus to connected regions."},
 {"id":"10.5555/cosci.tau.02","passage":"10.5555/cosci.tau.02#p5.1","page":5,"section":"discussion","title":"Sleep and tau","text":"Neuronal activity during wakefulness releases tau into the interstitial fluid. Improving sleep may therefore slow the propagation of tau in early disease."},
 {"id":"10.5555/cosci.tau.010","passage":"10.5555/cosci.tau.010#p4.3","page":4,"section":"results","title":"Loss of TREM2 accelerates tau seeding","text":"Microglial clustering around plaques was reduced by 68% in Trem2-deficient mice, and plaques were more diffuse than in controls."}]}`
	plantRecordA = `{"id":"10.5555/cosci.tau.010","title":"Loss of TREM2 accelerates tau seeding","abstract":"TREM2 variants increase the risk of Alzheimer's disease, yet the effect of TREM2 on tau pathology remains controversial. We injected AD-tau into 5xFAD mice with and without Trem2 (n = 14 per group). Trem2-deficient mice showed 2.5-fold higher tau seeding in dystrophic neurites at 3 months. Microglial clustering around plaques was reduced by 68%, and plaques were more diffuse. Loss of TREM2 did not change the number of neurofibrillary tangles in the cortex. Plasma IL-1β was associated with tau seeding in some mice (r = −0.41; P < 0.01). A dose of 2.5 mg of the TREM2 agonist restored microglial clustering within 3–7 weeks. These data indicate that microglial barriers restrict the seeding of tau by amyloid plaques."}`
	plantRecordB = `{"id":"kim2021bin1","title":"BIN1 limits tau uptake","abstract":"BIN1 is the second most significant genetic risk locus for late-onset Alzheimer's disease. Knockdown of BIN1 in cultured neurons increased the internalisation of tau fibrils by 37% and enlarged early endosomes. Conversely, overexpression of BIN1 reduced tau seeding in the biosensor assay by 45%. BIN1 may limit the endocytic uptake of pathological tau."}`
)

// plantReading is a turn that searched and fetched two of the hits.
func plantReading() reading {
	return read(research.Tooling{Tools: []research.ToolSpec{searchTool, fetchTool}, Steps: []research.ToolStep{
		{Results: []research.ToolResult{{Content: plantHits}}},
		{Results: []research.ToolResult{{Content: plantRecordA}, {Content: plantRecordB}}},
	}})
}

var plantClaims = []string{
	"Microglia restrain the seeding of tau around amyloid plaques in early Alzheimer's disease.",
	"Restoring TREM2 signalling will slow the spread of tau.",
}

// Each kind planted is what it says: checked against the source with this test's own
// reading of it, over many draws.
func TestPlantKinds(t *testing.T) {
	r := plantReading()
	texts := map[string]string{}
	for _, s := range r.sources {
		texts[s.id] = s.text
	}
	// Draws over the reading's six sources (three of them passages of a full text, which
	// few kinds can be planted in): each kind must be made from at least 10.
	const draws = 80
	for _, kind := range PlantKinds() {
		made := 0
		from := r.sources
		if kind == PlantedWrongPage { // only a passage of a full text can be cited at another page
			from = slices.DeleteFunc(slices.Clone(r.sources), func(s source) bool { return s.passage == "" })
		}
		for seed := range int64(draws) {
			rng := newRand(seed, "t")
			s := from[rng.IntN(len(from))]
			c, ok := plant(rng, kind, s, r, plantClaims)
			if !ok {
				continue
			}
			made++
			if c.kind != kind || c.Claim == "" || len([]rune(c.Quote)) < minQuote {
				t.Errorf("%s: %+v", kind, c)
			}
			q, text := oneLineOf(c.Quote), s.text
			switch kind {
			case PlantedVerbatim, PlantedIrrelevant:
				if c.ID != s.id || !strings.Contains(text, q) || c.Passage != s.passage {
					t.Errorf("%s: %q (passage %q) is not word for word in %s (passage %q)", kind, q, c.Passage, s.id, s.passage)
				}
			case PlantedWrongPage:
				// Another page's passage the turn read, or the next page's, which it did not.
				i := slices.IndexFunc(r.sources, func(o source) bool { return o.passage == c.Passage })
				read := i >= 0 && r.sources[i].id == s.id && r.sources[i].page != s.page && !holds(r.sources[i].text, q)
				unread := i < 0 && c.Passage == fmt.Sprintf("%s#p%d.1", s.id, s.page+1)
				if c.ID != s.id || !strings.Contains(text, q) || !read && !unread {
					t.Errorf("%s: %q of %s cited at %q", kind, q, s.passage, c.Passage)
				}
			case PlantedDrift:
				if c.ID != s.id || strings.Contains(text, q) || !holds(text, strings.ReplaceAll(q, "- ", "")) {
					t.Errorf("%s: %q is not a drifted passage of %s", kind, q, s.id)
				}
			case PlantedElided:
				pieces := strings.FieldsFunc(strings.NewReplacer("[...]", "\x00", "...", "\x00", "…", "\x00").Replace(q), func(r rune) bool { return r == 0 })
				if c.ID != s.id || len(pieces) != 2 || !holds(text, pieces[0]) || !holds(text, pieces[1]) || holds(text, q) {
					t.Errorf("%s: %q is not a marked elision of %s", kind, q, s.id)
				}
			case PlantedInventedID, PlantedNearMissID:
				if _, ok := texts[c.ID]; ok || strings.EqualFold(c.ID, s.id) {
					t.Errorf("%s: %s is an id the turn read", kind, c.ID)
				}
				if kind == PlantedNearMissID && !strings.HasPrefix(s.id, c.ID) && len(c.ID) != len(s.id) {
					t.Errorf("%s: %s is neither cut short nor a character off %s", kind, c.ID, s.id)
				}
			case PlantedOwnText:
				if !slices.Contains(plantClaims, c.Quote) || holds(text, q) {
					t.Errorf("%s: %q is not the citing text's own", kind, q)
				}
			case PlantedSpelling, PlantedGreek, PlantedNumberWords, PlantedNotation:
				if c.ID != s.id || strings.Contains(text, q) || !nearly(text, q) {
					t.Errorf("%s: %q is not a passage of %s written otherwise", kind, q, s.id)
				}
			case PlantedFragment, PlantedContextDropped:
				if c.ID != s.id || !strings.Contains(text, q) || slices.Contains(sentences(text), q) {
					t.Errorf("%s: %q is not a clause of %s", kind, q, s.id)
				}
			case PlantedElidedNegation, PlantedElidedDistant:
				pieces := strings.Split(q, " ... ")
				if c.ID != s.id || len(pieces) != 2 || !strings.Contains(text, pieces[0]) || !strings.Contains(text, pieces[1]) {
					t.Errorf("%s: %q is not a marked elision of %s", kind, q, s.id)
				}
			case PlantedSign, PlantedDecimal, PlantedUnit, PlantedHedgeDropped,
				PlantedCausal, PlantedQuantifier, PlantedEntity, PlantedSpecies:
				if c.ID != s.id || strings.Contains(text, q) || !nearly(text, q) {
					t.Errorf("%s: %q is not a passage of %s with one change", kind, q, s.id)
				}
			default: // other-record, negated, number, direction, spliced
				if c.ID != s.id || holds(text, q) {
					t.Errorf("%s: %s holds %q", kind, s.id, q)
				}
			}
		}
		if made < 10 {
			t.Errorf("%s: made %d of %d", kind, made, draws)
		}
	}
}

func oneLineOf(s string) string { return strings.Join(strings.Fields(s), " ") }

// nearly says whether most of a quote's words are the text's: a passage with a word or
// two changed or written otherwise.
func nearly(text, quote string) bool {
	in := map[string]bool{}
	for _, w := range wordsOf(text) {
		in[w] = true
	}
	ws := wordsOf(quote)
	n := 0
	for _, w := range ws {
		if in[w] {
			n++
		}
	}
	return len(ws) > 0 && float64(n) >= 0.75*float64(len(ws))
}

// Changes that turn a passage into a false one, each made and only where it can be.
func TestPlantChanges(t *testing.T) {
	rng := newRand(1, "t")
	for _, tt := range []struct {
		name, in string
		change   func(string) string
		want     string
	}{
		{"not taken away", "Loss of TREM2 did not change the number of tangles.", negate, "Loss of TREM2 did change the number of tangles."},
		{"not added", "BIN1 may limit the uptake of tau.", negate, "BIN1 may not limit the uptake of tau."},
		{"a finding denied", "Knockdown increased uptake by 37%.", negate, "Knockdown did not increase uptake by 37%."},
		{"no negation to change", "Knockdown of BIN1 in neurons.", negate, "Knockdown of BIN1 in neurons."},
		{"a number spelt out", "Weekly dosing slowed the spread by forty percent.", func(s string) string { return renumber(rng, s) }, "Weekly dosing slowed the spread by sixty percent."},
		{"a direction", "Knockdown increased the uptake of tau.", flip, "Knockdown decreased the uptake of tau."},
		{"a direction before a stop", "Knockdown of BIN1 made uptake faster.", flip, "Knockdown of BIN1 made uptake slower."},
		{"no direction", "BIN1 is a risk locus.", flip, "BIN1 is a risk locus."},
		{"no number to change, only names", "P301S and 5xFAD mice with IL-6 knocked out.", func(s string) string { return renumber(rng, s) }, "P301S and 5xFAD mice with IL-6 knocked out."},
	} {
		if got := tt.change(tt.in); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	for range 20 {
		got := renumber(rng, "Depletion reduced tau by 54% in P301S mice.")
		if got == "Depletion reduced tau by 54% in P301S mice." || !strings.HasSuffix(got, "% in P301S mice.") {
			t.Errorf("renumber: %q", got)
		}
	}
}

func TestParseKinds(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
		err  string
	}{
		{"all", PlantKinds(), ""},
		{"verbatim, negated,negated", []string{"verbatim", "negated"}, ""},
		{"verbatim,made-up", nil, `unknown kind of citation "made-up"`},
		{" , ", nil, "no kinds"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseKinds(tt.in)
			if testcheck.Err(t, err, tt.err) {
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("%q; want %q", got, tt.want)
			}
		})
	}
	if len(PlantKinds()) != 29 {
		t.Errorf("%d kinds: %q", len(PlantKinds()), PlantKinds())
	}
}

// Over many hypotheses, the share Fabricate of references is dishonest, spread over the
// dishonest kinds asked for; every reference carries its kind and a claim of the
// hypothesis, and the simulator's truth records its kind.
func TestCiteMix(t *testing.T) {
	for _, tc := range []struct {
		fabricate float64
		plant     []string
	}{
		{0.3, PlantKinds()},
		{0.5, []string{PlantedDrift, PlantedNegated, PlantedSpliced}},
		{0, nil},
		{1, nil},
	} {
		o := &Offline{Fabricate: tc.fabricate, Plant: tc.plant}
		honest, dishonest := o.kinds()
		count := map[string]int{}
		total, bad := 0, 0
		for i := range 200 {
			h := generateGrounded(t, o, int64(i))
			text := h.Statement + " " + h.Rationale
			for _, ref := range h.References {
				total++
				kind, ok := o.Planted().Hypothesis(h, ref)
				count[kind]++
				if !Honest(kind) {
					bad++
				}
				if !ok || ref.Claim == "" || !strings.Contains(text, ref.Claim) {
					t.Fatalf("fabricate %v: reference %+v: want a kind in the simulator's truth, and a claim of %q", tc.fabricate, ref, text)
				}
				if !slices.Contains(honest, kind) && !slices.Contains(dishonest, kind) && kind != PlantedVerbatim {
					t.Errorf("fabricate %v: a %s reference; want one of %q", tc.fabricate, kind, tc.plant)
				}
			}
		}
		share := float64(bad) / float64(total)
		t.Logf("fabricate %v, kinds %q: %d references, %v", tc.fabricate, tc.plant, total, count)
		if math.Abs(share-tc.fabricate) > 0.06 {
			t.Errorf("fabricate %v: %d of %d references dishonest (%.2f)", tc.fabricate, bad, total, share)
		}
		for _, k := range dishonest {
			if tc.fabricate > 0 && count[k] == 0 {
				t.Errorf("fabricate %v: no %s reference in %d: %v", tc.fabricate, k, total, count)
			}
		}
	}
}

// generateGrounded walks a generation turn through the plant reading's results.
func generateGrounded(t *testing.T, o *Offline, seed int64) research.Hypothesis {
	t.Helper()
	tooling := research.Tooling{Tools: []research.ToolSpec{searchTool, fetchTool}, Steps: []research.ToolStep{
		{Calls: []research.ToolCall{{ID: "c1", Name: "lit.search"}}, Results: []research.ToolResult{{CallID: "c1", Content: plantHits}}},
		{Calls: []research.ToolCall{{ID: "c2", Name: "lit.fetch"}, {ID: "c3", Name: "lit.fetch"}}, Results: []research.ToolResult{{CallID: "c2", Content: plantRecordA}, {CallID: "c3", Content: plantRecordB}}},
	}}
	st, _, err := o.GenerateStep(context.Background(), research.GenerateRequest{TurnID: fmt.Sprintf("t-%d", seed), HypothesisID: "h-1",
		Goal: "Identify druggable mechanisms that slow tau protein propagation", Strategy: research.StrategyLiterature, Seed: seed, Tooling: tooling})
	if err != nil || len(st.Calls) != 0 || len(st.Answer.References) == 0 {
		b, _ := json.Marshal(st)
		t.Fatalf("seed %d: %s, %v", seed, b, err)
	}
	return st.Answer
}

// plantedAs records in o's truth that h's references are of the kinds, in order.
func plantedAs(t *testing.T, o *Offline, h research.Hypothesis, kinds ...string) {
	t.Helper()
	var cs []plantedRef
	for i, ref := range h.References {
		cs = append(cs, plantedRef{ModelRef: prompt.ModelRef{ID: ref.ID}, kind: kinds[i]})
	}
	if err := o.Planted().remember(h.Statement, h.References, cs); err != nil {
		t.Fatal(err)
	}
}

// A deep verification or full review judges each citation's support: the planted truth,
// wrong at the rate asked for; other reviews judge nothing.
func TestJudgeSupport(t *testing.T) {
	var refs []research.Reference
	kinds := slices.Repeat(PlantKinds(), 50)
	for i := range kinds {
		refs = append(refs, research.Reference{ID: fmt.Sprintf("r%d", i), Quote: fmt.Sprintf("quote %d", i)})
	}
	h := research.Hypothesis{Statement: "s", References: refs}
	truth := map[string]string{PlantedIrrelevant: "irrelevant", PlantedNegated: "contradicts", PlantedDirection: "contradicts", PlantedVerbatim: "supports", PlantedDrift: "supports", PlantedNumber: "supports"}
	for _, errRate := range []float64{0, 0.1, 0.5} {
		o := &Offline{SupportError: errRate}
		plantedAs(t, o, h, kinds...)
		js := o.judgeSupport(newRand(1, "r"), research.ReviewFull, h)
		if len(js) != len(refs) {
			t.Fatalf("%d judgements of %d references", len(js), len(refs))
		}
		wrong := 0
		for i, j := range js {
			if j.ID != refs[i].ID || !slices.Contains(research.SupportJudgements, j.Judgement) || j.Note == "" {
				t.Errorf("judgement %+v of %+v", j, refs[i])
			}
			if j.Judgement != supportTruth(kinds[i]) {
				wrong++
			}
			if want, ok := truth[kinds[i]]; ok && errRate == 0 && j.Judgement != want {
				t.Errorf("a %s citation judged %s; want %s", kinds[i], j.Judgement, want)
			}
		}
		if got := float64(wrong) / float64(len(js)); math.Abs(got-errRate) > 0.06 {
			t.Errorf("error rate %v: %d of %d misjudged (%.2f)", errRate, wrong, len(js), got)
		}
	}
	o := &Offline{}
	plantedAs(t, o, h, kinds...)
	for _, typ := range []string{research.ReviewInitial, research.ReviewObservation, research.ReviewTournament} {
		if js := o.judgeSupport(newRand(1, "r"), typ, h); js != nil {
			t.Errorf("a %s review judged support: %v", typ, js)
		}
	}
	if js := o.judgeSupport(newRand(1, "r"), research.ReviewDeepVerification, h); len(js) != len(refs) {
		t.Errorf("a deep verification judged %d of %d", len(js), len(refs))
	}
}

// Deep verifications and full reviews, with tools or without, return their judgements of
// the hypothesis' citations through the parser; an initial review judges none.
func TestReviewJudgesSupport(t *testing.T) {
	h := research.Hypothesis{ID: "h-1", Title: "Microglia carry tau", Statement: "s", Rationale: "r", Predictions: []string{"p"},
		References: []research.Reference{
			{ID: "10.5555/a", Quote: "Microglia carry tau between synapses in exosomes.", Claim: "c"},
			{ID: "key-b", Quote: "Neuronal activity releases tau into the extracellular space.", Claim: "c"},
			{ID: "key-c", Quote: "Silencing neurons did not slow the propagation of tau seeds.", Claim: "c"},
		}}
	want := []string{research.SupportSupports, research.SupportIrrelevant, research.SupportContradicts}
	o := &Offline{}
	plantedAs(t, o, h, PlantedVerbatim, PlantedIrrelevant, PlantedNegated)
	ctx := context.Background()
	for _, typ := range []string{research.ReviewInitial, research.ReviewFull, research.ReviewDeepVerification} {
		req := research.ReviewRequest{TurnID: "r-" + typ, Goal: "g", Type: typ, Hypothesis: h}
		plain, _, err := o.Review(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		req.Tooling = research.Tooling{Tools: []research.ToolSpec{searchTool}, Final: true}
		st, _, err := o.ReviewStep(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, rv := range []research.Review{plain, st.Answer} {
			var got []string
			for i, j := range rv.Support {
				got = append(got, j.Judgement)
				if j.ID != h.References[i].ID || j.Note == "" {
					t.Errorf("%s: judgement %+v", typ, j)
				}
			}
			if typ == research.ReviewInitial && len(got) != 0 || typ != research.ReviewInitial && !slices.Equal(got, want) {
				t.Errorf("%s review judged %q", typ, got)
			}
		}
	}
}

// The kinds the simulator plants are what the citation check reads them as: an honest one
// verified, a dishonest one penalised (an irrelevant quote is verbatim: the check verifies
// it, and the review's support judgement is what catches it). BenchmarkGrounding
// measures the same in whole sessions.
func TestPlantedAsTheCheckReadsThem(t *testing.T) {
	r := plantReading()
	results := []citecheck.Result{{Source: "hits", Content: plantHits}, {Source: "a", Content: plantRecordA}, {Source: "b", Content: plantRecordB}}
	records := map[string]string{"hits": plantHits, "a": plantRecordA, "b": plantRecordB}
	for _, kind := range PlantKinds() {
		made, wrong := 0, []string{}
		for seed := range int64(40) {
			rng := newRand(seed, "t")
			c, ok := plant(rng, kind, r.sources[rng.IntN(len(r.sources))], r, plantClaims)
			if !ok {
				continue
			}
			made++
			ref := citecheck.Resolve([]research.Reference{{ID: c.ID, Quote: c.Quote, Claim: c.Claim, Passage: c.Passage}}, results, nil)[0]
			check := citecheck.Check([]research.Reference{ref}, records)[0].Check
			honest := Honest(kind) || kind == PlantedIrrelevant
			if honest && check.Verdict != research.CitationVerified || !honest && !check.Penalised() {
				wrong = append(wrong, fmt.Sprintf("%q: %s (%s)", c.Quote, check.Verdict, check.Note))
			}
		}
		if len(wrong) > 0 {
			t.Errorf("%s: %d of %d read otherwise than planted, as %s", kind, len(wrong), made, strings.Join(wrong[:min(3, len(wrong))], "; "))
		}
	}
}
