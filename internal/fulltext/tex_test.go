package fulltext

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTeXDelimiters reads papers pdflatex made with TeX's big delimiters (\Bigl( and the
// like), which pdftotext writes as control characters XML forbids: every page is read,
// and the text after the equation. The small one's output fits a pipe's buffer (a reader
// that stopped there lost the rest silently); the large one's does not (pdftotext blocked
// on the full pipe until the time cap killed it). The PDFs are in testdata/ with their
// sources, so the test needs no TeX.
func TestTeXDelimiters(t *testing.T) {
	needPDFText(t)
	for _, tc := range []struct {
		file  string
		pages int
		last  string // the text on the last page
	}{
		{"bigl-small.pdf", 2, "The second page is read whole, and its sentence is found at page two."},
		{"bigl-large.pdf", 4, "The last page is read whole, and its sentence is found at page four."},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := Reader{Limits: Limits{Timeout: 20 * time.Second}}
			doc, err := r.Read(context.Background(), filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if doc.Pages != tc.pages {
				t.Errorf("%d pages read; the PDF has %d", doc.Pages, tc.pages)
			}
			var all []string
			lastPage := 0
			for _, p := range doc.Passages {
				all = append(all, p.Text)
				if strings.Contains(p.Text, tc.last) {
					lastPage = p.PageAt(strings.Index(p.Text, tc.last))
				}
			}
			text := strings.Join(all, "\n")
			if !strings.Contains(text, "The text after the equation must also be read.") {
				t.Errorf("the text after the equation is not read:\n%s", text)
			}
			if lastPage != tc.pages {
				t.Errorf("%q is at page %d; want %d", tc.last, lastPage, tc.pages)
			}
		})
	}
}

// TestReadBBox reads pdftotext's output as the reader's pipe gives it: a control
// character in a word is a space, not the end of the paper; output cut short is an error
// naming the pages read whole, never fewer pages.
func TestReadBBox(t *testing.T) {
	page := func(words ...string) string {
		s := `<page width="612" height="792"><flow><block xMin="1" yMin="1" xMax="2" yMax="2"><line xMin="72" yMin="100" xMax="300" yMax="110">`
		for _, w := range words {
			s += `<word xMin="72" yMin="100" xMax="80" yMax="110">` + w + `</word>`
		}
		return s + `</line></block></flow></page>`
	}
	head := `<!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"><head><title></title></head><body><doc>`
	tail := `</doc></body></html>`
	whole := head + page("f(x)", "=", "\x10", "x", "\x11h", "after") + page("second", "page") + tail
	pages, err := readBBox(strings.NewReader(whole), 1<<20)
	if err == nil {
		t.Errorf("the raw decoder read a control character without an error: the test no longer shows why xmlChars is needed")
	}
	pages, err = readBBox(xmlReader(strings.NewReader(whole)), 1<<20)
	if err != nil || len(pages) != 2 {
		t.Fatalf("a control character: %d pages, %v; want 2 pages, no error", len(pages), err)
	}
	if got := pages[0].Lines[0].Text; !strings.HasSuffix(got, " h after") || strings.ContainsAny(got, "\x10\x11") {
		t.Errorf("first line %q: want the words after the control characters, and those as spaces", got)
	}
	for _, cut := range []int{len(head + page("a")), len(whole) - len(tail) - 40, len(whole) - len(tail)} {
		pages, err := readBBox(xmlReader(strings.NewReader(whole[:cut])), 1<<20)
		var short *shortRead
		if !errors.As(err, &short) {
			t.Errorf("output cut at byte %d: %d pages, %v; want a short read", cut, len(pages), err)
		}
	}
	var short *shortRead
	if _, err := readBBox(xmlReader(strings.NewReader(head+page("one")+page("two"))), 1<<20); !errors.As(err, &short) || short.pages != 2 {
		t.Errorf("output without its end: %v; want a short read after 2 pages", err)
	}
}

