package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/cosci-dev/cosci/internal/library"
	"github.com/cosci-dev/cosci/internal/research"
)

// cites is rich() with references: gen/00 (ranked second) cites a verified source, one
// whose quote its source does not hold, and one no tool returned; evo/2 (first) cites
// the verified one again and a source without a DOI, not yet checked.
func cites() Input {
	in := rich()
	verified := research.Reference{ID: "10.5555/cosci.bact.001", DOI: "10.5555/cosci.bact.001", Title: "Persister cells & the 100% paradox",
		Authors: []string{"Lewis, Kim", "Fischbach, Michael", "Müller, Anna", "Doe, Jane"}, Year: 2019, Venue: "Test Microbiology",
		Quote: "Persister cells survive antibiotics.", Source: "aaaa"}
	unsupported := research.Reference{ID: "10.5555/cosci.bact.002", DOI: "10.5555/cosci.bact.002", Title: "Toxins and ppGpp",
		Authors: []string{"The Tolerance Consortium"}, Year: 2018, Venue: "Test Microbiology", Quote: "ppGpp cures everything.", Source: "bbbb"}
	invented := research.Reference{ID: "10.5555/cosci.made-up", Quote: "A claim."}
	nodoi := research.Reference{ID: "garcia2019", Title: "Dormancy in biofilms", Authors: []string{"García, María"}, Year: 2019,
		URL: "https://example.org/garcia", Source: "cccc"}
	h := in.Hypotheses["gen/00"]
	h.References = []research.Reference{verified, unsupported, invented}
	in.Hypotheses["gen/00"] = h
	in.Reviews["gen/00"][1].Citations = []research.CitationCheck{
		{ID: verified.ID, Verdict: research.CitationVerified},
		{ID: unsupported.ID, Verdict: research.CitationUnsupported, Note: `the source does not say "ppGpp cures everything."`},
		{ID: invented.ID, Verdict: research.CitationInvented, Note: "no tool result the citing turn read returned this source"},
	}
	e := in.Hypotheses["evo/2"]
	e.References = []research.Reference{verified, nodoi}
	in.Hypotheses["evo/2"] = e
	return in
}

func TestReferencesInTheReport(t *testing.T) {
	f := render(t, cites())
	got := string(f.Markdown)
	inOrder(t, got,
		"### 1. ", "**References:**",
		"- Lewis, Kim; Fischbach, Michael; Müller, Anna et al. (2019). Persister cells & the 100% paradox. Test Microbiology. <https://doi.org/10.5555/cosci.bact.001> — *not checked yet*",
		"- García, María (2019). Dormancy in biofilms. <https://example.org/garcia> — *not checked yet*",
		"### 2. ", "**References:**",
		"Persister cells & the 100% paradox. Test Microbiology. <https://doi.org/10.5555/cosci.bact.001> — *verified*",
		"> Persister cells survive antibiotics.",
		"Toxins and ppGpp. Test Microbiology. <https://doi.org/10.5555/cosci.bact.002> — *flagged: its source does not say this*",
		"`10.5555/cosci.made-up` (no tool returned it). — *flagged: no tool returned this source*",
		"## References",
		"1. Lewis, Kim; Fischbach, Michael; Müller, Anna et al. (2019). Persister cells & the 100% paradox. Test Microbiology. <https://doi.org/10.5555/cosci.bact.001>",
		"2. García, María (2019). Dormancy in biofilms. <https://example.org/garcia>",
		"3. The Tolerance Consortium (2018). Toxins and ppGpp. Test Microbiology. <https://doi.org/10.5555/cosci.bact.002>",
		"1 citation were left out: no tool returned those sources",
	)
	if strings.Count(got, "cosci.made-up") != 1 { // the hypothesis' list only, never the bibliography
		t.Errorf("the invented source appears %d times", strings.Count(got, "cosci.made-up"))
	}

	var x struct {
		Hypotheses []struct {
			ID         string            `json:"id"`
			References []exportReference `json:"references"`
		} `json:"hypotheses"`
		Bibliography []exportReference `json:"bibliography"`
	}
	if err := json.Unmarshal(f.JSON, &x); err != nil {
		t.Fatal(err)
	}
	var gen00 []exportReference
	for _, h := range x.Hypotheses {
		if h.ID == "gen/00" {
			gen00 = h.References
		}
	}
	if len(gen00) != 3 || gen00[0].Verdict != "verified" || gen00[1].Verdict != "unsupported" || gen00[2].Verdict != "invented" ||
		gen00[0].URL != "https://doi.org/10.5555/cosci.bact.001" || gen00[0].Quote == "" {
		t.Errorf("gen/00's references in report.json: %+v", gen00)
	}
	if len(x.Bibliography) != 3 || x.Bibliography[1].ID != "garcia2019" || x.Bibliography[0].Quote != "" {
		t.Errorf("bibliography in report.json: %+v", x.Bibliography)
	}
}

