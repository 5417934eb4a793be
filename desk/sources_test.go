package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/fulltext"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// TestSourceAtThePage: a quote from a full text shows its page and section, linked to the
// PDF at that page, which the desk serves from the lab's library to whoever may read the
// session, and to nobody else; a reference naming a file outside the library, or not a
// PDF, gets nothing; without the library, the link is the DOI.
func TestSourceAtThePage(t *testing.T) {
	td := newTestDesk(t)
	lib := t.TempDir()
	pdf := []byte("%PDF-1.4 a paper\n%%EOF\n")
	os.MkdirAll(filepath.Join(lib, "files", "12"), 0o755)
	os.WriteFile(filepath.Join(lib, "files", "12", "Ito et al. - 2021.pdf"), pdf, 0o644)
	os.WriteFile(filepath.Join(lib, "notes.html"), []byte("<script>alert(1)</script>"), 0o644)
	outside := filepath.Join(t.TempDir(), "secret.pdf")
	os.WriteFile(outside, []byte("%PDF-1.4 not the library's"), 0o644)
	os.Symlink(outside, filepath.Join(lib, "link.pdf"))
	root, err := openLibrary(lib)
	if err != nil {
		t.Fatal(err)
	}
	td.library = root

	td.fake.add("s-1", "ada@lab", "tau propagation", session.Entry{ID: "h-0001", Title: "t", Origin: "generation"})
	ref := research.Reference{ID: "10.5555/cosci.tau.001", DOI: "10.5555/cosci.tau.001", Title: "Microglia carry tau",
		Quote: "Exosome inhibition lowered seeding activity by 46%", Claim: "c", Passage: "10.5555/cosci.tau.001#p7.2", Page: 7, Section: "results",
		File: "files/12/Ito et al. - 2021.pdf"}
	escape, html, link := ref, ref, ref
	escape.File = "../" + filepath.Base(filepath.Dir(outside)) + "/secret.pdf"
	html.File = "notes.html"
	link.File = "link.pdf"
	if err := td.st.PutHypothesis(t.Context(), "s-1", research.Hypothesis{ID: "h-0001", Title: "t", Statement: "s", Origin: "generation",
		References: []research.Reference{ref, escape, html, link}}); err != nil {
		t.Fatal(err)
	}
	code, body := td.do(t, "ada@lab", "GET", "/s/s-1/h/h-0001", nil)
	if code != 200 || !strings.Contains(body, `Exosome inhibition lowered seeding activity by 46% <cite class="at"><a href="/s/s-1/h/h-0001/ref/0#page=7">p. 7, Results</a></cite>`) {
		t.Errorf("the hypothesis page (%d) does not show the quote's page linked to the file:\n%s", code, body)
	}
	get := func(who, target string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.Header.Set("X-Forwarded-Email", who)
		w := httptest.NewRecorder()
		td.h.ServeHTTP(w, r)
		return w
	}
	w := get("ada@lab", "/s/s-1/h/h-0001/ref/0")
	if w.Code != 200 || w.Body.String() != string(pdf) || w.Header().Get("Content-Type") != "application/pdf" ||
		!strings.Contains(w.Header().Get("Content-Security-Policy"), "sandbox") || w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("the owner gets %d %q %v", w.Code, w.Body.String(), w.Header())
	}
	for _, tc := range []struct {
		name, who, target string
		code              int
	}{
		{"another scientist", "bob@lab", "/s/s-1/h/h-0001/ref/0", http.StatusNotFound}, // a session they may not read is not there
		{"a path out of the library", "ada@lab", "/s/s-1/h/h-0001/ref/1", http.StatusNotFound},
		{"not a PDF", "ada@lab", "/s/s-1/h/h-0001/ref/2", http.StatusNotFound},
		{"a link out of the library", "ada@lab", "/s/s-1/h/h-0001/ref/3", http.StatusNotFound},
		{"no such reference", "ada@lab", "/s/s-1/h/h-0001/ref/9", http.StatusNotFound},
		{"no such hypothesis", "ada@lab", "/s/s-1/h/h-0404/ref/0", http.StatusNotFound},
	} {
		if w := get(tc.who, tc.target); w.Code != tc.code || strings.Contains(w.Body.String(), "not the library's") || tc.who != "ada@lab" && strings.Contains(w.Body.String(), "ada@lab") || strings.Contains(w.Body.String(), "<script>alert") {
			t.Errorf("%s: %d, want %d; %.200q", tc.name, w.Code, tc.code, w.Body.String())
		}
	}
	// An answer's citation, likewise.
	if err := td.st.PutMessage(t.Context(), "s-1", research.Message{ID: "m-0002", Role: session.RoleSession, Text: "an answer", References: []research.Reference{ref}}); err != nil {
		t.Fatal(err)
	}
	if w := get("ada@lab", "/s/s-1/m/m-0002/ref/0"); w.Code != 200 || w.Body.String() != string(pdf) {
		t.Errorf("an answer's source: %d", w.Code)
	}
	if w := get("bob@lab", "/s/s-1/m/m-0002/ref/0"); w.Code != http.StatusNotFound || strings.Contains(w.Body.String(), "ada@lab") {
		t.Errorf("an answer's source to another scientist: %d", w.Code)
	}
	// A reader the owner shares it with may follow the link.
	td.do(t, "ada@lab", "POST", "/s/s-1/share", map[string][]string{"who": {"bob@lab"}, "level": {"read"}})
	if w := get("bob@lab", "/s/s-1/h/h-0001/ref/0"); w.Code != 200 {
		t.Errorf("a reader gets %d", w.Code)
	}
	// Without the library, the page links the DOI.
	td.library = nil
	if _, body := td.do(t, "ada@lab", "GET", "/s/s-1/h/h-0001", nil); !strings.Contains(body, `<cite class="at"><a href="https://doi.org/10.5555/cosci.tau.001">p. 7, Results</a></cite>`) {
		t.Errorf("without the library the quote does not link its DOI:\n%s", body)
	}
}

