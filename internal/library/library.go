package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/fulltext"
)

// A Library is a folder (or one file) of reference exports and the full-text index of
// its references. The index lives on disk, in a directory of its own, and follows the
// folder: Refresh reads the files that changed since it last looked, merges the
// duplicates again, and indexes only the references that changed. It is safe for
// concurrent use.
//
// Ranked search is bleve's (BM25 over titles, abstracts, authors, keywords and venues, an
// English analyzer with stemming); the library keeps the references themselves in memory,
// so a search returns their details without reading documents back from the index. The
// index is split into shards by id, searched at once through a bleve alias (which takes
// BM25's statistics over all of them in a small library, so the ranking is that of one
// index): a search of a large library reads every posting of its words, and shards spread
// that over the cores.
type Library struct {
	path, indexDir string
	logger         *slog.Logger
	limits         Limits
	shards         []bleve.Index
	idx            bleve.IndexAlias // searches every shard
	analyzer       func(string) []string

	refresh sync.Mutex // one Refresh at a time
	files   map[string]*fileState
	indexed map[string]string // id -> hash of the reference as indexed

	mu      sync.RWMutex // guards what searches read
	refs    map[string]Reference
	list    []Reference       // the references, in id order
	byKey   map[string]string // lower-case citation key -> id
	skipped []Skipped

	// Full texts (fulltexts.go, textindex.go).
	reader      fulltext.Reader
	textDirs    []string // --fulltext folders, absolute
	text        textState
	pshards     []bleve.Index
	pidx        bleve.IndexAlias // searches every passage shard
	texts       map[string]Text  // by reference id; guarded by mu
	textSkipped []Skipped        // guarded by mu
	cacheMu     sync.Mutex
	headers     map[string]cachedHeader // stored texts' headers, by digest

	// Reading the full texts while the library answers (reading.go).
	pending      map[string]string    // guarded by mu: references whose text is being read -> its file
	textProblems map[string][]Skipped // guarded by mu: by reference, its files that could not be read
	textTotal    int                  // guarded by mu: references with a full-text file
	ctx          context.Context      // ends at Close: a file being read is given up
	stop         context.CancelFunc
	published    func(pending int) // tests: called after each publication
	digests      atomic.Int64      // files whose digest was taken: tests see the size-and-time check
}

// Options are how a library is opened: the caps on what it reads, and where else its
// full texts are.
type Options struct {
	Limits Limits
	// Texts are folders of full texts besides the library's own, each file (or folder)
	// named by its reference's citation key or DOI.
	Texts []string
	// PDFText is the pdftotext to run ("": the one on PATH).
	PDFText string
	// Background: open returns once the references are indexed and the full texts
	// indexed before are published; the files new or changed since are read after, while
	// the library answers (searches say how many are still being read), and OnTexts is
	// called when they are. Without it, open returns when every full text is read.
	Background bool
	OnTexts    func(Changes, error)

	published func(pending int) // tests: called after each publication of the full texts
}

// fileState is what the library knows of one export file.
type fileState struct {
	size    int64
	mod     time.Time
	hash    string
	refs    []Reference
	skipped []Skipped
}

// Formats are the export files a library reads, by extension, and their parsers.
var Formats = map[string]func(Limits, []byte, string) ([]Reference, []Skipped){
	".bib": Limits.ParseBibTeX, ".bibtex": Limits.ParseBibTeX, ".ris": Limits.ParseRIS, ".json": Limits.ParseCSL, ".csl": Limits.ParseCSL,
}

// DefaultIndexDir is where a library's index goes when none is named: under the user's
// cache, one directory per library (an export folder may be read-only, or synced).
func DefaultIndexDir(libraryPath string) (string, error) {
	abs, err := filepath.Abs(libraryPath)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the index (%v); name one with --index", err)
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cache, "cosci", "literature", hex.EncodeToString(sum[:8])), nil
}

// Open opens the library at path (a folder of exports, or one file) with its index in
// indexDir, creating the index if there is none, and brings it up to date. It reads the
// exports within DefaultLimits.
func Open(path, indexDir string, logger *slog.Logger) (*Library, error) {
	return OpenWithLimits(path, indexDir, logger, DefaultLimits())
}

// OpenWithLimits is Open, reading the exports within lim (its zero fields: the defaults).
func OpenWithLimits(path, indexDir string, logger *slog.Logger, lim Limits) (*Library, error) {
	return OpenWith(path, indexDir, logger, Options{Limits: lim})
}

