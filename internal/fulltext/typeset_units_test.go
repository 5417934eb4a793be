package fulltext

import (
	"fmt"
	"strings"
	"testing"
)

// page makes a US-letter page of body lines from y = 100 down, one every 14 points, in
// one block, with the extra lines given where they are.
func letterPage(body []string, extra ...Line) Page {
	p := Page{Width: 612, Height: 792}
	for i, t := range body {
		y := 100 + 14*float64(i)
		p.Lines = append(p.Lines, Line{Text: t, X0: 72, Y0: y, X1: 540, Y1: y + 10, Block: 0})
	}
	for i, l := range extra {
		l.Block = i + 1
		p.Lines = append(p.Lines, l)
	}
	return p
}

func sentences(n int, what string) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("This is line %s of the %s page's body text that goes on for a while,", spell(i), what))
	}
	out[len(out)-1] = fmt.Sprintf("and the %s paragraph ends here.", what)
	return out
}

func spell(i int) string {
	return []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}[i%10]
}

// TestFurniture: a running head, page numbers and a first-page footer are found by what
// they are, not by a fixed band: a head below the old 7.5% edge (by repetition), page
// numbers above it and numbers in the body's margin (by counting the pages: they stand
// at a different height on each page), the preprint footer (set apart at the foot).
func TestFurniture(t *testing.T) {
	head := func(y float64) Line {
		return Line{Text: "Rescue of cone degeneration in zebrafish larvae", X0: 200, Y0: y, X1: 400, Y1: y + 9}
	}
	number := func(n int, y float64) Line {
		return Line{Text: fmt.Sprint(n), X0: 300, Y0: y, X1: 306, Y1: y + 9}
	}
	pages := []Page{
		letterPage(sentences(8, "first"),
			Line{Text: "Preprint submitted to Journal of Forensic Biochemistry", X0: 72, Y0: 700, X1: 350, Y1: 709},
			Line{Text: "March 14, 2025", X0: 450, Y0: 700, X1: 540, Y1: 709},
			number(1, 640)),
		letterPage(sentences(8, "second"), head(68), number(2, 640), Line{Text: "17", X0: 560, Y0: 400, X1: 570, Y1: 409}),
		letterPage(sentences(8, "third"), head(68), Line{Text: "18", X0: 560, Y0: 300, X1: 570, Y1: 309}),
	}
	// The third page's number right under its last line, in the body's own block: read
	// with it, it would end the paragraph ("... ends here. 3").
	pages[2].Lines = append(pages[2].Lines, Line{Text: "3", X0: 300, Y0: 212, X1: 306, Y1: 221, Block: 0})
	// The second page's own head beside its number (amsart's author on even pages): on
	// no other page, so only its place beside the number tells.
	pages[1].Lines = append(pages[1].Lines, Line{Text: "2", X0: 72, Y0: 80, X1: 78, Y1: 88, Block: 7},
		Line{Text: "A. PERSON", X0: 280, Y0: 80, X1: 330, Y1: 88, Block: 8})
	// Every line furniture drops is the journal's, and every one of the journal's is
	// dropped: the numbers in the margin too, though passages would drop them alone.
	drop := furniture(pages)
	for i, p := range pages {
		for j, l := range p.Lines {
			journal := !strings.Contains(l.Text, "paragraph") && !strings.Contains(l.Text, "body text")
			if drop[i][j] != journal {
				t.Errorf("page %d: %q dropped %v", i+1, l.Text, drop[i][j])
			}
		}
	}
	doc := FromPages(pages)
	var all []string
	for _, p := range doc.Passages {
		all = append(all, p.Text)
		if pageNumber(p.Text) {
			t.Errorf("passage %s is only a number: %q", p.ID, p.Text)
		}
		if strings.HasSuffix(p.Text, "here. 3") {
			t.Errorf("passage %s ends with a page number: %q", p.ID, p.Text)
		}
	}
	text := strings.Join(all, "\n")
	for _, bad := range []string{"Rescue of cone", "Preprint submitted", "March 14", "17", "18"} {
		if strings.Contains(text, bad) {
			t.Errorf("%q read as the paper's text:\n%s", bad, text)
		}
	}
	for _, want := range []string{"first paragraph ends here.", "second paragraph ends here.", "third paragraph ends here."} {
		if !strings.Contains(text, want) {
			t.Errorf("%q lost:\n%s", want, text)
		}
	}
}

