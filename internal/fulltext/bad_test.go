package fulltext

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/fulltext/fixture"
)

// TestBadFiles: every kind of file that cannot be read is a *Problem that says why,
// naming the cap it ran into, and never a crash or a hang.
func TestBadFiles(t *testing.T) {
	needPDFText(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	paper := func(p fixture.Paper) []byte {
		data, _, err := fixture.PDF(p)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	encrypted := fixture.Kim
	encrypted.Protect = "secret"
	whole := paper(fixture.Kim)
	scan, err := fixture.Scan(3)
	if err != nil {
		t.Fatal(err)
	}
	// A PDF of 500 MB: a sparse file, so the test writes nothing of it.
	huge := filepath.Join(dir, "huge.pdf")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(whole)
	if err := f.Truncate(500 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	deep := "<article><body>" + strings.Repeat("<sec>", 5000) + "<p>deep</p>" + strings.Repeat("</sec>", 5000) + "</body></article>"
	laughs := `<?xml version="1.0"?><!DOCTYPE article [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">` +
		`<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>` +
		`<article><body><sec sec-type="results"><title>Results</title><p>Tau spreads &lol9; between synapses in mice of every age we studied.</p></sec></body></article>`
	for _, tc := range []struct {
		name   string
		path   string
		reader Reader
		want   string // in the problem's reason
	}{
		{"encrypted", write("encrypted.pdf", paper(encrypted)), Reader{}, "encrypted: it needs a password"},
		{"truncated", write("truncated.pdf", whole[:len(whole)/3]), Reader{}, "corrupt: not a PDF that can be read"},
		{"not a PDF at all", write("junk.pdf", []byte("%PDF-1.4\nthis is no PDF\x00\xff\xfe garbage")), Reader{}, "corrupt: not a PDF that can be read"},
		{"scanned, no text layer", write("scan.pdf", scan), Reader{}, "no text layer on any of its 3 pages"},
		{"500 MB", huge, Reader{PDFTextPath: "/nonexistent/pdftotext"}, "not read: it is 500 MiB, over the cap of 64 MiB on one file (literature --max-file-mb)"},
		// The bomb's one page inflates to 256 MiB of text: poppler reads it in constant
		// memory (flate streams are read as they inflate), for some seconds; the time
		// cap ends it.
		{"decompression bomb, time cap", write("bomb.pdf", fixture.Bomb(256<<20)), Reader{Limits: Limits{Timeout: 2 * time.Second}}, "not read: reading it took over the cap of 2s on one file"},
		// Any PDF that needs more memory than the cap fails inside it, named: 18 MiB
		// runs out while reading, 12 MiB before the program has loaded its libraries.
		{"memory cap", write("paper.pdf", whole), Reader{Limits: Limits{MemoryBytes: 18 << 20}}, "failed within the memory cap of 18 MiB"},
		{"memory cap, at start", filepath.Join(dir, "paper.pdf"), Reader{Limits: Limits{MemoryBytes: 12 << 20}}, "failed within the memory cap of 12 MiB"},
		{"text cap", write("long.pdf", paper(fixture.Synthetic(1, 10))), Reader{Limits: Limits{TextBytes: 16 << 10}}, "its text runs over the cap of 16 KiB"},
		{"file cap", write("big.xml", fixture.JATS(fixture.Ruan)), Reader{Limits: Limits{FileBytes: 1 << 10}}, "over the cap of 1 KiB on one file"},
		{"XML nested deep", write("deep.xml", []byte(deep)), Reader{}, "nests deeper than 256"},
		{"HTML nested deep", write("deep.html", []byte(strings.Repeat("<div>", 5000)+"deep")), Reader{}, "nests deeper than 256"},
		{"a folder named .pdf", filepath.Join(dir, "folder.pdf"), Reader{}, "not a regular file"},
		{"not a full text", write("notes.docx", []byte("PK")), Reader{}, "not a full text cosci reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "a folder named .pdf" {
				os.Mkdir(tc.path, 0o755)
			}
			t0 := time.Now()
			doc, err := tc.reader.Read(context.Background(), tc.path)
			var p *Problem
			if !errors.As(err, &p) {
				t.Fatalf("got %v (%d passages); want a problem saying %q", err, len(doc.Passages), tc.want)
			}
			if !strings.Contains(p.Reason, tc.want) {
				t.Errorf("reason %q; want %q", p.Reason, tc.want)
			}
			t.Logf("%s in %s", p.Reason, time.Since(t0).Round(time.Millisecond))
		})
	}

	// A billion laughs: the XML reader expands no entity of the file's own, so the ten
	// bytes stay ten bytes.
	doc, err := Reader{}.Read(context.Background(), write("laughs.xml", []byte(laughs)))
	if err != nil {
		t.Fatal(err)
	}
	if n := doc.Chars(); n > 200 {
		t.Errorf("the billion laughs gave %d bytes of text", n)
	}

	// Without pdftotext no PDF can be read, and that is no file's fault.
	t.Setenv("PATH", t.TempDir())
	if _, err := (Reader{}).Read(context.Background(), filepath.Join(dir, "paper.pdf")); !errors.Is(err, ErrNoExtractor) || IsProblem(err) {
		t.Errorf("without pdftotext: %v; want ErrNoExtractor", err)
	}
}
