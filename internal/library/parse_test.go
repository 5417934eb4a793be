package library

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestDecodeLaTeX(t *testing.T) {
	tests := []struct{ in, want string }{
		{`M{\"u}ller`, "Müller"},
		{`M\"{u}ller`, "Müller"},
		{`M\"uller`, "Müller"},
		{`Garc{\'\i}a`, "García"},
		{`Siobh\'{a}n`, "Siobhán"},
		{`{\O}stergaard`, "Østergaard"},
		{`Stra{\ss}e`, "Straße"},
		{`\c{C}elik and \v{S}imon`, "Çelik and Šimon"},
		{`Erd\H{o}s`, "Erdős"},
		{`{GSK3}$\beta$ primes tau`, "GSK3β primes tau"},
		{`pages 101--118, a---b`, "pages 101–118, a—b"},
		{`A~B`, "A B"},
		{`\emph{in vivo} and \textit{in vitro}`, "in vivo and in vitro"},
		{`50\% of R\&D`, "50% of R&D"},
		{"``quoted''", "\u201cquoted\u201d"},
		{`Alzheimer's disease`, "Alzheimer's disease"},
		{`{\aa}ngstr{\"o}m`, "ångström"},
		{"\\`a la \\^ete", "à la ête"},
		{`a \unknown{command} here`, "a command here"},
		{`trailing \`, "trailing "},
	}
	for _, tt := range tests {
		if got := DecodeLaTeX(tt.in); got != tt.want {
			t.Errorf("DecodeLaTeX(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBibNames(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Ito, Kenji and M{\\\"u}ller, Anna", []string{"Ito, Kenji", "Müller, Anna"}},
		{"Jennifer N. Rauch and Gabriel Luna", []string{"Rauch, Jennifer N.", "Luna, Gabriel"}},
		{"Pieter van der Berg and Ana de la Cruz", []string{"van der Berg, Pieter", "de la Cruz, Ana"}},
		{"King, Jr., Martin", []string{"King Jr., Martin"}},
		{"{The Tau Immunotherapy Consortium} and Nguyen, Thi", []string{"The Tau Immunotherapy Consortium", "Nguyen, Thi"}},
		{"{Barnes and Noble} and Smith, J.", []string{"Barnes and Noble", "Smith, J."}},
		{"Smith, John AND Doe, Jane and others", []string{"Smith, John", "Doe, Jane"}},
		{"Plato", []string{"Plato"}},
	}
	for _, tt := range tests {
		if got := splitAuthors(tt.in, DefaultLimits()); !slices.Equal(got, tt.want) {
			t.Errorf("splitAuthors(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseBibTeX(t *testing.T) {
	src := `Free text with an @ sign that is no entry.
@string{ jtn = "Journal of Test Neuroscience" }
@String(short = {J. T. N.})
@comment{ a comment with {braces} and an @article{inside, title={no}} }
@Article{ito2021,
  Author = {Ito, Kenji},
  TITLE  = {{Microglia} carry tau},
  journal = jtn # ", " # short,
  year = 2021, month = mar,
  doi = {https://doi.org/10.5555/COSCI.TAU.001},
  abstract = "A value in quotes with {braces}: braces protect {"}quotes{"}.",
  keywords = {microglia; exosomes, tau},
}
@book(noDoi2010,
  editor = {Editor, Ed},
  title = {A Book},
  publisher = {Press},
  year = {circa 2010}
)
@article{untitled, author = {A, B}, year = 2000}
@article{unclosed, title = {Never closed,
  year = 2001
@article{after, title = {After the broken one}, year = {2002}, url = {http://dx.doi.org/10.5555/cosci.url.1}}
@misc{badfield, title = {T}, = {no name}}
@misc{recovered, title = {Recovered}}
`
	refs, skipped := ParseBibTeX([]byte(src), "t.bib")
	byKey := map[string]Reference{}
	for _, r := range refs {
		byKey[r.Key] = r
	}
	ito := byKey["ito2021"]
	if ito.ID != "10.5555/cosci.tau.001" || ito.Title != "Microglia carry tau" || ito.Venue != "Journal of Test Neuroscience, J. T. N." ||
		ito.Year != 2021 || !slices.Equal(ito.Keywords, []string{"microglia", "exosomes", "tau"}) || ito.Type != "article" || !slices.Equal(ito.Files, []string{"t.bib"}) {
		t.Errorf("ito2021: %+v", ito)
	}
	if !strings.Contains(ito.Abstract, "braces protect \"quotes\"") {
		t.Errorf("ito2021 abstract: %q", ito.Abstract)
	}
	if b := byKey["noDoi2010"]; b.ID != "noDoi2010" || b.Year != 2010 || !slices.Equal(b.Authors, []string{"Editor, Ed"}) || b.Type != "book" {
		t.Errorf("noDoi2010: %+v", b)
	}
	if a := byKey["after"]; a.DOI != "10.5555/cosci.url.1" || a.ID != "10.5555/cosci.url.1" {
		t.Errorf("a DOI given as a dx.doi.org link: %+v", a)
	}
	if _, ok := byKey["recovered"]; !ok {
		t.Error("the entry after a malformed one was lost")
	}
	if _, ok := byKey["inside"]; ok {
		t.Error("an entry inside @comment was read")
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.Key] = s.String()
	}
	for key, want := range map[string]string{
		"untitled":  fmt.Sprintf("t.bib:%d (untitled): it has no title", 1+strings.Count(src[:strings.Index(src, "@article{untitled")], "\n")),
		"unclosed":  "not closed",
		"badfield":  "expected a field name",
		"noDoi2010": "",
	} {
		if got := reasons[key]; (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("skipped %s: %q, want %q", key, got, want)
		}
	}
}

func TestParseRIS(t *testing.T) {
	src := "\ufeffTY  - JOUR\r\nID  - k1\r\nAU  - Kim, Jae\r\nA1  - Santos, Rafael\r\nTI  - BIN1 regulates tau\r\n  propagation through vesicles\r\nT2  - Journal of Tests\r\nPY  - 2021/05/01/\r\nSP  - 220\r\nEP  - 231\r\nDO  - 10.5555/COSCI.X\r\nKW  - BIN1\r\nKW  - vesicles; tau\r\nAB  - Line one\r\n  continues here.\r\nER  - \r\n" +
		"\r\nsome text between records\r\n" +
		"TY  - BOOK\r\nAU  - Nobody\r\nPY  - 2019\r\nER  -\r\n" +
		"TY  - CONF\r\nTI  - Cut off at the end\r\nPY  - 2020\r\n"
	refs, skipped := ParseRIS([]byte(src), "z.ris")
	if len(refs) != 2 {
		t.Fatalf("refs %+v", refs)
	}
	r := refs[0]
	if r.ID != "10.5555/cosci.x" || r.Key != "k1" || r.Title != "BIN1 regulates tau propagation through vesicles" || r.Venue != "Journal of Tests" ||
		r.Year != 2021 || r.Pages != "220–231" || !slices.Equal(r.Authors, []string{"Kim, Jae", "Santos, Rafael"}) ||
		!slices.Equal(r.Keywords, []string{"BIN1", "vesicles", "tau"}) || r.Abstract != "Line one continues here." || r.Type != "article" {
		t.Errorf("record 1: %+v", r)
	}
	if c := refs[1]; c.Title != "Cut off at the end" || c.Type != "inproceedings" || c.Key == "" {
		t.Errorf("a record without ER at the end of the file: %+v", c)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0].String(), "z.ris:19") || !strings.Contains(skipped[0].Reason, "no title") {
		t.Errorf("skipped %v", skipped)
	}
}

func TestParseCSL(t *testing.T) {
	src := `[
 {"id": 7, "type": "article-journal", "title": "Seeds", "author": [{"family": "Ruan", "given": "Zhi"}, {"literal": "A Consortium"}],
  "issued": {"date-parts": [["2021", 6]]}, "container-title": ["Journal", "of Tests"], "DOI": "10.5555/C.1", "URL": "https://x/1",
  "abstract": "<jats:p>p < 0.05 in <i>all</i> mice</jats:p>", "keyword": "a, b; c", "page": "1-9"},
 {"id": "raw", "title": "Raw date", "issued": {"raw": "2023-02-14"}},
 {"id": "nameless"},
 "not an object",
 {"id": "bad", "title": {"nested": true}}
]`
	refs, skipped := ParseCSL([]byte(src), "e.json")
	if len(refs) != 2 {
		t.Fatalf("refs %+v", refs)
	}
	r := refs[0]
	if r.ID != "10.5555/c.1" || r.Key != "7" || r.Year != 2021 || r.Venue != "Journal of Tests" || !slices.Equal(r.Authors, []string{"Ruan, Zhi", "A Consortium"}) ||
		r.Abstract != "p < 0.05 in all mice" || !slices.Equal(r.Keywords, []string{"a", "b", "c"}) {
		t.Errorf("item 1: %+v", r)
	}
	if refs[1].Year != 2023 || refs[1].ID != "raw" {
		t.Errorf("item 2: %+v", refs[1])
	}
	if len(skipped) != 3 {
		t.Errorf("skipped %v", skipped)
	}
	if _, s := ParseCSL([]byte("[{\"id\": 1,}\n]"), "broken.json"); len(s) != 1 || !strings.Contains(s[0].Reason, "line 1") {
		t.Errorf("a file that is not JSON: %v", s)
	}
	if refs, _ := ParseCSL([]byte(`{"id": "one", "title": "One item"}`), "one.json"); len(refs) != 1 {
		t.Errorf("a single item: %v", refs)
	}
}

func TestMerge(t *testing.T) {
	a := Reference{ID: "10.5555/x", DOI: "10.5555/x", Key: "k", Title: "Same work", Year: 2020, Files: []string{"a.bib"}}
	b := Reference{ID: "other", Key: "other", Title: "Same  work", Year: 2020, Abstract: "An abstract.", Venue: "J", Files: []string{"b.ris"}}
	c := Reference{ID: "k2", Key: "k2", Title: "One key", Year: 2019, Files: []string{"a.bib"}}
	d := Reference{ID: "k2", Key: "k2", Title: "Another work, same key", Year: 2021, Files: []string{"b.bib"}}
	got, notes := Merge([]Reference{a, b, c, d})
	if len(got) != 3 || len(notes) != 2 {
		t.Fatalf("merged %+v, notes %v", got, notes)
	}
	m := got[0]
	if m.ID != "10.5555/x" || m.Abstract != "An abstract." || m.Venue != "J" || !slices.Equal(m.Files, []string{"a.bib", "b.ris"}) {
		t.Errorf("a duplicate without a DOI merged into the one with: %+v", m)
	}
	if got[1].ID != "k2" || got[2].ID != "k2-2" || got[2].Title != "Another work, same key" {
		t.Errorf("one key for two works: %+v", got[1:])
	}
}
