package citation

import (
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// TestCompare: each way a quote can differ from its record, and the verdict a careful
// reader would give it.
func TestCompare(t *testing.T) {
	const record = `Background: Tau pathology spreads through connected brain regions. ` +
		`Methods: We depleted microglia in PS19 mice with PLX3397 for 12 weeks. ` +
		`Results: Microglial depletion reduced tau propagation by 40% and did not alter neuronal loss in the hippocampus. ` +
		`Exosome secretion was significantly increased in activated microglia, which may promote neuro-` + "\n" + `inflammation. ` +
		`Levels of IL-1β were higher in treated animals (p < 0.01).`
	tests := []struct {
		name, quote, want string
	}{
		{"verbatim", "Microglial depletion reduced tau propagation by 40%", research.CitationVerified},
		{"case and spacing", "microglial   DEPLETION reduced Tau propagation by 40 %", research.CitationVerified},
		{"punctuation and Unicode", "Levels of IL‑1β were higher in treated animals (p<0.01)", research.CitationVerified},
		{"full-width and ligature forms", "Exosome secretion was signiﬁcantly increased in activated microglia", research.CitationVerified},
		{"line-end hyphenation", "which may promote neuroinflammation", research.CitationVerified},
		{"elided", "Microglial depletion reduced tau propagation … and did not alter neuronal loss", research.CitationVerified},
		{"elided over a negation it joins to", "Microglial depletion reduced tau propagation … in the hippocampus", research.CitationContradicted},
		{"elided in brackets", "We depleted microglia [...] for 12 weeks", research.CitationVerified},
		{"negation inserted", "Microglial depletion did not reduce tau propagation by 40%", research.CitationContradicted},
		{"negation removed", "Microglial depletion reduced tau propagation by 40% and did alter neuronal loss in the hippocampus", research.CitationContradicted},
		{"negation elided", "reduced tau propagation by 40% and did ... alter neuronal loss in the hippocampus", research.CitationContradicted},
		{"number changed", "Microglial depletion reduced tau propagation by 60%", research.CitationContradicted},
		{"duration changed", "We depleted microglia in PS19 mice with PLX3397 for 24 weeks", research.CitationContradicted},
		{"direction flipped", "Microglial depletion increased tau propagation by 40%", research.CitationContradicted},
		{"direction flipped late in a long quote", "Exosome secretion was significantly decreased in activated microglia, which may promote neuroinflammation", research.CitationContradicted},
		{"higher to lower", "Levels of IL-1β were lower in treated animals", research.CitationContradicted},
		{"a verb's form changed", "Microglial depletion reduces tau propagation by 40%", research.CitationAltered},
		{"one word changed", "Microglial depletion lessened tau propagation by 40% and did not alter neuronal loss", research.CitationAltered},
		{"a word dropped", "Exosome secretion was increased in activated microglia, which may promote neuroinflammation", research.CitationAltered},
		{"spliced", "Tau pathology spreads through connected brain regions and did not alter neuronal loss in the hippocampus", research.CitationUnsupported},
		{"spliced out of order", "Levels of IL-1β were higher in treated animals with PLX3397 for 12 weeks", research.CitationUnsupported},
		{"elided out of order", "Levels of IL-1β were higher ... We depleted microglia in PS19 mice", research.CitationUnsupported},
		{"not in the record", "Astrocytes clear extracellular tau through LRP1-mediated uptake", research.CitationUnsupported},
		{"no words", " ... ", research.CitationUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Compare(record, tt.quote)
			if f.Verdict != tt.want {
				t.Errorf("Compare(%q) = %s (%s), want %s", tt.quote, f.Verdict, f.Note, tt.want)
			}
			if (f.Verdict == research.CitationAltered || f.Verdict == research.CitationContradicted) && (f.Passage == "" || f.Note == "") {
				t.Errorf("an %s quote needs the passage and what changed: %+v", f.Verdict, f)
			}
		})
	}
}

// TestCompareShowsWhatChanged: the note names the change, and the passage is the record's
// own words.
func TestCompareShowsWhatChanged(t *testing.T) {
	f := Compare("In aged mice, exercise increased hippocampal neurogenesis twofold.", "In aged mice, exercise decreased hippocampal neurogenesis twofold.")
	if !strings.Contains(f.Note, `"increased" where the quote says "decreased"`) || f.Passage != "In aged mice, exercise increased hippocampal neurogenesis twofold" {
		t.Errorf("finding = %+v", f)
	}
}

