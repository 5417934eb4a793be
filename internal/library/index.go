package library

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
)

// The library's full-text index: bleve shards by id, their mapping, and the state file
// that says which references (by hash) the index holds, so a Refresh indexes only what
// changed.

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

func createShards(dir string) ([]bleve.Index, error) { return createShardsWith(dir, indexMapping()) }

func createShardsWith(dir string, m mapping.IndexMapping) ([]bleve.Index, error) {
	var out []bleve.Index
	for i := range shards {
		idx, err := bleve.New(filepath.Join(dir, strconv.Itoa(i)), m)
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
	return bm25Mapping(doc)
}

// bm25Mapping is an index of documents mapped as doc, English text, scored by BM25, and
// nothing indexed or stored that doc does not name.
func bm25Mapping(doc *mapping.DocumentMapping) *mapping.IndexMappingImpl {
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

// reindexBatch is how many references go into the index at once.
const reindexBatch = 2000

// reindex indexes what changed between the references indexed and refs, in batches,
// then saves which references the index holds.
func (l *Library) reindex(refs []Reference, ch *Changes) error {
	b := newShardBatches(l.shards, reindexBatch/shards, "index")
	now := map[string]bool{}
	for _, r := range refs {
		now[r.ID] = true
		h := hashOf(r)
		old, had := l.indexed[r.ID]
		if had && old == h {
			continue
		}
		if err := b.index(shardOf(r.ID), r.ID, documentOf(r)); err != nil {
			return fmt.Errorf("index %s: %w", r.ID, err)
		}
		l.indexed[r.ID] = h
		if had {
			ch.Updated++
		} else {
			ch.Added++
		}
	}
	for id := range l.indexed {
		if !now[id] {
			b.delete(shardOf(id), id)
			delete(l.indexed, id)
			ch.Removed++
		}
	}
	if err := b.flush(); err != nil {
		return err
	}
	if ch.Added+ch.Updated+ch.Removed == 0 {
		return nil
	}
	return l.saveState()
}

// shardBatches are a batch for each shard of an index, each written to its shard when
// it holds size documents, and all of them by flush.
type shardBatches struct {
	shards  []bleve.Index
	batches []*bleve.Batch
	size    int
	what    string // for errors: "index", "index passages"
}

func newShardBatches(shards []bleve.Index, size int, what string) *shardBatches {
	b := &shardBatches{shards: shards, size: size, what: what}
	for _, s := range shards {
		b.batches = append(b.batches, s.NewBatch())
	}
	return b
}

func (b *shardBatches) index(shard int, id string, doc any) error {
	if err := b.batches[shard].Index(id, doc); err != nil {
		return err
	}
	if b.batches[shard].Size() >= b.size {
		return b.flushOne(shard)
	}
	return nil
}

func (b *shardBatches) delete(shard int, id string) { b.batches[shard].Delete(id) }

func (b *shardBatches) flushOne(i int) error {
	if b.batches[i].Size() == 0 {
		return nil
	}
	if err := b.shards[i].Batch(b.batches[i]); err != nil {
		return fmt.Errorf("%s: %w", b.what, err)
	}
	b.batches[i].Reset()
	return nil
}

func (b *shardBatches) flush() error {
	for i := range b.batches {
		if err := b.flushOne(i); err != nil {
			return err
		}
	}
	return nil
}

func hashOf(r Reference) string {
	b, _ := json.Marshal(documentOf(r))
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}
