package library

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
)

// The full texts' passages: each file's text stored once under its digest (texts/,
// textstore.go), and an index of every reference's passages (bleve shards in
// bleve-passages/, the text analysed as the references' abstracts are, nothing stored),
// brought up to date by Refresh for the references whose text changed.

// passageMapping indexes a passage's words and stores nothing: the texts are in texts/,
// and a search bounded by years filters the passages by their references' years, which
// the library holds (a numeric field would index a dozen terms a passage).
func passageMapping() *mapping.IndexMappingImpl {
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store, text.IncludeTermVectors, text.IncludeInAll, text.DocValues = false, false, false, false
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("text", text)
	return bm25Mapping(doc)
}

type passageDoc struct {
	Text string `json:"text"`
}

func (l *Library) textStatePath() string { return filepath.Join(l.indexDir, "fulltext.json") }

// openTexts opens the passage index and the state of the full texts, or starts them
// again (the texts already stored are not read again: only indexed).
func (l *Library) openTexts() error {
	l.text = textState{Version: textStateVersion, Files: map[string]*textFile{}, Indexed: map[string]indexedDoc{}}
	b, err := os.ReadFile(l.textStatePath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("full-text state: %w", err)
	}
	var st textState
	loaded := err == nil && json.Unmarshal(b, &st) == nil && st.Version == textStateVersion && st.Files != nil && st.Indexed != nil
	if loaded {
		l.text = st
	}
	dir := filepath.Join(l.indexDir, "bleve-passages")
	// Without the state that says what it holds (none, or one of another version), the
	// passage index is started again too: it would hold passages no text has any more.
	if shards, err := openShards(dir); err == nil && loaded {
		l.pshards = shards
	} else {
		if err == nil {
			closeAll(shards)
		}
		l.text.Indexed = map[string]indexedDoc{}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if l.pshards, err = createShardsWith(dir, passageMapping()); err != nil {
			return err
		}
	}
	l.pidx = bleve.NewIndexAlias(l.pshards...)
	if a, ok := l.pidx.(interface {
		SetIndexMapping(mapping.IndexMapping) error
	}); ok {
		a.SetIndexMapping(passageMapping())
	}
	return nil
}

func (l *Library) saveTextState() error {
	b, err := json.Marshal(l.text)
	if err != nil {
		return err
	}
	tmp := l.textStatePath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, l.textStatePath())
}

// refreshTexts finds each reference's full text, reads the files that are new or changed
// (in workers, indexing and publishing what they read as they go: reading.go), and says
// what it skipped. ready, if not nil, is called once the texts indexed already are
// published, before any file is read: from then on the library answers.
func (l *Library) refreshTexts(ctx context.Context, refs []Reference, ch *Changes, ready func()) error {
	candidates, loose, skipped := l.textCandidates(refs)
	r := &textRun{l: l, candidates: candidates, ch: ch, tried: map[string]bool{}, reading: map[string]chan struct{}{},
		texts: map[string]Text{}, decided: map[string]bool{}}
	slow := r.quick()
	isSlow := make(map[string]bool, len(slow))
	for _, id := range slow {
		isSlow[id] = true
	}
	// Decided at once: a reference whose text is indexed as it is now is published now;
	// one whose index entry is not its text (a text stored but not indexed, or none now)
	// is indexed with the first batch.
	var waiting []string
	for id := range candidates {
		if isSlow[id] {
			continue
		}
		if l.text.Indexed[id].Digest != r.texts[id].Digest {
			waiting = append(waiting, id)
		} else {
			r.decided[id] = true
		}
	}
	slices.Sort(waiting)
	r.publish()
	if ready != nil {
		ready()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan choice)
	go r.work(ctx, slow, results)
	if err := r.collect(results, waiting); err != nil {
		cancel()
		for range results { // the workers end
		}
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // the library is closing
	}
	if r.failed != nil {
		return r.failed
	}
	return r.finish(loose, skipped)
}

