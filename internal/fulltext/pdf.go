package fulltext

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/transform"

	"github.com/cosci-dev/cosci/internal/proclimit"
)

// PDFs are read by poppler's pdftotext (Debian's poppler-utils), the extractor desktop
// indexers use, as a child process: its -bbox-layout output gives each page's lines with
// their boxes and poppler's blocks, from which layout.go puts the columns in reading
// order and leaves out running heads and page numbers. The child runs under prlimit
// (util-linux) with an address-space cap and a CPU cap, and is killed at the time cap;
// its output is read as it comes, and it is killed when its text runs over the cap. So a
// decompression bomb, a file that loops the parser or one that makes it crash costs one
// bounded process. (BENCHMARKS.md compares it with PDFium in WebAssembly, in-process.)

// ErrNoExtractor is returned when pdftotext is not installed: no PDF can be read until it
// is, and nothing is the file's fault.
var ErrNoExtractor = errors.New("PDF text needs pdftotext, which is not installed (Debian: apt-get install poppler-utils)")

// Line is one Line of a PDF page: its text, its box (in points, from the page's top
// left) and the extractor's block it belongs to (lines of one block are one paragraph to
// the extractor; -1 when it gives none).
type Line struct {
	Text           string
	X0, Y0, X1, Y1 float64
	Block          int
	cells          int // the table cells read as this one line (rows), if more than one
}

// Page is one page's lines, in the extractor's order, and its size in points.
type Page struct {
	Width, Height float64
	Lines         []Line
}

// FromPages reads the passages of a PDF's pages as an extractor gave them: the lines put
// in reading order (layout.go), then read into passages by section. The reader feeds it
// pdftotext's lines; any other extractor's lines with their boxes will do.
func FromPages(pages []Page) Document {
	doc := Document{Kind: KindPDF, Pages: len(pages)}
	for i, p := range pages {
		if len(p.Lines) == 0 {
			doc.NoText = append(doc.NoText, i+1)
		}
	}
	doc.Passages = passages(layoutPages(pages), true)
	return doc
}

func (r Reader) readPDF(ctx context.Context, path string, lim Limits) (Document, error) {
	pages, err := r.pdfPages(ctx, path, lim)
	if err != nil {
		return Document{}, err
	}
	return FromPages(pages), nil
}

// pdfPages runs pdftotext on a file and reads its pages' lines.
func (r Reader) pdfPages(ctx context.Context, path string, lim Limits) ([]Page, error) {
	tool := r.PDFTextPath
	if tool == "" {
		p, err := exec.LookPath("pdftotext")
		if err != nil {
			return nil, ErrNoExtractor
		}
		tool = p
	}
	args := []string{"-enc", "UTF-8", "-bbox-layout", "-f", "1", "-l", strconv.Itoa(lim.Pages), path, "-"}
	cmd := capCommand(ctx, tool, lim, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &proclimit.Head{W: &stderr, N: 4096}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start pdftotext: %w", err)
	}
	// The page count is read beside the text, on the second core: it costs no wait.
	type count struct {
		n   int
		err error
	}
	counted := make(chan count, 1)
	go func() {
		n, err := r.pageCount(ctx, tool, path, lim)
		counted <- count{n, err}
	}()
	pages, readErr := readBBox(xmlReader(out), lim.TextBytes)
	var short *shortRead
	if readErr != nil && !errors.As(readErr, &short) {
		_ = cmd.Process.Kill() // over the text cap
	}
	// Drained on every path: a child blocked on a full pipe would be killed only at the
	// time cap, and what it wrote would be lost with it. After a short read the child is
	// left to end on its own, so that its exit says whether it failed (a crash, a cap).
	_, _ = io.Copy(io.Discard, out)
	waitErr := cmd.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	switch {
	case readErr != nil && short == nil:
		return nil, readErr // over the text cap: the kill is ours
	case waitErr != nil:
		return nil, pdfProblem(waitErr, stderr.String(), lim)
	}
	c := <-counted
	want, err := c.n, c.err
	if err != nil {
		return nil, err
	}
	want = min(want, lim.Pages)
	switch {
	case readErr != nil:
		return nil, problem("only %d of its %d pages could be read: %v", short.pages, want, short.err)
	case len(pages) != want:
		return nil, problem("only %d of its %d pages could be read: the extractor gave no more", min(len(pages), want), want)
	}
	return pages, nil
}

