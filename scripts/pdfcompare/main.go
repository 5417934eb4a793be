// Command pdfcompare measures the two PDF text extractors issue #39 weighed, on the
// fixture's papers (internal/fulltext/fixture): Debian's pdftotext (poppler), as a child
// process, and PDFium compiled to WebAssembly (github.com/klippa-app/go-pdfium, run by
// wazero in-process). It is a module of its own so that cosci does not carry go-pdfium:
//
//	cd scripts/pdfcompare && go run . [-papers 20] [-pages 10]
//
// For each way of reading a PDF it reports, over the fixture's hand-written papers and
// synthetic papers of -pages pages: the share of paragraphs found whole (letters in order,
// whatever the spacing and hyphens), the share of those in the right order, the ligatures
// left unfolded, the line-end hyphens left in words, and the time per paper (median);
// then what each makes of bad files: an encrypted PDF, a truncated one, and a
// decompression bomb (a 2.5 MB PDF whose one page inflates to 256 MiB of text operators).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"golang.org/x/text/unicode/norm"

	"github.com/cosci-dev/cosci/internal/fulltext"
	"github.com/cosci-dev/cosci/internal/fulltext/fixture"
)

type paper struct {
	name   string
	path   string
	data   []byte
	layout fixture.Layout
}

// way is one way of reading a PDF into text, page by page.
type way struct {
	name string
	read func(p paper) (string, error)
}

func main() {
	n := flag.Int("papers", 20, "synthetic papers")
	pages := flag.Int("pages", 10, "pages of each synthetic paper")
	flag.Parse()
	dir, err := os.MkdirTemp("", "pdfcompare")
	must(err)
	defer os.RemoveAll(dir)
	var papers []paper
	add := func(name string, p fixture.Paper) {
		data, lay, err := fixture.PDF(p)
		must(err)
		path := filepath.Join(dir, name+".pdf")
		must(os.WriteFile(path, data, 0o644))
		papers = append(papers, paper{name, path, data, lay})
	}
	add("ito", fixture.Ito)
	add("kim", fixture.Kim)
	for i := range *n {
		add(fmt.Sprintf("synthetic-%d", i), fixture.Synthetic(i, *pages))
	}

	t0 := time.Now()
	pool, err := webassembly.Init(webassembly.Config{MinIdle: 1, MaxIdle: 1, MaxTotal: 1})
	must(err)
	inst, err := pool.GetInstance(time.Minute)
	must(err)
	fmt.Printf("PDFium (WebAssembly) pool started in %s\n\n", time.Since(t0).Round(time.Millisecond))

	ways := []way{
		{"pdftotext (poppler's reading order)", func(p paper) (string, error) {
			out, err := exec.Command("pdftotext", "-enc", "UTF-8", p.path, "-").Output()
			return string(out), err
		}},
		{"pdftotext -bbox-layout + cosci's layout (fulltext.Reader)", func(p paper) (string, error) {
			doc, err := fulltext.Reader{}.Read(context.Background(), p.path)
			return passagesText(doc), err
		}},
		{"PDFium GetPageText (the file's order)", func(p paper) (string, error) {
			return pdfiumText(inst, p.data)
		}},
		{"PDFium text rects + cosci's layout (fulltext.FromPages)", func(p paper) (string, error) {
			pages, err := pdfiumPages(inst, p.data)
			return passagesText(fulltext.FromPages(pages)), err
		}},
	}
	fmt.Println("| way | paragraphs found whole | of those in order | ligatures left | line-end hyphens left | median per paper (fixture / synthetic) |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, w := range ways {
		var found, total, ordered, ligs, hyph int
		var fixtureTimes, synthTimes []time.Duration
		for _, p := range papers {
			t0 := time.Now()
			text, err := w.read(p)
			d := time.Since(t0)
			must(err)
			if strings.HasPrefix(p.name, "synthetic") {
				synthTimes = append(synthTimes, d)
			} else {
				fixtureTimes = append(fixtureTimes, d)
			}
			f, t, o := score(text, p.layout)
			found, total, ordered = found+f, total+t, ordered+o
			ligs += strings.Count(text, "\ufb01") + strings.Count(text, "\ufb02")
			hyph += hyphensLeft(text, p.layout)
		}
		fmt.Printf("| %s | %d of %d (%.1f%%) | %.1f%% | %d | %d | %s / %s |\n", w.name, found, total, 100*float64(found)/float64(total),
			100*float64(ordered)/float64(max(found, 1)), ligs, hyph, median(fixtureTimes), median(synthTimes))
	}
	bad(dir, inst)
}