// TestTheDocsExample: docs/grounding.md's example reads as the check reports it.
func TestTheDocsExample(t *testing.T) {
	f := Compare("Microglial depletion reduced tau propagation by 40% in PS19 mice.", "Microglial depletion did not reduce tau propagation in PS19 mice")
	want := Finding{Verdict: research.CitationContradicted, Note: `the record says no "not", which the quote adds`,
		Passage: "Microglial depletion reduced tau propagation by 40% in PS19 mice"}
	if f != want {
		t.Errorf("Compare = %+v, want %+v", f, want)
	}
}

// TestTheDocsExamplesOfTheNewVerdicts: docs/grounding.md's examples of an overstated quote
// and one out of context read as the check reports them.
func TestTheDocsExamplesOfTheNewVerdicts(t *testing.T) {
	for _, tt := range []struct {
		record, quote string
		want          Finding
	}{
		{"Colchicine may lower the risk of ischaemic events after myocardial infarction.", "Colchicine lowers the risk of ischemic events after myocardial infarction",
			Finding{Verdict: research.CitationOverstated, Note: `the quote claims more than the record: it leaves out the record's "may"`,
				Passage: "Colchicine may lower the risk of ischaemic events after myocardial infarction"}},
		{"It has been proposed that microglia drive the spread of tau between brain regions, but depleting microglia did not slow spreading in PS19 mice.",
			"microglia drive the spread of tau between brain regions",
			Finding{Verdict: research.CitationOutOfContext, Note: `the quote leaves out what governs it: "It has been proposed that" before it hedges it`,
				Passage: "It has been proposed that microglia drive the spread of tau between brain regions, but depleting microglia did not slow spreading in PS19 mice"}},
		{"There was no evidence that colchicine prolonged survival.", "colchicine prolonged survival",
			Finding{Verdict: research.CitationContradicted, Note: `the quote leaves out what governs it: "There was no evidence that" before it negates it`,
				Passage: "There was no evidence that colchicine prolonged survival"}},
	} {
		if f := Compare(tt.record, tt.quote); f != tt.want {
			t.Errorf("Compare(%q) = %+v, want %+v", tt.quote, f, tt.want)
		}
	}
}

// TestCompareBounded: a huge record and a huge quote cost bounded work.
func TestCompareBounded(t *testing.T) {
	record := strings.Repeat("tau spreads between neurons through synapses and exosomes. ", 10000)
	quote := strings.Repeat("microglia clear tau ", 1000)
	if f := Compare(record, quote); f.Verdict != research.CitationUnsupported {
		t.Errorf("Compare = %+v", f)
	}
}

// TestNoNegationBySplitting: words may be joined or split, but not into a negation.
func TestNoNegationBySplitting(t *testing.T) {
	if f := Compare("The effect was notable in aged mice.", "The effect was not able in aged mice"); f.Verdict == research.CitationVerified {
		t.Errorf("Compare = %+v; a split that makes a negation is no quote", f)
	}
}

// TestCompareLongRecord: a quote from far into a long record is found there, and a near
// match at its beginning is not taken for a contradiction.
func TestCompareLongRecord(t *testing.T) {
	record := "Microglial depletion reduced tau spread by 20 percent in young mice. " +
		strings.Repeat("Neurons release tau at synapses. ", 5000) +
		"Microglial depletion reduced tau spread by 40 percent in aged mice."
	if f := Compare(record, "Microglial depletion reduced tau spread by 40 percent in aged mice"); f.Verdict != research.CitationVerified {
		t.Errorf("a verbatim quote past the aligned part: %+v", f)
	}
	if f := Compare(record, "Microglial depletion reduced tau spread by 60 percent in aged mice"); f.Verdict != research.CitationUnsupported {
		t.Errorf("a changed quote of a long record: %+v; want unsupported, not a verdict on its beginning alone", f)
	}
}

