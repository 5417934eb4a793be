package citation

import (
	"slices"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// A search result and a fetched record, as cosci's literature server gives them.
const (
	searchResult = `{"query":"tau microglia","total":2,"results":[
 {"id":"10.5555/cosci.tau.001","doi":"10.5555/cosci.tau.001","title":"Microglia carry tau","authors":["Ito, Kenji"],"year":2021,"snippet":"Microglia phagocytose tau and release it in exosomes."},
 {"id":"smith2019","title":"Neuronal activity and tau","snippet":"Activity accelerates the release of tau."}]}`
	fetched   = `{"id":"10.5555/cosci.tau.001","doi":"10.5555/cosci.tau.001","key":"ito2021","title":"Microglia carry tau between synapses","authors":["Ito, Kenji","M\u00fcller, Anna"],"year":2021,"venue":"J. Neuro. Tests","url":"https://example.org/ito","abstract":"We show that microglia phagocytose tau and release it in exosomes. Depleting microglia \u2014 with PLX3397 \u2014 halved the spread of tau in mice."}`
	cslResult = `[{"id":"k1","type":"article-journal","title":"A CSL item","author":[{"family":"Doe","given":"Jane"},{"literal":"The Tau Consortium"}],"issued":{"date-parts":[[2019,3]]},"container-title":"Journal","DOI":"10.5555/CSL.1"}]`
)

func TestResolve(t *testing.T) {
	results := []Result{{Source: "s-search", Content: searchResult}, {Source: "s-fetch", Content: fetched}, {Source: "s-csl", Content: cslResult}}
	refs := []research.Reference{
		{ID: "10.5555/cosci.tau.001", Quote: "q1"},                                                                   // a search hit and a fetched record: the record wins
		{ID: "10.5555/cosci.tau.001", Quote: "Microglia phagocytose tau and release it in exosomes."},                // the search hit holds the quote too: the richer record that does
		{ID: "10.5555/cosci.tau.001", Quote: "Depleting microglia, with PLX3397, halved the spread of tau in mice."}, // only the fetched record holds it
		{ID: "smith2019", Quote: "q2"},                                                                               // a parent's too: its record stays the source, as no hit holds the quote
		{ID: "10.5555/csl.1"},                                                                                        // CSL-JSON, found by its DOI
		{ID: "10.5555/cosci.invented", Quote: "q3"},
		{ID: "parent2020"}, // cited from a parent, not fetched again
		// cited from a parent with the parent's quote, which the parent's fetched record
		// holds; this turn's search hit names the work without holding the quote
		{ID: "smith2019", Quote: "Activity drives tau release at the synapse, as the parent read."},
	}
	inherited := []research.Reference{
		{ID: "parent2020", Source: "s-parent", Title: "A parent's source", Year: 2020},
		{ID: "smith2019", Source: "s-parent-fetch", Quote: "Activity drives tau release at the synapse, as the parent read."},
	}
	got := Resolve(refs, results, inherited)

	r := got[0]
	if r.Source != "s-fetch" || r.Title != "Microglia carry tau between synapses" || r.Venue != "J. Neuro. Tests" || r.Year != 2021 ||
		!slices.Equal(r.Authors, []string{"Ito, Kenji", "Müller, Anna"}) || r.DOI != "10.5555/cosci.tau.001" || r.URL != "https://example.org/ito" || r.Quote != "q1" {
		t.Errorf("fetched: %+v", r)
	}
	if r := got[1]; r.Source != "s-fetch" || r.Title != "Microglia carry tau between synapses" {
		t.Errorf("quoted search hit: %+v", r)
	}
	if r := got[2]; r.Source != "s-fetch" {
		t.Errorf("quoted fetched record: %+v", r)
	}
	got = slices.Delete(got, 1, 3)
	if r := got[1]; r.Source != "s-parent-fetch" || r.Title != "Neuronal activity and tau" || r.DOI != "" {
		t.Errorf("search hit: %+v", r)
	}
	if r := got[2]; r.Source != "s-csl" || r.DOI != "10.5555/csl.1" || r.Year != 2019 || !slices.Equal(r.Authors, []string{"Doe, Jane", "The Tau Consortium"}) || r.Venue != "Journal" {
		t.Errorf("CSL-JSON: %+v", r)
	}
	if r := got[3]; r.Source != "" || r.Title != "" || r.Quote != "q3" {
		t.Errorf("invented: %+v", r)
	}
	if r := got[4]; r.Source != "s-parent" || r.Title != "A parent's source" {
		t.Errorf("inherited: %+v", r)
	}
	if r := got[5]; r.Source != "s-parent-fetch" || r.Title != "Neuronal activity and tau" {
		t.Errorf("inherited with the parent's quote: %+v; want the parent's source, with the details of this turn's hit", r)
	}
}

func TestCheck(t *testing.T) {
	records := map[string]string{"s-fetch": fetched, "s-search": searchResult}
	refs := []research.Reference{
		{ID: "10.5555/cosci.tau.001", Source: "s-fetch", Quote: "Microglia phagocytose tau and release it in exosomes."},
		{ID: "https://doi.org/10.5555/COSCI.TAU.001", Source: "s-fetch", Quote: "Microglia phagocytose tau and release it in exosomes."},
		{ID: "10.5555/cosci.tau.001", Source: "s-fetch", Quote: "Microglia destroy tau in lysosomes within minutes of uptake."},
		{ID: "10.5555/cosci.tau.001", Source: "s-fetch", Quote: "Depleting microglia with PLX3397 doubled the spread of tau in mice."},
		{ID: "10.5555/cosci.x", Source: "", Quote: "anything"},
		{ID: "10.5555/cosci.x", Source: "s-fetch", Quote: "a record that does not name it"},
		{ID: "10.5555/cosci.tau.00", Source: "s-fetch", Quote: "Microglia phagocytose tau and release it in exosomes."}, // cut short
		{ID: "smith2019", Source: "s-gone", Quote: "a record not in the trail"},
		{ID: "smith2019", Source: "s-search"},
		{ID: "smith2019", Source: "s-search", Quote: "Microglia phagocytose tau and release it in exosomes."}, // the other hit's words
	}
	want := []string{research.CitationVerified, research.CitationVerified, research.CitationUnsupported, research.CitationContradicted,
		research.CitationInvented, research.CitationInvented, research.CitationInvented, research.CitationInvented,
		research.CitationUnsupported, research.CitationUnsupported}
	got := Checks(Check(refs, records))
	for i, c := range got {
		if c.Verdict != want[i] || c.ID != refs[i].ID {
			t.Errorf("reference %d (%s): %s (%s), want %s", i, refs[i].ID, c.Verdict, c.Note, want[i])
		}
	}
	if n := got[9].Note; n != "the quote is from another source of the same result, 10.5555/cosci.tau.001, not from smith2019" {
		t.Errorf("a quote of another hit: note %q", n)
	}
	if p := got[3].Passage; p != "Depleting microglia — with PLX3397 — halved the spread of tau in mice" {
		t.Errorf("a contradicted quote's passage: %q", p)
	}
}

// TestResolveKeepsWhatAParentRead: a bare id in this turn's results neither blanks an
// inherited reference's details nor takes its source.
func TestResolveKeepsWhatAParentRead(t *testing.T) {
	parent := research.Reference{ID: "123456", PMID: "123456", Source: "s-parent", Title: "Tau spreading", Year: 2020, Authors: []string{"Ito, Kenji"},
		Quote: "Microglia carry tau between synapses in aged mice."}
	refs := []research.Reference{{ID: "PMID:123456", Quote: "Depleting microglia halved the spread of tau in mice."}}
	got := Resolve(refs, []Result{{Source: "s-idlist", Content: `{"esearchresult":{"idlist":["123456"]}}`}}, []research.Reference{parent})[0]
	if got.Source != "s-parent" || got.Title != "Tau spreading" || got.Year != 2020 || len(got.Authors) != 1 {
		t.Errorf("Resolve = %+v; want the parent's source and details", got)
	}
}
