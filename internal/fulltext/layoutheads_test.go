package fulltext

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLayoutHeadings reads headings that neither a number nor a larger type marks, from
// pdflatex papers of our own: amsart's unnumbered section, centred in small capitals in
// the body's size (testdata/amsart-unnumbered.tex). The passage after it is under it,
// and the one before it is not.
func TestLayoutHeadings(t *testing.T) {
	needPDFText(t)
	for _, c := range []struct{ file, text, heading string }{
		{"amsart-unnumbered.pdf", "On a holiday twice as many cars come", "Holidays at the landing"},
		{"amsart-unnumbered.pdf", "Between two crossings it grows as the arrivals come.", "2. The model"},
	} {
		doc, err := Reader{}.Read(context.Background(), filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		k := slices.IndexFunc(doc.Passages, func(p Passage) bool { return strings.Contains(p.Text, c.text) })
		switch {
		case k < 0:
			t.Errorf("%s: %q is not read", c.file, c.text)
		case doc.Passages[k].Heading != c.heading:
			t.Errorf("%s: %q is under %q, not %q", c.file, c.text, doc.Passages[k].Heading, c.heading)
		}
	}
}
