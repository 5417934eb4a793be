package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/fulltext"
)

// The library's full texts: which file holds each reference's text, reading the files
// that are new or changed (by size and time, then by digest), and what each gave.
//
// A reference's full text is a PDF, JATS or HTML file that an export's file field
// attaches to it, or a file beside the exports (in the library's folder, or a --fulltext
// folder) named by its citation key or DOI, or in a folder so named ("10.5555_x.pdf",
// "10.5555%2Fx/paper.pdf", "ito2021/main.pdf"). Of several, the first that reads (PDFs
// first, then JATS, then HTML) is its text. A file that cannot be read is named with
// why, and skipped; one that no reference claims is named too.

// textState is what the index directory keeps of the full texts, beside bleve's
// passages: each file read (so an unchanged file is not read again, even by the next
// process), and each reference's text as indexed.
type textState struct {
	Version int                   `json:"version"`
	Files   map[string]*textFile  `json:"files"`   // by absolute path
	Indexed map[string]indexedDoc `json:"indexed"` // by reference id
}

// textStateVersion is the state's version, and that of the texts it names: 2, passages
// that cross a page say where (fulltext.Passage.Breaks), and the reader of issue #43
// (whole pages, heads and footers by layout, headings by layout). A state of another
// version is started again, so that every file is read once more by the reader of now.
const textStateVersion = 2

// textFile is one full-text file as last read.
type textFile struct {
	Size    int64  `json:"size"`
	Mod     int64  `json:"mod"` // modification time, Unix nanoseconds
	Digest  string `json:"digest"`
	Problem string `json:"problem,omitempty"` // why it gave no text
	Pages   int    `json:"pages,omitempty"`
	// Passages is how many passages it gave; NoText its pages without a text layer.
	Passages int   `json:"passages,omitempty"`
	NoText   []int `json:"no_text,omitempty"`
}

// indexedDoc is a reference's text as the passage index holds it.
type indexedDoc struct {
	Digest string   `json:"digest"`
	IDs    []string `json:"ids"` // the passages' ids, without the reference's
}

// Text is what the library knows of a reference's full text.
type Text struct {
	Path   string // absolute
	Name   string // as the library names it: relative to its folder, else the file's name
	Digest string
	Kind   string
	Pages  int
	NoText []int
	Count  int // passages
}

// textCandidates are the files that may hold each reference's full text, best first, the
// files no reference claims, and the attached files that are not there.
func (l *Library) textCandidates(refs []Reference) (map[string][]string, []string, []Skipped) {
	folder := l.folder()
	byKey := map[string]string{}
	byDOI := map[string]string{}
	for _, r := range refs {
		byKey[strings.ToLower(r.Key)] = r.ID
		if r.DOI != "" {
			byDOI[r.DOI] = r.ID
		}
	}
	out := map[string][]string{}
	claimed := map[string]bool{}
	add := func(id, path string) {
		if !slices.Contains(out[id], path) {
			out[id] = append(out[id], path)
		}
		claimed[path] = true
	}
	var missing []Skipped
	for _, r := range refs {
		for _, a := range r.Attachments {
			if fulltext.KindOf(a) == "" {
				continue
			}
			if p := l.attachment(a); p != "" {
				add(r.ID, p)
			} else {
				missing = append(missing, Skipped{File: l.textName(a), Key: r.Key,
					Reason: "its export's file field attaches this full text, which is not there (export with the files, e.g. Zotero's \"Export Files\", or copy it there)"})
			}
		}
	}
	var loose []string
	roots := append([]string{}, l.textDirs...)
	if folder != "" {
		roots = append([]string{folder}, roots...)
	}
	for _, root := range roots {
		for _, p := range l.walkTexts(root) {
			if claimed[p] {
				continue
			}
			if id := nameOwner(root, p, byKey, byDOI); id != "" {
				add(id, p)
			} else if !slices.Contains(loose, p) {
				loose = append(loose, p)
			}
		}
	}
	for id, paths := range out {
		slices.SortStableFunc(paths, func(a, b string) int { return kindRank(a) - kindRank(b) })
		out[id] = paths
	}
	return out, loose, missing
}

// kindRank orders the kinds of full text a reference may have: a PDF has pages to cite.
func kindRank(p string) int {
	return map[string]int{fulltext.KindPDF: 0, fulltext.KindJATS: 1, fulltext.KindHTML: 2}[fulltext.KindOf(p)]
}

// folder is the library's folder: the one it reads, or the one its export file is in.
func (l *Library) folder() string {
	if info, err := os.Stat(l.path); err == nil && info.IsDir() {
		abs, _ := filepath.Abs(l.path)
		return abs
	}
	abs, _ := filepath.Abs(filepath.Dir(l.path))
	return abs
}

