package citation

import (
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// Results shaped as cosci's literature server gives them: a search with passages of two
// sources (one on two pages), and a fetch of a page, whose passages sit in the record.
const (
	passageSearch = `{"query": "exosome inhibition seeding", "total": 2,
 "results": [{"id": "10.5555/cosci.tau.001", "doi": "10.5555/cosci.tau.001", "key": "ito2021microglia", "title": "Microglia carry tau between synapses in exosomes",
   "authors": ["Ito, Kenji"], "year": 2021, "venue": "Journal of Test Neuroscience", "snippet": "Inhibiting exosome synthesis with GW4869 slowed propagation to the same degree.", "score": 3.1}],
 "passages": [
  {"id": "10.5555/cosci.tau.001", "passage": "10.5555/cosci.tau.001#p1.13", "page": 1, "section": "results",
   "text": "GW4869 reduced propagation to the same degree as depletion. Exosome inhibition lowered seeding activity in the dentate gyrus by 46% (p < 0.01, n = 11) without changing the number of microglia.",
   "doi": "10.5555/cosci.tau.001", "key": "ito2021microglia", "title": "Microglia carry tau between synapses in exosomes", "year": 2021,
   "file": "files/12/Ito et al. - 2021 - Microglia carry tau between synapses in exosomes.pdf", "score": 5.2},
  {"id": "10.5555/cosci.tau.001", "passage": "10.5555/cosci.tau.001#p2.5", "page": 2, "section": "results",
   "text": "The effects were not explained by inflammation. Levels of interleukin-1β and tumour necrosis factor did not differ between groups.",
   "doi": "10.5555/cosci.tau.001", "key": "ito2021microglia", "title": "Microglia carry tau between synapses in exosomes", "year": 2021,
   "file": "files/12/Ito et al. - 2021 - Microglia carry tau between synapses in exosomes.pdf", "score": 4.0},
  {"id": "kim2021", "passage": "kim2021#p1.7", "page": 1, "section": "results",
   "text": "Microglia lacking BIN1 released 38% fewer extracellular vesicles than control microglia (p = 0.004).",
   "key": "kim2021", "title": "BIN1 regulates tau propagation through extracellular vesicles", "year": 2021, "score": 3.3}
 ]}`
	pageFetch = `{"id": "10.5555/cosci.tau.001", "doi": "10.5555/cosci.tau.001", "key": "ito2021microglia", "title": "Microglia carry tau between synapses in exosomes",
 "abstract": "Microglia phagocytose tau aggregates released at synapses and secrete them again in exosomes.",
 "fulltext": {"file": "files/12/Ito et al. - 2021 - Microglia carry tau between synapses in exosomes.pdf", "kind": "pdf", "pages": 3, "sections": {"results": 6}, "passages": 22},
 "passages": [
  {"passage": "10.5555/cosci.tau.001#p2.2", "page": 2, "section": "results", "text": "Microglial exosomes carried seed-competent tau. Exosomes purified from microglia of PS19 mice induced aggregation in the biosensor cells."},
  {"passage": "10.5555/cosci.tau.001#p2.6", "page": 2, "section": "discussion", "text": "Our findings identify microglial exosomes as a route by which tau seeds spread between connected regions."}
 ]}`
)

func TestPassageCitations(t *testing.T) {
	results := []Result{{Source: "search", Content: passageSearch}, {Source: "fetch", Content: pageFetch}}
	records := map[string]string{"search": passageSearch, "fetch": pageFetch}
	const ito = "10.5555/cosci.tau.001"
	file := "files/12/Ito et al. - 2021 - Microglia carry tau between synapses in exosomes.pdf"
	for _, tc := range []struct {
		name       string
		ref        research.Reference
		passage    string // as resolved
		page       int
		section    string
		source     string
		verdict    string
		note       string // in the check's note
		fileWanted bool
		wantID     string
	}{
		{name: "the passage named holds the quote",
			ref:     research.Reference{ID: ito, Passage: ito + "#p1.13", Quote: "Exosome inhibition lowered seeding activity in the dentate gyrus by 46%"},
			passage: ito + "#p1.13", page: 1, section: "results", source: "search", verdict: research.CitationVerified, fileWanted: true},
		{name: "the passage named by its place alone",
			ref:     research.Reference{ID: ito, Passage: "p2.5", Quote: "Levels of interleukin-1β and tumour necrosis factor did not differ between groups"},
			passage: ito + "#p2.5", page: 2, section: "results", source: "search", verdict: research.CitationVerified, fileWanted: true},
		{name: "the id names the passage",
			ref:     research.Reference{ID: ito + "#p1.13", Quote: "GW4869 reduced propagation to the same degree as depletion"},
			passage: ito + "#p1.13", page: 1, section: "results", source: "search", verdict: research.CitationVerified, fileWanted: true, wantID: ito},
		{name: "a quote from another passage than the one named",
			ref:     research.Reference{ID: ito, Passage: ito + "#p2.5", Quote: "Exosome inhibition lowered seeding activity in the dentate gyrus by 46%"},
			passage: ito + "#p2.5", page: 2, section: "results", source: "search", verdict: research.CitationUnsupported,
			note: "the quote is from passage 10.5555/cosci.tau.001#p1.13 (page 1), not the cited passage 10.5555/cosci.tau.001#p2.5", fileWanted: true},
		{name: "a quote from another passage of the cited passage's page",
			ref:     research.Reference{ID: ito, Passage: ito + "#p2.2", Quote: "Our findings identify microglial exosomes as a route by which tau seeds spread"},
			passage: ito + "#p2.2", page: 2, section: "results", source: "fetch", verdict: research.CitationUnsupported,
			note: "the quote is from passage 10.5555/cosci.tau.001#p2.6 (page 2), not the cited passage 10.5555/cosci.tau.001#p2.2", fileWanted: true},
		{name: "a passage no result gave",
			ref:     research.Reference{ID: ito, Passage: ito + "#p7.2", Quote: "Exosome inhibition lowered seeding activity in the dentate gyrus by 46%"},
			passage: ito + "#p7.2", page: 7, source: "search", verdict: research.CitationUnsupported,
			note: "the cited passage 10.5555/cosci.tau.001#p7.2 is not in what the tool returned"},
		{name: "the page named holds the quote",
			ref:  research.Reference{ID: ito, Page: 2, Quote: "Our findings identify microglial exosomes as a route by which tau seeds spread"},
			page: 2, section: "discussion", source: "fetch", verdict: research.CitationVerified, fileWanted: true},
		{name: "the page named does not",
			ref:  research.Reference{ID: ito, Page: 2, Quote: "Exosome inhibition lowered seeding activity in the dentate gyrus by 46%"},
			page: 2, source: "search", verdict: research.CitationUnsupported, note: "not the cited page 2", fileWanted: true},
		{name: "a passage's number changed",
			ref:     research.Reference{ID: ito, Passage: ito + "#p1.13", Quote: "Exosome inhibition lowered seeding activity in the dentate gyrus by 64%"},
			passage: ito + "#p1.13", page: 1, section: "results", source: "search", verdict: research.CitationContradicted, fileWanted: true},
		{name: "nothing named: placed where the quote is",
			ref:     research.Reference{ID: ito, Quote: "Exosomes purified from microglia of PS19 mice induced aggregation in the biosensor cells"},
			passage: ito + "#p2.2", page: 2, section: "results", source: "fetch", verdict: research.CitationVerified, fileWanted: true},
		{name: "nothing named, from the abstract: no place",
			ref:    research.Reference{ID: ito, Quote: "Microglia phagocytose tau aggregates released at synapses"},
			source: "fetch", verdict: research.CitationVerified},
		{name: "a key's passage",
			ref:     research.Reference{ID: "kim2021", Passage: "kim2021#p1.7", Quote: "Microglia lacking BIN1 released 38% fewer extracellular vesicles"},
			passage: "kim2021#p1.7", page: 1, section: "results", source: "search", verdict: research.CitationVerified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Resolve([]research.Reference{tc.ref}, results, nil)[0]
			want := tc.wantID
			if want == "" {
				want = tc.ref.ID
			}
			if got.ID != want || got.Passage != tc.passage || got.Page != tc.page || got.Section != tc.section || got.Source != tc.source {
				t.Errorf("resolved %s %s p.%d %s from %s; want %s %s p.%d %s from %s", got.ID, got.Passage, got.Page, got.Section, got.Source,
					want, tc.passage, tc.page, tc.section, tc.source)
			}
			if (got.File == file) != tc.fileWanted {
				t.Errorf("file %q", got.File)
			}
			c := Check([]research.Reference{got}, records)[0].Check
			if c.Verdict != tc.verdict || !strings.Contains(c.Note, tc.note) {
				t.Errorf("checked %s (%s); want %s (%s)", c.Verdict, c.Note, tc.verdict, tc.note)
			}
		})
	}
}

