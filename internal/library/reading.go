package library

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/cosci-dev/cosci/internal/fulltext"
)

// Reading the full texts while the library answers. A reference's full text is read once
// (a PDF costs a pdftotext run: tens of milliseconds to a minute), so a refresh that finds
// new or changed files reads them in workers and, every publishEvery, indexes the
// passages of what they have read and publishes it: a search finds the texts indexed so
// far and says how many are still being read (Reading), and a fetch of one still being
// read says so. The texts already indexed, from unchanged files, are published first,
// before any file is read.

// publishEvery is how often the passages read so far are indexed and published while
// files are read: often enough that a search soon finds them, seldom enough that bleve
// indexes them in batches of some thousands of passages, not one paper at a time.
const publishEvery = 2 * time.Second

// textRun is one refresh's reading of the full texts.
type textRun struct {
	l          *Library
	candidates map[string][]string // by reference id: its files, best first
	ch         *Changes

	mu      sync.Mutex // guards tried, reading, ch.Texts, failed and l.text.Files while workers run
	tried   map[string]bool
	reading map[string]chan struct{} // closed when the file is read: one reading for all that claim it
	failed  error

	// The collector's alone.
	texts   map[string]Text // the references decided, with a text
	decided map[string]bool // the references decided and indexed
	changed bool            // the index or the state changed
}

// choice is a worker's decision for one reference: its file, or "" for none that reads.
type choice struct{ id, path string }

// look says whether a file's state is known without reading it: unchanged by size and
// time since it was read, or not there, or over the cap (both cost no reading). It runs
// before the workers start.
func (r *textRun) look(p string) bool {
	info, err := os.Stat(p)
	if err != nil {
		r.tried[p] = true
		r.l.text.Files[p] = &textFile{Problem: "cannot read it: " + unwrapPath(err)}
		return true
	}
	if unchanged(r.l.text.Files[p], info) {
		r.tried[p] = true
		return true
	}
	return false
}

// unchanged says whether a file is as it was read, by its size and time: then it is not
// read again, nor its digest taken.
func unchanged(old *textFile, info os.FileInfo) bool {
	return old != nil && old.Size == info.Size() && old.Mod == info.ModTime().UnixNano() && old.Digest != ""
}

// readable says whether a file read gave a text (r.mu held, or no workers running).
func (r *textRun) readable(p string) bool {
	tf := r.l.text.Files[p]
	return tf != nil && tf.Problem == "" && tf.Digest != ""
}

// quick decides the references whose files are all known: their text is the first that
// reads. It returns the others, whose files the workers read.
func (r *textRun) quick() (slow []string) {
	for id, c := range r.candidates {
		decided := false
		for _, p := range c {
			if !r.tried[p] && !r.look(p) {
				break
			}
			if r.readable(p) {
				r.texts[id] = r.textAt(p)
				decided = true
				break
			}
			decided = p == c[len(c)-1] // all known, none reads
		}
		if !decided {
			slow = append(slow, id)
		}
	}
	slices.Sort(slow)
	return slow
}