// finish drops the passages of references that have no full text any more, forgets the
// files no reference has, and says what was skipped.
func (r *textRun) finish(loose []string, skipped []Skipped) error {
	l := r.l
	b := newShardBatches(l.pshards, passageBatch/shards, "index passages")
	for id := range l.text.Indexed {
		if _, ok := r.candidates[id]; !ok {
			r.drop(b, id)
			r.ch.TextsRemoved++
		}
	}
	if err := b.flush(); err != nil {
		return err
	}
	for p := range r.tried {
		if tf := l.text.Files[p]; tf != nil && tf.Problem != "" {
			skipped = append(skipped, Skipped{File: l.textName(p), Reason: tf.Problem})
		}
	}
	for _, p := range loose {
		skipped = append(skipped, Skipped{File: l.textName(p), Reason: "a full text no reference claims: name it in its reference's file field, or name it (or its folder) by the reference's citation key or DOI"})
	}
	for p := range l.text.Files { // files gone, or no longer anyone's
		if !r.tried[p] {
			delete(l.text.Files, p)
			r.changed = true
		}
	}
	slices.Sort(r.ch.Texts)
	if r.changed || len(r.ch.Texts) > 0 {
		if err := l.saveTextState(); err != nil {
			return err
		}
		l.pruneTexts()
	}
	slices.SortFunc(skipped, func(a, b Skipped) int { return strings.Compare(a.File, b.File) })
	l.mu.Lock()
	l.textSkipped = skipped
	l.mu.Unlock()
	return nil
}

// drop takes a reference's passages out of the index.
func (r *textRun) drop(b *shardBatches, id string) {
	i := shardOf(id)
	for _, place := range r.l.text.Indexed[id].IDs {
		if pid, ok := placeIn(id, place); ok { // apply indexes no other
			b.delete(i, pid.String())
		}
	}
	delete(r.l.text.Indexed, id)
	r.changed = true
}

// apply indexes the passages of the references of batch whose text changed, drops those
// of the ones left without a text, saves the state (a server stopped midway starts again
// from there) and publishes them.
func (r *textRun) apply(batch []string) error {
	l := r.l
	b := newShardBatches(l.pshards, passageBatch/shards, "index passages")
	for _, id := range batch {
		t, has := r.texts[id]
		old, indexed := l.text.Indexed[id]
		if has && indexed && old.Digest == t.Digest {
			continue
		}
		if indexed {
			r.drop(b, id)
			if !has {
				r.ch.TextsRemoved++
			}
		}
		if !has {
			continue
		}
		doc, ok := l.storedText(t.Digest)
		if !ok {
			r.mu.Lock()
			delete(l.text.Files, t.Path) // its text is gone from the store: read it again next time
			r.mu.Unlock()
			delete(r.texts, id)
			continue
		}
		i := shardOf(id)
		pids := make([]string, 0, len(doc.Passages))
		for _, p := range doc.Passages {
			pid, ok := passageID(id, p)
			if !ok {
				return fmt.Errorf("index passages of %s: passage %q has no place", id, p.ID)
			}
			if err := b.index(i, pid.String(), passageDoc{Text: p.Text}); err != nil {
				return fmt.Errorf("index passages of %s: %w", id, err)
			}
			pids = append(pids, p.ID)
		}
		l.text.Indexed[id] = indexedDoc{Digest: t.Digest, IDs: pids}
		r.ch.TextsIndexed++
		r.changed = true
	}
	if err := b.flush(); err != nil {
		return err
	}
	for _, id := range batch {
		r.decided[id] = true
	}
	if r.changed {
		r.mu.Lock()
		err := l.saveTextState()
		r.mu.Unlock()
		if err != nil {
			return err
		}
	}
	r.publish()
	return nil
}

// passageBatch is how many passages go into the index at once: passages are short, and
// larger batches make fewer segments for bleve to merge.
const passageBatch = 20000

// pruneTexts removes the stored texts no file has any more.
func (l *Library) pruneTexts() {
	keep := map[string]bool{}
	for _, tf := range l.text.Files {
		keep[tf.Digest] = true
	}
	entries, _ := os.ReadDir(l.textsDir())
	for _, e := range entries {
		if d, ok := strings.CutSuffix(e.Name(), ".txt"); ok && !keep[d] {
			os.Remove(filepath.Join(l.textsDir(), e.Name()))
		}
	}
}
