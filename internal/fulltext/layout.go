package fulltext

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// A PDF page's lines in reading order. Extractors give the lines of a page in the order
// the file draws them, or in an order of their own guessing; a two-column paper read that
// way runs its columns together (poppler's own reading order puts a right-hand block
// between two left-hand ones when the columns end unevenly). So the lines are placed by
// their boxes: a line crossing the page's middle spans the page and cuts it into bands;
// within a band the left column is read down, then the right; a float set across both
// columns (its extractor's block crosses the middle) spans the page at its height.
// Running heads, feet and page numbers are left out by what they are (furniture), and
// the cells of a table row are read as one line.

// block is a run of lines that read as one paragraph (a heading, a table row, a caption).
type block struct {
	page  int // 1-based; 0 in a text without pages
	lines []string
	// section and heading are what a text's structure says (JATS, HTML): a block with a
	// heading opens the section; one with a section and lines belongs to it whatever
	// heading came last. A PDF's blocks have neither: their headings are read from text.
	section, heading string
	// gap is the space above a PDF block, in its first line's heights (9 at a page's or a
	// column's top); size is its tallest line's height: a heading's layout.
	gap, size float64
	rows      int  // the table rows it holds: lines read from cells side by side
	alone     bool // a line set as a heading by its place (sideHeads)
}

// band is the share of a page's height at its top and bottom where a bare page number is
// taken for one: classes put them in the head or the foot, some well inside the margin.
const band = 0.15

// column of a line: which side of the page's middle it lies on, or both.
const (
	spanning = iota
	left
	right
)

func layoutPages(pages []Page) []block {
	drop := furniture(pages)
	var out []block
	for i, p := range pages {
		var lines []Line
		for j, l := range p.Lines {
			if !drop[i][j] {
				lines = append(lines, l)
			}
		}
		out = append(out, pageBlocks(i+1, p, lines)...)
	}
	return out
}

// furniture finds the lines of each page that are the journal's, not the paper's:
// running heads and feet (a line that recurs, digits aside, at about the same height on
// two pages or more, wherever on the page), page numbers (a bare number in a page's top
// or bottom band, or numbers that count the pages wherever they stand), and the first
// page's journal lines and footer ("Preprint submitted to ...", a copyright line),
// set apart from the body by a gap at its top or bottom.
func furniture(pages []Page) []map[int]bool {
	drop := make([]map[int]bool, len(pages))
	type place struct {
		page int
		y    float64
	}
	seen := map[string][]place{}
	for i, p := range pages {
		drop[i] = map[int]bool{}
		for _, l := range p.Lines {
			if len(l.Text) < 200 {
				k := headKey(l.Text)
				seen[k] = append(seen[k], place{i, l.Y0})
			}
		}
	}
	counts := pageCounts(pages)
	for i, p := range pages {
		near := max(4, 0.01*p.Height)
		for j, l := range p.Lines {
			repeats := len(l.Text) < 200 && slices.ContainsFunc(seen[headKey(l.Text)], func(o place) bool {
				return o.page != i && abs(o.y-l.Y0) <= near
			})
			if repeats || journalLine(l, p) {
				drop[i][j] = true
			}
		}
		for j, l := range p.Lines {
			if n, number := pageNumberValue(l.Text); number && (inBand(l, p, band) && outermost(p, j, drop[i]) || counts[n-i]) {
				drop[i][j] = true
			}
		}
		journalEdges(p, drop[i])
	}
	for i, p := range pages {
		for j := range apart(p, drop[i], i == 0) {
			drop[i][j] = true
		}
		besideNumbers(p, drop[i])
	}
	return drop
}

// outermost says whether a line in a page's head or foot band has none of the paper's
// lines beyond it (above it in the head, below it in the foot): a page number does, and
// a number in an equation set low on a page ("t/60" in a display above the page's last
// lines) does not. Taken for a page number, it would take the heading beside it too.
func outermost(p Page, j int, drop map[int]bool) bool {
	l := p.Lines[j]
	foot := l.Y0 > p.Height/2
	for k, o := range p.Lines {
		if k != j && !drop[k] && (foot && o.Y0 > l.Y1 || !foot && o.Y1 < l.Y0) {
			return false
		}
	}
	return true
}