// TestCompareReadsLikeAReader: what a careful reader forgives (how a passage is written)
// and what they do not (a claim made stronger, a number's sign or comparator changed,
// the words that govern a fragment or an elision left out).
func TestCompareReadsLikeAReader(t *testing.T) {
	const record = `Background: Chronic inflammation has been proposed as a driver of tumour progression. ` +
		`Methods: We randomised 120 women and 96 men to 2.5 mg/kg of drug X or placebo for sixteen weeks. ` +
		`Results: Drug X reduced serum IL-6 by 10–15% (P < .01), and the haemoglobin concentration rose 1.8-fold. ` +
		`The mean difference in TNF-α was −0.023 (95% CI −0.05 to −0.01). ` +
		`These findings suggest that IL-6 may mediate the anti-tumour effect in some patients. ` +
		`There was no evidence that drug X prolonged survival in men, although the trial was small. ` +
		`We found that IL-6 levels were associated with tumour size. ` +
		`Drug X lowered IL-6 in women, but only in those older than 50 years. ` +
		`The effect on fatigue was modest and did not reach significance. ` +
		`Earlier cohort studies posited that IL-6 blockade shortens survival. ` +
		`Benefit was seen in neither smokers nor former smokers.`
	tests := []struct {
		name, quote, want string
	}{
		// how it is written
		{"British for American spelling", "the hemoglobin concentration rose 1.8-fold", research.CitationVerified},
		{"American for British", "We randomized 120 women and 96 men", research.CitationVerified},
		{"a Greek letter spelled out", "The mean difference in TNF-alpha was -0.023", research.CitationVerified},
		{"a number in words", "placebo for 16 weeks", research.CitationVerified},
		{"a p-value written otherwise", "Drug X reduced serum IL-6 by 10 to 15% (p<0.01)", research.CitationVerified},
		{"a range written otherwise", "reduced serum IL-6 by 10%–15%", research.CitationVerified},
		{"an elision within a sentence", "Drug X reduced serum IL-6 ... and the haemoglobin concentration rose 1.8-fold", research.CitationVerified},
		{"an elision across two adjacent sentences", "We found that IL-6 levels were associated with tumour size … Drug X lowered IL-6 in women, but only in those older than 50 years", research.CitationVerified},
		{"a fragment after a verb of finding", "IL-6 levels were associated with tumour size", research.CitationVerified},
		{"a fragment whose clause is whole", "the haemoglobin concentration rose 1.8-fold", research.CitationVerified},
		// numbers as values
		{"a comparator turned", "Drug X reduced serum IL-6 by 10–15% (P > .01)", research.CitationContradicted},
		{"a sign dropped", "The mean difference in TNF-α was 0.023", research.CitationContradicted},
		{"a decimal point moved", "to 25 mg/kg of drug X or placebo", research.CitationContradicted},
		{"a fold's decimal point dropped", "the haemoglobin concentration rose 18-fold", research.CitationContradicted},
		{"a unit changed", "to 2.5 g/kg of drug X or placebo", research.CitationContradicted},
		{"a number in words changed", "placebo for eighteen weeks", research.CitationContradicted},
		// claimed more strongly
		{"a hedge dropped", "These findings suggest that IL-6 mediates the anti-tumour effect in some patients", research.CitationOverstated},
		{"a hedge strengthened", "These findings show that IL-6 may mediate the anti-tumour effect in some patients", research.CitationOverstated},
		{"association made causal", "We found that IL-6 levels caused tumour size", research.CitationOverstated},
		{"a quantifier strengthened", "These findings suggest that IL-6 may mediate the anti-tumour effect in all patients", research.CitationOverstated},
		{"a limitation dropped", "The effect on fatigue was and did not reach significance", research.CitationOverstated},
		{"women for men", "We randomised 120 men and 96 women to 2.5 mg/kg of drug X or placebo", research.CitationAltered},
		// fragments and elisions that leave out what governs them
		{"a fragment without its hedge", "IL-6 may mediate the anti-tumour effect", research.CitationOutOfContext},
		{"a fragment without its attribution", "a driver of tumour progression", research.CitationOutOfContext},
		{"a fragment after a negation", "drug X prolonged survival in men", research.CitationContradicted},
		{"a fragment without its limitation", "Drug X lowered IL-6 in women", research.CitationOutOfContext},
		{"a fragment governed by a verb no list holds", "IL-6 blockade shortens survival", research.CitationOutOfContext},
		{"a fragment without its qualifying clause", "The effect on fatigue was modest", research.CitationOutOfContext},
		{"an elision over a negation", "The effect on fatigue was modest and did ... reach significance", research.CitationContradicted},
		{"an elision over neither ... nor", "Benefit was seen in ... smokers", research.CitationContradicted},
		{"a leading elision over a negation", "... drug X prolonged survival in men", research.CitationContradicted},
		{"an elision over a hedge", "IL-6 ... mediate the anti-tumour effect in some patients", research.CitationOutOfContext},
		{"an elision across distant sentences", "Chronic inflammation has been proposed as a driver of tumour progression ... IL-6 levels were associated with tumour size", research.CitationUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Compare(record, tt.quote)
			if f.Verdict != tt.want {
				t.Errorf("Compare(%q) = %s (%s; %q), want %s", tt.quote, f.Verdict, f.Note, f.Passage, tt.want)
			}
			if f.Verdict != research.CitationUnsupported && f.Verdict != research.CitationVerified && (f.Passage == "" || f.Note == "") {
				t.Errorf("an %s quote needs the source's words and what it found: %+v", f.Verdict, f)
			}
		})
	}
}