// TestBibliographyRoundTrips: the BibTeX and CSL-JSON exports read back, through cosci's
// own parsers of what reference managers export, as the sources they came from.
func TestBibliographyRoundTrips(t *testing.T) {
	f := render(t, cites())
	for _, tt := range []struct {
		name  string
		parse func([]byte, string) ([]library.Reference, []library.Skipped)
		data  []byte
	}{
		{BibTeXFile, library.ParseBibTeX, f.BibTeX},
		{CSLFile, library.ParseCSL, f.CSL},
	} {
		refs, skipped := tt.parse(tt.data, tt.name)
		if len(skipped) != 0 || len(refs) != 3 {
			t.Fatalf("%s reads back as %d references, skipping %v:\n%s", tt.name, len(refs), skipped, tt.data)
		}
		first := refs[0]
		if first.ID != "10.5555/cosci.bact.001" || first.Title != "Persister cells & the 100% paradox" || first.Year != 2019 ||
			!slices.Equal(first.Authors, []string{"Lewis, Kim", "Fischbach, Michael", "Müller, Anna", "Doe, Jane"}) || first.Venue != "Test Microbiology" {
			t.Errorf("%s: %+v", tt.name, first)
		}
		if refs[1].ID != "garcia2019" || refs[1].URL != "https://example.org/garcia" || !slices.Equal(refs[1].Authors, []string{"García, María"}) {
			t.Errorf("%s: %+v", tt.name, refs[1])
		}
		if !slices.Equal(refs[2].Authors, []string{"The Tolerance Consortium"}) {
			t.Errorf("%s: an organisation's name came back as %q", tt.name, refs[2].Authors)
		}
	}
	if !bytes.Contains(f.BibTeX, []byte(`@article{lewis2019persister,`)) || !bytes.Contains(f.BibTeX, []byte(`\& the 100\% paradox`)) {
		t.Errorf("BibTeX keys or escapes:\n%s", f.BibTeX)
	}
}

