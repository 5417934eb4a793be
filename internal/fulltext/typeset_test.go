package fulltext

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

// The typeset corpus (testdata/typeset, #43): short papers typeset by pdflatex in the
// classes labs use (and by LibreOffice, where one is there), each with its truth taken
// from the maker, not from any extractor: every probe sentence's text, the pages its start
// and end are on, its heading and its section, the running heads and footers the pages
// carry, and the page count (probe.sty records them while TeX typesets; `make
// typeset-corpus` regenerates PDFs and truth; the tests read only what is committed).

// typesetStrict makes every miss on the corpus a failure. It is on: the reader reads the
// corpus whole (#43); -typeset.strict=false only logs each paper's score and its misses,
// to see how a change to the reader does before it is finished.
var typesetStrict = flag.Bool("typeset.strict", true, "fail TestTypesetCorpus on every probe sentence the reader misses (#43)")

type typesetTruth struct {
	Pages     int            `json:"pages"`
	Furniture []string       `json:"furniture"`
	Probes    []typesetProbe `json:"probes"`
}

type typesetProbe struct {
	Text      string `json:"text"`
	PageStart int    `json:"page_start"`
	PageEnd   int    `json:"page_end"`
	Column    string `json:"column"`
	// Start and End are where TeX put the sentence's first letter and its last
	// character, in points from the page's top left, on the baseline.
	Start       [2]float64 `json:"start"`
	End         [2]float64 `json:"end"`
	Heading     string     `json:"heading"`
	SectionKind string     `json:"section_kind"`
}

// typesetPaper is one paper of the corpus: its PDF and its truth.
type typesetPaper struct {
	name, pdf string
	truth     typesetTruth
}

func typesetCorpus(tb testing.TB) []typesetPaper {
	tb.Helper()
	return typesetCorpusIn(tb, filepath.Join("testdata", "typeset"))
}

// typesetCorpusIn reads the papers of a corpus directory (testdata/typeset, or the
// held-out papers of testdata/heldout).
func typesetCorpusIn(tb testing.TB, dir string) []typesetPaper {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.truth.json"))
	if err != nil || len(names) == 0 {
		tb.Fatalf("no typeset corpus in %s (%v)", dir, err)
	}
	var out []typesetPaper
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			tb.Fatal(err)
		}
		p := typesetPaper{name: strings.TrimSuffix(filepath.Base(n), ".truth.json"), pdf: strings.TrimSuffix(n, ".truth.json") + ".pdf"}
		if err := json.Unmarshal(data, &p.truth); err != nil {
			tb.Fatalf("%s: %v", n, err)
		}
		if _, err := os.Stat(p.pdf); err != nil {
			tb.Fatalf("%s has no PDF: %v", n, err)
		}
		out = append(out, p)
	}
	return out
}

// typesetReader is the reader as the server runs it, with a tighter time cap (10 s): each paper
// is read in well under a second, and a reader that loses a paper in a stalled child
// (#43) should not hold the test for the default minute per paper.
var typesetReader = Reader{Limits: Limits{Timeout: 10 * time.Second}}

// paperScore is how a reader did on one paper.
type paperScore struct {
	found, total int
	pages        int      // the page count the reader gave
	misses       []string // why each probe missed, and each head, footer or page number read as text
	err          error    // the reader's error, when it gave no document
}

func (s paperScore) perfect(t typesetTruth) bool {
	return s.err == nil && s.found == s.total && s.pages == t.Pages && len(s.misses) == 0
}

func (s paperScore) String() string {
	if s.err != nil {
		return fmt.Sprintf("0/%d probes at page and section: %v", s.total, s.err)
	}
	return fmt.Sprintf("%d/%d probes at page and section, %d pages read", s.found, s.total, s.pages)
}

