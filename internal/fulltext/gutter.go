package fulltext

import "slices"

// gutter reads a line as the extractor gave it, or as two where it runs across a
// two-column page's gutter: poppler joins a left column's line and a right column's at
// about the same height into one ("... interesting in dum, e..."). Such a line has a gap
// wider than any space between words at the page's middle; its halves are lines of their
// own, the right one in a block of its own.
func gutter(l Line, words []word, width float64) []Line {
	mid := width / 2
	if width == 0 || l.X0 >= mid || l.X1 <= mid || len(words) < 2 {
		l.Text = lineText(words)
		return []Line{l}
	}
	for i := range words {
		words[i].box()
	}
	// Of the gaps wide enough, the one nearest the middle: a sentence's wider space or a
	// heading's number beside the gutter ("them. The rea- 2.2 Counting") is not it, and
	// a right half cut there would cross the middle and span the page.
	cut, dist := 0, 0.0
	for i := 1; i < len(words); i++ {
		a, b := words[i-1], words[i]
		h := max(a.y1-a.y0, b.y1-b.y0, 1)
		d := max(a.x1-mid, mid-b.x0, 0)
		if b.x0-a.x1 > 0.8*h && a.x1 < mid+0.1*width && b.x0 > mid-0.1*width && (cut == 0 || d < dist) {
			cut, dist = i, d
		}
	}
	if cut == 0 {
		l.Text = lineText(words)
		return []Line{l}
	}
	return splitLine(l, words, cut)
}

// splitLine cuts a line before its word cut: the right half in a block of its own.
func splitLine(l Line, words []word, cut int) []Line {
	left, right := l, l
	left.X1, left.Text = words[cut-1].x1, lineText(words[:cut])
	right.X0, right.Text = words[cut].x0, lineText(words[cut:])
	right.Block = l.Block + 1<<20
	return []Line{left, right}
}

func crossesMiddle(l Line, width float64) bool {
	return width > 0 && l.X0 < width/2 && l.X1 > width/2
}

// joinedLine is a line of a page left whole across its middle, with its words (boxed):
// pageGutter looks at it again once the page's gutter is known.
type joinedLine struct {
	index int // in the page's lines
	words []word
}

// pageGutter splits the lines of a page that run across its gutter with a gap narrower
// than gutter's rule asks (a heading's number in a larger size beside the gutter: "...
// held no 2" with "Methods" below). The gutter is where the lines already split were cut,
// the same on three lines or more: a gap there, left blank by a line's words, is the
// gutter whatever its width against the words' height. A line left whole across the
// middle is taken to span the page, and its extractor's block with it, so one such line
// reads the columns together.
func pageGutter(p *Page, joined []joinedLine) {
	if len(joined) == 0 {
		return
	}
	var lefts, rights []float64
	for i := 1; i < len(p.Lines); i++ {
		a, b := p.Lines[i-1], p.Lines[i]
		if b.Block == a.Block+1<<20 && b.Y0 == a.Y0 {
			lefts, rights = append(lefts, a.X1), append(rights, b.X0)
		}
	}
	if len(lefts) < 3 {
		return
	}
	slices.Sort(lefts)
	slices.Sort(rights)
	g0, g1 := lefts[len(lefts)/2], rights[len(rights)/2]
	agree := 0
	for i := range lefts {
		if abs(lefts[i]-g0) < 1.5 && abs(rights[i]-g1) < 1.5 {
			agree++
		}
	}
	if agree < 3 || g1-g0 < 2 {
		return
	}
	// split back to front, so that the indices of the lines before stay true
	for k := len(joined) - 1; k >= 0; k-- {
		j := joined[k]
		w := j.words
		cut := slices.IndexFunc(w[1:], func(b word) bool { return b.x0 >= g1-1.5 }) + 1
		if cut == 0 || w[cut-1].x1 > g0+1.5 {
			continue
		}
		halves := splitLine(p.Lines[j.index], w, cut)
		p.Lines = slices.Replace(p.Lines, j.index, j.index+1, halves...)
	}
}