// TestIsPDF: the desk knows a PDF by its name as the literature server does
// (fulltext.KindOf), which the desk no longer imports: a file the server read as a PDF is
// served, and no other.
func TestIsPDF(t *testing.T) {
	for _, name := range []string{
		"a.pdf", "files/12/Ito et al. - 2021.PDF", "a.Pdf", "a.pdf.xml", "a.xml", "a.nxml", "a.html",
		"a.htm", "a.xhtml", "pdf", "a.pdf/", "a.pdfx", ".pdf", "a", "", "a.ſdf",
	} {
		want := fulltext.KindOf(name) == fulltext.KindPDF
		if got := isPDF(name); got != want {
			t.Errorf("isPDF(%q) = %v; the literature server reads it as a PDF: %v", name, got, want)
		}
	}
}

// TestSourceLinkEscapes: without the library, a quote links its source as the report
// does (report.SourceLink): a DOI's "#" and "?" are escaped, so the link reaches the
// whole DOI and not a fragment or query of a shorter one.
func TestSourceLinkEscapes(t *testing.T) {
	d := &desk{}
	for _, tc := range []struct {
		ref  research.Reference
		want string
	}{
		{research.Reference{ID: "10.1000/a#b?c"}, "https://doi.org/10.1000/a%23b%3Fc"},
		{research.Reference{ID: "k", DOI: "https://doi.org/10.1002/(SICI)1097-4636<1::AID>3.0.CO;2-%23"}, "https://doi.org/10.1002/(sici)1097-4636%3C1::aid%3E3.0.co;2-%23"},
		{research.Reference{ID: "10.5555/cosci.tau.001"}, "https://doi.org/10.5555/cosci.tau.001"},
		{research.Reference{ID: "kim2021"}, ""},
	} {
		if got := d.sourceLink("s-1", "h/h-0001", 0, tc.ref); got != tc.want {
			t.Errorf("%+v links %q; want %q", tc.ref, got, tc.want)
		}
	}
}