// scoreTypeset reads one paper and checks it against its truth.
func scoreTypeset(p typesetPaper) paperScore {
	s := paperScore{total: len(p.truth.Probes)}
	doc, err := typesetReader.Read(context.Background(), p.pdf)
	if err != nil {
		s.err = err
		return s
	}
	s.pages = doc.Pages
	if doc.Pages != p.truth.Pages {
		s.misses = append(s.misses, fmt.Sprintf("read as %d pages, typeset on %d", doc.Pages, p.truth.Pages))
	}
	for _, pr := range p.truth.Probes {
		if why := probeMiss(doc, pr); why != "" {
			s.misses = append(s.misses, why)
		} else {
			s.found++
		}
	}
	s.misses = append(s.misses, furnitureRead(doc, p.truth)...)
	return s
}

// probeMiss says why a probe sentence is not in the document as the truth has it ("" when
// it is): found whole in one passage, with its start and end on their pages, in its
// section and under its heading. Of several passages that hold it, the best answers.
func probeMiss(doc Document, pr typesetProbe) string {
	want, _ := spaced(pr.Text)
	why := fmt.Sprintf("%q: not found whole in any passage", clip(pr.Text))
	for _, p := range doc.Passages {
		text, at := spaced(p.Text)
		i := strings.Index(text, want)
		if i < 0 {
			continue
		}
		start, end := p.PageAt(at[i]), p.PageAt(at[i+len(want)-1])
		switch {
		case start != pr.PageStart || end != pr.PageEnd:
			why = fmt.Sprintf("%q: at pages %d-%d (passage %s), typeset on %d-%d", clip(pr.Text), start, end, p.ID, pr.PageStart, pr.PageEnd)
		case p.Section != pr.SectionKind:
			why = fmt.Sprintf("%q: in section %q (passage %s, heading %q), typeset in %q", clip(pr.Text), p.Section, p.ID, p.Heading, pr.SectionKind)
		case !sameHeading(p, pr.Heading):
			why = fmt.Sprintf("%q: under heading %q (passage %s), typeset under %q", clip(pr.Text), p.Heading, p.ID, pr.Heading)
		default:
			return ""
		}
	}
	return why
}

// spaced is a text with its runs of white space made one space, and where each of its
// bytes came from in the text.
func spaced(s string) (string, []int) {
	var b strings.Builder
	var at []int
	space := false
	lead := len(s) - len(strings.TrimLeftFunc(s, unicode.IsSpace))
	for i, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			at = append(at, lead+i)
			space = false
		}
		n := b.Len()
		b.WriteRune(r)
		for range b.Len() - n {
			at = append(at, lead+i)
		}
	}
	return b.String(), at
}

// headingNumber is a heading's number as classes set it: "2.1", "II.", "IV-A", "A.".
var headingNumber = regexp.MustCompile(`^\s*(\d+(\.\d+)*\.?|[IVXLC]+(-[A-Z0-9]+)?\.?|[A-Z]\.)\s+`)

// sameHeading says whether a passage is under a heading: its Heading (or, without one,
// its section's name) and the heading as typeset are the same letters, case and spaces
// aside ("I. I NTRODUCTION" is "Introduction"), without the heading's number. Under no
// heading (a Nature summary, the opening before the first heading) a passage has none.
func sameHeading(p Passage, heading string) bool {
	if heading == "" {
		return p.Heading == ""
	}
	got := p.Heading
	if got == "" {
		got = p.Section
	}
	letters := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) {
				return unicode.ToLower(r)
			}
			return -1
		}, headingNumber.ReplaceAllString(s, ""))
	}
	return letters(got) == letters(heading)
}

