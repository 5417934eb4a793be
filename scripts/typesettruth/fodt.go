package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// A paper written in a word processor (a flat ODF text, .fodt) and exported to PDF by
// LibreOffice carries its truth in two places, both the maker's: the source says what
// each probe sentence is (the text between the bookmarks probeNNs and probeNNe) and what
// heading it is under (a bookmark kind-K in a top-level heading names the section's kind),
// and the PDF export keeps every bookmark as a named destination with its page and place
// (ExportBookmarksToPDFDestination), which pdfinfo -dests lists. The PDF's page count is
// its page tree's (pdfinfo). None of it comes from the text an extractor reads.

// fodtProbe is a probe sentence as the source holds it.
type fodtProbe struct {
	name, text, heading, number, section, kind string
}

// readFODT reads a .fodt's probe sentences, in order, and its running heads and footers.
func readFODT(path string) ([]fodtProbe, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	var (
		probes             []fodtProbe
		furniture          []string
		open               = map[string]*strings.Builder{}
		heading, section   string
		kind, number       string
		inHeading, inField bool
		headingText, extra strings.Builder
		inExtra            bool
		level              int
	)
	write := func(s string) {
		for _, b := range open {
			b.WriteString(s)
		}
		if inHeading {
			headingText.WriteString(s)
		}
		if inExtra && !inField {
			extra.WriteString(s)
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "header", "footer":
				inExtra = true
				extra.Reset()
			case "page-number", "page-count":
				inField = true
			case "h":
				inHeading = true
				headingText.Reset()
				level, _ = strconv.Atoi(attr(t, "outline-level"))
			case "s", "tab", "line-break":
				write(" ")
			case "bookmark":
				name := attr(t, "name")
				switch {
				case strings.HasPrefix(name, "kind-"):
					kind = strings.TrimPrefix(name, "kind-")
				case strings.HasPrefix(name, "probe") && strings.HasSuffix(name, "s"):
					open[strings.TrimSuffix(name, "s")] = &strings.Builder{}
				case strings.HasPrefix(name, "probe") && strings.HasSuffix(name, "e"):
					n := strings.TrimSuffix(name, "e")
					b, ok := open[n]
					if !ok {
						return nil, nil, fmt.Errorf("%s: bookmark %s ends a probe that never started", path, name)
					}
					delete(open, n)
					probes = append(probes, fodtProbe{name: n, text: strings.Join(strings.Fields(b.String()), " "),
						heading: heading, number: number, section: section, kind: kind})
				}
			}
		case xml.CharData:
			write(string(t))
		case xml.EndElement:
			switch t.Name.Local {
			case "header", "footer":
				inExtra = false
				if s := strings.Join(strings.Fields(extra.String()), " "); s != "" {
					furniture = append(furniture, s)
				}
			case "page-number", "page-count":
				inField = false
			case "h":
				inHeading = false
				number, heading = splitNumber(strings.Join(strings.Fields(headingText.String()), " "))
				if level == 1 {
					section = heading
				}
			}
		}
	}
	if len(open) > 0 {
		return nil, nil, fmt.Errorf("%s: %d probes never end", path, len(open))
	}
	return probes, furniture, nil
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

var typedNumber = regexp.MustCompile(`^(\d+(\.\d+)*)\.?\s+`)

// splitNumber splits a heading typed with its number ("2.1 Participants") into the two.
func splitNumber(h string) (string, string) {
	if m := typedNumber.FindStringSubmatch(h); m != nil {
		return m[1], h[len(m[0]):]
	}
	return "", h
}

type dest struct {
	page int
	x, y float64 // PDF user space: from the page's bottom left
}

var destLine = regexp.MustCompile(`^\s*(\d+)\s+\[\s*XYZ\s+(-?[\d.]+)\s+(-?[\d.]+)[^\]]*\]\s+"([^"]+)"`)

// pdfDests reads a PDF's named destinations, its page count and its page height.
func pdfDests(pdf string) (map[string]dest, int, float64, error) {
	out, err := exec.Command("pdfinfo", "-dests", pdf).Output()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("pdfinfo -dests %s: %w", pdf, err)
	}
	dests := map[string]dest{}
	for _, l := range strings.Split(string(out), "\n") {
		if m := destLine.FindStringSubmatch(l); m != nil {
			x, _ := strconv.ParseFloat(m[2], 64)
			y, _ := strconv.ParseFloat(m[3], 64)
			dests[m[4]] = dest{page: atoi(m[1]), x: x, y: y}
		}
	}
	info, err := exec.Command("pdfinfo", pdf).Output()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("pdfinfo %s: %w", pdf, err)
	}
	pages, height := 0, 0.0
	for _, l := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(l, "Pages:"); ok {
			pages = atoi(v)
		}
		if v, ok := strings.CutPrefix(l, "Page size:"); ok {
			f := strings.Fields(v)
			if len(f) >= 3 {
				height, _ = strconv.ParseFloat(f[2], 64)
			}
		}
	}
	if pages == 0 || height == 0 {
		return nil, 0, 0, fmt.Errorf("pdfinfo %s: no page count or size", pdf)
	}
	return dests, pages, height, nil
}

// fodtTruth is the truth of a word-processor paper: the source's probes placed where the
// PDF's destinations put them. LibreOffice puts a destination at the top of its line's
// box; the point kept is 0.75 em of the body text (11 pt) below it, inside the line's
// letters, near where TeX's baseline is for the TeX papers. The text is one column
// ("full").
func fodtTruth(fodt, pdf string) (Truth, error) {
	probes, furniture, err := readFODT(fodt)
	if err != nil {
		return Truth{}, err
	}
	dests, pages, height, err := pdfDests(pdf)
	if err != nil {
		return Truth{}, err
	}
	t := Truth{Pages: pages, Furniture: furniture}
	// LibreOffice writes destinations in whole points: a start is kept one point to the
	// right, inside the first letter whichever way it was rounded.
	point := func(d dest, dx float64) [2]float64 {
		return [2]float64{d.x + dx, math.Round((height-d.y+0.75*11)*100) / 100}
	}
	for _, p := range probes {
		s, ok1 := dests[p.name+"s"]
		e, ok2 := dests[p.name+"e"]
		if !ok1 || !ok2 {
			return Truth{}, fmt.Errorf("%s: the PDF has no destination for %s (was it exported with ExportBookmarksToPDFDestination?)", pdf, p.name)
		}
		t.Probes = append(t.Probes, Probe{Text: p.text, PageStart: s.page, PageEnd: e.page, Column: "full", ColumnEnd: "full",
			Start: point(s, 1), End: point(e, 0), Heading: p.heading, Number: p.number, Section: p.section, SectionKind: p.kind})
	}
	return t, nil
}