// Results of one paper read at its pages: a fetch of page 1 (an abstract that finds no
// evidence of what the results then state of a subgroup), a fetch of page 2 with a
// passage that runs onto page 3 ("breaks": the offset at which page 3 starts), and a
// search whose only passage of the paper is on page 1.
const (
	sauna      = "10.5555/cosci.sauna.07"
	saunaPage1 = `{"id": "10.5555/cosci.sauna.07", "title": "Weekly sauna bathing and resting blood pressure",
 "passages": [
  {"passage": "10.5555/cosci.sauna.07#p1.1", "page": 1, "section": "abstract", "text": "We found no evidence that weekly sauna sessions lowered resting blood pressure in the full cohort of 212 adults."},
  {"passage": "10.5555/cosci.sauna.07#p1.4", "page": 1, "section": "results", "text": "In the subgroup over 60, weekly sauna sessions lowered resting blood pressure by 6 mmHg."}
 ]}`
	saunaPage2 = `{"id": "10.5555/cosci.sauna.07", "title": "Weekly sauna bathing and resting blood pressure",
 "passages": [
  {"passage": "10.5555/cosci.sauna.07#p2.3", "page": 2, "section": "results", "text": "Adherence was high in both arms. Ninety-one percent of sessions were logged by the wearable."},
  {"passage": "10.5555/cosci.sauna.07#p2.11", "page": 2, "section": "discussion", "last_page": 3,
   "text": "Arterial stiffness eased over the following month in the sauna arm alone."},
  {"passage": "10.5555/cosci.sauna.07#p2.9", "page": 2, "section": "discussion", "breaks": [55], "last_page": 3,
   "text": "Heat exposure raised plasma volume within three weeks. The rise in plasma volume preceded any change in arterial stiffness."}
 ]}`
	saunaSearch = `{"query": "sauna blood pressure", "results": [{"id": "10.5555/cosci.sauna.07", "title": "Weekly sauna bathing and resting blood pressure"}],
 "passages": [
  {"id": "10.5555/cosci.sauna.07", "passage": "10.5555/cosci.sauna.07#p1.6", "page": 1, "section": "results", "text": "Cortisol on waking did not differ between the sauna and the control arm."}
 ]}`
)