// furnitureRead lists the passages that hold a page's furniture as text: a page number
// alone, one run onto the end of a sentence ("... must also be read. 1") or onto the start
// of the next page's text ("2 morning. Samples ..."), or a running head or footer the
// paper's source names (a short one, "Article", only as the passage or at its ends).
func furnitureRead(doc Document, t typesetTruth) []string {
	var out []string
	for _, p := range doc.Passages {
		text, _ := spaced(p.Text)
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		switch n := len(fields); {
		case strings.Trim(text, "0123456789 ") == "":
			out = append(out, fmt.Sprintf("passage %s is a page number: %q", p.ID, text))
		case isPageNumber(fields[n-1], t.Pages) && strings.HasSuffix(fields[n-2], "."):
			out = append(out, fmt.Sprintf("passage %s ends with a page number: %q", p.ID, clip(text[max(0, len(text)-60):])))
		case isPageNumber(fields[0], t.Pages) && unicode.IsLower([]rune(fields[1])[0]):
			out = append(out, fmt.Sprintf("passage %s starts with a page number: %q", p.ID, clip(text)))
		}
		for _, f := range t.Furniture {
			ff, _ := spaced(f)
			short := len(strings.Fields(ff)) < 3
			if !short && strings.Contains(text, ff) || text == ff || strings.HasPrefix(text, ff+" ") || strings.HasSuffix(text, " "+ff) {
				out = append(out, fmt.Sprintf("passage %s holds the running head or footer %q", p.ID, ff))
			}
		}
	}
	return out
}

// isPageNumber says whether a word is the number of one of a paper's pages.
func isPageNumber(w string, pages int) bool {
	n, err := strconv.Atoi(w)
	return err == nil && n >= 1 && n <= pages
}

func clip(s string) string {
	if len(s) <= 60 {
		return s
	}
	return s[:57] + "..."
}

// TestTypesetCorpus reads each paper of the typeset corpus as a scientist's PDF is read
// and scores it against the maker's truth: every probe sentence whole in one passage, its
// start and end at the pages TeX put them on, in its section under its heading; no head,
// footer or page number read as text; every page read. It logs each paper's score, and
// every miss fails it unless -typeset.strict=false.
func TestTypesetCorpus(t *testing.T) {
	needPDFText(t)
	for _, p := range typesetCorpus(t) {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			s := scoreTypeset(p)
			t.Logf("%s: %s", p.name, s)
			report := t.Logf
			if *typesetStrict {
				report = t.Errorf
			}
			if s.err != nil {
				report("%s: %v", p.name, s.err)
			}
			for _, m := range s.misses {
				report("%s: %s", p.name, m)
			}
		})
	}
}

// TestTypesetTruth checks the corpus itself, not the reader: where the truth says a
// probe sentence starts and ends (TeX's \pdfsavepos), poppler's word boxes hold its first
// and its last word, on the pages the truth names, and each page count is the PDF's. A
// truth file out of step with its PDF fails here.
func TestTypesetTruth(t *testing.T) {
	needPDFText(t)
	checkTruth(t, typesetCorpus(t))
}

// checkTruth checks each paper's truth against its PDF's word boxes (TestTypesetTruth).
func checkTruth(t *testing.T, corpus []typesetPaper) {
	t.Helper()
	for _, p := range corpus {
		pages := wordBoxes(t, p.pdf)
		if len(pages) != p.truth.Pages {
			t.Errorf("%s: the PDF has %d pages, its truth %d", p.name, len(pages), p.truth.Pages)
			continue
		}
		if len(p.truth.Probes) < 8 {
			t.Errorf("%s: %d probe sentences, want at least 8", p.name, len(p.truth.Probes))
		}
		for _, pr := range p.truth.Probes {
			words := strings.Fields(pr.Text)
			if pr.PageStart < 1 || pr.PageEnd < pr.PageStart || pr.PageEnd > len(pages) {
				t.Errorf("%s: %q: pages %d-%d out of 1-%d", p.name, clip(pr.Text), pr.PageStart, pr.PageEnd, len(pages))
				continue
			}
			// Just inside the first letter and the last character (poppler draws a full stop a
			// little narrower than TeX sets it), above the baseline.
			first := wordAt(pages[pr.PageStart-1], pr.Start[0]+0.5, pr.Start[1]-1)
			last := wordAt(pages[pr.PageEnd-1], pr.End[0]-2.5, pr.End[1]-1)
			f, l := keyOf(words[0]), keyOf(words[len(words)-1])
			// A box may hold more than the word (IEEE's "Abstract—Pressure") or less (a
			// word hyphenated at a line end: "degener-").
			if first == "" || !strings.HasSuffix(first, f) && !strings.HasPrefix(f, first) {
				t.Errorf("%s: %q: page %d has %q at its start %v", p.name, clip(pr.Text), pr.PageStart, first, pr.Start)
			}
			if last == "" || !strings.HasPrefix(last, l) && !strings.HasSuffix(l, last) {
				t.Errorf("%s: %q: page %d has %q at its end %v", p.name, clip(pr.Text), pr.PageEnd, last, pr.End)
			}
		}
	}
}

