package fulltext

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTwoColumnGutter reads a two-column article whose columns pdftotext joins into
// single lines across the gutter (testdata/twocolumn-gutter.tex), some of which a rule
// that looks at one line alone cannot cut: each sentence is read whole, with nothing of
// the other column inside it, and each subsection's text under its own heading.
func TestTwoColumnGutter(t *testing.T) {
	doc := readTestdata(t, "twocolumn-gutter.pdf")
	for _, w := range []struct{ text, heading string }{
		{"We counted broods in forty ponds.", ""},
		{"A brood was counted lost when its pond held no water.", ""},
		{"Then the whole brood is lost.", ""},
		{"Forty ponds were chosen from the county’s survey.", "2.1 Ponds"},
		{"Visits were made in the morning.", "2.2 Visits"},
		{"Stakes were checked weekly.", "2.3 Counting broods"},
		{"Rain was taken from the nearest station.", "2.4 Weather"},
		{"The model was a logistic regression with the pond as a random effect.", "2.5 Analysis"},
	} {
		k := slices.IndexFunc(doc.Passages, func(p Passage) bool { return strings.Contains(p.Text, w.text) })
		switch {
		case k < 0:
			t.Errorf("%q is not read whole", w.text)
		case w.heading != "" && doc.Passages[k].Heading != w.heading:
			t.Errorf("%q is under %q, not %q", w.text, doc.Passages[k].Heading, w.heading)
		}
	}
	for _, p := range doc.Passages {
		// the methods' sentences are the right column's only: none may sit in a passage
		// of the left column's introduction
		if strings.Contains(p.Text, "Frogs") && strings.Contains(p.Text, "ponds were chosen") {
			t.Errorf("passage %s runs the columns together: %q", p.ID, p.Text)
		}
	}
}

// readTestdata reads a PDF in testdata/ with the reader under test.
func readTestdata(t *testing.T, name string) Document {
	t.Helper()
	needPDFText(t)
	doc, err := Reader{}.Read(context.Background(), filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