// TestHTMLReport: the page is one self-contained document: the chart inline, no script,
// stylesheet or image from elsewhere, every in-page link pointing at an anchor that
// exists, and sources linked to their DOIs.
func TestHTMLReport(t *testing.T) {
	f := render(t, cites())
	doc, err := html.Parse(bytes.NewReader(f.HTML))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	var hrefs []string
	var svg bool
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "link", "iframe", "img", "object":
				t.Errorf("the page has a <%s> element", n.Data)
			case "svg":
				svg = true
			}
			for _, a := range n.Attr {
				switch a.Key {
				case "id":
					ids[a.Val] = true
				case "href":
					hrefs = append(hrefs, a.Val)
				case "src":
					t.Errorf("<%s src=%q>: the page loads something", n.Data, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if !svg {
		t.Error("the chart is not inline")
	}
	var anchors, dois int
	for _, h := range hrefs {
		switch {
		case strings.HasPrefix(h, "#"):
			anchors++
			if !ids[h[1:]] {
				t.Errorf("link %s points at no anchor", h)
			}
		case strings.HasPrefix(h, "https://doi.org/10.5555/cosci.bact."):
			dois++
		case h == "https://example.org/garcia":
		default:
			t.Errorf("a link out of the page: %s", h)
		}
	}
	if anchors < 20 || dois < 3 {
		t.Errorf("%d in-page links and %d DOI links", anchors, dois)
	}
	page := string(f.HTML)
	for _, want := range []string{`id="hyp-evo_2"`, `href="#hyp-evo_1"`, `class="verdict invented"`, "flagged: no tool returned this source", "Persister cells &amp; the 100% paradox"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// TestCitationVerdictsAndSupport: the report shows, per citation, the claim, the quote,
// the verdict with the source's own words where they differ, and the support judgement;
// a quote that contradicts its claim counts as flagged even when its words check out.
func TestCitationVerdictsAndSupport(t *testing.T) {
	in := cites()
	h := in.Hypotheses["gen/00"]
	h.References[0].Claim = "Persisters explain relapse."
	h.References[1].Claim = "ppGpp drives <b>tolerance</b>."
	h.References[1].Quote = "ppGpp levels were lower in tolerant cells."
	in.Hypotheses["gen/00"] = h
	in.Reviews["gen/00"][1].Citations = []research.CitationCheck{
		{ID: h.References[0].ID, Verdict: research.CitationVerified, Support: research.SupportIrrelevant, SupportNote: "about survival, not relapse"},
		{ID: h.References[1].ID, Verdict: research.CitationContradicted, Note: `the record says "higher" where the quote says "lower"`,
			Passage: "ppGpp levels were higher in tolerant cells", Support: research.SupportSupports},
	}
	f := render(t, in)
	inOrder(t, string(f.Markdown),
		"### 2. ",
		"— *verified*; *flagged: does not bear on the claim*", "Claim: Persisters explain relapse.", "> Persister cells survive antibiotics.", "Support: about survival, not relapse",
		"— *flagged: its source says otherwise*; *supports the claim*", "> ppGpp levels were lower in tolerant cells.",
		"The source's words: ppGpp levels were higher in tolerant cells", `Check: the record says "higher" where the quote says "lower"`,
	)
	page := string(f.HTML)
	for _, want := range []string{
		`<span class="verdict support-irrelevant">flagged: does not bear on the claim</span>`,
		`<span class="verdict contradicted">flagged: its source says otherwise</span>`,
		`<div class="claim">Claim: ppGpp drives &lt;b&gt;tolerance&lt;/b&gt;.</div>`,
		`The source's words: <q>ppGpp levels were higher in tolerant cells</q>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the HTML report lacks %s", want)
		}
	}
	var x struct {
		Hypotheses []struct {
			ID         string            `json:"id"`
			References []exportReference `json:"references"`
		} `json:"hypotheses"`
	}
	if err := json.Unmarshal(f.JSON, &x); err != nil {
		t.Fatal(err)
	}
	for _, hx := range x.Hypotheses {
		if hx.ID == "gen/00" && (hx.References[0].Support != "irrelevant" || hx.References[0].Claim != "Persisters explain relapse." || hx.References[1].Passage == "") {
			t.Errorf("report.json: %+v", hx.References)
		}
	}
}

// TestOverstatedAndOutOfContext: the report names an overstated quote and one out of
// context, each with the source's words beside it (the governing words a fragment left
// out included), and a verified quote without them: it is the source's words.
func TestOverstatedAndOutOfContext(t *testing.T) {
	in := cites()
	h := in.Hypotheses["gen/00"]
	h.References[0].Quote = "ppGpp drives tolerance in all persisters."
	h.References[1].Quote = "ppGpp drives tolerance."
	in.Hypotheses["gen/00"] = h
	in.Reviews["gen/00"][1].Citations = []research.CitationCheck{
		{ID: h.References[0].ID, Verdict: research.CitationOverstated, Note: `the quote claims more than the record: it generalises the record's "some"`,
			Passage: "ppGpp drives tolerance in some persisters"},
		{ID: h.References[1].ID, Verdict: research.CitationOutOfContext, Note: `the quote leaves out what governs it: "It has been proposed that" before it attributes it to others`,
			Passage: "It has been proposed that ppGpp drives tolerance.", Support: research.SupportOverstates, SupportNote: "the passage only reports a proposal"},
		{ID: h.References[2].ID, Verdict: research.CitationVerified, Passage: "a verified quote's sentence"},
	}
	f := render(t, in)
	md := string(f.Markdown)
	inOrder(t, md,
		"— *flagged: overstated, claims more than its source*", "> ppGpp drives tolerance in all persisters.", "The source's words: ppGpp drives tolerance in some persisters",
		"— *flagged: out of context, without what governs it in its source*; *flagged: the claim says more than it*", "> ppGpp drives tolerance.",
		"The source's words: It has been proposed that ppGpp drives tolerance.", "Support: the passage only reports a proposal",
	)
	page := string(f.HTML)
	for _, want := range []string{
		`<span class="verdict overstated">flagged: overstated, claims more than its source</span>`,
		`<span class="verdict out-of-context">flagged: out of context, without what governs it in its source</span>`,
		`<span class="verdict support-overstates">flagged: the claim says more than it</span>`,
		`The source's words: <q>It has been proposed that ppGpp drives tolerance.</q>`,
		`.out-of-context`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the HTML report lacks %s", want)
		}
	}
	if strings.Contains(md+page, "a verified quote's sentence") {
		t.Error("the report shows a verified quote's passage")
	}
}

// TestOtherLiteratureIDs: a source a literature service gave without a DOI or URL is
// linked at the registry of its id, and the bibliographies carry its PubMed, PMC and
// arXiv ids.
func TestOtherLiteratureIDs(t *testing.T) {
	tests := []struct {
		ref      research.Reference
		link     string
		bib, csl string
	}{
		{research.Reference{ID: "PMID:35812904", PMID: "35812904", Title: "T"}, "https://pubmed.ncbi.nlm.nih.gov/35812904/", "pmid = {35812904}", `"PMID": "35812904"`},
		{research.Reference{ID: "PMC9287165", Title: "T"}, "https://pmc.ncbi.nlm.nih.gov/articles/PMC9287165/", "pmcid = {PMC9287165}", `"PMCID": "PMC9287165"`},
		{research.Reference{ID: "arXiv:2101.01234v2", ArXiv: "2101.01234v2", Title: "T"}, "https://arxiv.org/abs/2101.01234v2", "eprint = {2101.01234v2}", ""},
		{research.Reference{ID: "W2741809807", OpenAlex: "https://openalex.org/W2741809807", Title: "T"}, "https://openalex.org/W2741809807", "", ""},
		{research.Reference{ID: "10.1/x", DOI: "10.1/x", PMID: "1", Title: "T"}, "https://doi.org/10.1/x", "pmid = {1}", `"PMID": "1"`},
	}
	for _, tt := range tests {
		if got := link(tt.ref); got != tt.link {
			t.Errorf("%s: link %q, want %q", tt.ref.ID, got, tt.link)
		}
		bib := string(BibTeX([]research.Reference{tt.ref}))
		if tt.bib != "" && !strings.Contains(bib, tt.bib) {
			t.Errorf("%s: bibliography.bib lacks %s:\n%s", tt.ref.ID, tt.bib, bib)
		}
		csl, err := CSL([]research.Reference{tt.ref})
		if err != nil || tt.csl != "" && !strings.Contains(string(csl), tt.csl) {
			t.Errorf("%s: bibliography.json lacks %s: %v\n%s", tt.ref.ID, tt.csl, err, csl)
		}
	}
}

// TestScales: the worst verdict and support a review found are the reference's, and a value
// a check may write later (not on the scale) neither outranks one that is nor shows as more
// than the mildest: as the severity switches the scales replaced.
func TestScales(t *testing.T) {
	for _, tc := range []struct {
		name    string
		s       scale
		a, b    string
		worse   bool
		wordOfA string
	}{
		{"invented over contradicted", verdicts, research.CitationInvented, research.CitationContradicted, true, "flagged: no tool returned this source"},
		{"contradicted over unsupported", verdicts, research.CitationContradicted, research.CitationUnsupported, true, "flagged: its source says otherwise"},
		{"unsupported over altered", verdicts, research.CitationUnsupported, research.CitationAltered, true, "flagged: its source does not say this"},
		{"out of context over overstated", verdicts, research.CitationOutOfContext, research.CitationOverstated, true, "flagged: out of context, without what governs it in its source"},
		{"overstated over altered", verdicts, research.CitationOverstated, research.CitationAltered, true, "flagged: overstated, claims more than its source"},
		{"overstates over irrelevant", supports, research.SupportOverstates, research.SupportIrrelevant, true, "flagged: the claim says more than it"},
		{"verified over unchecked", verdicts, research.CitationVerified, Unchecked, true, "verified"},
		{"verified not over altered", verdicts, research.CitationVerified, research.CitationAltered, false, "verified"},
		{"an unknown verdict not over unchecked", verdicts, "doubtful", Unchecked, false, "not checked yet"},
		{"an empty verdict not over unchecked", verdicts, "", Unchecked, false, "not checked yet"},
		{"contradicts over irrelevant", supports, research.SupportContradicts, research.SupportIrrelevant, true, "flagged: contradicts the claim"},
		{"irrelevant over supports", supports, research.SupportIrrelevant, research.SupportSupports, true, "flagged: does not bear on the claim"},
		{"supports over no judgement", supports, research.SupportSupports, "", true, "supports the claim"},
		{"an unknown support not over no judgement", supports, "partly", "", false, ""},
	} {
		if got := tc.s.worse(tc.a, tc.b); got != tc.worse {
			t.Errorf("%s: worse(%q, %q) = %v; want %v", tc.name, tc.a, tc.b, got, tc.worse)
		}
		if got := tc.s.word(tc.a); got != tc.wordOfA {
			t.Errorf("%s: word(%q) = %q; want %q", tc.name, tc.a, got, tc.wordOfA)
		}
	}
}

// TestQuoteLocation: a quote from a passage of a full text shows its page and section
// beside it, linked to the source, in the Markdown, the HTML and report.json; a section
// a tool wrote is shown as letters only.
func TestQuoteLocation(t *testing.T) {
	in := cites()
	h := in.Hypotheses["gen/00"]
	h.References[0].Passage, h.References[0].Page, h.References[0].Section = "10.5555/cosci.bact.001#p7.2", 7, "results"
	h.References[1].Page, h.References[1].Section = 0, "discussion<script>"
	in.Hypotheses["gen/00"] = h
	f := render(t, in)
	inOrder(t, string(f.Markdown), "> Persister cells survive antibiotics. — [p. 7, Results](https://doi.org/10.5555/cosci.bact.001)",
		"> ppGpp cures everything. — [Discussion script](https://doi.org/10.5555/cosci.bact.002)")
	inOrder(t, string(f.HTML), `<blockquote>Persister cells survive antibiotics. <cite class="at"><a href="https://doi.org/10.5555/cosci.bact.001">p. 7, Results</a></cite></blockquote>`)
	if strings.Contains(string(f.HTML), "<script>") {
		t.Error("the section's markup reached the HTML")
	}
	var x struct {
		Hypotheses []struct {
			ID         string            `json:"id"`
			References []exportReference `json:"references"`
		} `json:"hypotheses"`
	}
	if err := json.Unmarshal(f.JSON, &x); err != nil {
		t.Fatal(err)
	}
	for _, h := range x.Hypotheses {
		if h.ID == "gen/00" && (h.References[0].Page != 7 || h.References[0].QuotedPassage != "10.5555/cosci.bact.001#p7.2" || h.References[0].Section != "results") {
			t.Errorf("report.json: %+v", h.References[0])
		}
	}
	for _, tc := range []struct {
		r    research.Reference
		want string
	}{
		{research.Reference{Page: 7, Section: "results"}, "p. 7, Results"},
		{research.Reference{Page: 3}, "p. 3"},
		{research.Reference{Section: "methods"}, "Methods"},
		{research.Reference{}, ""},
		{research.Reference{Page: -2, Section: strings.Repeat("x", 50)}, ""},
	} {
		if got := Location(tc.r); got != tc.want {
			t.Errorf("Location(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}

// TestTwoQuotesOfOneSource: a hypothesis that quotes one source twice shows each quote
// with its own check (citation.Join pairs a review's checks with the references in
// order), not the worse of the two on both.
func TestTwoQuotesOfOneSource(t *testing.T) {
	in := cites()
	h := in.Hypotheses["gen/00"]
	again := h.References[0]
	again.Quote = "Persisters survive every antibiotic."
	h.References = append(h.References, again)
	in.Hypotheses["gen/00"] = h
	in.Reviews["gen/00"][1].Citations = append(in.Reviews["gen/00"][1].Citations,
		research.CitationCheck{ID: again.ID, Verdict: research.CitationAltered, Note: "a word changed"})
	got := string(render(t, in).Markdown)
	inOrder(t, got,
		"### 2. ", "**References:**",
		"Persister cells & the 100% paradox. Test Microbiology. <https://doi.org/10.5555/cosci.bact.001> — *verified*",
		"> Persister cells survive antibiotics.",
		"`10.5555/cosci.made-up` (no tool returned it).",
		"Persister cells & the 100% paradox. Test Microbiology. <https://doi.org/10.5555/cosci.bact.001> — *flagged: altered, not its source's words*",
		"> Persisters survive every antibiotic.",
	)
}
