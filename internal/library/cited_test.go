package library

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/passage"
)

// TestCitationReadsResults: internal/citation reads the search and fetch tools' results
// by the JSON names of this package's types (it keeps its own copy of the names, since
// this package imports it), so a result written by these types is read whole: each
// passage's id, page, last page, breaks, section, heading, text and file. Renaming a
// field's JSON name here, or there, fails it.
func TestCitationReadsResults(t *testing.T) {
	const text = "Exosome inhibition lowered seeding. It ran onto the next page."
	search := SearchOutput{Query: "q", Results: []SearchHit{{Work: Work{ID: "10.5555/x"}}}, Passages: []PassageResult{{
		Work: Work{ID: "10.5555/x", Title: "T"}, Passage: "10.5555/x#p7.2", Page: 7, LastPage: 8, Breaks: []int{36},
		Section: "results", Heading: "3 Results in mice", Text: text, File: "files/x.pdf", Score: 2,
	}}}
	fetch := FetchOutput{Reference: Reference{ID: "kim2021", Key: "kim2021", Title: "K"}, Fulltext: &TextInfo{File: "files/kim.xml", Kind: "jats"},
		Passages: []PassageShown{{Passage: "kim2021#s3.1", Section: "methods", Heading: "2.1 Mice", Text: "Mice were housed."}}}
	for _, tc := range []struct {
		name string
		out  any
		want citation.Passage
	}{
		{"search", search, citation.Passage{ID: passage.At("10.5555/x", 7, 2), Page: 7, LastPage: 8, Breaks: []int{36},
			Section: "results", Heading: "3 Results in mice", Text: text, File: "files/x.pdf"}},
		{"fetch", fetch, citation.Passage{ID: passage.InSection("kim2021", 3, 1), Section: "methods", Heading: "2.1 Mice",
			Text: "Mice were housed.", File: "files/kim.xml"}},
	} {
		b, err := json.Marshal(tc.out)
		if err != nil {
			t.Fatal(err)
		}
		got := citation.PassagesIn(string(b))
		if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
			t.Errorf("%s: citation reads %+v\nwant %+v\nfrom %s", tc.name, got, tc.want, b)
		}
	}
}
