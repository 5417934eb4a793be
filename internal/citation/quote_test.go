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
		{"elided", "Microglial depletion reduced tau propagation … in the hippocampus", research.CitationVerified},
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