// journalEdges drops the journal lines set beyond a page's band with nothing of the
// paper beyond them: the classification and key-word footnotes amsart sets above the
// page number, well above the foot of an A4 page. The outermost first, so that a
// footnote of two such lines goes whole.
func journalEdges(p Page, drop map[int]bool) {
	var js []int
	beyond := maps.Clone(drop) // what may lie beyond: furniture, and any bare number
	for j, l := range p.Lines {
		if !drop[j] && journalLines.MatchString(strings.TrimSpace(l.Text)) {
			js = append(js, j)
		}
		beyond[j] = beyond[j] || pageNumber(l.Text)
	}
	edge := func(l Line) float64 { return min(l.Y0, p.Height-l.Y1) }
	slices.SortFunc(js, func(a, b int) int { return cmpFloat(edge(p.Lines[a]), edge(p.Lines[b])) })
	for _, j := range js {
		if outermost(p, j, beyond) {
			drop[j], beyond[j] = true, true
		}
	}
}

// besideNumbers drops the lines set beside a page number or a journal line in a page's
// head or foot, at its height: a running head on one page only (amsart's author
// "A. PERSON" beside "2"), the date beside "Preprint submitted to ..." (elsarticle's).
func besideNumbers(p Page, drop map[int]bool) {
	for j, n := range p.Lines {
		if !drop[j] || !inBand(n, p, band) || !pageNumber(n.Text) && !journalLines.MatchString(strings.TrimSpace(n.Text)) {
			continue
		}
		for k, l := range p.Lines {
			if !drop[k] && abs(l.Y0-n.Y0) < 2 && abs(l.Y1-n.Y1) < 2 && len(l.Text) < 120 {
				drop[k] = true
			}
		}
	}
}

// pageCounts are the offsets (number minus page index) at which bare numbers count the
// pages: the same offset on two pages or more.
func pageCounts(pages []Page) map[int]bool {
	pagesAt := map[int]int{}
	for i, p := range pages {
		offs := map[int]bool{}
		for _, l := range p.Lines {
			if n, ok := pageNumberValue(l.Text); ok {
				offs[n-i] = true
			}
		}
		for o := range offs {
			pagesAt[o]++
		}
	}
	counts := map[int]bool{}
	for o, n := range pagesAt {
		if n >= 2 {
			counts[o] = true
		}
	}
	return counts
}

func inBand(l Line, p Page, share float64) bool {
	return p.Height > 0 && (l.Y1 < share*p.Height || l.Y0 > (1-share)*p.Height)
}

// journalLines are what journals and preprint servers set in a page's head or foot, and
// the classification and key-word notes math classes set as first-page footnotes
// (amsart's, SIAM's).
var journalLines = regexp.MustCompile(`(?i)^((19|20)\d\d )?(mathematics subject classification|date: |ams subject classifications|key ?words and phrases\.|preprint submitted to|accepted manuscript|bioRxiv preprint|medRxiv preprint|arXiv:\d|©|\(c\) ?(19|20)\d\d|copyright|IEEE TRANSACTIONS|IEEE JOURNAL|downloaded from|this article is protected by copyright|the copyright holder for this preprint)`)

func journalLine(l Line, p Page) bool {
	return inBand(l, p, band) && journalLines.MatchString(strings.TrimSpace(l.Text))
}

// apart are a page's lines at its very top set apart from the body by a gap (a running
// head on a page of its own: Nature's "Article" on the second of two pages), and the
// first page's at its very bottom (a footer: "Preprint submitted to ... March 14, 2025").
// Captions are not: a float set at a page's foot or a table's caption at its top is the
// paper's.
func apart(p Page, drop map[int]bool, first bool) map[int]bool {
	var idx []int
	for j := range p.Lines {
		if !drop[j] {
			idx = append(idx, j)
		}
	}
	if len(idx) < 4 || p.Height == 0 {
		return nil
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(p.Lines[a].Y0, p.Lines[b].Y0) })
	var hs []float64
	for _, j := range idx {
		hs = append(hs, p.Lines[j].Y1-p.Lines[j].Y0)
	}
	slices.Sort(hs)
	h := hs[len(hs)/2]
	out := map[int]bool{}
	// the foot: up to three lines in the bottom band, below a gap of two lines' height,
	// on the first page (a float's last lines may stand so on another)
	for k := len(idx) - 1; first && k >= max(1, len(idx)-3); k-- {
		l, above := p.Lines[idx[k]], p.Lines[idx[k-1]]
		if l.Y0 < (1-band)*p.Height {
			break
		}
		if l.Y0-above.Y1 > 2*h {
			for _, j := range idx[k:] {
				if !caption.MatchString(p.Lines[j].Text) {
					out[j] = true
				}
			}
			break
		}
	}
	// the head: up to two lines in the top band, above a gap of two lines' height
	for k := 0; k < min(2, len(idx)-1); k++ {
		l, below := p.Lines[idx[k]], p.Lines[idx[k+1]]
		if l.Y1 > 0.08*p.Height {
			break
		}
		if below.Y0-l.Y1 > 2*h {
			for _, j := range idx[:k+1] {
				if caption.MatchString(p.Lines[j].Text) {
					return out // a table's caption at the top of a page
				}
			}
			for _, j := range idx[:k+1] {
				out[j] = true
			}
			break
		}
	}
	return out
}

