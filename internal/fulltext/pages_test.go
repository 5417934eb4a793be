package fulltext

import "testing"

func TestOnPage(t *testing.T) {
	text := "The first sentence is on page two. The second starts there and runs onto page three. The third is on page three alone."
	brk := len("The first sentence is on page two. The second starts there and runs ")
	p := Passage{Page: 2, Breaks: []int{brk}, Text: text}
	cases := []struct {
		page int
		want string
	}{
		{1, ""},
		{2, "The first sentence is on page two. The second starts there and runs onto page three."},
		{3, "The second starts there and runs onto page three. The third is on page three alone."},
		{4, ""},
	}
	for _, c := range cases {
		if got := p.OnPage(c.page); got != c.want {
			t.Errorf("OnPage(%d) = %q, want %q", c.page, got, c.want)
		}
	}
	if p.LastPage() != 3 || p.PageAt(0) != 2 || p.PageAt(brk) != 3 {
		t.Errorf("LastPage %d, PageAt(0) %d, PageAt(break) %d; want 3, 2, 3", p.LastPage(), p.PageAt(0), p.PageAt(brk))
	}
	whole := Passage{Page: 5, Text: text}
	if whole.OnPage(5) != text || whole.OnPage(6) != "" {
		t.Errorf("a passage on one page: OnPage(5) %q, OnPage(6) %q", whole.OnPage(5), whole.OnPage(6))
	}
}

func TestSentences(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"One. Two? Three!", []string{"One.", "Two?", "Three!"}},
		{"As Fig. 2 shows, it rose. Then it fell.", []string{"As Fig. 2 shows, it rose.", "Then it fell."}},
		{"Smith et al. (2019) saw it. J. Smith did not.", []string{"Smith et al. (2019) saw it.", "J. Smith did not."}},
		{"It was 3.5 mm (p < 0.05). 12 mice died.", []string{"It was 3.5 mm (p < 0.05).", "12 mice died."}},
		{"No end here", []string{"No end here"}},
		{`He said "stop." Then left.`, []string{`He said "stop."`, "Then left."}},
	}
	for _, c := range cases {
		var got []string
		for _, s := range Sentences(c.text) {
			got = append(got, c.text[s.Start:s.End])
		}
		if len(got) != len(c.want) {
			t.Errorf("Sentences(%q) = %q, want %q", c.text, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("Sentences(%q) = %q, want %q", c.text, got, c.want)
				break
			}
		}
	}
}
