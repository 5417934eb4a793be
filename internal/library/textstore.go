package library

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cosci-dev/cosci/internal/fulltext"
	"github.com/cosci-dev/cosci/internal/passage"
)

// The texts the library has read, kept once each under their file's digest
// (texts/<digest>.txt), so that a search reads only the passages it shows: a file is a
// header (the passages' ids, pages, sections and where each one's text is), then the
// texts in chunks of about chunkSize bytes, each compressed on its own. A search
// decompresses one chunk a passage shown (a few kilobytes), not the whole paper; a fetch
// or a reindex reads them all.

const (
	// textMagic opens a stored text: its format's version is textStateVersion's. One of
	// another version is not read (its file is read again).
	textMagic = "cosci text 2\n"
	chunkSize = 8 << 10
	// headerCacheSize is how many headers searches keep: a few kilobytes each.
	headerCacheSize = 20000
)

// textHeader is what a stored text's header says.
type textHeader struct {
	Kind     string          `json:"kind"`
	Pages    int             `json:"pages,omitempty"`
	NoText   []int           `json:"no_text,omitempty"`
	Passages []storedPassage `json:"passages"`
	Chunks   []int64         `json:"chunks"` // each chunk's compressed length, in order
}

// storedPassage is a passage without its text, and where its text is.
type storedPassage struct {
	fulltext.Passage
	Chunk int `json:"chunk"`
	Off   int `json:"off"` // in the chunk, decompressed
	Len   int `json:"len"`
}

func (l *Library) textsDir() string { return filepath.Join(l.indexDir, "texts") }

func (l *Library) textPath(digest string) string {
	return filepath.Join(l.textsDir(), digest+".txt")
}

// storeText keeps a file's text under its digest.
func (l *Library) storeText(digest string, doc fulltext.Document) error {
	h := textHeader{Kind: doc.Kind, Pages: doc.Pages, NoText: doc.NoText}
	var chunks bytes.Buffer
	var chunk strings.Builder
	z, _ := flate.NewWriter(&chunks, flate.BestCompression) // written once, read often
	end := func() error {
		if chunk.Len() == 0 {
			return nil
		}
		before := chunks.Len()
		z.Reset(&chunks)
		if _, err := io.WriteString(z, chunk.String()); err != nil {
			return err
		}
		if err := z.Close(); err != nil {
			return err
		}
		h.Chunks = append(h.Chunks, int64(chunks.Len()-before))
		chunk.Reset()
		return nil
	}
	for _, p := range doc.Passages {
		if chunk.Len() > 0 && chunk.Len()+len(p.Text) > chunkSize {
			if err := end(); err != nil {
				return err
			}
		}
		sp := storedPassage{Passage: p, Chunk: len(h.Chunks), Off: chunk.Len(), Len: len(p.Text)}
		sp.Text = ""
		h.Passages = append(h.Passages, sp)
		chunk.WriteString(p.Text)
	}
	if err := end(); err != nil {
		return err
	}
	var head bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&head, gzip.BestCompression)
	if err := json.NewEncoder(gz).Encode(h); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(l.textsDir(), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(l.textsDir(), ".text-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(head.Len()))
	for _, b := range [][]byte{[]byte(textMagic), n[:], head.Bytes(), chunks.Bytes()} {
		if _, err := tmp.Write(b); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), l.textPath(digest))
}

// header is a stored text's header, and where its chunks start in the file.
func (l *Library) header(digest string) (textHeader, int64, bool) {
	l.cacheMu.Lock()
	c, ok := l.headers[digest]
	l.cacheMu.Unlock()
	if ok {
		return c.h, c.start, true
	}
	f, err := os.Open(l.textPath(digest))
	if err != nil {
		return textHeader{}, 0, false
	}
	defer f.Close()
	h, start, err := readHeader(f)
	if errors.Is(err, errOldText) {
		return textHeader{}, 0, false // an older reader's: read again, without a word
	}
	if err != nil {
		l.logger.Warn("full texts: a stored text cannot be read; its file is read again at the next refresh", "digest", digest, "error", err)
		return textHeader{}, 0, false
	}
	l.cacheMu.Lock()
	if len(l.headers) >= headerCacheSize {
		clear(l.headers)
	}
	l.headers[digest] = cachedHeader{h, start}
	l.cacheMu.Unlock()
	return h, start, true
}