// caption opens a figure's or a table's caption.
var caption = regexp.MustCompile(`^(Fig\.|Figure|FIGURE|FIG\.|Table|TABLE|Scheme|Box|Supplementary (Figure|Table))\s*[A-Z]?\d+`)

// headKey is a line's text with its digits as one mark: running heads carry page numbers.
func headKey(s string) string {
	var b strings.Builder
	digit := false
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsDigit(r):
			if !digit {
				b.WriteByte('#')
			}
			digit = true
			continue
		case unicode.IsSpace(r):
			continue
		}
		digit = false
		b.WriteRune(r)
	}
	return b.String()
}

// pageNumber says whether a line is a bare page number: "7", "- 7 -", "Page 7", "7 of 12".
func pageNumber(s string) bool {
	_, ok := pageNumberValue(s)
	return ok
}

// pageNumberValue is a bare page number's value (the first number: 7 in "7 of 12").
func pageNumberValue(s string) (int, bool) {
	f := strings.Fields(strings.ToLower(strings.Trim(s, " -–—|")))
	f = slices.DeleteFunc(f, func(w string) bool { return w == "page" || w == "of" || w == "p." })
	if len(f) == 0 || len(f) > 2 {
		return 0, false
	}
	for _, w := range f {
		if strings.TrimFunc(w, unicode.IsDigit) != "" {
			return 0, false
		}
	}
	n, err := strconv.Atoi(f[0])
	return n, err == nil && len(f[0]) <= 6
}

// pageBlocks puts one page's lines in reading order and groups them into blocks.
func pageBlocks(n int, p Page, lines []Line) []block {
	if len(lines) == 0 {
		return nil
	}
	mid := p.Width / 2
	if mid == 0 {
		for _, l := range lines {
			mid = max(mid, l.X1)
		}
		mid /= 2
	}
	slack := p.Width * 0.02
	crosses := func(x0, x1 float64) bool { return x0 < mid-slack && x1 > mid+slack }
	// A float set across both columns (a figure*, a table* whose cells fall on either
	// side of the middle) spans the page at its height: the extractor's block that holds
	// a line across the middle says where, and every line at that height is read across.
	var spans [][2]float64
	boxes := blockBoxes(lines)
	for _, l := range lines {
		if b := boxes[l.Block]; crosses(l.X0, l.X1) && !slices.Contains(spans, [2]float64{b.Y0, b.Y1}) {
			spans = append(spans, [2]float64{b.Y0, b.Y1})
		}
	}
	// A page with no column of text right of the middle is read down whole: a table's
	// cells on a one-column page are not two columns (llncs's, centred on the page).
	wide := 0
	for _, l := range lines {
		if l.X0 >= mid-slack && l.X1-l.X0 > 0.25*p.Width {
			wide++
		}
	}
	side := func(l Line) int {
		c := (l.Y0 + l.Y1) / 2
		switch {
		case wide < 2 || crosses(l.X0, l.X1) || slices.ContainsFunc(spans, func(s [2]float64) bool { return s[0] <= c && c <= s[1] }):
			return spanning
		case l.X1 <= mid+slack:
			return left
		}
		return right
	}
	lines = rows(lines, side, p.Width)
	slices.SortStableFunc(lines, func(a, b Line) int { return cmpFloat(a.Y0, b.Y0) })
	var ordered []Line
	var band [2][]Line
	flush := func() {
		ordered = append(ordered, band[0]...)
		ordered = append(ordered, band[1]...)
		band = [2][]Line{}
	}
	for _, l := range lines {
		switch side(l) {
		case spanning:
			flush()
			ordered = append(ordered, l)
		case left:
			band[0] = append(band[0], l)
		default:
			band[1] = append(band[1], l)
		}
	}
	flush()

	heads := sideHeads(ordered, side)
	var out []block
	var prev Line
	for i, l := range ordered {
		h := max(l.Y1-l.Y0, 1)
		newBlock := i == 0 || l.Block != prev.Block || side(l) != side(prev) ||
			l.Y0 < prev.Y0 || l.Y0-prev.Y1 > 0.9*h || headingLine(prev.Text) || headingLine(l.Text) && l.Y0-prev.Y1 > 0.3*h ||
			heads[i] || heads[i-1]
		if newBlock {
			gap := 9.0 // the top of a page or a column: set apart
			if i > 0 && side(l) == side(prev) && l.Y0 >= prev.Y0 {
				gap = (l.Y0 - prev.Y1) / h
			}
			out = append(out, block{page: n, gap: gap, alone: heads[i]})
		}
		b := &out[len(out)-1]
		b.lines = append(b.lines, l.Text)
		b.size = max(b.size, l.Y1-l.Y0)
		if l.cells > 1 {
			b.rows++
		}
		prev = l
	}
	return out
}