// OpenWith is Open with options.
func OpenWith(path, indexDir string, logger *slog.Logger, opts Options) (*Library, error) {
	lim := opts.Limits
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("library %s: %w", path, err)
	}
	// The index holds the library's texts: its user's alone. Bleve makes its folders 0700
	// and most files 0600, but its meta file after the umask; behind this 0700 folder no
	// other user reaches it. An index an earlier version made 0755 is closed too.
	if err := os.MkdirAll(indexDir, 0o700); err != nil {
		return nil, fmt.Errorf("index directory: %w", err)
	}
	if err := os.Chmod(indexDir, 0o700); err != nil {
		return nil, fmt.Errorf("index directory: %w", err)
	}
	l := &Library{path: path, indexDir: indexDir, logger: logger, limits: lim.orDefaults(), files: map[string]*fileState{}, indexed: map[string]string{},
		headers: map[string]cachedHeader{}, published: opts.published}
	l.ctx, l.stop = context.WithCancel(context.Background())
	l.reader = fulltext.Reader{PDFTextPath: opts.PDFText, Limits: fulltext.Limits{
		FileBytes: l.limits.FileBytes, Timeout: l.limits.TextTimeout, MemoryBytes: l.limits.TextMemory}}
	for _, d := range opts.Texts {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if info, err := os.Stat(abs); err != nil || !info.IsDir() {
			return nil, fmt.Errorf("full texts %s: not a folder", d)
		}
		l.textDirs = append(l.textDirs, abs)
	}
	st, err := l.loadState()
	if err != nil {
		return nil, err
	}
	bleveDir := filepath.Join(indexDir, "bleve")
	if st.Version == stateVersion {
		if l.shards, err = openShards(bleveDir); err == nil {
			l.indexed = st.Indexed
		}
	}
	if l.shards == nil {
		// No index, or one of another version: start again.
		if err := os.RemoveAll(bleveDir); err != nil {
			return nil, err
		}
		if l.shards, err = createShards(bleveDir); err != nil {
			return nil, err
		}
	}
	m := indexMapping()
	l.idx = bleve.NewIndexAlias(l.shards...)
	if a, ok := l.idx.(interface {
		SetIndexMapping(mapping.IndexMapping) error
	}); ok {
		a.SetIndexMapping(m) // for BM25's statistics over all the shards (globalStatsBelow)
	}
	if err := l.openTexts(); err != nil {
		closeAll(l.shards)
		return nil, err
	}
	analyzer := m.AnalyzerNamed(en.AnalyzerName)
	l.analyzer = func(s string) []string {
		var terms []string
		for _, tok := range analyzer.Analyze([]byte(s)) {
			terms = append(terms, string(tok.Term))
		}
		return terms
	}
	if opts.Background {
		if err := l.openInBackground(opts.OnTexts); err != nil {
			l.Close()
			return nil, err
		}
		return l, nil
	}
	if _, err := l.Refresh(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// openInBackground indexes the references, publishes the full texts indexed before, and
// returns, reading the rest in the background (holding the refresh lock until it is done).
// What must be ready before the library answers is the references: a fetch or a cited id
// checked against an index still being built would be told "no such reference", which a
// model takes as a fact, where a passage still being read is said to be. The references
// of even a large library index in seconds (BENCHMARKS.md), and again with nothing changed
// in milliseconds; a full text may take up to --fulltext-timeout, and a first open of
// thousands of PDFs minutes.
func (l *Library) openInBackground(done func(Changes, error)) error {
	l.refresh.Lock()
	ch, refs, err := l.refreshExports()
	if err != nil {
		l.refresh.Unlock()
		return err
	}
	ready := make(chan struct{})
	var once sync.Once
	go func() {
		err := l.refreshTexts(l.ctx, refs, &ch, func() { once.Do(func() { close(ready) }) })
		once.Do(func() { close(ready) })
		l.summarise(&ch)
		l.refresh.Unlock()
		if done != nil {
			done(ch, err)
		}
	}()
	<-ready
	return nil
}

// Close closes the index, giving up the full texts being read.
func (l *Library) Close() error {
	l.stop()
	l.refresh.Lock() // the reading in the background ends
	defer l.refresh.Unlock()
	l.idx.Close()
	l.pidx.Close()
	return errors.Join(closeAll(l.shards), closeAll(l.pshards))
}

// Len is how many references the library holds.
func (l *Library) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.refs)
}

// Skipped is what the last Refresh could not use, and why: entries, files, duplicates,
// full texts.
func (l *Library) Skipped() []Skipped {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return append(slices.Clone(l.skipped), l.textSkipped...)
}

// Texts is how many references have a full text.
func (l *Library) Texts() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.texts)
}

// Get returns the reference an id names: a DOI (in any case, with or without a resolver
// prefix) or a citation key.
func (l *Library) Get(id string) (Reference, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	id = strings.TrimSpace(id)
	if doi := citation.NormalDOI(id); doi != "" {
		if r, ok := l.refs[doi]; ok {
			return r, true
		}
	}
	if r, ok := l.refs[id]; ok {
		return r, true
	}
	if rid, ok := l.byKey[strings.ToLower(id)]; ok {
		return l.refs[rid], true
	}
	return Reference{}, false
}