// TestBreaks: a paragraph that crosses a page break says where the next page starts, and
// a long one cut into pieces gives each piece the page it starts on, its id by that page,
// and its breaks from its own start.
func TestBreaks(t *testing.T) {
	short := []block{
		{page: 2, lines: []string{"The first half of the sentence is set at the foot of page two and it goes on"}},
		{page: 3, lines: []string{"across the break onto page three, where it ends."}},
	}
	ps := passages(short, true)
	if len(ps) != 1 {
		t.Fatalf("%d passages, want 1: %+v", len(ps), ps)
	}
	p := ps[0]
	at := strings.Index(p.Text, "across")
	if p.Page != 2 || len(p.Breaks) != 1 || p.Breaks[0] != at || p.OnPage(3) == "" {
		t.Errorf("passage %+v: want page 2 with a break at %d", p, at)
	}

	var long []string
	for i := 0; i < 40; i++ {
		long = append(long, fmt.Sprintf("Sentence %d of the long paragraph is here.", i+1))
	}
	blocks := []block{
		{page: 4, lines: append(long[:25:25], "and the sentence at the foot of page four runs")},
		{page: 5, lines: append([]string{"on to page five, where it ends."}, long[25:]...)},
	}
	ps = passages(blocks, true)
	var pieces []string
	for _, p := range ps {
		pieces = append(pieces, p.Text)
		for _, b := range p.Breaks {
			if b <= 0 || b >= len(p.Text) {
				t.Errorf("passage %s: break %d outside its text of %d bytes", p.ID, b, len(p.Text))
			}
		}
		if !strings.HasPrefix(p.ID, fmt.Sprintf("p%d.", p.Page)) {
			t.Errorf("passage %s says page %d", p.ID, p.Page)
		}
	}
	whole := strings.Join(pieces, " ")
	on5 := strings.Index(whole, "on to page five")
	for _, p := range ps {
		start := strings.Index(whole, p.Text)
		for _, s := range Sentences(p.Text) {
			want := 4
			if start+s.Start >= on5 {
				want = 5
			}
			if got := p.PageAt(s.Start); got != want {
				t.Errorf("%q in %s is at page %d, want %d", p.Text[s.Start:s.End], p.ID, got, want)
			}
		}
	}
	if len(ps) < 2 || ps[len(ps)-1].Page != 5 || ps[len(ps)-1].ID != "p5.1" {
		t.Errorf("the last piece: %+v; want page 5, id p5.1", ps[len(ps)-1])
	}
}

// TestSmallCapitals: IEEE's headings, as pdftotext gives their words, read as written.
func TestSmallCapitals(t *testing.T) {
	w := func(s string, x0, x1, y0 float64) word { return word{text: s, x0: x0, x1: x1, y0: y0, y1: 181.2} }
	for _, tc := range []struct {
		words []word
		want  string
	}{
		{[]word{w("I.", 135.6, 141.9, 172.3), w("I", 147.4, 150.7, 172.3), w("NTRODUCTION", 151.2, 213.4, 173.7)}, "I. Introduction"},
		{[]word{w("II.", 109.1, 119.3, 172.3), w("R", 124.7, 131.4, 172.3), w("ESULTS", 131.9, 162.8, 173.7), w("AND", 165.8, 184.1, 173.7),
			w("D", 187.0, 194.2, 172.3), w("ISCUSSION", 194.7, 240, 173.7)}, "II. Results and Discussion"},
		{[]word{w("The", 72, 90, 172.3), w("DNA", 93, 115, 172.3), w("was", 118, 135, 172.3)}, "The DNA was"},
	} {
		if got := lineText(tc.words); got != tc.want {
			t.Errorf("lineText = %q, want %q", got, tc.want)
		}
	}
}

// TestHeadings: numbered, unlisted and larger-type headings open sections; a passage's
// section is its nearest top-level heading's kind ("other" for an unlisted one), its
// heading the nearest heading's text.
func TestHeadings(t *testing.T) {
	para := func(page int, s string) block {
		return block{page: page, lines: []string{s + " It is a paragraph of the body, long enough to be one."}, size: 10, gap: 0.2}
	}
	h := func(s string, size float64) block { return block{page: 1, lines: []string{s}, size: size, gap: 1.5} }
	blocks := []block{
		para(1, "The front matter."),
		h("Abstract", 13), para(1, "Abstract text."),
		{page: 1, lines: []string{"Keywords: tau, microglia, exosomes"}, size: 10, gap: 1.5, alone: true},
		h("I. Introduction", 10), para(1, "Introduction text."),
		h("II. System architecture", 10), para(1, "Architecture text."),
		h("A. Front end", 10), para(1, "Front end text."),
		h("III. Results", 10),
		h("A. Noise and power", 10), para(1, "Noise text."),
		h("Discussion", 13), para(1, "Discussion text."),
		h("Saved cones drive a visual reflex", 11), para(1, "Reflex text."),
		h("Materials and methods", 13),
		h("2.1 Cohort assembly", 10), para(1, "Cohort text."),
		h("Power was measured in a chamber, and then,", 13), para(1, "Not a heading."),
	}
	want := map[string][2]string{ // text: section, heading
		"Introduction text.": {SectionIntroduction, ""},
		"Architecture text.": {SectionOther, "II. System architecture"},
		"Front end text.":    {SectionOther, "A. Front end"},
		"Noise text.":        {SectionResults, "A. Noise and power"},
		"Discussion text.":   {SectionDiscussion, ""},
		"Reflex text.":       {SectionDiscussion, "Saved cones drive a visual reflex"},
		"Cohort text.":       {SectionMethods, "2.1 Cohort assembly"},
	}
	keywords := false
	for _, p := range passages(blocks, true) {
		keywords = keywords || strings.Contains(p.Text, "Keywords: tau, microglia, exosomes")
		for text, w := range want {
			if strings.HasPrefix(p.Text, text) && (p.Section != w[0] || p.Heading != w[1]) {
				t.Errorf("%q: section %q heading %q; want %q %q", text, p.Section, p.Heading, w[0], w[1])
			}
		}
		if strings.Contains(p.Text, "Not a heading.") && p.Heading != "2.1 Cohort assembly" {
			t.Errorf("a line ending in a comma was read as a heading: %+v", p)
		}
	}
	if !keywords {
		t.Errorf("the keywords' line set apart was taken for a heading, and its text lost")
	}
}