// sideHeads are the lines that stand as headings by their place: at their column's left
// edge and short of its right, reading as a title (a capital first, no sentence's end),
// after a sentence's end or a gap, and before a paragraph's first line (indented, or
// below a gap, and as wide as the column). Nature's subheadings
// are set so, in the body's size and in one block with the paragraph they head.
func sideHeads(lines []Line, side func(Line) int) []bool {
	margin, edge := map[int]float64{}, map[int]float64{}
	for _, l := range lines {
		if m, ok := margin[side(l)]; !ok || l.X0 < m {
			margin[side(l)] = l.X0
		}
		edge[side(l)] = max(edge[side(l)], l.X1)
	}
	heads := make([]bool, len(lines))
	for i, l := range lines {
		h := max(l.Y1-l.Y0, 1)
		// or centred, well in from both edges: amsart's unnumbered small-capital heads
		left, width := l.X0-margin[side(l)], edge[side(l)]-margin[side(l)]
		centred := left > 0.15*width && abs(left-(edge[side(l)]-l.X1)) < 0.03*width
		if l.cells > 1 || len(l.Text) > 90 || !titleLike(l.Text) || l.X0 > margin[side(l)]+2 && !centred || l.X1 > edge[side(l)]-10 ||
			i+1 == len(lines) || caption.MatchString(lines[i+1].Text) {
			continue
		}
		after := i == 0 || side(lines[i-1]) != side(l) || ended(lines[i-1].Text) || l.Y0-lines[i-1].Y1 > 0.5*h
		// The next line opens a paragraph: indented (or below a gap) and as wide as the
		// column, not an equation set in the middle.
		next := lines[i+1]
		indent := next.X0 - l.X0
		before := side(next) == side(l) && next.X1 >= edge[side(l)]-5 && indent < 40 &&
			(indent > 3 || next.Y0-l.Y1 > 0.5*h)
		heads[i] = after && before
	}
	return heads
}

// headingLine says whether a line is a numbered heading ("2.1. Cohort assembly"), which
// the extractor may set in one block with the paragraph it heads.
func headingLine(s string) bool {
	m := numbered.FindStringSubmatch(s)
	return m != nil && len(s) < 60 && titleLike(m[2])
}

// rows reads the cells of a table row as one line: lines on the same side of the page at
// the same height, left to right.
func rows(lines []Line, side func(Line) int, width float64) []Line {
	cell := func(l Line) bool { return width == 0 || l.X1-l.X0 < 0.35*width }
	var out []Line
	for _, l := range lines {
		j := slices.IndexFunc(out, func(o Line) bool {
			h := max(o.Y1-o.Y0, 1)
			sameSide := side(o) == side(l) && (side(l) != spanning || cell(l) && cell(o))
			return sameSide && abs(o.Y0-l.Y0) < 0.4*h && (l.X0 > o.X1 || o.X0 > l.X1)
		})
		if j < 0 {
			out = append(out, l)
			continue
		}
		o := &out[j]
		o.cells = max(o.cells, 1) + 1
		if l.X0 > o.X1 {
			o.Text += " " + l.Text
		} else {
			o.Text = l.Text + " " + o.Text
		}
		o.X0, o.X1 = min(o.X0, l.X0), max(o.X1, l.X1)
		o.Y1 = max(o.Y1, l.Y1)
	}
	return out
}

// blockBoxes are the boxes of the extractor's blocks, by block: each the union of its
// lines'.
func blockBoxes(lines []Line) map[int]Line {
	boxes := map[int]Line{}
	for _, l := range lines {
		b, ok := boxes[l.Block]
		if ok {
			l.X0, l.Y0, l.X1, l.Y1 = min(b.X0, l.X0), min(b.Y0, l.Y0), max(b.X1, l.X1), max(b.Y1, l.Y1)
		}
		boxes[l.Block] = l
	}
	return boxes
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
