package library

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
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
	byKey   map[string]string // lower-case citation key -> id
	skipped []Skipped
}

// fileState is what the library knows of one export file.
type fileState struct {
	size    int64
	mod     time.Time
	hash    string
	refs    []Reference
	skipped []Skipped
}

// state is what the index directory keeps beside bleve's index: which references it holds.
type state struct {
	Version int               `json:"version"`
	Library string            `json:"library"`
	Indexed map[string]string `json:"indexed"`
}

const stateVersion = 3 // 2: BM25 scoring; 3: shards

// shards is how many shards the index has. Two or more halve a large library's search
// time on two cores or more (BenchmarkLibrary); four leave room for larger machines
// without costing a small library anything it would notice.
const shards = 4

// globalStatsBelow is the library size under which a search first gathers BM25's
// statistics (document counts, field lengths, term frequencies) over all the shards, a
// second pass over the query's postings: a shard of a small library is too small a
// sample to rank by alone. Above it each shard holds thousands of references drawn at
// random by id, whose statistics are those of the whole to within a percent.
const globalStatsBelow = 20000

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
	l := &Library{path: path, indexDir: indexDir, logger: logger, limits: lim.orDefaults(), files: map[string]*fileState{}, indexed: map[string]string{}}
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
	analyzer := m.AnalyzerNamed(en.AnalyzerName)
	l.analyzer = func(s string) []string {
		var terms []string
		for _, tok := range analyzer.Analyze([]byte(s)) {
			terms = append(terms, string(tok.Term))
		}
		return terms
	}
	if _, err := l.Refresh(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func openShards(dir string) ([]bleve.Index, error) {
	var out []bleve.Index
	for i := range shards {
		idx, err := bleve.Open(filepath.Join(dir, strconv.Itoa(i)))
		if err != nil {
			closeAll(out)
			return nil, err
		}
		out = append(out, idx)
	}
	return out, nil
}

func createShards(dir string) ([]bleve.Index, error) {
	var out []bleve.Index
	for i := range shards {
		idx, err := bleve.New(filepath.Join(dir, strconv.Itoa(i)), indexMapping())
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("create the index in %s: %w", dir, err)
		}
		out = append(out, idx)
	}
	return out, nil
}

func closeAll(idx []bleve.Index) error {
	var errs []error
	for _, i := range idx {
		errs = append(errs, i.Close())
	}
	return errors.Join(errs...)
}

// shardOf is the shard that holds a reference: always the same for an id.
func shardOf(id string) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % shards)
}

// Close closes the index.
func (l *Library) Close() error {
	l.idx.Close()
	return closeAll(l.shards)
}

// indexMapping indexes a reference's words for ranking and keeps nothing else: the
// library holds the references, so nothing is stored, and no term vectors are made.
func indexMapping() *mapping.IndexMappingImpl {
	text := func() *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = en.AnalyzerName
		f.Store, f.IncludeTermVectors, f.IncludeInAll, f.DocValues = false, false, false, false
		return f
	}
	doc := bleve.NewDocumentStaticMapping()
	for _, field := range []string{"title", "abstract", "authors", "keywords", "venue"} {
		doc.AddFieldMappingsAt(field, text())
	}
	year := bleve.NewNumericFieldMapping()
	year.Store, year.IncludeInAll, year.DocValues = false, false, false
	doc.AddFieldMappingsAt("year", year)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = en.AnalyzerName
	m.StoreDynamic, m.IndexDynamic, m.DocValuesDynamic = false, false, false
	m.ScoringModel = index.BM25Scoring
	return m
}

// document is what the index holds of a reference.
type document struct {
	Title    string  `json:"title"`
	Abstract string  `json:"abstract"`
	Authors  string  `json:"authors"`
	Keywords string  `json:"keywords"`
	Venue    string  `json:"venue"`
	Year     float64 `json:"year,omitempty"`
}

func documentOf(r Reference) document {
	return document{Title: r.Title, Abstract: r.Abstract, Authors: strings.Join(r.Authors, "; "),
		Keywords: strings.Join(r.Keywords, "; "), Venue: r.Venue, Year: float64(r.Year)}
}

func (l *Library) statePath() string { return filepath.Join(l.indexDir, "state.json") }

func (l *Library) loadState() (state, error) {
	var st state
	b, err := os.ReadFile(l.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("index state: %w", err)
	}
	if json.Unmarshal(b, &st) != nil || st.Indexed == nil {
		return state{}, nil // unreadable: the index is rebuilt
	}
	return st, nil
}