type cachedHeader struct {
	h     textHeader
	start int64
}

// errOldText is a stored text of another version of the format.
var errOldText = errors.New("a stored text of another version")

func readHeader(f io.Reader) (textHeader, int64, error) {
	var h textHeader
	magic := make([]byte, len(textMagic)+8)
	if _, err := io.ReadFull(f, magic); err != nil || string(magic[:len(textMagic)]) != textMagic {
		if strings.HasPrefix(string(magic), "cosci text ") {
			return h, 0, errOldText
		}
		return h, 0, errors.New("not a stored text")
	}
	n := binary.BigEndian.Uint64(magic[len(textMagic):])
	if n > 64<<20 {
		return h, 0, errors.New("a stored text's header over 64 MiB")
	}
	gz, err := gzip.NewReader(io.LimitReader(f, int64(n)))
	if err != nil {
		return h, 0, err
	}
	if err := json.NewDecoder(gz).Decode(&h); err != nil {
		return h, 0, err
	}
	return h, int64(len(magic)) + int64(n), nil
}

// chunkOf decompresses one chunk of a stored text.
func chunkOf(f *os.File, h textHeader, start int64, i int) (string, error) {
	if i < 0 || i >= len(h.Chunks) {
		return "", fmt.Errorf("no chunk %d", i)
	}
	off := start
	for _, n := range h.Chunks[:i] {
		off += n
	}
	b, err := io.ReadAll(flate.NewReader(io.NewSectionReader(f, off, h.Chunks[i])))
	return string(b), err
}

// passage is one passage of a stored text, with its text, by its place ("p7.2").
func (l *Library) passage(digest string, id passage.ID) (fulltext.Passage, bool) {
	h, start, ok := l.header(digest)
	if !ok {
		return fulltext.Passage{}, false
	}
	for _, sp := range h.Passages {
		if sp.ID != id.Place() {
			continue
		}
		f, err := os.Open(l.textPath(digest))
		if err != nil {
			return fulltext.Passage{}, false
		}
		defer f.Close()
		c, err := chunkOf(f, h, start, sp.Chunk)
		if err != nil || sp.Off+sp.Len > len(c) {
			return fulltext.Passage{}, false
		}
		p := sp.Passage
		p.Text = c[sp.Off : sp.Off+sp.Len]
		return p, true
	}
	return fulltext.Passage{}, false
}

// storedText is the whole text kept under a digest.
func (l *Library) storedText(digest string) (fulltext.Document, bool) {
	h, start, ok := l.header(digest)
	if !ok {
		return fulltext.Document{}, false
	}
	f, err := os.Open(l.textPath(digest))
	if err != nil {
		return fulltext.Document{}, false
	}
	defer f.Close()
	doc := fulltext.Document{Kind: h.Kind, Pages: h.Pages, NoText: h.NoText}
	var chunks []string
	for i := range h.Chunks {
		c, err := chunkOf(f, h, start, i)
		if err != nil {
			return fulltext.Document{}, false
		}
		chunks = append(chunks, c)
	}
	for _, sp := range h.Passages {
		if sp.Chunk >= len(chunks) || sp.Off+sp.Len > len(chunks[sp.Chunk]) {
			return fulltext.Document{}, false
		}
		p := sp.Passage
		p.Text = chunks[sp.Chunk][sp.Off : sp.Off+sp.Len]
		doc.Passages = append(doc.Passages, p)
	}
	return doc, true
}
