package library

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/fulltext"
)

// Following the folder: which export files there are, which changed since the last look,
// and reading them again.

// Changes is what a Refresh found.
type Changes struct {
	Files            []string // export files read again (new or changed) or gone
	Added, Updated   int      // references indexed anew, or again
	Removed          int      // references no longer in any file
	References       int      // in the library now
	Skipped          []Skipped
	IndexedInSeconds float64
	// Texts are the full-text files read again (new or changed); TextsIndexed and
	// TextsRemoved the references whose passages were indexed again, or dropped.
	Texts                      []string
	TextsIndexed, TextsRemoved int
}

// Any says whether anything changed.
func (c Changes) Any() bool {
	return len(c.Files) > 0 || c.Added+c.Updated+c.Removed > 0 || len(c.Texts) > 0 || c.TextsIndexed+c.TextsRemoved > 0
}

// Refresh reads the export files that are new or changed since the last look, forgets
// those that are gone, and brings the index up to date. A file that cannot be read is
// reported (in Skipped, with the reason) and keeps what was read of it before.
func (l *Library) Refresh() (Changes, error) {
	l.refresh.Lock()
	defer l.refresh.Unlock()
	ch, refs, err := l.refreshExports()
	if err != nil {
		return ch, err
	}
	err = l.refreshTexts(l.ctx, refs, &ch, nil)
	l.summarise(&ch)
	return ch, err
}

// summarise writes the library as it is now into a refresh's changes: how many
// references, and everything skipped.
func (l *Library) summarise(ch *Changes) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	ch.References, ch.Skipped = len(l.refs), append(slices.Clone(l.skipped), l.textSkipped...)
}

// refreshExports reads the export files that changed and indexes their references
// (l.refresh held), and returns the library's references.
func (l *Library) refreshExports() (Changes, []Reference, error) {
	var ch Changes
	files, problems := l.exports()
	seen := map[string]bool{}
	for _, f := range files {
		seen[f] = true
		info, err := os.Stat(f)
		if err != nil {
			problems = append(problems, Skipped{File: l.name(f), Reason: "cannot read it: " + err.Error()})
			continue
		}
		old := l.files[f]
		if old != nil && old.size == info.Size() && old.mod.Equal(info.ModTime()) {
			continue
		}
		if big := l.limits.tooLarge(l.name(f), info.Size()); big != nil {
			problems = append(problems, big...) // not read: what was read of it before stays
			continue
		}
		data, err := readAtMost(f, info.Size(), l.limits.FileBytes)
		if err != nil {
			problems = append(problems, Skipped{File: l.name(f), Reason: "cannot read it: " + unwrapPath(err)})
			continue
		}
		if big := l.limits.tooLarge(l.name(f), int64(len(data))); big != nil {
			problems = append(problems, big...) // it grew since the look
			continue
		}
		sum := sha256.Sum256(data)
		hash := hex.EncodeToString(sum[:])
		if old != nil && old.hash == hash {
			old.size, old.mod = info.Size(), info.ModTime()
			continue
		}
		refs, skipped := Formats[strings.ToLower(filepath.Ext(f))](l.limits, data, l.name(f))
		for i := range refs {
			for j, a := range refs[i].Attachments {
				refs[i].Attachments[j] = attachedPath(filepath.Dir(f), a)
			}
		}
		l.files[f] = &fileState{size: info.Size(), mod: info.ModTime(), hash: hash, refs: refs, skipped: skipped}
		ch.Files = append(ch.Files, f)
	}
	for f := range l.files {
		if !seen[f] {
			delete(l.files, f)
			ch.Files = append(ch.Files, f)
		}
	}
	slices.Sort(ch.Files)
	if len(ch.Files) == 0 && l.refs != nil {
		// No export changed: only the full texts may have.
		l.mu.RLock()
		defer l.mu.RUnlock()
		return ch, l.list, nil
	}

	names := make([]string, 0, len(l.files))
	for f := range l.files {
		names = append(names, f)
	}
	slices.Sort(names)
	var all []Reference
	skipped := problems
	for _, f := range names {
		all = append(all, l.files[f].refs...)
		skipped = append(skipped, l.files[f].skipped...)
	}
	refs, dups := Merge(all)
	skipped = append(skipped, dups...)

	t0 := time.Now()
	if err := l.reindex(refs, &ch); err != nil {
		return ch, nil, err
	}
	ch.IndexedInSeconds = time.Since(t0).Seconds()
	byID := make(map[string]Reference, len(refs))
	byKey := make(map[string]string, len(refs))
	for _, r := range refs {
		byID[r.ID] = r
		byKey[strings.ToLower(r.Key)] = r.ID
	}
	l.mu.Lock()
	l.refs, l.list, l.byKey, l.skipped = byID, refs, byKey, skipped
	l.mu.Unlock()
	return ch, refs, nil
}

// attachedPath is where an attached file is: relative to the export's folder, unless
// absolute; Mendeley writes absolute paths without their first slash, so a relative path
// that is not there but is from the root is taken from the root.
func attachedPath(dir, a string) string {
	if filepath.IsAbs(a) {
		return a
	}
	p := filepath.Join(dir, a)
	if _, err := os.Stat(p); err != nil {
		if _, err := os.Stat(string(filepath.Separator) + a); err == nil {
			return string(filepath.Separator) + a
		}
	}
	return p
}

// readAtMost reads a file of about size bytes, but never more than limit+1 of them: a
// file that grows after its size was taken still costs no more than the cap.
func readAtMost(file string, size, limit int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	b.Grow(int(min(size, limit)) + 512)
	_, err = b.ReadFrom(io.LimitReader(f, limit+1))
	return b.Bytes(), err
}

// name is how the library names one of its files: relative to its folder.
func (l *Library) name(f string) string {
	if rel, err := filepath.Rel(l.path, f); err == nil && rel != "." {
		return rel
	}
	return filepath.Base(f)
}

// exports lists the export files of the library: the file itself, or the folder's files
// (its subfolders too, but not hidden ones) with a known extension.
func (l *Library) exports() ([]string, []Skipped) {
	info, err := os.Stat(l.path)
	if err != nil {
		return nil, []Skipped{{File: l.path, Reason: "cannot read the library: " + err.Error()}}
	}
	if !info.IsDir() {
		if Formats[strings.ToLower(filepath.Ext(l.path))] == nil {
			return nil, []Skipped{{File: l.path, Reason: "not a .bib, .ris or .json (CSL-JSON) export"}}
		}
		return []string{l.path}, nil
	}
	var files []string
	var problems []Skipped
	indexAbs, _ := filepath.Abs(l.indexDir)
	err = filepath.WalkDir(l.path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			problems = append(problems, Skipped{File: p, Reason: "cannot read it: " + err.Error()})
			return nil
		}
		if d.IsDir() {
			abs, _ := filepath.Abs(p)
			if p != l.path && (strings.HasPrefix(d.Name(), ".") || abs == indexAbs) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(d.Name(), ".") && Formats[strings.ToLower(filepath.Ext(p))] != nil {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		problems = append(problems, Skipped{File: l.path, Reason: err.Error()})
	}
	return files, problems
}

// unwrapPath is an error's reason without the path the caller names already.
func unwrapPath(err error) string { return fulltext.Reason(err) }

// Watch refreshes the library every interval until ctx ends, calling report with each
// refresh that changed something (or failed).
func (l *Library) Watch(ctx context.Context, every time.Duration, report func(Changes, error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ch, err := l.Refresh()
			if err != nil || ch.Any() {
				report(ch, err)
			}
		}
	}
}