// pageCount is a PDF's page count, as pdfinfo (poppler-utils, beside pdftotext) gives it,
// run under the same caps. Why not read "/Type /Pages ... /Count N" from the file's
// bytes: pdflatex writes the page tree in compressed object streams (PDF 1.5), where no
// byte search finds it, so that would check TeX's papers least, the ones the control
// characters cut short. pdfinfo parses the file as pdftotext does, in some 5 ms.
func (r Reader) pageCount(ctx context.Context, tool, path string, lim Limits) (int, error) {
	info := filepath.Join(filepath.Dir(tool), "pdfinfo")
	if _, err := os.Stat(info); err != nil {
		p, err := exec.LookPath("pdfinfo")
		if err != nil {
			return 0, ErrNoExtractor
		}
		info = p
	}
	cmd := capCommand(ctx, info, lim, path)
	var stderr bytes.Buffer
	cmd.Stderr = &proclimit.Head{W: &stderr, N: 4096}
	var stdout bytes.Buffer
	cmd.Stdout = &proclimit.Head{W: &stdout, N: 64 << 10}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, pdfProblem(err, stderr.String(), lim)
	}
	for _, l := range strings.Split(stdout.String(), "\n") {
		if v, ok := strings.CutPrefix(l, "Pages:"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	return 0, problem("corrupt: its page count could not be read (pdfinfo gave none)")
}

// capCommand runs a poppler tool under prlimit (when there is one) with the caps on
// address space and CPU time, no core file, and a bare environment.
func capCommand(ctx context.Context, tool string, lim Limits, args ...string) *exec.Cmd {
	cpu := int(math.Ceil(lim.Timeout.Seconds()))
	cmd := proclimit.Command(ctx, proclimit.Limits{AddressSpace: lim.MemoryBytes, CPUSeconds: cpu}, tool, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// pdfProblem says why pdftotext failed on a file.
func pdfProblem(err error, stderr string, lim Limits) error {
	msg := strings.TrimSpace(stderr)
	var exit *exec.ExitError
	signaled := false
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			signaled = true
			if ws.Signal() == syscall.SIGXCPU || ws.Signal() == syscall.SIGKILL {
				return problem("not read: reading it took over the cap of %s on one file", lim.Timeout)
			}
		}
	}
	switch {
	case strings.Contains(msg, "Incorrect password"):
		return problem("encrypted: it needs a password to open; attach a copy without one")
	case strings.Contains(strings.ToLower(msg), "memory") || strings.Contains(msg, "bad_alloc") ||
		strings.Contains(msg, "failed to map segment") || signaled:
		return problem("not read: reading it failed within the memory cap of %s on one file (a decompression bomb, or a file too large to read within the cap)", Size(lim.MemoryBytes))
	}
	first, _, _ := strings.Cut(msg, "\n")
	for _, l := range strings.Split(msg, "\n") {
		if strings.Contains(l, "Error") {
			first = l
			break
		}
	}
	if first == "" {
		first = err.Error()
	}
	return problem("corrupt: not a PDF that can be read (pdftotext: %s)", oneLine(first, 200))
}

// word is one word of a line as pdftotext gives it, with its box.
type word struct {
	text           string
	attrs          []xml.Attr // its box, read only for a line that needs it (lineText)
	x0, y0, x1, y1 float64
}

// box reads a word's box from its attributes.
func (w *word) box() {
	se := xml.StartElement{Attr: w.attrs}
	w.x0, w.y0, w.x1, w.y1 = attr(se, "xMin"), attr(se, "yMin"), attr(se, "xMax"), attr(se, "yMax")
}

// lineText joins a line's words with spaces, and small capitals again: pdftotext splits
// a word set in small capitals (IEEE's headings, "INTRODUCTION" typeset as Introduction)
// into its full-size capital and the rest, a smaller all-capital word set hard against
// it ("I" "NTRODUCTION"). Those are joined, and words in small capitals are read in
// lower case, as they were written: "I. Introduction", "Results and Discussion".
func lineText(words []word) string {
	split := false // a capital letter and a word of capitals: perhaps small capitals
	for i := 1; i < len(words) && !split; i++ {
		split = utf8.RuneCountInString(words[i-1].text) == 1 && capitals(words[i-1].text) && capitals(words[i].text)
	}
	if split {
		for i := range words {
			if words[i].attrs != nil && words[i].x1 == 0 {
				words[i].box()
			}
		}
	}
	tall := 0.0
	for _, w := range words {
		if capitals(w.text) {
			tall = max(tall, w.y1-w.y0)
		}
	}
	small := func(w word) bool { return capitals(w.text) && w.y1-w.y0 < 0.9*tall }
	var b strings.Builder
	for i, w := range words {
		if w.text == "" {
			continue
		}
		t := w.text
		if small(w) {
			t = strings.ToLower(t)
		}
		if i > 0 && small(w) && utf8.RuneCountInString(words[i-1].text) == 1 && capitals(words[i-1].text) &&
			!small(words[i-1]) && w.x0-words[i-1].x1 < 0.15*(w.y1-w.y0) {
			b.WriteString(t) // the rest of a word in small capitals
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	return b.String()
}

// capitals says whether a word is all capital letters.
func capitals(s string) bool {
	for _, r := range s {
		if !unicode.IsUpper(r) {
			return false
		}
	}
	return s != ""
}

// shortRead is a reading of pdftotext's output that stopped before its end: the pages
// read whole before it, and why.
type shortRead struct {
	pages int
	err   error
}

func (s *shortRead) Error() string {
	return fmt.Sprintf("the text stops after page %d: %v", s.pages, s.err)
}

// readBBox reads pdftotext's -bbox-layout XHTML as it comes: pages, their blocks, lines
// and words. It stops with a *Problem once the words run over maxText bytes, and with a
// *shortRead when the output cannot be read to its end (</doc>): a paper cut short is
// an error, never a shorter paper.
func readBBox(r io.Reader, maxText int) ([]Page, error) {
	dec := xml.NewDecoder(r)
	dec.Strict = false
	var (
		pages    []Page
		whole    int // pages read to their end
		done     bool
		cur      *Line
		words    []word
		text     strings.Builder
		inWord   bool
		block    = -1
		textSize int
		joined   []joinedLine // the page's lines across the middle left whole
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF && done {
			return pages, nil
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return pages[:whole], &shortRead{pages: whole, err: err}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "page":
				pages = append(pages, Page{Width: attr(t, "width"), Height: attr(t, "height")})
				block = -1
			case "block":
				block++
			case "line":
				cur = &Line{X0: attr(t, "xMin"), Y0: attr(t, "yMin"), X1: attr(t, "xMax"), Y1: attr(t, "yMax"), Block: block}
				words = words[:0]
			case "word":
				inWord = true
				text.Reset()
				words = append(words, word{attrs: t.Attr})
			}
		case xml.CharData:
			if inWord && text.Len() < 1024 {
				text.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "word":
				inWord = false
				if n := len(words); n > 0 {
					words[n-1].text = strings.TrimSpace(text.String())
					textSize += len(words[n-1].text) + 1
					if textSize > maxText {
						return nil, problem("not read: its text runs over the cap of %s on one file", Size(int64(maxText)))
					}
				}
			case "page":
				if len(pages) > 0 {
					pageGutter(&pages[len(pages)-1], joined)
				}
				joined = joined[:0]
				whole = len(pages)
			case "doc":
				done = true
			case "line":
				if cur != nil && len(pages) > 0 {
					p := &pages[len(pages)-1]
					split := gutter(*cur, words, p.Width)
					for _, l := range split {
						if strings.TrimSpace(l.Text) != "" {
							p.Lines = append(p.Lines, l)
						}
					}
					if len(split) == 1 && len(words) > 1 && crossesMiddle(split[0], p.Width) && strings.TrimSpace(split[0].Text) != "" {
						joined = append(joined, joinedLine{len(p.Lines) - 1, slices.Clone(words)})
					}
				}
				cur = nil
			}
		}
	}
}

// attr is an element's numeric attribute (0 without one).
func attr(se xml.StartElement, name string) float64 {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			v, _ := strconv.ParseFloat(a.Value, 64)
			return v
		}
	}
	return 0
}

