package report

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/library"
	"github.com/cosci-dev/cosci/internal/research"
)

// TestBibTeXValuesCannotCloseTheirField: whatever braces a source's fields hold, each
// entry of bibliography.bib reads back, through cosci's own BibTeX reader, as one entry
// whose fields are the source's: nothing after a "}" becomes a field of its own, and a
// URL a reference manager would link is http(s) or absent. Before, a DOI or URL with "}"
// ended its field and the rest set the title.
func TestBibTeXValuesCannotCloseTheirField(t *testing.T) {
	safe := research.Reference{ID: "k", Title: "Safe title", Authors: []string{"Doe, Jane"}, Year: 2020, Venue: "Journal"}
	tests := []struct {
		name   string
		change func(*research.Reference)
		check  func(library.Reference) bool
	}{
		{"doi", func(r *research.Reference) { r.DOI = "10.1/x},title={pwned" },
			func(l library.Reference) bool { return strings.EqualFold(l.DOI, "10.1/x%7D,title=%7Bpwned") }},
		{"doi with spaces", func(r *research.Reference) { r.DOI = "10.1/x}, title = {pwned" }, nil},
		{"id", func(r *research.Reference) { r.ID = "10.1/x},title={pwned" }, nil},
		{"url", func(r *research.Reference) { r.URL = "https://x.example/a},title={pwned" },
			func(l library.Reference) bool { return l.URL == "https://x.example/a%7D,title=%7Bpwned" }},
		{"url with spaces", func(r *research.Reference) { r.URL = "https://x.example/a}, title = {pwned" }, nil},
		{"url with a backslash", func(r *research.Reference) { r.URL = `https://x.example/a\},title={pwned` }, nil},
		{"javascript url", func(r *research.Reference) { r.URL = "javascript:alert(1)//},title={pwned" },
			func(l library.Reference) bool { return l.URL == "" }},
		{"title", func(r *research.Reference) { r.Title = "Safe title}, abstract = {pwned" },
			func(l library.Reference) bool { return l.Title == "Safe title}, abstract = {pwned" }}, // the braces read back as written
		{"title, unbalanced", func(r *research.Reference) { r.Title = "Safe title}}}}, abstract = {pwned" }, nil},
		{"title, escaped", func(r *research.Reference) { r.Title = `Safe title\}, abstract = \{pwned` }, nil},
		{"author", func(r *research.Reference) { r.Authors = []string{"Doe}, title = {pwned"} }, nil},
		{"organisation", func(r *research.Reference) { r.Authors = []string{"The Lab}}, title = {pwned"} }, nil},
		{"venue", func(r *research.Reference) { r.Venue = "Journal}, title = {pwned" }, nil},
	}
	for _, tt := range tests {
		r := safe
		r.Authors = slices.Clone(safe.Authors)
		tt.change(&r)
		bib := BibTeX([]research.Reference{r})
		refs, skipped := library.ParseBibTeX(bib, "bibliography.bib")
		if len(refs) != 1 || len(skipped) != 0 {
			t.Errorf("%s: %d entries, skipped %v:\n%s", tt.name, len(refs), skipped, bib)
			continue
		}
		got := refs[0]
		if strings.Contains(got.Title, "pwned") && !strings.Contains(r.Title, "pwned") || got.Abstract != "" {
			t.Errorf("%s: a value set another field (title %q, abstract %q):\n%s", tt.name, got.Title, got.Abstract, bib)
		}
		if tt.check != nil && !tt.check(got) {
			t.Errorf("%s: read back as %+v:\n%s", tt.name, got, bib)
		}
	}
}

// TestBibTeXEntriesStayWhole: sources whose every field holds random braces, backslashes,
// quotes, '@', '#', '=' and commas each read back as one whole entry, with the year it
// was given and no field it was not. Seeded, so a failure repeats.
func TestBibTeXEntriesStayWhole(t *testing.T) {
	const chars = "ab1 {}\\,=@\"#%&~^_$()\n"
	r := rand.New(rand.NewPCG(7, 8))
	text := func() string {
		b := make([]byte, 1+r.IntN(16))
		for i := range b {
			b[i] = chars[r.IntN(len(chars))]
		}
		return string(b)
	}
	for range 2000 {
		ref := research.Reference{ID: "k", Title: "T" + text(), Authors: []string{text(), "Doe, " + text()}, Venue: text(), Year: 2020,
			DOI: "10.1/" + strings.ReplaceAll(text(), " ", ""), URL: "https://x.example/" + text()}
		bib := BibTeX([]research.Reference{ref})
		refs, skipped := library.ParseBibTeX(bib, "bibliography.bib")
		if len(refs) != 1 || len(skipped) != 0 || refs[0].Year != 2020 || refs[0].Abstract != "" || !strings.HasPrefix(refs[0].Title, "T") {
			t.Fatalf("%+v reads back as %d entries (%+v), skipping %v:\n%s", ref, len(refs), refs, skipped, bib)
		}
	}
}
