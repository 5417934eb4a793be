package library

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"
)

// The parsers read whatever a reference manager, or a person with an editor, wrote. For
// any input they must end, never panic, and return only references that have an id and a
// title, in valid UTF-8 when the input was.

func seed(f *testing.F, file string, more ...string) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "library", file))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, s := range more {
		f.Add([]byte(s))
	}
}

func checkParsed(t *testing.T, in []byte, refs []Reference) {
	for _, r := range refs {
		if r.ID == "" || r.Title == "" {
			t.Fatalf("a reference without id or title: %+v", r)
		}
		if utf8.Valid(in) && (!utf8.ValidString(r.Title) || !utf8.ValidString(r.Abstract)) {
			t.Fatalf("invalid UTF-8 out of valid input: %+v", r)
		}
	}
}

func FuzzBibTeX(f *testing.F) {
	seed(f, "lab.bib", "@article{k, title = {T}}", `@string{a = "x"} @misc(k, title = a # "y" # {z})`, "@a{", "@article{k, title = {{{", `@b{k, author = {A and B and {C and D}}, title = "\"{o}"}`)
	f.Fuzz(func(t *testing.T, in []byte) {
		refs, _ := ParseBibTeX(in, "f.bib")
		checkParsed(t, in, refs)
	})
}

func FuzzRIS(f *testing.F) {
	seed(f, "zotero.ris", "TY  - JOUR\nTI  - T\nER  - \n", "TY  - JOUR\r\nTI  - wrapped\r\n  line\r\n", "ER  - \nTY  -\n")
	f.Fuzz(func(t *testing.T, in []byte) {
		refs, _ := ParseRIS(in, "f.ris")
		checkParsed(t, in, refs)
	})
}

func FuzzCSLJSON(f *testing.F) {
	seed(f, "export.json", `[{"id": 1, "title": "T"}]`, `{"title": ["a", "b"], "issued": {"date-parts": [[]]}}`, `[null, 1, "x", {"title": null}]`)
	f.Fuzz(func(t *testing.T, in []byte) {
		refs, _ := ParseCSL(in, "f.json")
		checkParsed(t, in, refs)
	})
}

func FuzzDecodeLaTeX(f *testing.F) {
	for _, s := range []string{`M{\"u}ller`, `\'`, `\c{`, `{\i}`, "--- `` ''", `$\alpha$`, `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := DecodeLaTeX(s)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("DecodeLaTeX(%q) = %q: invalid UTF-8", s, out)
		}
	})
}

// FuzzBibTeXExpansion: whatever the input, macro expansion keeps within its caps. Every
// field is within its cap, the report names at most Reports entries and one line more,
// and all the text returned is bounded by the input and the expansion budget: text read
// is at most doubled (LaTeX decoding, names turned round), macros add at most
// ExpandBytes (twice, decoded), a reference adds its file's name, a generated key and
// the punctuation of its names, and each report line a bounded sentence.
func FuzzBibTeXExpansion(f *testing.F) {
	f.Add([]byte(macroBomb(7)))
	f.Add([]byte(macroBomb(12)))
	f.Add([]byte(`@string{a = "0123456789"} @string{b = a # a # a # a # a # a # a # a # a # a # a # a} @misc{k, title = b # b # b, author = b # { and } # b}`))
	f.Add([]byte(`@string{a = {x}} @string{b = a} @string{c = b} @string{d = c} @string{e = d} @misc{k, title = e}`))
	f.Add([]byte(`@string{jan = jan # jan # jan # jan} @string{jan = jan # jan # jan # jan} @misc(k, title = jan # jan # jan, keywords = jan # {;} # feb)`))
	f.Add([]byte(`@string{a = "~--` + "``" + `\ss"} @misc{k, title = a # a # a # a # a # a # a # a, abstract = a # a # a # a # a # a # a}`))
	lim := Limits{FileBytes: 1 << 20, ValueBytes: 300, ExpandBytes: 2000, MacroDepth: 4, TitleBytes: 100, AbstractBytes: 200,
		TextBytes: 50, IDBytes: 60, Authors: 5, Keywords: 5, Reports: 20}
	f.Fuzz(func(t *testing.T, in []byte) {
		refs, skipped := lim.ParseBibTeX(in, "f.bib")
		checkParsed(t, in, refs)
		for _, r := range refs {
			if len(r.Title) > lim.TitleBytes || len(r.Abstract) > lim.AbstractBytes || len(r.Key) > lim.IDBytes || len(r.DOI) > lim.IDBytes ||
				len(r.URL) > lim.IDBytes || len(r.Authors) > lim.Authors || len(r.Keywords) > lim.Keywords {
				t.Fatalf("a reference over the caps: %+v", r)
			}
			for _, s := range slices.Concat([]string{r.Venue, r.Publisher, r.Volume, r.Pages, r.Type}, r.Authors, r.Keywords) {
				if len(s) > lim.TextBytes {
					t.Fatalf("a field over %d bytes: %q", lim.TextBytes, s)
				}
			}
		}
		if len(skipped) > lim.Reports+1 {
			t.Fatalf("%d report lines, want at most %d", len(skipped), lim.Reports+1)
		}
		bound := 2*(len(in)+lim.ExpandBytes) + len(refs)*(64+lim.TextBytes+lim.TitleBytes) + len(skipped)*600
		if n := outputBytes(refs, skipped); n > bound {
			t.Fatalf("%d bytes of output from %d of input, over the bound of %d", n, len(in), bound)
		}
	})
}
