package fulltext

import (
	"slices"
	"strings"
	"unicode"
)

// A PDF page's lines in reading order. Extractors give the lines of a page in the order
// the file draws them, or in an order of their own guessing; a two-column paper read that
// way runs its columns together (poppler's own reading order puts a right-hand block
// between two left-hand ones when the columns end unevenly). So the lines are placed by
// their boxes: a line crossing the page's middle spans the page and cuts it into bands;
// within a band the left column is read down, then the right. Running heads and page
// numbers (lines at a page's top or bottom edge that recur from page to page, or are a
// bare number) are left out, and the cells of a table row are read as one line.

// block is a run of lines that read as one paragraph (a heading, a table row, a caption).
type block struct {
	page  int // 1-based; 0 in a text without pages
	lines []string
	// section and heading are what a text's structure says (JATS, HTML): a block with a
	// heading opens the section; one with a section and lines belongs to it whatever
	// heading came last. A PDF's blocks have neither: their headings are read from text.
	section, heading string
}

// edge is the share of a page's height at its top and bottom where running heads and
// page numbers sit.
const edge = 0.075

// column of a line: which side of the page's middle it lies on, or both.
const (
	spanning = iota
	left
	right
)

func layoutPages(pages []Page) []block {
	heads := runningHeads(pages)
	var out []block
	for i, p := range pages {
		var lines []Line
		for _, l := range p.Lines {
			if !atEdge(l, p) || !heads[headKey(l.Text)] && !pageNumber(l.Text) {
				lines = append(lines, l)
			}
		}
		out = append(out, pageBlocks(i+1, p, lines)...)
	}
	return out
}

func atEdge(l Line, p Page) bool {
	return p.Height > 0 && (l.Y1 < edge*p.Height || l.Y0 > (1-edge)*p.Height)
}

// runningHeads are the texts (by headKey) of the lines at pages' edges that recur on two
// pages or more, or, in a document of one page, every short line there.
func runningHeads(pages []Page) map[string]bool {
	seen := map[string]int{}
	for _, p := range pages {
		onPage := map[string]bool{}
		for _, l := range p.Lines {
			if atEdge(l, p) {
				onPage[headKey(l.Text)] = true
			}
		}
		for k := range onPage {
			seen[k]++
		}
	}
	heads := map[string]bool{}
	for k, n := range seen {
		if n >= 2 || len(pages) == 1 && len(k) < 120 {
			heads[k] = true
		}
	}
	return heads
}

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
	f := strings.Fields(strings.ToLower(strings.Trim(s, " -–—|")))
	f = slices.DeleteFunc(f, func(w string) bool { return w == "page" || w == "of" || w == "p." })
	if len(f) == 0 || len(f) > 2 {
		return false
	}
	for _, w := range f {
		if strings.TrimFunc(w, unicode.IsDigit) != "" {
			return false
		}
	}
	return true
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
	side := func(l Line) int {
		switch {
		case l.X1 <= mid+slack:
			return left
		case l.X0 >= mid-slack:
			return right
		}
		return spanning
	}
	lines = rows(lines, side)
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

	var out []block
	var prev Line
	for i, l := range ordered {
		h := max(l.Y1-l.Y0, 1)
		newBlock := i == 0 || l.Block != prev.Block || side(l) != side(prev) ||
			l.Y0 < prev.Y0 || l.Y0-prev.Y1 > 0.9*h
		if newBlock {
			out = append(out, block{page: n})
		}
		b := &out[len(out)-1]
		b.lines = append(b.lines, l.Text)
		prev = l
	}
	return out
}

// rows reads the cells of a table row as one line: lines on the same side of the page at
// the same height, left to right.
func rows(lines []Line, side func(Line) int) []Line {
	var out []Line
	for _, l := range lines {
		j := slices.IndexFunc(out, func(o Line) bool {
			h := max(o.Y1-o.Y0, 1)
			return side(o) == side(l) && side(l) != spanning && abs(o.Y0-l.Y0) < 0.4*h && (l.X0 > o.X1 || o.X0 > l.X1)
		})
		if j < 0 {
			out = append(out, l)
			continue
		}
		o := &out[j]
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