// TestFloatInSentence: a sentence whose halves a figure and a table stand between is
// read whole; the floats stay passages of their own.
func TestFloatInSentence(t *testing.T) {
	body := "Potassium concentrations in the two eyes of a decedent agreed closely at"
	rest := "every interval, and the agreement did not depend on which eye was sampled first."
	blocks := []block{
		{page: 3, lines: []string{"Results"}},
		{page: 3, lines: []string{"Results are given by band, and the long paragraph before them ends well.", body}},
		{page: 3, lines: []string{"Vitreous potassium against interval (schematic)"}},
		{page: 3, lines: []string{"Figure 1: Vitreous potassium concentration against the known interval."}},
		{page: 3, lines: []string{"Table 1: Fitted parameters by band.", "Band Eyes Rate", "Below 10 C 38 0.071", "Above 20 C 43 0.128"}, rows: 3},
		{page: 4, lines: []string{rest}},
	}
	ps := passages(blocks, true)
	found := false
	for _, p := range ps {
		if strings.Contains(p.Text, body+" "+rest) {
			found = true
			if p.Page != 3 || len(p.Breaks) != 1 || p.PageAt(strings.Index(p.Text, rest)) != 4 {
				t.Errorf("the joined sentence: %+v; want page 3 with page 4 from %q", p, rest)
			}
		}
		if strings.Contains(p.Text, "Figure 1") && strings.Contains(p.Text, rest) {
			t.Errorf("the sentence's end is read with the float: %q", p.Text)
		}
	}
	if !found {
		t.Errorf("the sentence is not whole in %+v", ps)
	}
}

// TestCompoundHyphen: a compound broken at its own hyphen keeps it, even when a
// reference's title spells it as one word; a word broken by TeX is joined.
func TestCompoundHyphen(t *testing.T) {
	blocks := []block{
		{lines: []string{"Samples taken after a long post-", "mortem interval were excluded, as were those", "presented in the supplement."}},
		{lines: []string{"References"}},
		{lines: []string{"Sturner WQ. The vitreous humour: postmortem potassium changes. Lancet 1963."}},
	}
	v := vocabulary(blocks)
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"after a long post-", "mortem interval"}, "after a long post-mortem interval"},
		{[]string{"the self-", "report scores"}, "the self-report scores"},
		{[]string{"as were those pre-", "sented in the supplement"}, "as were those presented in the supplement"},
	} {
		if got := joinLines(tc.lines, v); got != tc.want {
			t.Errorf("joinLines(%q) = %q, want %q", tc.lines, got, tc.want)
		}
	}
}

// TestSideHeads: a subheading in the body's type is found by its place (Nature's "Lake
// selection" before an indented paragraph), and a short line before a displayed equation
// is not one, though it also starts with a capital and ends a line of its own.
func TestSideHeads(t *testing.T) {
	line := func(text string, x0, x1, y float64) Line { return Line{Text: text, X0: x0, X1: x1, Y0: y, Y1: y + 9} }
	lines := []Line{
		line("the ice, and lakes with fewer records were left out of the analysis.", 51, 289, 400),
		line("Lake selection", 51, 115, 416),
		line("We included lakes with at least five winters of", 66, 289, 430),
		line("chlorophyll measured under the ice, with the dates.", 51, 289, 442),
		line("Each winter was described by the duration of its ice.", 51, 289, 454),
		line("The model then reads", 51, 140, 466),
		line("C(t) = C0 + D (1 - exp(-kt))", 120, 220, 482),
		line("in which D is the size of the store and k its rate.", 51, 289, 498),
	}
	heads := sideHeads(lines, func(Line) int { return left })
	want := []bool{false, true, false, false, false, false, false, false}
	for i := range lines {
		if heads[i] != want[i] {
			t.Errorf("%q: a heading %v, want %v", lines[i].Text, heads[i], want[i])
		}
	}
}

// TestSectionNamed: the names classes number and set in capitals are the sections they
// name, IEEE's singular "Method" among them.
func TestSectionNamed(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"III. Method", SectionMethods},
		{"2. Materials and methods", SectionMethods},
		{"IV. Results and Discussion", SectionResults},
		{"VI. Conclusion", SectionConclusions},
		{"II. System architecture", ""},
	} {
		if got, _ := SectionNamed(tc.heading); got != tc.want {
			t.Errorf("SectionNamed(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}
