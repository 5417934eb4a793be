// Package fulltext reads the full text of a paper (a PDF, a JATS/NLM XML file as PubMed
// Central gives them, or an HTML page) into passages a scientist can cite: paragraphs in
// reading order, each with its page and its section (abstract, introduction, methods,
// results, discussion, ...), running heads, page numbers and the references left out,
// words rejoined across line ends and hyphens, ligatures and Unicode forms unfolded.
//
// A file is data from outside: it is read within caps (Limits: its size, the time and the
// memory its reading may take, the text it may give), and one that cannot be read is a
// *Problem that names why (encrypted, corrupt, no text layer, over a cap), never a crash.
// PDFs are read by Debian's pdftotext (poppler-utils), run as a child process under those
// caps, so a malformed or hostile PDF costs a bounded process, not the server. It has no
// Temporal import.
package fulltext

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kinds of full text, by what the file holds.
const (
	KindPDF  = "pdf"
	KindJATS = "jats"
	KindHTML = "html"
)

// KindOf is the kind of full text a file's name says it is, or "" for none.
func KindOf(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".pdf":
		return KindPDF
	case ".xml", ".nxml":
		return KindJATS
	case ".html", ".htm", ".xhtml":
		return KindHTML
	}
	return ""
}

// Section names: what a passage's section is called, whatever its heading says.
const (
	SectionFront        = "front" // before the first heading: title, authors, affiliations
	SectionAbstract     = "abstract"
	SectionIntroduction = "introduction"
	SectionMethods      = "methods"
	SectionResults      = "results"
	SectionDiscussion   = "discussion"
	SectionConclusions  = "conclusions"
	SectionOther        = "other" // a heading of none of these (acknowledgements, appendix, ...)
)

// Passage is one passage of a full text: a paragraph (or a part of a long one), a table,
// a caption.
type Passage struct {
	// ID is the passage's place in the text: "p7.2" for the second passage of page 7, or
	// for a text without pages (JATS, HTML) "s3.2", the second of its third section. The
	// library prefixes it with the source's id ("10.5555/x#p7.2"). The same file always
	// gives the same ids.
	ID      string `json:"id"`
	Page    int    `json:"page,omitempty"` // 1-based; 0 for a text without pages
	Section string `json:"section"`
	// Heading is the section's heading as the text gives it ("2 Materials and methods"),
	// where it differs from the section's name.
	Heading string `json:"heading,omitempty"`
	Text    string `json:"text"`
	// Breaks are where a passage that crosses a page break runs onto its next pages: the
	// byte offsets in Text at which page Page+1, Page+2, ... start. A paragraph that
	// crosses a page stays one passage, and each of its sentences keeps its page (OnPage).
	Breaks []int `json:"breaks,omitempty"`
}

// LastPage is the page a passage ends on.
func (p Passage) LastPage() int {
	if p.Page == 0 {
		return 0
	}
	return p.Page + len(p.Breaks)
}

// PageAt is the page of the byte at offset in the passage's text.
func (p Passage) PageAt(offset int) int {
	page := p.Page
	for _, b := range p.Breaks {
		if offset >= b {
			page++
		}
	}
	return page
}

// OnPage is the passage's text on page n, by whole sentences: every sentence with a word
// on that page, a sentence that crosses the break on both of its pages. It is "" when no
// sentence is on page n, and the whole text for a passage on page n alone.
func (p Passage) OnPage(n int) string {
	if n < p.Page || n > p.LastPage() {
		return ""
	}
	if len(p.Breaks) == 0 {
		return p.Text
	}
	var kept []string
	for _, s := range Sentences(p.Text) {
		first, last := p.PageAt(s.Start), p.PageAt(max(s.End-1, s.Start))
		if first <= n && n <= last {
			kept = append(kept, p.Text[s.Start:s.End])
		}
	}
	return strings.Join(kept, " ")
}

// Span is a sentence's place in a text: the bytes [Start, End).
type Span struct{ Start, End int }

// Sentences splits a text into its sentences: a sentence ends at '.', '?' or '!' (and any
// closing quote or bracket) before a space and a capital, a digit or an opening bracket;
// "Fig. 2", "et al. (2019)" and "e.g. Smith" are not ends. Spaces between sentences
// belong to neither.
func Sentences(text string) []Span {
	var out []Span
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '.' && c != '?' && c != '!' {
			continue
		}
		end := i + 1
		for end < len(text) && strings.IndexByte(")]\"'", text[end]) >= 0 {
			end++
		}
		if end+1 >= len(text) || text[end] != ' ' || !opensSentence(text[end+1:]) || c == '.' && notAnEnd(text[start:i]) {
			continue
		}
		out = append(out, Span{start, end})
		start = end + 1
		i = end
	}
	if start < len(text) {
		out = append(out, Span{start, len(text)})
	}
	return out
}

func opensSentence(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r) || unicode.IsDigit(r) || strings.ContainsRune("([\"“‘", r)
}

// notAnEnd says whether a full stop after text ends an abbreviation, not a sentence.
func notAnEnd(text string) bool {
	w := text[strings.LastIndexByte(text, ' ')+1:]
	switch strings.ToLower(strings.TrimLeft(w, "([")) {
	case "fig", "figs", "eq", "eqs", "ref", "refs", "al", "e.g", "i.e", "cf", "vs", "approx", "no", "dr", "prof", "st", "sect", "tab", "suppl", "ca", "resp":
		return true
	}
	r, _ := utf8.DecodeRuneInString(w)
	return utf8.RuneCountInString(w) == 1 && unicode.IsUpper(r) // an initial: "J. Smith"
}

