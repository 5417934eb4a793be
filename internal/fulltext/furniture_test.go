package fulltext

import (
	"strings"
	"testing"
)

// TestFirstPageNotes reads first pages whose foot holds the journal's notes where the
// fixed foot band does not reach, or beside a line it does: amsart's date,
// classification and key words above the page number of an A4 page
// (testdata/amsart-footnotes.tex), and elsarticle 5p's date beside "Preprint submitted
// to ..." below a full column (testdata/elsarticle5p-date.tex). None is read as text,
// and the paper's last sentence on the page is.
func TestFirstPageNotes(t *testing.T) {
	for _, c := range []struct {
		file  string
		notes []string
		kept  string
	}{
		{"amsart-footnotes.pdf", []string{"Date: 28 November 2026", "Mathematics Subject Classification", "Key words and phrases"},
			"We take the arrivals as a Poisson stream whose rate changes with the hour."},
		{"elsarticle5p-date.pdf", []string{"November 28, 2026", "Preprint submitted to"},
			"Between storms 20 and 21 the crest fell a little at every stake."},
	} {
		doc := readTestdata(t, c.file)
		var all strings.Builder
		for _, p := range doc.Passages {
			all.WriteString(p.Text + "\n")
			for _, n := range c.notes {
				if strings.Contains(p.Text, n) {
					t.Errorf("%s: passage %s holds the note %q: %q", c.file, p.ID, n, p.Text)
				}
			}
		}
		if !strings.Contains(all.String(), c.kept) {
			t.Errorf("%s: %q is lost", c.file, c.kept)
		}
	}
}