// TestPagesMissing: an extractor that ends its output cleanly but gives fewer pages than
// the PDF has (pdfinfo's count) gives a problem naming it, not a shorter paper.
func TestPagesMissing(t *testing.T) {
	needPDFText(t)
	dir := t.TempDir()
	tool := filepath.Join(dir, "pdftotext")
	script := "#!/bin/sh\ncat <<'END'\n" + `<html><body><doc><page width="612" height="792"><flow><block><line xMin="72" yMin="100" xMax="300" yMax="110"><word>Only</word><word>one</word><word>page.</word></line></block></flow></page></doc></body></html>` + "\nEND\n"
	if err := os.WriteFile(tool, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Reader{PDFTextPath: tool}.Read(context.Background(), filepath.Join("testdata", "bigl-small.pdf"))
	var p *Problem
	if !errors.As(err, &p) || !strings.Contains(p.Reason, "only 1 of its 2 pages could be read") {
		t.Errorf("one page given of two: %v; want a problem saying only 1 of its 2 pages could be read", err)
	}
}

// TestTwoColumnFootnotes reads a two-column article made by pdflatex whose first page has
// two footnotes at the foot of its left column and a paragraph that runs on into the
// right column past them (testdata/twocolumn-footnote.tex). Its sentences are numbered
// (Core 1 to Core 24): each is read whole, in order, in its section, with no footnote
// inside; the author's \thanks mark does not make "A. Person" a heading.
func TestTwoColumnFootnotes(t *testing.T) {
	needPDFText(t)
	doc, err := Reader{}.Read(context.Background(), filepath.Join("testdata", "twocolumn-footnote.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	last := -1
	for i := 1; i <= 24; i++ {
		want := fmt.Sprintf("Core %d was taken at its station and sliced at one centimetre intervals before it was frozen for transport to the laboratory.", i)
		section := SectionIntroduction
		if i > 18 {
			section = SectionMethods
		}
		k := slices.IndexFunc(doc.Passages, func(p Passage) bool { return strings.Contains(p.Text, want) })
		switch {
		case k < 0:
			t.Errorf("core %d: %q not whole in any passage", i, want)
		case k < last:
			t.Errorf("core %d is read before core %d", i, i-1)
		case doc.Passages[k].Section != section:
			t.Errorf("core %d is in %s, want %s", i, doc.Passages[k].Section, section)
		}
		last = max(last, k)
	}
	for _, p := range doc.Passages {
		if strings.Contains(p.Text, "Core ") && (strings.Contains(p.Text, "Corresponding author") || strings.Contains(p.Text, "Deep lakes")) {
			t.Errorf("a footnote is read inside the paragraph: %q", p.Text)
		}
		if strings.Contains(p.Heading, "Person") {
			t.Errorf("passage %s is under the author's name as a heading: %q", p.ID, p.Heading)
		}
	}
	abs := "We measured the phosphorus held in the sediments of twelve shallow lakes and found that most of it is released in late summer."
	if k := slices.IndexFunc(doc.Passages, func(p Passage) bool { return strings.Contains(p.Text, abs) }); k < 0 || doc.Passages[k].Section != SectionAbstract {
		t.Errorf("the abstract is not read whole in the abstract")
	}
}

// TestTwoColumnMerged reads a two-column article on whose first page pdftotext joins
// lines of the left column's abstract and introduction with the right column's at about
// the same height (testdata/twocolumn-merged.tex): the sentences of the left column are
// read whole, in their sections, with nothing of the right column inside them.
func TestTwoColumnMerged(t *testing.T) {
	needPDFText(t)
	doc, err := Reader{}.Read(context.Background(), filepath.Join("testdata", "twocolumn-merged.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ text, section string }{
		{"We study things and find that they are interesting in several ways that matter to people who study things.", SectionAbstract},
		{"Things have been studied for a long time.", SectionIntroduction},
		{"Measure the things in the field.", SectionIntroduction},
	} {
		k := slices.IndexFunc(doc.Passages, func(p Passage) bool { return strings.Contains(p.Text, w.text) })
		if k < 0 || doc.Passages[k].Section != w.section {
			t.Errorf("%q is not read whole in the %s", w.text, w.section)
		}
	}
	for _, p := range doc.Passages {
		if strings.Contains(p.Text, "We list Pellentesque") || strings.Contains(p.Text, "interesting in dum") {
			t.Errorf("passage %s runs the columns together: %q", p.ID, p.Text)
		}
		if strings.Contains(p.Heading, "Person") {
			t.Errorf("passage %s is under the author's name as a heading: %q", p.ID, p.Heading)
		}
	}
}