// TestPagedCitations: a quote cited at a page is read against that page's sentences,
// passage by passage, a passage that crosses onto the page included; one cited at the
// wrong page is told where it is, whichever result the turn read it in.
func TestPagedCitations(t *testing.T) {
	results := []Result{{Source: "page1", Content: saunaPage1}, {Source: "page2", Content: saunaPage2}, {Source: "search", Content: saunaSearch}}
	records := map[string]string{"page1": saunaPage1, "page2": saunaPage2, "search": saunaSearch}
	for _, tc := range []struct {
		name          string
		page          int
		quote         string
		verdict, note string
	}{
		{"a correct quote of the results on the abstract's page", 1, "weekly sauna sessions lowered resting blood pressure", research.CitationVerified, ""},
		{"a sentence on the page a passage runs onto", 3, "The rise in plasma volume preceded any change in arterial stiffness", research.CitationVerified, ""},
		{"the same sentence at the page its passage starts on", 2, "The rise in plasma volume preceded any change in arterial stiffness",
			research.CitationUnsupported, "the quote is from passage 10.5555/cosci.sauna.07#p2.9 (page 3), not the cited page 2"},
		{"a sentence of the passage's first page cited at its next", 3, "Heat exposure raised plasma volume within three weeks",
			research.CitationUnsupported, "the quote is from passage 10.5555/cosci.sauna.07#p2.9 (page 2), not the cited page 3"},
		{"a passage that runs onto the page without its breaks", 3, "Arterial stiffness eased over the following month in the sauna arm alone", research.CitationVerified, ""},
		{"the wrong page, which the turn also fetched", 2, "Cortisol on waking did not differ between the sauna and the control arm",
			research.CitationUnsupported, "the quote is from passage 10.5555/cosci.sauna.07#p1.6 (page 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := Resolve([]research.Reference{{ID: sauna, Page: tc.page, Quote: tc.quote}}, results, nil)[0]
			c := Check([]research.Reference{ref}, records)[0].Check
			if c.Verdict != tc.verdict || !strings.Contains(c.Note, tc.note) {
				t.Errorf("checked %s (%s) from %s; want %s (%s)", c.Verdict, c.Note, ref.Source, tc.verdict, tc.note)
			}
		})
	}
}
