package fulltext

import (
	"slices"
	"strings"
	"testing"
)

// TestLayoutHeadings reads headings that neither a number nor a larger type marks, from
// pdflatex papers of our own: amsart's unnumbered section, centred in small capitals in
// the body's size (testdata/amsart-unnumbered.tex), and amsart's numbered subsections,
// set run in at the start of their paragraph's first line (testdata/amsart-runin.tex).
// The passage after a heading is under it, whole, and the one before it is not.
func TestLayoutHeadings(t *testing.T) {
	for _, c := range []struct{ file, text, heading string }{
		{"amsart-unnumbered.pdf", "On a holiday twice as many cars come", "Holidays at the landing"},
		{"amsart-unnumbered.pdf", "Between two crossings it grows as the arrivals come.", "2. The model"},
		{"amsart-runin.pdf", "2.1. Waiting cars. The number of cars waiting is a queue served in batches of forty at fixed times.", "2.1. Waiting cars"},
		{"amsart-runin.pdf", "We take the arrivals as a Poisson stream whose rate changes with the hour.", "2.2. Arrivals"},
		{"amsart-runin.pdf", "Average the counts over the weekdays of the year.", "2.2. Arrivals"},
		{"amsart-runin.pdf", "A ferry leaves the landing every half hour and takes forty cars.", ""},
	} {
		doc := readTestdata(t, c.file)
		k := slices.IndexFunc(doc.Passages, func(p Passage) bool { return strings.Contains(p.Text, c.text) })
		switch {
		case k < 0:
			t.Errorf("%s: %q is not read", c.file, c.text)
		case doc.Passages[k].Heading != c.heading:
			t.Errorf("%s: %q is under %q, not %q", c.file, c.text, doc.Passages[k].Heading, c.heading)
		}
	}
}