type wordBox struct {
	x0, y0, x1, y1 float64
	key            string
}

var (
	bboxPage = regexp.MustCompile(`<page `)
	bboxWord = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)
)

// wordBoxes is each page's words with their boxes, as pdftotext -bbox gives them.
func wordBoxes(t *testing.T, pdf string) [][]wordBox {
	t.Helper()
	out, err := exec.Command("pdftotext", "-enc", "UTF-8", "-bbox", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -bbox %s: %v", pdf, err)
	}
	var pages [][]wordBox
	for _, pg := range bboxPage.Split(string(out), -1)[1:] {
		var words []wordBox
		for _, m := range bboxWord.FindAllStringSubmatch(pg, -1) {
			f := func(i int) float64 { v, _ := strconv.ParseFloat(m[i], 64); return v }
			words = append(words, wordBox{f(1), f(2), f(3), f(4), keyOf(m[5])})
		}
		pages = append(pages, words)
	}
	return pages
}

// wordAt is the key of the word whose box holds a point ("" for none).
func wordAt(words []wordBox, x, y float64) string {
	for _, w := range words {
		if w.x0 <= x && x <= w.x1 && w.y0 <= y && y <= w.y1 {
			return w.key
		}
	}
	return ""
}

// keyOf is a word's letters and digits, lower case.
func keyOf(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// BenchmarkTypesetCorpus scores the reader on the whole corpus: the probe sentences found
// at their page and section, of all (found, probes, found-%), and the papers read whole
// (perfect-papers). Under 100% it fails: the target of #43.
func BenchmarkTypesetCorpus(b *testing.B) {
	corpus := typesetCorpus(b)
	found, total, perfect := benchCorpus(b, corpus)
	if found < total || perfect < len(corpus) {
		b.Errorf("typeset corpus: %d/%d probes at page and section, %d/%d papers read whole (heads, footers and pages too); the target is all (#43)", found, total, perfect, len(corpus))
	}
}

// benchCorpus scores the reader on a corpus in a benchmark's loop and reports the probe
// sentences found at their page and section, of all (found, probes, found-%), and the
// papers read whole (perfect-papers).
func benchCorpus(b *testing.B, corpus []typesetPaper) (found, total, perfect int) {
	b.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		b.Fatal("pdftotext is not installed (Debian: apt-get install poppler-utils)")
	}
	for b.Loop() {
		found, total, perfect = 0, 0, 0
		for _, p := range corpus {
			s := scoreTypeset(p)
			found += s.found
			total += s.total
			if s.perfect(p.truth) {
				perfect++
			}
		}
	}
	b.ReportMetric(float64(found), "found")
	b.ReportMetric(float64(total), "probes")
	b.ReportMetric(100*float64(found)/float64(total), "found-%")
	b.ReportMetric(float64(perfect), "perfect-papers")
	return found, total, perfect
}

