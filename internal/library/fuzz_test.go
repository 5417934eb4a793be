package library

import (
	"os"
	"path/filepath"
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
