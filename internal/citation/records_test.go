package citation

import (
	"os"

	"github.com/cosci-dev/cosci/internal/research"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func shape(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "shapes", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// has says whether a record's text holds a passage, ignoring case and spacing.
func has(text, passage string) bool {
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	return strings.Contains(norm(text), norm(passage))
}

// Each result shape, as its API documents it: the record for an id has that source's ids,
// its details, and its own prose, never another record's.
func TestFindRecordShapes(t *testing.T) {
	const (
		asaiTitle = "Depletion of microglia and inhibition of exosome synthesis halt tau propagation."
		asaiDOI   = "10.1038/s41593-021-00001-x"
		clavTitle = "Transmission and spreading of tauopathy in transgenic mouse brain."
	)
	tests := []struct {
		file, id string
		ids      []string // written ids the record must name too
		want     Details  // ID and URL are compared only when given
		own      string   // a passage of this record
		other    string   // a passage of another record of the same result
		records  int      // how many records the result holds
	}{
		{file: "cosci_search.json", id: "https://doi.org/10.5555/COSCI.TAU.010", ids: []string{"ito2021microglia"},
			want: Details{ID: "10.5555/cosci.tau.010", DOI: "10.5555/cosci.tau.010", Title: "Microglia carry tau between synapses", Venue: "J. Neuro. Tests", Year: 2021, Authors: []string{"Ito, Kenji", "Müller, Anna"}, URL: "https://doi.org/10.5555/cosci.tau.010"},
			own:  "Depleting microglia with PLX3397 halved the spread of tau", other: "Chemogenetic activation increased tau release", records: 3},
		{file: "cosci_search.json", id: "10.5555/cosci.tau.01", ids: []string{"lee2019activity"},
			want: Details{DOI: "10.5555/cosci.tau.01", Title: "Neuronal activity and tau release", Year: 2019, Authors: []string{"Lee, Min"}},
			own:  "increased tau release by 2.3-fold", other: "halved the spread of tau", records: 3},
		{file: "cosci_search.json", id: "kim2021bin1",
			want: Details{ID: "kim2021bin1", Title: "BIN1 and the endocytic entry of tau", Venue: "Cell Reports", Year: 2021, Authors: []string{"Kim, Soo-Jin"}},
			own:  "did not change tau uptake in cultured neurons", other: "halved the spread of tau", records: 3},
		{file: "cosci_fetch.json", id: "ito2021microglia", ids: []string{"10.5555/cosci.tau.010"},
			want: Details{DOI: "10.5555/cosci.tau.010", Title: "Microglia carry tau between synapses", Venue: "J. Neuro. Tests", Year: 2021, Authors: []string{"Ito, Kenji", "Müller, Anna"}},
			own:  "Depleting microglia — with PLX3397 — halved the spread of tau in P301S mice", records: 1},
		{file: "csl.json", id: "10.5555/csl.1", ids: []string{"doe2019csl", "PMID: 30111111"},
			want: Details{ID: "doe2019csl", DOI: "10.5555/csl.1", PMID: "30111111", Title: "A CSL item on astrocytes", Venue: "Glia", Year: 2019, Authors: []string{"Doe, Jane", "The Tau Consortium"}, URL: "https://example.org/doe"},
			own:  "Reactive astrocytes lowered synaptic tau by a third", other: "A handbook of the tauopathies", records: 2},
		{file: "csl.json", id: "ISBN 978-0-306-40615-7", ids: []string{"roe2020"},
			want: Details{Title: "Tauopathies: a handbook", Year: 2020, Authors: []string{"Roe, Richard"}},
			own:  "A handbook of the tauopathies", other: "Reactive astrocytes", records: 2},
		{file: "esummary.json", id: "PMID: 33811111", ids: []string{asaiDOI, "PMC8011111"},
			want: Details{ID: "33811111", DOI: asaiDOI, PMID: "33811111", PMCID: "PMC8011111", Title: asaiTitle, Venue: "Nature neuroscience", Year: 2021, Authors: []string{"Asai, H", "Ikezu, S", "Ikezu, T"}},
			own:  asaiTitle, other: clavTitle, records: 2},
		{file: "esummary.xml", id: "https://doi.org/10.1038/S41593-021-00001-X", ids: []string{"33811111", "PMC8011111"},
			want: Details{ID: "33811111", DOI: asaiDOI, PMID: "33811111", PMCID: "PMC8011111", Title: asaiTitle, Venue: "Nature neuroscience", Year: 2021, Authors: []string{"Asai, H", "Ikezu, T"}},
			own:  asaiTitle, other: clavTitle, records: 2},
		{file: "efetch.xml", id: "33811111", ids: []string{asaiDOI, "PMC8011111"},
			want: Details{ID: "33811111", DOI: asaiDOI, PMID: "33811111", PMCID: "PMC8011111", Title: asaiTitle, Venue: "Nature neuroscience", Year: 2021, Authors: []string{"Asai, Hirohide", "Ikezu, Tsuneya", "Tau Imaging Group"}},
			own:  "Depleting microglia in vivo reduced tau propagation by 55% (P < 0.01)", other: "immunodepleted of tau", records: 2},
		{file: "efetch.xml", id: "10.1093/brain/awab002", ids: []string{"34022222"},
			want: Details{ID: "34022222", DOI: "10.1093/brain/awab002", PMID: "34022222", Title: clavTitle, Venue: "Brain : a journal of neurology", Year: 2021, Authors: []string{"Clavaguera, Florence"}},
			own:  "filaments did not form when the extract was immunodepleted of tau", other: "Tau pathology spreads along neuronal circuits", records: 2},
		{file: "efetch_book.xml", id: "PMID: 20301340",
			want: Details{ID: "20301340", PMID: "20301340", Title: "Alzheimer Disease Overview", Venue: "GeneReviews®", Year: 1993, Authors: []string{"Bird, Thomas D"}},
			own:  "adult-onset progressive dementia", records: 1},
		{file: "europepmc_core.json", id: "PMC8011111", ids: []string{"33811111", asaiDOI},
			want: Details{ID: "33811111", DOI: asaiDOI, PMID: "33811111", PMCID: "PMC8011111", Title: asaiTitle, Venue: "Nature neuroscience", Year: 2021, Authors: []string{"Asai, Hirohide", "Ikezu, Seiko", "Ikezu, Tsuneya"}},
			own:  "Depleting microglia reduced tau propagation by 55%", other: "Astrocytes internalised fewer than 5%", records: 2},
		{file: "europepmc_core.json", id: "PPR412345", ids: []string{"10.1101/2021.05.01.442001"},
			want: Details{ID: "PPR412345", DOI: "10.1101/2021.05.01.442001", Title: "Astrocytes do not take up tau fibrils in organotypic slices", Year: 2021, Authors: []string{"Novak, P", "Roe, R"}},
			own:  "a tenfold lower rate than microglia", other: "Depleting microglia reduced tau propagation", records: 2},
		{file: "arxiv.xml", id: "arXiv:2101.01234", ids: []string{"10.1016/j.neuroimage.2021.118000", "2101.01234v2"},
			want: Details{ID: "2101.01234v2", DOI: "10.1016/j.neuroimage.2021.118000", ArXiv: "2101.01234v2", Title: "A network diffusion model of tau spreading fitted to longitudinal PET", Venue: "NeuroImage 235 (2021) 118000", Year: 2021, Authors: []string{"van Doe, Jane Q.", "Roe, Richard"}, URL: "http://arxiv.org/abs/2101.01234v2"},
			own:  "Spread along the structural connectome explained 61% of the variance", other: "templated misfolding alone", records: 2},
		{file: "arxiv.xml", id: "https://arxiv.org/abs/q-bio/0401001", ids: []string{"q-bio/0401001v1"},
			want: Details{ArXiv: "q-bio/0401001v1", Title: "Prion-like templating in a lattice model", Year: 2004, Authors: []string{"Example, Ann"}},
			own:  "templated misfolding alone cannot produce the observed lag phase", other: "structural connectome", records: 2},
		{file: "openalex_list.json", id: "https://openalex.org/W3138511111", ids: []string{asaiDOI, "33811111", "PMC8011111"},
			want: Details{ID: "https://openalex.org/W3138511111", DOI: asaiDOI, PMID: "33811111", PMCID: "PMC8011111", OpenAlex: "W3138511111", Title: strings.TrimSuffix(asaiTitle, "."), Venue: "Nature Neuroscience", Year: 2021, Authors: []string{"Asai, Hirohide", "Ikezu, Tsuneya"}, URL: "https://doi.org/10.1038/s41593-021-00001-x"},
			own:  "Depleting microglia reduced tau propagation by 55%, whereas exosome inhibition spared tau uptake.", other: "Astrocytes cleared extracellular tau slowly", records: 2},
		{file: "openalex_work.json", id: "W2000000002",
			want: Details{OpenAlex: "W2000000002", Title: "Astrocytic clearance of extracellular tau", Venue: "Glia", Year: 2018, Authors: []string{"de la Cruz, Maria"}, URL: "https://example.org/astro"},
			own:  "Astrocytes cleared extracellular tau slowly.", records: 1},
		{file: "crossref_list.json", id: asaiDOI,
			want: Details{DOI: asaiDOI, Title: strings.TrimSuffix(asaiTitle, "."), Venue: "Nature Neuroscience", Year: 2021, Authors: []string{"Asai, Hirohide", "Ikezu, Tsuneya"}, URL: "https://doi.org/10.1038/s41593-021-00001-x"},
			own:  "whereas inhibiting exosome synthesis did not increase neuronal uptake", other: "immunodepleted of tau", records: 2},
		{file: "crossref_work.json", id: "doi:10.1093/BRAIN/awab002",
			want: Details{DOI: "10.1093/brain/awab002", Title: strings.TrimSuffix(clavTitle, "."), Venue: "Brain", Year: 2021, Authors: []string{"Clavaguera, Florence", "Tau Consortium"}},
			own:  "Filaments did not form when the extract was immunodepleted of tau & heated.", records: 1},
		{file: "semanticscholar.json", id: "PMC8011111", ids: []string{"649def34f8be52c8b66281af98ae884c09aef38b", asaiDOI, "33811111"},
			want: Details{ID: "649def34f8be52c8b66281af98ae884c09aef38b", DOI: asaiDOI, PMID: "33811111", PMCID: "PMC8011111", Title: strings.TrimSuffix(asaiTitle, "."), Venue: "Nature Neuroscience", Year: 2021, Authors: []string{"Asai, Hirohide", "Ikezu, T."}},
			own:  "Microglia spread tau via exosomes", records: 1},
		// @cyanheads/pubmed-mcp-server: the markdown its tools give a model, and their structured JSON
		{file: "pubmedmcp_search.md", id: "33811111", ids: []string{asaiDOI, "PMC8011111"},
			want: Details{ID: "33811111", DOI: asaiDOI, PMID: "33811111", PMCID: "PMC8011111", Title: asaiTitle, Venue: "Nat Neurosci", Year: 2021, Authors: []string{"Asai, H", "Ikezu, S", "Ikezu, T"}, URL: "https://pubmed.ncbi.nlm.nih.gov/33811111/"},
			own:  asaiTitle, other: clavTitle, records: 3},
		{file: "pubmedmcp_search.md", id: "10.1093/brain/awab002", ids: []string{"34022222"},
			want: Details{DOI: "10.1093/brain/awab002", PMID: "34022222", Title: clavTitle, Venue: "Brain", Year: 2021, Authors: []string{"Clavaguera, F", "Bolmont, T", "Crowther, RA"}},
			own:  clavTitle, other: asaiTitle, records: 3},
		{file: "pubmedmcp_search.json", id: "34022222", ids: []string{"10.1093/brain/awab002"},
			want: Details{DOI: "10.1093/brain/awab002", PMID: "34022222", Title: clavTitle, Venue: "Brain", Year: 2021, Authors: []string{"Clavaguera, F", "Bolmont, T", "Crowther, RA"}},
			own:  clavTitle, other: asaiTitle, records: 3},
		{file: "pubmedmcp_fetch.md", id: "PMC8011111", ids: []string{"33811111", asaiDOI},
			want: Details{ID: "33811111", DOI: asaiDOI, PMID: "33811111", PMCID: "PMC8011111", Title: asaiTitle, Venue: "Nature neuroscience", Year: 2021, Authors: []string{"Asai, Hirohide", "Ikezu, Seiko", "Ikezu, Tsuneya"}},
			own:  "whereas inhibiting exosome synthesis did not increase neuronal uptake", other: "immunodepleted of tau", records: 2},
		{file: "pubmedmcp_fetch.md", id: "34022222",
			want: Details{DOI: "10.1093/brain/awab002", PMID: "34022222", Title: clavTitle, Venue: "Brain : a journal of neurology", Year: 2021, Authors: []string{"Clavaguera, Florence"}},
			own:  "Injected brain extract from P301S mice induced tau filaments", other: "Tau pathology spreads", records: 2},
		{file: "pubmedmcp_fetch.json", id: "34022222", ids: []string{"10.1093/brain/awab002"},
			want: Details{DOI: "10.1093/brain/awab002", PMID: "34022222", Title: clavTitle, Venue: "Brain : a journal of neurology", Year: 2021, Authors: []string{"Clavaguera, Florence", "Tau Imaging Group"}},
			own:  "Injected brain extract from P301S mice induced tau filaments", other: "Tau pathology spreads", records: 2},
		{file: "pubmedmcp_europepmc.md", id: "https://europepmc.org/article/MED/33811111", ids: []string{"PMC8011111", asaiDOI},
			want: Details{ID: "33811111", DOI: asaiDOI, PMID: "33811111", PMCID: "PMC8011111", Title: asaiTitle, Venue: "Nature neuroscience", Year: 2021, Authors: []string{"Asai, H", "Ikezu, S", "Ikezu, T"}, URL: "https://europepmc.org/article/MED/33811111"},
			own:  "Depleting microglia reduced tau propagation by 55%", other: "a tenfold lower rate than microglia", records: 2},
		{file: "pubmedmcp_europepmc.md", id: "PPR412345", ids: []string{"10.1101/2021.05.01.442001"},
			want: Details{ID: "PPR412345", DOI: "10.1101/2021.05.01.442001", Title: "Astrocytes do not take up tau fibrils in organotypic slices", Year: 2021, Authors: []string{"Novak, P", "Roe, R"}},
			own:  "Astrocytes internalised fewer than 5% of labelled tau fibrils", other: "Depleting microglia", records: 2},
		{file: "pubmedmcp_related.md", id: "35033333",
			want: Details{ID: "35033333", PMID: "35033333", Title: "Microglial exosomes carry phosphorylated tau to distal synapses.", Venue: "J Neuroinflammation", Year: 2022, Authors: []string{"Ruan, Z", "Delpech, JC"}, URL: "https://pubmed.ncbi.nlm.nih.gov/35033333/"},
			own:  "Microglial exosomes carry phosphorylated tau", other: clavTitle, records: 3},
		{file: "pubmedmcp_fulltext.md", id: "33811111", ids: []string{"PMC8011111", asaiDOI},
			want: Details{ID: "PMC8011111", DOI: asaiDOI, PMID: "33811111", PMCID: "PMC8011111", Title: strings.TrimSuffix(asaiTitle, "."), Venue: "Nature Neuroscience", Year: 2021, Authors: []string{"Asai, Hirohide", "Ikezu, Tsuneya"}},
			own:  "Microglia phagocytose tau-positive synapses.", other: "Nat Cell Biol", records: 1}, // its reference list is not its prose
		{file: "prose.txt", id: "arXiv:2101.01234", ids: []string{"33811111", asaiDOI, "W2000000002", "ISBN 0-306-40615-2"},
			want: Details{DOI: asaiDOI, PMID: "33811111", ArXiv: "2101.01234v2", OpenAlex: "W2000000002"},
			own:  "depleting microglia halted tau propagation in mice", records: 1},
	}
	for _, tt := range tests {
		name := tt.file + " " + tt.id
		content := shape(t, tt.file)
		if got := len(Records(content)); got != tt.records {
			t.Errorf("%s: %d records, want %d", name, got, tt.records)
		}
		r, ok := FindRecord(content, tt.id)
		if !ok {
			t.Errorf("%s: no record", name)
			continue
		}
		for _, id := range append([]string{tt.id}, tt.ids...) {
			if !r.Has(id) {
				t.Errorf("%s: the record does not name %s (it names %v)", name, id, r.IDs)
			}
		}
		got := r.Details
		if tt.want.ID == "" {
			got.ID = ""
		}
		if tt.want.URL == "" {
			got.URL = ""
		}
		if !equalDetails(got, tt.want) {
			t.Errorf("%s: details\n got %+v\nwant %+v", name, got, tt.want)
		}
		if !has(r.Text, tt.own) {
			t.Errorf("%s: text %q does not hold its own %q", name, r.Text, tt.own)
		}
		if tt.other != "" && has(r.Text, tt.other) {
			t.Errorf("%s: text %q holds %q, of another record", name, r.Text, tt.other)
		}
	}
}

func equalDetails(a, b Details) bool {
	return slices.Equal(a.Authors, b.Authors) && a.Year == b.Year &&
		[9]string{a.ID, a.DOI, a.PMID, a.PMCID, a.ArXiv, a.OpenAlex, a.Title, a.Venue, a.URL} == [9]string{b.ID, b.DOI, b.PMID, b.PMCID, b.ArXiv, b.OpenAlex, b.Title, b.Venue, b.URL}
}

// Ids a result gives but no record of it is: a cut-short id, another work's id in a
// record's references, links or funders, a PMID the tool says it could not find.
func TestFindRecordMisses(t *testing.T) {
	tests := []struct{ file, id string }{
		{"cosci_search.json", "10.5555/cosci.tau.0"},
		{"cosci_search.json", "10.5555/cosci.tau.0100"},
		{"cosci_search.json", "kim2021"},
		{"cosci_search.json", "ito2021"},
		{"cosci_search.json", "2021"},
		{"efetch.xml", "19503072"},        // in its reference list
		{"efetch.xml", "10.1038/ncb1901"}, // in its reference list
		{"crossref_list.json", "10.1038/ncb1901"},
		{"crossref_list.json", "10.13039/100000002"},        // a funder
		{"crossref_list.json", "10.1101/2020.01.01.000001"}, // a preprint it relates to
		{"openalex_list.json", "https://openalex.org/W2100000001"},
		{"openalex_list.json", "https://openalex.org/A5011111111"},
		{"openalex_list.json", "https://openalex.org/S2034111111"},
		{"arxiv.xml", "2101.01234v1"}, // the feed gives v2
		{"arxiv.xml", "http://arxiv.org/api/lXvb7S7wzgUxtQkF1l0mLdfVx9I"},
		{"arxiv_error.xml", "1234.12345"},
		{"pubmedmcp_fetch.md", "39999999"}, // "Unavailable PMIDs"
		{"pubmedmcp_fetch.json", "39999999"},
		{"pubmedmcp_fulltext.md", "10.1038/ncb1901"},
		{"europepmc_core.json", "9809671"}, // a journal's NLM id
		{"prose.txt", "2101.01234v1"},
		{"prose.txt", "3381111"},
	}
	for _, tt := range tests {
		if r, ok := FindRecord(shape(t, tt.file), tt.id); ok {
			t.Errorf("%s: found %s in a record naming %v", tt.file, tt.id, r.IDs)
		}
	}
}

// A PMID a result lists and says nothing else of was returned: a record without text.
func TestListedIDsWithoutText(t *testing.T) {
	for _, file := range []string{"pubmedmcp_search.md", "pubmedmcp_search.json"} {
		r, ok := FindRecord(shape(t, file), "PMID: 35033333")
		if !ok || r.Text != "" || r.Details.Title != "" {
			t.Errorf("%s: %+v, %v; want a record without text", file, r, ok)
		}
	}
}

// A result that gives one source twice (a search hit and the fetched record): one record,
// with both texts and the fuller details.
func TestFindRecordMerges(t *testing.T) {
	content := "[" + shape(t, "cosci_search.json") + ",\n" + shape(t, "cosci_fetch.json") + "]"
	r, ok := FindRecord(content, "ito2021microglia")
	if !ok {
		t.Fatal("no record")
	}
	for _, q := range []string{"Depleting microglia with PLX3397 halved", "Inhibiting exosome synthesis did not reduce uptake"} {
		if !has(r.Text, q) {
			t.Errorf("merged text %q does not hold %q", r.Text, q)
		}
	}
	if has(r.Text, "Chemogenetic activation") {
		t.Errorf("merged text %q holds another hit's snippet", r.Text)
	}
	if r.Details.Title != "Microglia carry tau between synapses" || r.Details.DOI != "10.5555/cosci.tau.010" || len(r.Details.Authors) != 2 {
		t.Errorf("merged details: %+v", r.Details)
	}
}

// Results as they reach the citing turn: cut short, followed by a note, fenced, or prose
// that starts like JSON.
func TestRecordsOfDamagedResults(t *testing.T) {
	search := shape(t, "cosci_search.json")
	cut := search[:strings.Index(search, "Chemogenetic")]
	tests := []struct {
		name, content, id, own, other string
	}{
		{"cut short", cut, "kim2021bin1", "did not change tau uptake", "halved the spread"},
		{"cut short, with a note", cut + "\n[result truncated: 2 KB more]", "10.5555/cosci.tau.010", "halved the spread", "did not change tau uptake"},
		{"a note after it", search + "\n(3 results)", "kim2021bin1", "did not change tau uptake", "halved the spread"},
		{"fenced", "```json\n" + search + "\n```", "kim2021bin1", "did not change tau uptake", "halved the spread"},
		{"two values", shape(t, "cosci_fetch.json") + "\n" + search, "10.5555/cosci.tau.01", "increased tau release", "halved the spread"},
		{"markdown starting with a bracket", "[PMID 33811111](https://pubmed.ncbi.nlm.nih.gov/33811111/) reports that microglia spread tau.", "33811111", "microglia spread tau", ""},
	}
	for _, tt := range tests {
		r, ok := FindRecord(tt.content, tt.id)
		if !ok {
			t.Errorf("%s: no record for %s", tt.name, tt.id)
			continue
		}
		if !has(r.Text, tt.own) {
			t.Errorf("%s: text %q does not hold %q", tt.name, r.Text, tt.own)
		}
		if tt.other != "" && has(r.Text, tt.other) {
			t.Errorf("%s: text %q holds another record's %q", tt.name, r.Text, tt.other)
		}
	}
}

// JSON of a shape not known here is read as prose: its strings, and the ids its id
// fields and its text give; an id written only inside a word is not named.
func TestRecordsOfUnknownShapes(t *testing.T) {
	content := `{"status":"ok","items":[{"pmid":"33811111","name":"Tau spreads"},{"note":"see doi:10.1093/brain/awab002 and x10.1/y"}]}`
	recs := Records(content)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1: %+v", len(recs), recs)
	}
	r := recs[0]
	if !r.Has("33811111") || !r.Has("10.1093/brain/awab002") || r.Has("10.1/y") || !has(r.Text, "Tau spreads") {
		t.Errorf("prose record: %+v", r)
	}
	if got := Records("   "); got != nil {
		t.Errorf("empty result: %+v", got)
	}
}

// Prose that does not say which of two sources a passage is of gives the passage to
// neither: a section or a list item naming two DOIs is no record, and its ids are
// records without text.
func TestRecordsOfAmbiguousProse(t *testing.T) {
	section := "### Two works\n**DOI:** 10.1000/a\n**DOI:** 10.1000/b\nMicroglia spread tau.\n"
	if recs := Records(section); len(recs) != 1 || recs[0].Details.Title != "" || !recs[0].Has("10.1000/a") || !recs[0].Has("10.1000/b") || !recs[0].Unsplit {
		t.Errorf("a section naming two works: %+v; want one unsplit prose record, without a title", recs)
	}
	list := "Found:\n- Smith 2020, doi:10.1000/a, comments on doi:10.1000/b: microglia spread tau.\n- Lee 2021, doi:10.1000/c: astrocytes clear tau.\n"
	a, okA := FindRecord(list, "10.1000/a")
	c, okC := FindRecord(list, "10.1000/c")
	if !okA || a.Text != "" {
		t.Errorf("an item naming two works: %+v, %v; want a record without text", a, okA)
	}
	if !okC || !has(c.Text, "astrocytes clear tau") || has(c.Text, "microglia spread tau") || c.Details.Year != 2021 {
		t.Errorf("an item naming one work: %+v, %v", c, okC)
	}
}

// Every shape is read one record per source: a plain-text list of papers, JSON whatever
// the case of its keys or the name of its abstract's field; prose that names several
// sources and cannot be split is no one source's, and a quote of it is unsupported
// whichever id it cites.
func TestRecordsKeptApart(t *testing.T) {
	plain := "Found 2 papers.\n\nTitle: Microglia carry tau\nAuthors: Ito K, Müller A\nDOI: 10.5555/split.1\nAbstract: Depleting microglia halved the spread of tau in mice.\n\n" +
		"Title: Astrocytes and APOE\nDOI: 10.5555/split.2\nPubMed ID: 36509999\nAbstract: Astrocytic APOE4 increased tau seeding by 30% in organoids.\n"
	capital := `[{"ID":"a1","DOI":"10.5555/cap.1","Title":"One","Abstract":"Exercise raised BDNF in older adults."},` +
		`{"ID":"a2","DOI":"10.5555/cap.2","Title":"Two","Abstract":"Sleep loss lowered BDNF in students."}]`
	unknownKey := `{"records":[{"id":"k1","doi":"10.5555/key.1","title":"A title","paper_abstract_text":"Nitrogen addition reduced fungal richness by 18% across 40 grassland sites."}]}`
	forms := "See PubMed ID: 36509999 (PMC 9876543) for the cohort."
	if r, ok := FindRecord(forms, "PMC9876543"); !ok || !r.Has("36509999") {
		t.Errorf("PubMed ID and PMC n: %+v, %v", r, ok)
	}
	prose := "Two papers matter here: doi:10.5555/prose.1 found that warming advanced flowering by 4.2 days per degree, and doi:10.5555/prose.2 found no such shift in alpine species."
	tests := []struct {
		name, content, id, own, other string
		records                       int
	}{
		{"plain text, first", plain, "10.5555/split.1", "halved the spread of tau", "Astrocytic APOE4", 2},
		{"plain text, second", plain, "PMID:36509999", "Astrocytic APOE4 increased tau seeding", "halved the spread", 2},
		{"capitalised keys", capital, "10.5555/cap.2", "Sleep loss lowered BDNF", "Exercise raised", 2},
		{"an abstract under a key of its own", unknownKey, "10.5555/key.1", "reduced fungal richness by 18%", "", 1},
	}
	for _, tt := range tests {
		if n := len(Records(tt.content)); n != tt.records {
			t.Errorf("%s: %d records, want %d", tt.name, n, tt.records)
		}
		r, ok := FindRecord(tt.content, tt.id)
		if !ok || r.Unsplit || !has(r.Text, tt.own) || tt.other != "" && has(r.Text, tt.other) {
			t.Errorf("%s: %+v, %v", tt.name, r, ok)
		}
	}
	refs := []research.Reference{
		{ID: "10.5555/prose.1", Source: "p", Quote: "warming advanced flowering by 4.2 days per degree"},
		{ID: "10.5555/prose.2", Source: "p", Quote: "warming advanced flowering by 4.2 days per degree"},
		{ID: "10.5555/split.2", Source: "s", Quote: "Depleting microglia halved the spread of tau in mice."},
		{ID: "PMID: 36509999", Source: "s", Quote: "Astrocytic APOE4 increased tau seeding by 30% in organoids."},
	}
	got := Checks(Check(refs, map[string]string{"p": prose, "s": plain}))
	for i, want := range []string{research.CitationUnsupported, research.CitationUnsupported, research.CitationUnsupported, research.CitationVerified} {
		if got[i].Verdict != want {
			t.Errorf("reference %d: %s (%s), want %s", i, got[i].Verdict, got[i].Note, want)
		}
	}
	if !strings.Contains(got[0].Note, "cannot tell which source") {
		t.Errorf("an unsplit result's note: %q", got[0].Note)
	}
}

// What a tool result can hold does not blow the reader up: deep nesting, a huge result,
// many records; each is read within its bounds, and quickly.
func TestRecordsBounds(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{"results":[`)
	for i := range maxRecords + 50 {
		many.WriteString(`{"id":"k` + strconv.Itoa(i) + `","title":"t","snippet":"s"},`)
	}
	many.WriteString(`{}]}`)
	tests := []struct{ name, content string }{
		{"deep JSON", strings.Repeat("[", 200_000) + strings.Repeat("]", 200_000)},
		{"deep JSON objects", strings.Repeat(`{"a":`, 100_000) + `"x"` + strings.Repeat("}", 100_000)},
		{"deep XML", strings.Repeat("<a>", 100_000) + strings.Repeat("</a>", 100_000)},
		{"deep markdown", strings.Repeat("#", 100_000) + " x\n" + strings.Repeat("- ", 100_000)},
		{"huge prose", strings.Repeat("PMID: 1 tau ", maxContent/8)},
		{"many records", many.String()},
		{"many ids in prose", func() string {
			var b strings.Builder
			for i := range 200_000 {
				b.WriteString("PMID: ")
				b.WriteString(strings.Repeat("1", 1+i%8))
				b.WriteString(string(rune('0' + i%10)))
				b.WriteString("\n")
			}
			return b.String()
		}()},
		{"many ids in JSON", func() string {
			var b strings.Builder
			b.WriteString(`[{"doi":"10.1/x"}`)
			for i := range 50_000 {
				b.WriteString(`,{"doi":"10.1/x` + strconv.Itoa(i) + `"}`)
			}
			return b.String() + "]"
		}()},
		{"an inverted index pointing far", `{"id":"https://openalex.org/W1","title":"t","abstract_inverted_index":{"a":[999999999999],"b":[1e300],"c":[-1]}}`},
	}
	for _, tt := range tests {
		start := time.Now()
		recs := Records(tt.content)
		if len(recs) > maxRecords {
			t.Errorf("%s: %d records, more than %d", tt.name, len(recs), maxRecords)
		}
		// No time limit here (a loaded machine is no slower reader): what runs away, a
		// reading quadratic in these sizes, runs into the suite's own timeout.
		t.Logf("%s: %d records in %v", tt.name, len(recs), time.Since(start))
	}
	if n := len(Records(many.String())); n != maxRecords {
		t.Errorf("many records: %d, want the first %d", n, maxRecords)
	}
}

func FuzzRecords(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "shapes", "*"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), "33811111")
	}
	f.Add(`{"results":[{"id":"a","title":"b","authors":"c"}]}`, "a")
	f.Add(`<PubmedArticle><MedlineCitation><PMID>1</PMID></MedlineCitation></PubmedArticle>`, "PMID: 1")
	f.Add("#### t\n**PMID:** 1\n**Authors (1):**\n- x", "1")
	f.Fuzz(func(t *testing.T, content, id string) {
		recs := Records(content)
		if len(recs) > maxRecords {
			t.Fatalf("%d records", len(recs))
		}
		for _, r := range recs {
			for _, x := range r.IDs {
				if x.Value == "" || !x.Matches(x) {
					t.Fatalf("record id %+v does not match itself", x)
				}
			}
		}
		if r, ok := FindRecord(content, id); ok && !r.Has(id) {
			t.Fatalf("FindRecord(%q) gave a record that does not name it: %v", id, r.IDs)
		}
	})
}

// TestFailureLines: an id on a line that says the tool did not find it is not returned; a
// failure word in a title or an abstract does not hide the ids on its line.
func TestFailureLines(t *testing.T) {
	tests := []struct {
		text, id string
		returned bool
	}{
		{"- Smith J. Missing heritability of tau spread in early Alzheimer disease. Neuron 2020. doi:10.1016/j.neuron.2020.01.001", "10.1016/j.neuron.2020.01.001", true},
		{"Loss of BIN1 failed to slow tau spread. doi:10.1016/j.x.2020.1", "10.1016/j.x.2020.1", true},
		{"Unknown effects of APOE on tau: a cohort study. PMID: 35812904", "35812904", true},
		{"Unavailable PMIDs: 35812904, 3581290", "35812904", false},
		{"no reference with id 10.1016/j.x.2020.1 in the library", "10.1016/j.x.2020.1", false},
		{"Source PMID 35812904 not found", "35812904", false},
		{"Error: could not fetch doi:10.1016/j.x.2020.1", "10.1016/j.x.2020.1", false},
	}
	for _, tt := range tests {
		if _, ok := FindRecord(tt.text, tt.id); ok != tt.returned {
			t.Errorf("%q: %s returned = %v, want %v", tt.text, tt.id, ok, tt.returned)
		}
	}
}