// read brings one file's state up to date, reading it if it is new or changed.
func (r *textRun) read(ctx context.Context, p string) error {
	r.mu.Lock()
	if r.tried[p] {
		wait := r.reading[p]
		r.mu.Unlock()
		if wait != nil {
			<-wait
		}
		return nil
	}
	r.tried[p] = true
	done := make(chan struct{})
	r.reading[p] = done
	old := r.l.text.Files[p]
	r.mu.Unlock()
	defer close(done)
	var tf *textFile
	changed := false
	info, err := os.Stat(p)
	switch {
	case err != nil:
		tf, changed = &textFile{Problem: "cannot read it: " + unwrapPath(err)}, true
	case unchanged(old, info):
		return nil // a reference's later file, which quick did not look at
	default:
		if tf, changed, err = r.l.readText(ctx, p, info, old); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if tf != nil {
		r.l.text.Files[p] = tf
	}
	if changed {
		r.ch.Texts = append(r.ch.Texts, p)
	}
	return nil
}

// choose reads a reference's files in order until one gives a text (or the file that
// failed, with the error).
func (r *textRun) choose(ctx context.Context, id string) (string, error) {
	for _, p := range r.candidates[id] {
		if err := r.read(ctx, p); err != nil {
			return p, err
		}
		r.mu.Lock()
		ok := r.readable(p)
		r.mu.Unlock()
		if ok {
			return p, nil
		}
	}
	return "", nil
}

// work reads the slow references' files in parallel, sending each decision to out.
func (r *textRun) work(ctx context.Context, slow []string, out chan<- choice) {
	next := make(chan string)
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range next {
				p, err := r.choose(ctx, id)
				if err != nil {
					r.mu.Lock()
					r.failed = errors.Join(r.failed, fmt.Errorf("%s: %w", r.l.textName(p), err))
					r.mu.Unlock()
					continue
				}
				out <- choice{id, p}
			}
		}()
	}
	for _, id := range slow {
		if ctx.Err() != nil {
			break
		}
		next <- id
	}
	close(next)
	wg.Wait()
	close(out)
}

// collect indexes and publishes the workers' decisions as they come: every publishEvery,
// or once passageBatch passages wait, and at the end.
func (r *textRun) collect(in <-chan choice, waiting []string) error {
	tick := time.NewTicker(publishEvery)
	defer tick.Stop()
	batch, size := waiting, 0
	for open := true; open; {
		select {
		case c, ok := <-in:
			if !ok {
				open = false
				break
			}
			if c.path != "" {
				r.texts[c.id] = r.textAt(c.path)
				size += r.texts[c.id].Count
			}
			batch = append(batch, c.id)
			if size < passageBatch {
				continue
			}
		case <-tick.C:
		}
		if len(batch) > 0 || !open {
			if err := r.apply(batch); err != nil {
				return err
			}
			batch, size = nil, 0
		}
	}
	return nil
}

// textAt is what the library knows of the text of a file that read.
func (r *textRun) textAt(p string) Text {
	r.mu.Lock()
	defer r.mu.Unlock()
	tf := r.l.text.Files[p]
	return Text{Path: p, Name: r.l.textName(p), Digest: tf.Digest, Kind: fulltext.KindOf(p), Pages: tf.Pages, NoText: tf.NoText, Count: tf.Passages}
}

// Reading is how many references' full texts are still being read, of how many
// references have a full-text file.
func (l *Library) Reading() (pending, total int) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.pending), l.textTotal
}

// textStatus is what the library can say of a reference's full text besides the text: the
// file still being read, or the files that could not be read and why.
func (l *Library) textStatus(id string) (reading string, problems []Skipped) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.pending[id], l.textProblems[id]
}

// publish makes what the run has indexed what searches and fetches read: the references
// decided, and for the others the text indexed before (if any) until theirs is read.
func (r *textRun) publish() {
	l := r.l
	l.mu.RLock()
	prev := l.texts
	l.mu.RUnlock()
	texts := make(map[string]Text, len(r.candidates))
	pending := map[string]string{}
	problems := map[string][]Skipped{}
	r.mu.Lock()
	for id, c := range r.candidates {
		if !r.decided[id] {
			pending[id] = l.textName(c[0])
			if t, ok := prev[id]; ok && l.text.Indexed[id].Digest == t.Digest {
				texts[id] = t
			}
			continue
		}
		t, ok := r.texts[id]
		if ok {
			texts[id] = t
		}
		for _, p := range c {
			if ok && p == t.Path {
				break
			}
			if tf := l.text.Files[p]; tf != nil && tf.Problem != "" {
				problems[id] = append(problems[id], Skipped{File: l.textName(p), Reason: tf.Problem})
			}
		}
	}
	r.mu.Unlock()
	l.mu.Lock()
	l.texts, l.pending, l.textProblems, l.textTotal = texts, pending, problems, len(r.candidates)
	l.mu.Unlock()
	if l.published != nil {
		l.published(len(pending))
	}
}