func (l *Library) saveState() error {
	b, err := json.Marshal(state{Version: stateVersion, Library: l.path, Indexed: l.indexed})
	if err != nil {
		return err
	}
	tmp := l.statePath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, l.statePath())
}

// Changes is what a Refresh found.
type Changes struct {
	Files            []string // export files read again (new or changed) or gone
	Added, Updated   int      // references indexed anew, or again
	Removed          int      // references no longer in any file
	References       int      // in the library now
	Skipped          []Skipped
	IndexedInSeconds float64
}

// Any says whether anything changed.
func (c Changes) Any() bool { return len(c.Files) > 0 || c.Added+c.Updated+c.Removed > 0 }

// Refresh reads the export files that are new or changed since the last look, forgets
// those that are gone, and brings the index up to date. A file that cannot be read is
// reported (in Skipped, with the reason) and keeps what was read of it before.
func (l *Library) Refresh() (Changes, error) {
	l.refresh.Lock()
	defer l.refresh.Unlock()
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
		l.mu.RLock()
		ch.References, ch.Skipped = len(l.refs), l.skipped
		l.mu.RUnlock()
		return ch, nil // nothing to read again
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
		return ch, err
	}
	ch.IndexedInSeconds = time.Since(t0).Seconds()
	byID := make(map[string]Reference, len(refs))
	byKey := make(map[string]string, len(refs))
	for _, r := range refs {
		byID[r.ID] = r
		byKey[strings.ToLower(r.Key)] = r.ID
	}
	l.mu.Lock()
	l.refs, l.byKey, l.skipped = byID, byKey, skipped
	l.mu.Unlock()
	ch.References, ch.Skipped = len(refs), skipped
	return ch, nil
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

// reindexBatch is how many references go into the index at once.
const reindexBatch = 2000