// attachment is the absolute path of an attached file that exists, or "".
func (l *Library) attachment(p string) string {
	if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
		abs, _ := filepath.Abs(p)
		return abs
	}
	return ""
}

// walkTexts lists the full-text files under root (not hidden ones, not the index).
func (l *Library) walkTexts(root string) []string {
	var out []string
	indexAbs, _ := filepath.Abs(l.indexDir)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			abs, _ := filepath.Abs(p)
			if p != root && (strings.HasPrefix(d.Name(), ".") || abs == indexAbs) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(d.Name(), ".") && fulltext.KindOf(p) != "" && d.Type().IsRegular() {
			abs, _ := filepath.Abs(p)
			out = append(out, abs)
		}
		return nil
	})
	return out
}

// nameOwner is the reference a file's name names: its name without the extension, its
// folder's name, or its path under root, as a citation key or a DOI ("/" written "_" or
// "%2F" in a name, or as folders).
func nameOwner(root, p string, byKey, byDOI map[string]string) string {
	rel, _ := filepath.Rel(root, p)
	stem := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
	names := []string{stem, filepath.Base(filepath.Dir(rel)), filepath.ToSlash(filepath.Dir(rel)), filepath.ToSlash(strings.TrimSuffix(rel, filepath.Ext(rel)))}
	for _, n := range names {
		if n == "" || n == "." {
			continue
		}
		if id, ok := byKey[strings.ToLower(n)]; ok {
			return id
		}
		for _, d := range []string{n, unescapeDOI(n)} {
			if doi := citation.NormalDOI(d); doi != "" {
				if id, ok := byDOI[doi]; ok {
					return id
				}
			}
		}
	}
	return ""
}

// unescapeDOI writes a DOI's slash back where a file name could not: "%2F", or the first
// "_" after the prefix ("10.5555_cosci.tau.001").
func unescapeDOI(n string) string {
	if u, err := url.PathUnescape(n); err == nil && strings.Contains(u, "/") {
		return u
	}
	if i := strings.IndexByte(n, '_'); strings.HasPrefix(n, "10.") && i > 0 && !strings.Contains(n[:i], "/") {
		return n[:i] + "/" + n[i+1:]
	}
	return n
}

// name is how the library names a full-text file: relative to its folder when inside it.
func (l *Library) textName(p string) string {
	if rel, err := filepath.Rel(l.folder(), p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// readText reads one file that is new or changed by size or time (old is what the state
// said of it): by digest first, then its text, which it stores under its digest. It
// returns nil for a file to try again later (no PDF extractor installed), and whether the
// text changed.
func (l *Library) readText(ctx context.Context, path string, info os.FileInfo, old *textFile) (*textFile, bool, error) {
	tf := &textFile{Size: info.Size(), Mod: info.ModTime().UnixNano()}
	if info.Size() > l.limits.FileBytes {
		tf.Problem = fmt.Sprintf("not read: it is %s, over the cap of %s on one file (literature --max-file-mb)", bytesText(info.Size()), bytesText(l.limits.FileBytes))
		return tf, old == nil || old.Problem != tf.Problem, nil
	}
	l.digests.Add(1)
	digest, err := fileDigest(path, l.limits.FileBytes)
	if err != nil {
		tf.Problem = "cannot read it: " + unwrapPath(err)
		return tf, true, nil
	}
	tf.Digest = digest
	if old != nil && old.Digest == digest {
		old.Size, old.Mod = tf.Size, tf.Mod // touched, not changed
		return old, false, nil
	}
	if prev, ok := l.storedText(digest); ok { // the same text under another name
		tf.Pages, tf.Passages, tf.NoText = prev.Pages, len(prev.Passages), prev.NoText
		return tf, true, nil
	}
	doc, err := l.reader.Read(ctx, path)
	switch {
	case errors.Is(err, fulltext.ErrNoExtractor):
		l.logger.Warn("full texts", "file", l.textName(path), "not read", err.Error())
		return nil, false, nil
	case fulltext.IsProblem(err):
		tf.Problem = err.Error()
		return tf, true, nil
	case err != nil:
		return nil, false, err
	}
	if err := l.storeText(digest, doc); err != nil {
		return nil, false, err
	}
	tf.Pages, tf.Passages, tf.NoText = doc.Pages, len(doc.Passages), doc.NoText
	return tf, true, nil
}

// fileDigest is the SHA-256 of a file of at most limit bytes.
func fileDigest(path string, limit int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, limit+1))
	if err != nil {
		return "", err
	}
	if n > limit {
		return "", fmt.Errorf("it grew over the cap of %s on one file (literature --max-file-mb)", bytesText(limit))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
