package citation

import (
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	tests := []struct {
		in   string
		want ID
	}{
		// DOI: lower case, without a resolver, trailing punctuation trimmed
		{"10.1038/NN.4321", ID{SchemeDOI, "10.1038/nn.4321"}},
		{"https://doi.org/10.1038/nn.4321", ID{SchemeDOI, "10.1038/nn.4321"}},
		{"http://dx.doi.org/10.1038/nn.4321", ID{SchemeDOI, "10.1038/nn.4321"}},
		{"doi.org/10.1038/nn.4321", ID{SchemeDOI, "10.1038/nn.4321"}},
		{"doi:10.1038/nn.4321", ID{SchemeDOI, "10.1038/nn.4321"}},
		{"DOI: 10.1038/nn.4321.", ID{SchemeDOI, "10.1038/nn.4321"}},
		{"(10.1038/nn.4321),", ID{SchemeDOI, "10.1038/nn.4321"}},
		{"https://doi.org/10.1002%2Fana.12345", ID{SchemeDOI, "10.1002/ana.12345"}},
		{"10.1016/0006-8993(85)91196-9", ID{SchemeDOI, "10.1016/0006-8993(85)91196-9"}}, // its own brackets stay
		{"10.48550/arXiv.2101.01234", ID{SchemeArXiv, "2101.01234"}},
		// PMID
		{"33811111", ID{SchemePMID, "33811111"}},
		{"PMID: 33811111", ID{SchemePMID, "33811111"}},
		{"pmid:33811111", ID{SchemePMID, "33811111"}},
		{"PMID33811111", ID{SchemePMID, "33811111"}},
		{"PubMed ID: 36509999", ID{SchemePMID, "36509999"}},
		{"PubMed: 36509999", ID{SchemePMID, "36509999"}},
		{"PMC 9876543", ID{SchemePMCID, "PMC9876543"}},
		{"https://pubmed.ncbi.nlm.nih.gov/33811111/", ID{SchemePMID, "33811111"}},
		{"https://www.ncbi.nlm.nih.gov/pubmed/33811111", ID{SchemePMID, "33811111"}},
		{"https://europepmc.org/article/MED/33811111", ID{SchemePMID, "33811111"}},
		// PMCID
		{"PMC8011111", ID{SchemePMCID, "PMC8011111"}},
		{"pmc8011111", ID{SchemePMCID, "PMC8011111"}},
		{"PMCID: PMC8011111", ID{SchemePMCID, "PMC8011111"}},
		{"https://www.ncbi.nlm.nih.gov/pmc/articles/PMC8011111/", ID{SchemePMCID, "PMC8011111"}},
		{"https://pmc.ncbi.nlm.nih.gov/articles/PMC8011111/", ID{SchemePMCID, "PMC8011111"}},
		{"https://www.ncbi.nlm.nih.gov/pmc/articles/8011111", ID{SchemePMCID, "PMC8011111"}}, // as OpenAlex writes it
		// arXiv
		{"2101.01234", ID{SchemeArXiv, "2101.01234"}},
		{"arXiv:2101.01234v2", ID{SchemeArXiv, "2101.01234v2"}},
		{"arxiv: 2101.01234", ID{SchemeArXiv, "2101.01234"}},
		{"https://arxiv.org/abs/2101.01234v2", ID{SchemeArXiv, "2101.01234v2"}},
		{"http://arxiv.org/pdf/2101.01234v1.pdf", ID{SchemeArXiv, "2101.01234v1"}},
		{"arXiv:hep-th/9901001", ID{SchemeArXiv, "hep-th/9901001"}},
		{"math.GT/0309136", ID{SchemeArXiv, "math.GT/0309136"}},
		{"http://arxiv.org/abs/q-bio/0401001v1", ID{SchemeArXiv, "q-bio/0401001v1"}},
		// OpenAlex
		{"W2741809807", ID{SchemeOpenAlex, "W2741809807"}},
		{"https://openalex.org/W2741809807", ID{SchemeOpenAlex, "W2741809807"}},
		{"https://api.openalex.org/works/w2741809807", ID{SchemeOpenAlex, "W2741809807"}},
		// ISBN: ISBN-10 as its ISBN-13
		{"ISBN 0-306-40615-2", ID{SchemeISBN, "9780306406157"}},
		{"ISBN-13: 978-0-306-40615-7", ID{SchemeISBN, "9780306406157"}},
		{"978-0-306-40615-7", ID{SchemeISBN, "9780306406157"}},
		{"080442957X", ID{SchemeISBN, "9780804429573"}},
		// citation keys, whole
		{"kim2021bin1", ID{SchemeKey, "kim2021bin1"}},
		{"[@kim2021bin1]", ID{SchemeKey, "kim2021bin1"}},
		{"doiron2020", ID{SchemeKey, "doiron2020"}},
		{"isbnless2019", ID{SchemeKey, "isbnless2019"}},
		{"https://example.org/paper/1", ID{SchemeKey, "https://example.org/paper/1"}},
		{"PMID: not-a-number", ID{SchemeKey, "PMID: not-a-number"}},
		{"ISBN 0-306-40615-3", ID{SchemeKey, "ISBN 0-306-40615-3"}},                             // a bad check digit is no ISBN
		{"https://openalex.org/A5023888391", ID{SchemeKey, "https://openalex.org/A5023888391"}}, // an author is no work
		// analyses of the session's lab data: only with their prefix and a colon
		{"analysis:ab12", ID{SchemeAnalysis, "ab12"}},
		{"Analysis: x-0001-run-1.", ID{SchemeAnalysis, "x-0001-run-1"}},
		{"[analysis:x-0001-run-1]", ID{SchemeAnalysis, "x-0001-run-1"}},
		{"analysis:33811111", ID{SchemeAnalysis, "33811111"}}, // digits, but no PMID
		{"analysis of variance", ID{SchemeKey, "analysis of variance"}},
		{"analysis:", ID{SchemeKey, "analysis"}}, // a trailing colon is punctuation
		{"analysis:a b", ID{SchemeKey, "analysis:a b"}},
		// what a model's text puts in an id for ASCII
		{"10.1038/s41593\u2011021\u201100001\u2011x", ID{SchemeDOI, "10.1038/s41593-021-00001-x"}},
		{"PMID: \uff13\uff13\uff18\uff11\uff11\uff11\uff11\uff11", ID{SchemePMID, "33811111"}},
		{"kim2021\u200bbin1", ID{SchemeKey, "kim2021bin1"}},
		// nothing
		{"", ID{}},
		{"   ", ID{}},
		{strings.Repeat("x", maxIDLen+1), ID{}},
	}
	for _, tt := range tests {
		if got := ParseID(tt.in); got != tt.want {
			t.Errorf("ParseID(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestMatchID(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		// normal forms match
		{"10.5555/cosci.tau.010", "https://doi.org/10.5555/COSCI.TAU.010", true},
		{"doi:10.5555/cosci.tau.010", "10.5555/cosci.tau.010.", true},
		{"PMID: 33811111", "https://pubmed.ncbi.nlm.nih.gov/33811111/", true},
		{"33811111", "pmid:33811111", true},
		{"pmc8011111", "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC8011111/", true},
		{"arXiv:2101.01234", "http://arxiv.org/abs/2101.01234v2", true}, // no version: any version
		{"2101.01234v2", "arXiv:2101.01234v2", true},
		{"10.48550/arXiv.2101.01234", "arXiv:2101.01234v1", true},
		{"hep-th/9901001", "arXiv:hep-th/9901001v3", true},
		{"https://openalex.org/W2741809807", "W2741809807", true},
		{"ISBN 0-306-40615-2", "978-0-306-40615-7", true},
		{"kim2021bin1", "Kim2021BIN1", true}, // keys ignore case
		{"kim2021bin1", " kim2021bin1. ", true},
		// near misses never match
		{"10.5555/cosci.tau.01", "10.5555/cosci.tau.010", false},
		{"10.5555/cosci.tau.010", "10.5555/cosci.tau.01", false},
		{"kim2021", "kim2021bin1", false},
		{"kim2021bin1", "kim2021bin", false},
		{"3381111", "33811111", false},
		{"PMC801111", "PMC8011111", false},
		{"2101.0123", "2101.01234", false},
		{"2101.01234v1", "2101.01234v2", false}, // a cited version other than the one returned
		{"W274180980", "W2741809807", false},
		{"ISBN 0-306-40615-2", "978-0-306-40615-8", false},
		{"analysis:ab12", "analysis:ab1", false},
		{"analysis:x-0001-run-1", "analysis:x-0001-run-10", false},
		{"analysis:x-0001-run-1", "analysis: x-0001-run-1", true},
		// schemes never cross
		{"analysis:33811111", "33811111", false},
		{"analysis:kim2021", "kim2021", false},
		{"33811111", "PMC33811111", false},
		{"33811111", "W33811111", false},
		{"10.1038/nn.4321", "nn.4321", false},
		// nothing matches nothing
		{"", "", false},
		{"  ", "kim2021", false},
	}
	for _, tt := range tests {
		if got := MatchID(tt.a, tt.b); got != tt.want {
			t.Errorf("MatchID(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := MatchID(tt.b, tt.a); got != tt.want {
			t.Errorf("MatchID(%q, %q) = %v, want %v (the other way round)", tt.b, tt.a, got, tt.want)
		}
	}
}

// TestNormalDOI: the one DOI rule, as the library reads a BibTeX field and the report and
// the desk read a reference: resolvers and "doi:" taken off, lower case, and no DOI in
// what is not one.
func TestNormalDOI(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"10.1038/NN.4321", "10.1038/nn.4321"},
		{" https://doi.org/10.1038/nn.4321 ", "10.1038/nn.4321"},
		{"http://dx.doi.org/10.1038/nn.4321", "10.1038/nn.4321"},
		{"doi.org/10.1038/nn.4321", "10.1038/nn.4321"},
		{"doi:10.1038/nn.4321", "10.1038/nn.4321"},
		{"DOI 10.1038/nn.4321", "10.1038/nn.4321"},
		{"https://doi.org/10.1000/a%23b", "10.1000/a#b"}, // a link's escape read back
		{"10.1000/a#b?c", "10.1000/a#b?c"},
		{"10.48550/arXiv.2101.01234", "10.48550/arxiv.2101.01234"}, // a DOI, though ParseID reads the arXiv id
		{"https://example.org/10.1038/nn.4321", ""},
		{"10.1038 nn.4321", ""},
		{"kim2021", ""},
		{"doiron2020", ""},
		{"", ""},
	} {
		if got := NormalDOI(tc.in); got != tc.want {
			t.Errorf("NormalDOI(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
