package proximity

import "testing"

// Two distinct hypotheses that cite the same sources stay apart, however the ids are
// written; the same hypothesis citing other sources stays a copy of itself.
func TestCitedIDsAreNotWords(t *testing.T) {
	const (
		a = "Hyaluronan at the heart of protein propagation. Hyaluronan in the extracellular matrix gates the uptake of tau seeds by neurons, so that its loss speeds the spread of tau between connected regions."
		b = "Clock-controlled timing as the engine of druggable mechanisms. A circadian switch in microglial phagocytosis sets when tau aggregates are cleared, and its disruption in early disease lets seeds spread."
	)
	apart := SignText(a).Similarity(SignText(b))
	for _, tc := range []struct{ name, cites, other string }{
		{"DOIs", " It builds on 10.5555/cosci.tau.001, 10.5555/cosci.tau.011, 10.5555/cosci.tau.004.", " It builds on 10.1038/s41586-020-2012-7."},
		{"DOIs with doi: and links", " See doi:10.1016/j.neuron.2021.03.010 and https://doi.org/10.1126/science.abb8255 (Kim).", " See https://example.org/paper/42."},
		{"PubMed, PMC and arXiv ids", " Sources: PMID: 31375538, PMC6781010, arXiv:2104.08663v2.", " Sources: PMID 12345678."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SignText(a + tc.cites).Similarity(SignText(b + tc.cites)); got > apart+0.05 {
				t.Errorf("citing the same sources brought two distinct hypotheses from %.3f to %.3f", apart, got)
			}
			if got := SignText(a + tc.cites).Similarity(SignText(a + tc.other)); got < 0.9 {
				t.Errorf("one hypothesis citing other sources reads %.3f like itself; want at least 0.9", got)
			}
		})
	}
}
