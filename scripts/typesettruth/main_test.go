package main

import "testing"

func TestColumn(t *testing.T) {
	pt := func(p float64) int { return int(p * 65536) }
	// IEEEtran on US letter: text 516 pt wide from 43.6 pt, two columns of 252 pt.
	two := layout{horigin: pt(72), hoffset: pt(-28.4), odd: pt(0), textwidth: pt(516)}
	// A twoside layout whose even pages sit 40 pt further left.
	twoside := layout{horigin: pt(72), odd: pt(60), even: pt(20), textwidth: pt(400), twoside: true}
	cases := []struct {
		name  string
		l     layout
		m     mark
		hsize int
		want  string
	}{
		{"a full-width abstract", two, mark{page: 1, x: pt(60)}, pt(516), "full"},
		{"the left column", two, mark{page: 1, x: pt(290)}, pt(252), "left"},
		{"the right column", two, mark{page: 1, x: pt(310)}, pt(252), "right"},
		{"left of the middle on an odd page", twoside, mark{page: 3, x: pt(320)}, pt(190), "left"},
		{"right of the middle on an even page", twoside, mark{page: 2, x: pt(320)}, pt(190), "right"},
	}
	for _, c := range cases {
		if got := c.l.column(c.m, c.hsize); got != c.want {
			t.Errorf("%s: column = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestHeadingNumbers(t *testing.T) {
	if got := plain(`\protect \unhbox \voidb@x \hbox {II-A}`); got != "II-A" {
		t.Errorf("plain = %q, want II-A", got)
	}
	cases := []struct{ in, number, title string }{
		{"2.1 Participants and randomisation", "2.1", "Participants and randomisation"},
		{"1. Introduction", "1", "Introduction"},
		{"References", "", "References"},
		{"24 hours later", "24", "hours later"}, // a title that opens with a number is read as numbered: keep such titles out of the corpus
	}
	for _, c := range cases {
		if n, h := splitNumber(c.in); n != c.number || h != c.title {
			t.Errorf("splitNumber(%q) = %q, %q; want %q, %q", c.in, n, h, c.number, c.title)
		}
	}
}