// TestTypesetScoring checks the corpus's scoring on passages made by hand, so that a
// score of 100% means what it says: a probe counts only whole, at both its pages, in its
// section and under its heading, and heads, footers and page numbers read as text count
// against the reader.
func TestTypesetScoring(t *testing.T) {
	sentence := "The rate constant grew by about a third from one band to the next."
	pr := typesetProbe{Text: sentence, PageStart: 3, PageEnd: 4, Heading: "Kinetic modelling", SectionKind: SectionMethods}
	text := "Before it. The rate constant grew by about a third\nfrom one band to the next. After it."
	brk := strings.Index(text, "from one")
	in := Passage{ID: "p3.1", Page: 3, Breaks: []int{brk}, Section: SectionMethods, Heading: "2.2. Kinetic modelling", Text: text}
	cases := []struct {
		name string
		p    []Passage
		pr   typesetProbe
		miss string // a part of the miss; "" for found
	}{
		{"whole across the break", []Passage{in}, pr, ""},
		{"its end on the start's page", []Passage{withBreaks(in, nil)}, pr, "at pages 3-3"},
		{"its start on the next page", []Passage{withBreaks(in, []int{0})}, pr, "at pages 4-4"},
		{"cut in two", []Passage{withText(in, text[:brk]), withText(in, text[brk:])}, pr, "not found whole"},
		{"in another section", []Passage{withSection(in, SectionResults, "3. Results")}, pr, `in section "results"`},
		{"under the parent heading", []Passage{withSection(in, SectionMethods, "2. Materials and methods")}, pr, "under heading"},
		{"IEEE small capitals", []Passage{withSection(withBreaks(in, nil), SectionIntroduction, "I. I NTRODUCTION")},
			typesetProbe{Text: sentence, PageStart: 3, PageEnd: 3, Heading: "Introduction", SectionKind: SectionIntroduction}, ""},
		{"a lettered subsection", []Passage{withSection(withBreaks(in, nil), SectionOther, "B. Thermal measurement")},
			typesetProbe{Text: sentence, PageStart: 3, PageEnd: 3, Heading: "Thermal measurement", SectionKind: SectionOther}, ""},
		{"no heading, named by its section", []Passage{withSection(withBreaks(in, nil), SectionDiscussion, "")},
			typesetProbe{Text: sentence, PageStart: 3, PageEnd: 3, Heading: "Discussion", SectionKind: SectionDiscussion}, ""},
		{"under no heading, given one", []Passage{withSection(withBreaks(in, nil), SectionAbstract, "Abstract")},
			typesetProbe{Text: sentence, PageStart: 3, PageEnd: 3, Heading: "", SectionKind: SectionAbstract}, "under heading"},
	}
	for _, c := range cases {
		got := probeMiss(Document{Passages: c.p}, c.pr)
		if c.miss == "" && got != "" || c.miss != "" && !strings.Contains(got, c.miss) {
			t.Errorf("%s: probeMiss = %q, want %q", c.name, got, c.miss)
		}
	}

	truth := typesetTruth{Pages: 4, Furniture: []string{"Preprint submitted to Journal of Forensic Biochemistry", "Article"}}
	furniture := []struct {
		text string
		read bool
	}{
		{"3", true},
		{" 12 ", true},
		{"The whole paper must also be read. 1", true},
		{"The first fold was 3", false},
		{"It rose in the year 2019. 2019", false}, // no page of a 4-page paper
		{"Preprint submitted to Journal of Forensic Biochemistry March 14, 2025", true},
		{"The calls were brief, cheap and well received.", false},
		{"2 morning. Samples visibly stained with blood were discarded.", true},
		{"12 mice were kept apart.", false},
		{"Article Winter chlorophyll against ice duration", true},
		{"The Article of the treaty was read.", false},
	}
	for _, c := range furniture {
		got := furnitureRead(Document{Passages: []Passage{{ID: "p1.1", Text: c.text}}}, truth)
		if (len(got) > 0) != c.read {
			t.Errorf("furnitureRead(%q) = %q, want read as furniture: %v", c.text, got, c.read)
		}
	}
}

func withBreaks(p Passage, breaks []int) Passage { p.Breaks = breaks; return p }
func withText(p Passage, text string) Passage    { p.Text, p.Breaks = text, nil; return p }
func withSection(p Passage, section, heading string) Passage {
	p.Section, p.Heading = section, heading
	return p
}
