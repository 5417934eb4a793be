package fulltext

import (
	"strings"
	"testing"
)

// TestTableInSentence reads a one-column article with a small table set in the middle
// of a sentence (testdata/article-table.tex): the table is centred, so its cells lie on
// either side of the page's middle, and its caption stands between the sentence's
// halves. The sentence is read whole, and the caption and cells in a passage of their
// own, row by row.
func TestTableInSentence(t *testing.T) {
	doc := readTestdata(t, "article-table.pdf")
	sentence := "We compared three harbours, one on the open coast, one in an estuary and one in a sheltered bay, against the records the harbour masters kept for the ten years before."
	var whole, table bool
	for _, p := range doc.Passages {
		whole = whole || strings.Contains(p.Text, sentence)
		table = table || strings.Contains(p.Text, "Open coast 12 410 t 520 t Estuary 8 220 t 240 t")
		if strings.Contains(p.Text, "harbours") && strings.Contains(p.Text, "Table 1") {
			t.Errorf("passage %s reads the table into the sentence: %q", p.ID, p.Text)
		}
	}
	if !whole {
		t.Errorf("the sentence split by the table is not read whole")
	}
	if !table {
		t.Errorf("the table is not read row by row")
	}
}
