package fulltext

import (
	"fmt"
	"strings"
	"testing"
)

// TestFootBandNumber reads a two-column article with a display low in its right column
// whose fraction's denominator (60) stands alone in the page's foot band, beside a line
// of the left column and above the column's last lines (testdata/footband-number.tex):
// the number is not the page's, so neither it nor the line beside it is dropped as
// furniture. The page number itself, at the page's foot, still is.
func TestFootBandNumber(t *testing.T) {
	doc := readTestdata(t, "footband-number.pdf")
	var all strings.Builder
	for _, p := range doc.Passages {
		all.WriteString(p.Text + "\n")
		if strings.TrimSpace(p.Text) == "1" || strings.HasSuffix(p.Text, " 1") {
			t.Errorf("passage %s holds the page number: %q", p.ID, p.Text)
		}
	}
	for i := 1; i < 40; i++ {
		s := fmt.Sprintf("In flood %d the river carried sand to the sea; in the dry weeks after it carried little.", i)
		if !strings.Contains(all.String(), s) {
			t.Errorf("%q is lost", s)
		}
	}
	if !strings.Contains(all.String(), "Rates were compared between the two rivers over the whole year.") {
		t.Errorf("the last sentence is lost")
	}
}
