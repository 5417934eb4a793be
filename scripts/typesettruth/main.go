// Command typesettruth turns the record probe.sty writes while TeX typesets a paper
// (internal/fulltext/testdata/typeset/<name>.probes) into the paper's truth
// (<name>.truth.json): its page count, the running heads and footers it carries, and each
// probe sentence's text, pages, column, heading and section, as the maker placed them.
// For a paper written in a word processor it reads the same from the .fodt source and
// the named destinations LibreOffice's PDF export keeps (fodt.go). scripts/typeset.sh
// runs it after pdflatex or soffice; the tests read only the JSON.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Truth is what a test checks a reader against.
type Truth struct {
	Pages     int      `json:"pages"`
	Furniture []string `json:"furniture"`
	Probes    []Probe  `json:"probes"`
}

// Probe is one probe sentence where TeX put it.
type Probe struct {
	Text      string `json:"text"`
	PageStart int    `json:"page_start"`
	PageEnd   int    `json:"page_end"`
	Column    string `json:"column"`     // of its start: left, right or full
	ColumnEnd string `json:"column_end"` // of its end
	// Start and End are where the sentence starts (the left of its first letter, on its
	// baseline) and ends (the right of its last character), in points from the page's top
	// left, as a PDF extractor gives boxes.
	Start [2]float64 `json:"start"`
	End   [2]float64 `json:"end"`
	// Heading is the nearest heading (a subsection's title inside one), Number its number
	// as typeset ("2.1", "II-A"; "" for none), Section the top-level heading it is under.
	Heading     string `json:"heading"`
	Number      string `json:"number,omitempty"`
	Section     string `json:"section"`
	SectionKind string `json:"section_kind"`
}

type mark struct{ page, x, y int }

type layout struct {
	horigin, hoffset, odd, even, textwidth, pageheight int
	twoside                                            bool
}

func main() {
	var (
		t   Truth
		err error
	)
	switch {
	case len(os.Args) == 3:
		t, err = read(os.Args[1])
	case len(os.Args) == 4 && strings.HasSuffix(os.Args[1], ".fodt"):
		t, err = fodtTruth(os.Args[1], os.Args[2])
	default:
		fmt.Fprintln(os.Stderr, "usage: typesettruth <name>.probes <name>.truth.json\n       typesettruth <name>.fodt <name>.pdf <name>.truth.json")
		os.Exit(2)
	}
	if err == nil {
		var b []byte
		b, err = json.MarshalIndent(t, "", "  ")
		if err == nil {
			err = os.WriteFile(os.Args[len(os.Args)-1], append(b, '\n'), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "typesettruth:", err)
		os.Exit(1)
	}
}

var controlWord = regexp.MustCompile(`\\[A-Za-z@]+ ?|\\-`)

// plain is a heading number without the macros a class wraps it in ("\protect \unhbox
// \voidb@x \hbox {II-A}" is "II-A").
func plain(s string) string {
	return strings.Trim(strings.Join(strings.Fields(controlWord.ReplaceAllString(s, "")), " "), "{} ")
}

// read reads a .probes file: lines of fields split by '|', the first naming the line.
func read(path string) (Truth, error) {
	f, err := os.Open(path)
	if err != nil {
		return Truth{}, err
	}
	defer f.Close()
	var t Truth
	var lay layout
	probes := map[int]*Probe{}
	hsize := map[int]int{}
	starts, ends := map[int]mark{}, map[int]mark{}
	order := []int{}
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "|")
		n := 0
		if len(fs) > 1 {
			n, _ = strconv.Atoi(fs[1])
		}
		switch fs[0] {
		case "text":
			text := strings.Join(strings.Fields(controlWord.ReplaceAllString(strings.Join(fs[2:], "|"), "")), " ")
			probes[n] = &Probe{Text: text}
			order = append(order, n)
		case "meta":
			p := probes[n]
			p.SectionKind, p.Number, p.Section, p.Heading = fs[2], plain(fs[4]), fs[5], fs[6]
			hsize[n] = sp(fs[3])
		case "start", "end":
			m := mark{page: atoi(fs[2]), x: atoi(fs[4]), y: atoi(fs[5])}
			if fs[0] == "start" {
				starts[n] = m
			} else {
				ends[n] = m
			}
		case "furniture":
			if s := strings.Join(fs[1:], "|"); !seen[s] {
				seen[s] = true
				t.Furniture = append(t.Furniture, s)
			}
		case "layout":
			lay = layout{horigin: sp(fs[2]), hoffset: sp(fs[3]), odd: sp(fs[4]), even: sp(fs[5]), twoside: fs[6] == "1", textwidth: sp(fs[7]), pageheight: sp(fs[10])}
		case "pages":
			t.Pages = atoi(fs[1])
		}
	}
	if err := sc.Err(); err != nil {
		return Truth{}, err
	}
	if t.Pages == 0 || lay.textwidth == 0 {
		return Truth{}, fmt.Errorf("%s: no page count or layout (did TeX finish?)", path)
	}
	for _, n := range order {
		p := probes[n]
		s, ok1 := starts[n]
		e, ok2 := ends[n]
		if !ok1 || !ok2 {
			return Truth{}, fmt.Errorf("%s: probe %d (%q) was never shipped out", path, n, p.Text)
		}
		p.PageStart, p.PageEnd = s.page, e.page
		p.Column, p.ColumnEnd = lay.column(s, hsize[n]), lay.column(e, hsize[n])
		p.Start, p.End = lay.point(s), lay.point(e)
		t.Probes = append(t.Probes, *p)
	}
	return t, nil
}

// column says which column a mark is in: "full" for a line as wide as the text, else
// left or right of the text block's middle.
func (l layout) column(m mark, hsize int) string {
	if hsize*10 >= l.textwidth*9 {
		return "full"
	}
	left := l.horigin + l.hoffset + l.odd
	if l.twoside && m.page%2 == 0 {
		left = l.horigin + l.hoffset + l.even
	}
	if m.x < left+l.textwidth/2 {
		return "left"
	}
	return "right"
}

// point is a mark in points from the page's top left, to a hundredth.
func (l layout) point(m mark) [2]float64 {
	pt := func(sp int) float64 { return math.Round(float64(sp)/65536*100) / 100 }
	return [2]float64{pt(m.x), pt(l.pageheight - m.y)}
}

func atoi(s string) int { n, _ := strconv.Atoi(strings.TrimSpace(s)); return n }

// sp reads a TeX dimension as \the writes it ("345.0pt") in scaled points.
func sp(s string) int {
	f, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "pt"), 64)
	return int(f * 65536)
}