// Document is a full text read.
type Document struct {
	Kind     string    `json:"kind"`
	Pages    int       `json:"pages,omitempty"` // a PDF's page count
	Passages []Passage `json:"passages"`
	// NoText lists the pages with no text layer (a scanned page), which gave no passages.
	NoText []int `json:"no_text,omitempty"`
}

// Chars is how much text the document holds: the sum of its passages' lengths.
func (d Document) Chars() int {
	n := 0
	for _, p := range d.Passages {
		n += len(p.Text)
	}
	return n
}

// Problem is why a file gave no text: a reason a person can act on.
type Problem struct {
	Reason string
}

func (p *Problem) Error() string { return p.Reason }

func problem(format string, args ...any) error {
	return &Problem{Reason: fmt.Sprintf(format, args...)}
}

// IsProblem says whether err is the file's fault (named and skipped), not the reader's.
func IsProblem(err error) bool {
	var p *Problem
	return errors.As(err, &p)
}

// Limits bound what reading one file may cost. A zero field means its default.
type Limits struct {
	// FileBytes is the largest file read; a larger one is not read at all.
	FileBytes int64
	// Timeout is how long reading one file may take (a PDF's extractor is killed then).
	Timeout time.Duration
	// MemoryBytes is the address space a PDF's extractor may take: a decompression bomb
	// fails inside it.
	MemoryBytes int64
	// TextBytes is the most text one file may give; a file that gives more is not kept.
	TextBytes int
	// Pages is the most pages of a PDF read; a longer PDF gives its first Pages pages (no
	// note says so yet: 2,000 pages is past any paper or thesis).
	Pages int
}

// DefaultLimits are generous for papers and theses: a 64 MiB file (a long thesis with
// figures), 60 s and 1 GiB to read it, 16 MiB of text (some 2,500 pages), 2,000 pages.
func DefaultLimits() Limits {
	return Limits{FileBytes: 64 << 20, Timeout: time.Minute, MemoryBytes: 1 << 30, TextBytes: 16 << 20, Pages: 2000}
}

func (l Limits) orDefaults() Limits {
	d := DefaultLimits()
	if l.FileBytes <= 0 {
		l.FileBytes = d.FileBytes
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.TextBytes <= 0 {
		l.TextBytes = d.TextBytes
	}
	if l.Pages <= 0 {
		l.Pages = d.Pages
	}
	return l
}

// A Reader reads full texts within its limits. PDFTextPath is the pdftotext to run ("":
// the one on PATH).
type Reader struct {
	Limits      Limits
	PDFTextPath string
}

// Read reads one file (its kind by its name, KindOf) into passages. A file that cannot be
// read is a *Problem naming why; any other error is the caller's (a cancelled ctx).
func (r Reader) Read(ctx context.Context, path string) (Document, error) {
	lim := r.Limits.orDefaults()
	kind := KindOf(path)
	if kind == "" {
		return Document{}, problem("not a full text cosci reads (a .pdf, a JATS .xml or .nxml, an .html)")
	}
	info, err := os.Stat(path)
	if err != nil {
		return Document{}, problem("cannot read it: %s", Reason(err))
	}
	if !info.Mode().IsRegular() {
		return Document{}, problem("not a regular file")
	}
	if info.Size() > lim.FileBytes {
		return Document{}, problem("not read: it is %s, over the cap of %s on one file (literature --max-file-mb)", Size(info.Size()), Size(lim.FileBytes))
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	var doc Document
	switch kind {
	case KindPDF:
		doc, err = r.readPDF(ctx, path, lim)
	case KindJATS, KindHTML:
		var data []byte
		data, err = readAtMost(path, lim.FileBytes)
		if err == nil && kind == KindJATS {
			doc, err = readJATS(data, lim)
		} else if err == nil {
			doc, err = readHTML(data, lim)
		}
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && !IsProblem(err) {
			return Document{}, problem("not read: reading it took over the cap of %s on one file", lim.Timeout)
		}
		return Document{}, err
	}
	doc.Kind = kind
	if len(doc.Passages) == 0 {
		if kind == KindPDF && doc.Pages > 0 && len(doc.NoText) == doc.Pages {
			return Document{}, problem("no text layer on any of its %d pages (a scan): run OCR on it (ocrmypdf) and attach the result", doc.Pages)
		}
		return Document{}, problem("no text found in it")
	}
	return doc, nil
}

// readAtMost reads a file of at most limit bytes: one that grew past it since its size
// was taken costs no more than the cap.
func readAtMost(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, problem("cannot read it: %s", Reason(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, problem("cannot read it: %s", Reason(err))
	}
	if int64(len(b)) > limit {
		return nil, problem("not read: it grew over the cap of %s on one file (literature --max-file-mb)", Size(limit))
	}
	return b, nil
}

// Reason is an error's reason without the path the caller names already.
func Reason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Size writes a size as people read it: 64 MiB, 256 KiB, 500.0 MiB, 900 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