// reindex indexes what changed between the references indexed and refs, in batches,
// then saves which references the index holds.
func (l *Library) reindex(refs []Reference, ch *Changes) error {
	batches := make([]*bleve.Batch, len(l.shards))
	for i, s := range l.shards {
		batches[i] = s.NewBatch()
	}
	flushOne := func(i int) error {
		if batches[i].Size() == 0 {
			return nil
		}
		if err := l.shards[i].Batch(batches[i]); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		batches[i].Reset()
		return nil
	}
	flush := func() error {
		for i := range batches {
			if err := flushOne(i); err != nil {
				return err
			}
		}
		return nil
	}
	now := map[string]bool{}
	for _, r := range refs {
		now[r.ID] = true
		h := hashOf(r)
		old, had := l.indexed[r.ID]
		if had && old == h {
			continue
		}
		i := shardOf(r.ID)
		if err := batches[i].Index(r.ID, documentOf(r)); err != nil {
			return fmt.Errorf("index %s: %w", r.ID, err)
		}
		l.indexed[r.ID] = h
		if had {
			ch.Updated++
		} else {
			ch.Added++
		}
		if batches[i].Size() >= reindexBatch/shards {
			if err := flushOne(i); err != nil {
				return err
			}
		}
	}
	for id := range l.indexed {
		if !now[id] {
			batches[shardOf(id)].Delete(id)
			delete(l.indexed, id)
			ch.Removed++
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if ch.Added+ch.Updated+ch.Removed == 0 {
		return nil
	}
	return l.saveState()
}

func hashOf(r Reference) string {
	b, _ := json.Marshal(documentOf(r))
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// Len is how many references the library holds.
func (l *Library) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.refs)
}

// Skipped is what the last Refresh could not use, and why: entries, files, duplicates.
func (l *Library) Skipped() []Skipped {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return slices.Clone(l.skipped)
}

// Get returns the reference an id names: a DOI (in any case, with or without a resolver
// prefix) or a citation key.
func (l *Library) Get(id string) (Reference, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	id = strings.TrimSpace(id)
	if doi := NormalDOI(id); doi != "" {
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

// Query is a search.
type Query struct {
	Text             string
	Limit            int // 1 to MaxLimit; 0 means DefaultLimit
	YearFrom, YearTo int // 0: no bound
}

// Search limits.
const (
	DefaultLimit = 10
	MaxLimit     = 50
	snippetMax   = 300
)

// Hit is one search result.
type Hit struct {
	Reference
	Score   float64
	Snippet string // the abstract's passage that best matches the query, word for word
}

// Results are a search's best hits and how many references matched.
type Results struct {
	Total int
	Hits  []Hit
}

// Search ranks the references by how well their titles (most), keywords, authors,
// abstracts and venues match the query's words, in any order; the text is words, never a
// query language, so any input is a plain search.
func (l *Library) Search(ctx context.Context, q Query) (Results, error) {
	text := strings.TrimSpace(q.Text)
	if text == "" {
		return Results{}, errors.New("the query is empty: say what to look for")
	}
	if q.Limit == 0 {
		q.Limit = DefaultLimit
	}
	if q.Limit < 1 || q.Limit > MaxLimit {
		return Results{}, fmt.Errorf("limit %d is out of range: give 1 to %d", q.Limit, MaxLimit)
	}
	if q.YearFrom > 0 && q.YearTo > 0 && q.YearFrom > q.YearTo {
		return Results{}, fmt.Errorf("year_from %d is after year_to %d", q.YearFrom, q.YearTo)
	}
	var fields []query.Query
	for _, f := range []struct {
		name  string
		boost float64
	}{{"title", 3}, {"keywords", 2}, {"authors", 1.5}, {"abstract", 1}, {"venue", 0.5}} {
		m := bleve.NewMatchQuery(text)
		m.SetField(f.name)
		m.SetBoost(f.boost)
		fields = append(fields, m)
	}
	var search query.Query = bleve.NewDisjunctionQuery(fields...)
	if q.YearFrom > 0 || q.YearTo > 0 {
		var lo, hi *float64
		yes := true
		if q.YearFrom > 0 {
			v := float64(q.YearFrom)
			lo = &v
		}
		if q.YearTo > 0 {
			v := float64(q.YearTo)
			hi = &v
		}
		years := bleve.NewNumericRangeInclusiveQuery(lo, hi, &yes, &yes)
		years.SetField("year")
		search = bleve.NewConjunctionQuery(search, years)
	}
	l.mu.RLock()
	n := len(l.refs)
	l.mu.RUnlock()
	if n < globalStatsBelow {
		ctx = context.WithValue(ctx, bsearch.SearchTypeKey, bsearch.GlobalScoring)
	}
	res, err := l.idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(search, q.Limit, 0, false))
	if err != nil {
		return Results{}, fmt.Errorf("search: %w", err)
	}
	terms := l.analyzer(text)
	out := Results{Total: int(res.Total)}
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, h := range res.Hits {
		r, ok := l.refs[h.ID]
		if !ok {
			continue // removed since: the next Refresh deletes it from the index
		}
		out.Hits = append(out.Hits, Hit{Reference: r, Score: h.Score, Snippet: snippet(r, terms, l.analyzer)})
	}
	return out, nil
}

// snippet is the passage of a reference's abstract (or its title, if it has none) that
// holds most of the query's terms: a sentence, and the next if it is short, cut to at most
// snippetMax characters, always word for word.
func snippet(r Reference, terms []string, analyze func(string) []string) string {
	text := r.Abstract
	if text == "" {
		return r.Title
	}
	sentences := splitSentences(text)
	best, bestScore := 0, -1
	for i, s := range sentences {
		score := 0
		have := analyze(s)
		for _, t := range terms {
			if slices.Contains(have, t) {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	out := sentences[best]
	if len(out) < snippetMax/2 && best+1 < len(sentences) && len(out)+1+len(sentences[best+1]) <= snippetMax {
		out += " " + sentences[best+1]
	}
	if len(out) > snippetMax {
		cut := strings.LastIndexByte(out[:snippetMax], ' ')
		if cut < snippetMax/2 {
			cut = snippetMax
		}
		for cut > 0 && !utf8Start(out[cut]) {
			cut--
		}
		out = out[:cut]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// unwrapPath is an error's reason without the path the caller names already.
func unwrapPath(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// splitSentences splits a text after ". ", "? " and "! ", keeping each sentence whole.
func splitSentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(text); i++ {
		if (text[i] == '.' || text[i] == '?' || text[i] == '!') && text[i+1] == ' ' {
			out = append(out, strings.TrimSpace(text[start:i+1]))
			start = i + 2
		}
	}
	if rest := strings.TrimSpace(text[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

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

// References are every reference of the library, by id.
func (l *Library) References() []Reference {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]Reference, 0, len(l.refs))
	for _, r := range l.refs {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Reference) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
