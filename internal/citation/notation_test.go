package citation

import (
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// TestNotation: a number written another way is the same number, whichever of the record
// and the quote writes it which way; a number changed in any of these notations is not.
func TestNotation(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string // a and b say the same: each is checked against the other
	}{
		{"superscript power and unit", "Spore density reached 4.1 × 10⁵ cm⁻² after ten days.", "Spore density reached 4.1 x 10^5 cm-2 after ten days."},
		{"hyphen exponents", "The uptake rate was 3.2 × 10⁻² s⁻¹ in the treated plots.", "The uptake rate was 3.2 x 10-2 s-1 in the treated plots."},
		{"caret exponents", "The uptake rate was 3.2 × 10⁻² s⁻¹ in the treated plots.", "The uptake rate was 3.2 × 10^-2 s^-1 in the treated plots."},
		{"a sup tag", "the leak rate was 2 × 10<sup>-8</sup> mbar per second in every seal", "the leak rate was 2 x 10^-8 mbar per second in every seal"},
		{"a sup tag and a superscript", "the leak rate was 2 × 10<sup>−8</sup> mbar per second in every seal", "the leak rate was 2 × 10⁻⁸ mbar per second in every seal"},
		{"a bare power of ten", "cuttings were soaked in 10⁻⁶ M zeatin for a day before potting", "cuttings were soaked in 10-6 M zeatin for a day before potting"},
		{"plus or minus", "Germination held at 62 ± 3% across the three benches.", "Germination held at 62 +/- 3% across the three benches."},
		{"plus or minus with a minus sign", "Germination held at 62 ± 3% across the three benches.", "Germination held at 62 +/− 3% across the three benches."},
		{"a percent interval in the other order", "Tempering halved trapped hydrogen (95% CI 41 to 58%) in the coarse grains.", "Tempering halved trapped hydrogen (95% CI 58 to 41%) in the coarse grains."},
		{"times written x", "colonies grew to 3 × 10⁵ per plate on the thinned agar", "colonies grew to 3x10^5 per plate on the thinned agar"},
		{"interval bounds in the other order", "The odds of relapse were lower (OR 0.61, 95% CI 0.44 to 0.83) in the kelp group.", "The odds of relapse were lower (OR 0.61, 95% CI 0.83 to 0.44) in the kelp group."},
		{"negative interval bounds", "Mean difference −1.2 (95% CI −2.1 to −0.3) in the kelp group.", "Mean difference −1.2 (95% CI: −0.3–−2.1) in the kelp group."},
		{"units no list holds", "Carbon removal reached 1.3 t ha⁻¹ yr⁻¹ in the second season.", "Carbon removal reached 1.3 t ha-1 yr-1 in the second season."},
		{"an ion is no exponent", "Chloride (Cl⁻) and Ca²⁺ rose in the wells.", "Chloride (Cl-) and Ca2+ rose in the wells."},
		{"E-notation", "the two-sided test gave p = 1.2 × 10⁻⁵ on 48 plates", "the two-sided test gave p = 1.2e-05 on 48 plates"},
		{"E-notation, capital and unpadded", "the two-sided test gave p = 1.2 × 10^-5 on 48 plates", "the two-sided test gave p = 1.2E-5 on 48 plates"},
		{"E-notation, positive", "the library held 3.4 × 10⁶ reads per sample", "the library held 3.4e+06 reads per sample"},
		{"a squared unit", "each quadrat of 0.25 m² held a median of nine burrows", "each quadrat of 0.25 m^2 held a median of nine burrows"},
	} {
		for _, dir := range [][2]string{{tc.a, tc.b}, {tc.b, tc.a}} {
			if f := Compare(dir[0], dir[1]); f.Verdict != research.CitationVerified {
				t.Errorf("%s: %q against %q: %s (%s)", tc.name, dir[1], dir[0], f.Verdict, f.Note)
			}
		}
	}
	for _, tc := range []struct{ name, record, quote, want string }{
		{"another power", "The uptake rate was 3.2 × 10⁻² s⁻¹ in the treated plots.", "The uptake rate was 3.2 x 10-3 s-1 in the treated plots.", research.CitationContradicted},
		{"a power's sign", "the leak rate was 2 × 10<sup>-8</sup> mbar per second in every seal", "the leak rate was 2 x 10^8 mbar per second in every seal", research.CitationContradicted},
		{"another unit power", "Spore density reached 4.1 × 10⁵ cm⁻² after ten days.", "Spore density reached 4.1 x 10^5 cm-3 after ten days.", research.CitationContradicted},
		{"another bound", "The odds of relapse were lower (OR 0.61, 95% CI 0.44 to 0.83) in the kelp group.", "The odds of relapse were lower (OR 0.61, 95% CI 0.83 to 0.54) in the kelp group.", research.CitationContradicted},
		{"a change's ends turned round", "Soil nitrate fell from 40 to 20 mg per kilogram over the season.", "Soil nitrate fell from 20 to 40 mg per kilogram over the season.", research.CitationContradicted},
		{"another spread", "Germination held at 62 ± 3% across the three benches.", "Germination held at 62 +/- 8% across the three benches.", research.CitationContradicted},
		{"a comparative the spelling rules rewrite", "Burrows were smaller on the grazed dunes.", "Burrows were larger on the grazed dunes.", research.CitationContradicted},
		{"E-notation, another power", "the two-sided test gave p = 1.2 × 10⁻⁵ on 48 plates", "the two-sided test gave p = 1.2e-04 on 48 plates", research.CitationContradicted},
		{"E-notation, another mantissa", "the two-sided test gave p = 1.2 × 10⁻⁵ on 48 plates", "the two-sided test gave p = 1.3e-05 on 48 plates", research.CitationContradicted},
		{"an id with an e is no number", "strain 3e4f grew on the plates", "strain 3e4f grew on the plates", research.CitationVerified},
		{"a range stays a range", "Larvae hatched after 10-12 days in the warm tanks.", "Larvae hatched after 10 to 12 days in the warm tanks.", research.CitationVerified},
		{"a name with a number", "IL-6 rose in the cohort that slept less than five hours.", "IL-6 rose in the cohort that slept less than five hours.", research.CitationVerified},
	} {
		if f := Compare(tc.record, tc.quote); f.Verdict != tc.want {
			t.Errorf("%s: %q against %q: %s (%s); want %s", tc.name, tc.quote, tc.record, f.Verdict, f.Note, tc.want)
		}
	}
}

