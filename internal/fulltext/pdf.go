package fulltext

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
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
	var cmd *exec.Cmd
	if prlimit, err := exec.LookPath("prlimit"); err == nil {
		cpu := int(math.Ceil(lim.Timeout.Seconds()))
		cmd = exec.CommandContext(ctx, prlimit, append([]string{
			"--as=" + strconv.FormatInt(lim.MemoryBytes, 10), "--cpu=" + strconv.Itoa(cpu), "--core=0", "--", tool}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, tool, args...)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	cmd.WaitDelay = 2 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &capped{w: &stderr, n: 4096}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start pdftotext: %w", err)
	}
	pages, readErr := readBBox(out, lim.TextBytes)
	if readErr != nil {
		_ = cmd.Process.Kill()
		_, _ = io.Copy(io.Discard, out)
	}
	waitErr := cmd.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if readErr != nil {
		return nil, readErr
	}
	if waitErr != nil {
		return nil, pdfProblem(waitErr, stderr.String(), lim)
	}
	return pages, nil
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

// readBBox reads pdftotext's -bbox-layout XHTML as it comes: pages, their blocks, lines
// and words. It stops with a *Problem once the words run over maxText bytes.
func readBBox(r io.Reader, maxText int) ([]Page, error) {
	dec := xml.NewDecoder(r)
	dec.Strict = false
	var (
		pages    []Page
		cur      *Line
		word     strings.Builder
		inWord   bool
		block    = -1
		textSize int
	)
	attr := func(se xml.StartElement, name string) float64 {
		for _, a := range se.Attr {
			if a.Name.Local == name {
				v, _ := strconv.ParseFloat(a.Value, 64)
				return v
			}
		}
		return 0
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return pages, nil
		}
		if err != nil {
			return pages, nil // cut short: the exit status says why
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
			case "word":
				inWord = true
				word.Reset()
			}
		case xml.CharData:
			if inWord && word.Len() < 1024 {
				word.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "word":
				inWord = false
				if cur != nil && word.Len() > 0 {
					if cur.Text != "" {
						cur.Text += " "
					}
					cur.Text += word.String()
					textSize += word.Len() + 1
					if textSize > maxText {
						return nil, problem("not read: its text runs over the cap of %s on one file", Size(int64(maxText)))
					}
				}
			case "line":
				if cur != nil && len(pages) > 0 && strings.TrimSpace(cur.Text) != "" {
					p := &pages[len(pages)-1]
					p.Lines = append(p.Lines, *cur)
				}
				cur = nil
			}
		}
	}
}

// capped writes at most n bytes to w, and drops the rest.
type capped struct {
	w io.Writer
	n int
}

func (c *capped) Write(p []byte) (int, error) {
	if c.n > 0 {
		k := min(len(p), c.n)
		c.w.Write(p[:k])
		c.n -= k
	}
	return len(p), nil
}

// oneLine is s on one line, cut to at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}