// xmlReader reads r with what XML forbids mapped to spaces (xmlChars).
func xmlReader(r io.Reader) io.Reader { return transform.NewReader(r, xmlChars{}) }

// xmlChars maps what XML forbids to spaces, byte for byte: the C0 controls (TeX's big
// delimiters, \Bigl( and the like, come out of pdftotext as U+0010 and U+0011), bytes
// that are not UTF-8, U+FFFE and U+FFFF. encoding/xml stops at any of them, even with
// Strict off, and the rest of the paper would be lost.
type xmlChars struct{ transform.NopResetter }

func (xmlChars) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	for nSrc < len(src) {
		if nDst >= len(dst) {
			return nDst, nSrc, transform.ErrShortDst
		}
		c := src[nSrc]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				c = ' '
			}
			dst[nDst] = c
			nDst++
			nSrc++
			continue
		}
		if !utf8.FullRune(src[nSrc:]) && !atEOF {
			return nDst, nSrc, transform.ErrShortSrc
		}
		r, size := utf8.DecodeRune(src[nSrc:])
		if nDst+size > len(dst) {
			return nDst, nSrc, transform.ErrShortDst
		}
		if r == utf8.RuneError && size == 1 || r == 0xFFFE || r == 0xFFFF {
			for i := 0; i < size; i++ {
				dst[nDst+i] = ' '
			}
		} else {
			copy(dst[nDst:], src[nSrc:nSrc+size])
		}
		nDst += size
		nSrc += size
	}
	return nDst, nSrc, nil
}

// oneLine is s on one line, cut to at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}