// bad runs each extractor on bad files and says what it made of them, and how long it took.
func bad(dir string, inst pdfium.Pdfium) {
	enc := fixture.Kim
	enc.Protect = "secret"
	encrypted, _, err := fixture.PDF(enc)
	must(err)
	whole, _, err := fixture.PDF(fixture.Kim)
	must(err)
	files := []struct {
		name string
		data []byte
	}{{"encrypted", encrypted}, {"truncated to a third", whole[:len(whole)/3]}, {"decompression bomb (256 MiB)", fixture.Bomb(256 << 20)}}
	fmt.Println("\n| file | pdftotext (fulltext.Reader) | PDFium GetPageText |")
	fmt.Println("|---|---|---|")
	for _, f := range files {
		path := filepath.Join(dir, "bad.pdf")
		must(os.WriteFile(path, f.data, 0o644))
		t0 := time.Now()
		_, err := fulltext.Reader{}.Read(context.Background(), path)
		a := fmt.Sprintf("%v (%s)", err, time.Since(t0).Round(time.Millisecond))
		t0 = time.Now()
		text, err := pdfiumText(inst, f.data)
		msg := "none"
		if err != nil {
			msg, _, _ = strings.Cut(err.Error(), "\n")
		}
		b := fmt.Sprintf("%d bytes of text, error: %s (%s)", len(text), msg, time.Since(t0).Round(time.Millisecond))
		fmt.Printf("| %s | %s | %s |\n", f.name, a, b)
	}
}

// passagesText is a document's passages, one a line.
func passagesText(d fulltext.Document) string {
	var b strings.Builder
	for _, p := range d.Passages {
		b.WriteString(p.Text + "\n")
	}
	return b.String()
}

func pdfiumText(inst pdfium.Pdfium, data []byte) (string, error) {
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		return "", err
	}
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc.Document})
	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i := range count.PageCount {
		t, err := inst.GetPageText(&requests.GetPageText{Page: requests.Page{ByIndex: &requests.PageByIndex{Document: doc.Document, Index: i}}})
		if err != nil {
			return "", err
		}
		b.WriteString(t.Text + "\n")
	}
	return b.String(), nil
}

// pdfiumPages is PDFium's text rects of each page, as lines with their boxes (PDFium's
// coordinates are from the bottom left; FromPages wants them from the top).
func pdfiumPages(inst pdfium.Pdfium, data []byte) ([]fulltext.Page, error) {
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		return nil, err
	}
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc.Document})
	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err != nil {
		return nil, err
	}
	var pages []fulltext.Page
	for i := range count.PageCount {
		ref := requests.Page{ByIndex: &requests.PageByIndex{Document: doc.Document, Index: i}}
		size, err := inst.GetPageSize(&requests.GetPageSize{Page: ref})
		if err != nil {
			return nil, err
		}
		t, err := inst.GetPageTextStructured(&requests.GetPageTextStructured{Page: ref, Mode: requests.GetPageTextStructuredModeRects})
		if err != nil {
			return nil, err
		}
		p := fulltext.Page{Width: size.Width, Height: size.Height}
		for _, r := range t.Rects {
			text := strings.TrimSpace(r.Text)
			if text == "" {
				continue
			}
			p.Lines = append(p.Lines, fulltext.Line{Text: text, X0: r.PointPosition.Left, X1: r.PointPosition.Right,
				Y0: size.Height - r.PointPosition.Top, Y1: size.Height - r.PointPosition.Bottom, Block: -1})
		}
		pages = append(pages, p)
	}
	return pages, nil
}

// letters is a text's letters and digits, lower case, in Unicode's compatibility form:
// what is left to compare when spacing, hyphens and line ends are set aside.
func letters(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(norm.NFKC.String(s)) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// score is how many of a paper's body paragraphs (not its references) a text holds whole,
// of how many, and how many of those come in the paper's order (the longest run in order).
func score(text string, lay fixture.Layout) (found, total, ordered int) {
	all := letters(text)
	var at []int
	for _, p := range lay.Paragraphs {
		if p.Section == "references" {
			continue
		}
		total++
		if i := strings.Index(all, letters(p.Text)); i >= 0 {
			found++
			at = append(at, i)
		}
	}
	// the longest increasing subsequence of the positions
	var tails []int
	for _, x := range at {
		i, _ := slices.BinarySearch(tails, x)
		if i == len(tails) {
			tails = append(tails, x)
		} else {
			tails[i] = x
		}
	}
	return found, total, len(tails)
}

// hyphensLeft counts the words the layout broke with a hyphen of its own (not a
// compound's) that the text still gives in two parts.
func hyphensLeft(text string, lay fixture.Layout) int {
	n := 0
	flat := strings.Join(strings.Fields(text), " ")
	for _, w := range lay.Hyphenated {
		head, tail, _ := strings.Cut(w, "-")
		if strings.Contains(norm.NFKC.String(flat), head+"- "+tail) || strings.Contains(norm.NFKC.String(flat), head+"-"+tail) {
			n++
		}
	}
	return n
}

func median(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	slices.Sort(ds)
	return ds[len(ds)/2].Round(100 * time.Microsecond).String()
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