// TestLeftOut: what a quote leaves out without marking it. A statistic in brackets left
// out alters the quote (its number is not changed); a leading quantifier left out says of
// all what the record says of some.
func TestLeftOut(t *testing.T) {
	for _, tc := range []struct{ name, record, quote, want string }{
		{"a p-value in brackets", "Grain yield in the terraced plots was unchanged (p = 0.41) after the drought.",
			"Grain yield in the terraced plots was unchanged after the drought.", research.CitationAltered},
		{"a long statistic in brackets", "Grain yield in the terraced plots was unchanged (OR 0.61, 95% CI 0.44 to 0.83; n = 212) after the long drought of that summer.",
			"Grain yield in the terraced plots was unchanged after the long drought of that summer.", research.CitationAltered},
		{"the statistic's number changed", "Grain yield in the terraced plots was unchanged (p = 0.41) after the drought.",
			"Grain yield in the terraced plots was unchanged (p = 0.14) after the drought.", research.CitationContradicted},
		{"a limitation in brackets is no statistic", "Grain yield in the terraced plots was unchanged (but not in the valley) after the drought.",
			"Grain yield in the terraced plots was unchanged after the drought.", research.CitationUnsupported},
		{"most", "Most participants were able to finish the lattice puzzle within an hour.",
			"participants were able to finish the lattice puzzle within an hour", research.CitationOutOfContext},
		{"some", "Some chondrocyte lines showed a doubling of glyphan secretion.",
			"chondrocyte lines showed a doubling of glyphan secretion", research.CitationOutOfContext},
		{"a partitive of words no list holds", "A smattering of the dune plots kept their lichen crust through the trampling trial.",
			"dune plots kept their lichen crust through the trampling trial", research.CitationOutOfContext},
		{"a count", "Seven of the 31 kilns fired evenly after the flue was widened.",
			"kilns fired evenly after the flue was widened", research.CitationOutOfContext},
		{"the same words governed in one place and not in another", "We found no evidence that weekly sauna sessions lowered resting blood pressure in the full cohort. In the subgroup over 60, weekly sauna sessions lowered resting blood pressure by 6 mmHg.",
			"weekly sauna sessions lowered resting blood pressure", research.CitationVerified},
		{"the same words governed in both places", "We found no evidence that weekly sauna sessions lowered resting blood pressure in the full cohort. There was no evidence either that weekly sauna sessions lowered resting blood pressure in the subgroup.",
			"weekly sauna sessions lowered resting blood pressure", research.CitationContradicted},
		{"the article only", "The kilns fired evenly after the flue was widened.",
			"kilns fired evenly after the flue was widened", research.CitationVerified},
		{"after a clause", "Across both winters, kilns fired evenly after the flue was widened.",
			"kilns fired evenly after the flue was widened", research.CitationVerified},
	} {
		if f := Compare(tc.record, tc.quote); f.Verdict != tc.want {
			t.Errorf("%s: %q against %q: %s (%s); want %s", tc.name, tc.quote, tc.record, f.Verdict, f.Note, tc.want)
		}
	}
}

// TestNotationInMarkup: a record that carries its exponents in <sup> tags (a JATS or
// HTML abstract, read with its tags stripped) is read with them as exponents, whichever
// way the quote writes them; a footnote mark in a tag is stripped as before.
func TestNotationInMarkup(t *testing.T) {
	const result = `{"resultList": {"result": [{"doi": "10.5555/cosci.seal.01", "title": "Seal leakage in cryogenic stores",
 "abstractText": "<p>The helium leak rate stayed under 2 × 10<sup>-8</sup> mbar l s<sup>−1</sup> for every welded seal. Frost held 3 × 10<sup>5</sup> ice crystals cm<sup>2</sup> on the lid.</p><p>Indium seals were first described by Okafor<sup>3</sup> for such stores.</p>"}]}}`
	records := map[string]string{"r": result}
	for _, tc := range []struct{ quote, want string }{
		{"The helium leak rate stayed under 2 x 10^-8 mbar l s^-1 for every welded seal", research.CitationVerified},
		{"The helium leak rate stayed under 2 × 10⁻⁸ mbar l s⁻¹ for every welded seal", research.CitationVerified},
		{"The helium leak rate stayed under 2 x 10-8 mbar l s-1 for every welded seal", research.CitationVerified},
		{"The helium leak rate stayed under 2 x 10^8 mbar l s^-1 for every welded seal", research.CitationContradicted},
		{"Frost held 3 x 10^5 ice crystals cm^2 on the lid", research.CitationVerified},
		{"Frost held 3 × 10⁵ ice crystals cm² on the lid", research.CitationVerified},
		{"Indium seals were first described by Okafor3 for such stores", research.CitationVerified},
	} {
		ref := research.Reference{ID: "10.5555/cosci.seal.01", Source: "r", Quote: tc.quote}
		if c := Check([]research.Reference{ref}, records)[0].Check; c.Verdict != tc.want {
			t.Errorf("%q: %s (%s); want %s", tc.quote, c.Verdict, c.Note, tc.want)
		}
	}
}
