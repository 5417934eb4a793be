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

	"github.com/cosci-dev/cosci/internal/fulltext"
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
	if err == nil && json.Unmarshal(b, &st) == nil && st.Version == textStateVersion && st.Files != nil && st.Indexed != nil {
		l.text = st
	}
	dir := filepath.Join(l.indexDir, "bleve-passages")
	if shards, err := openShards(dir); err == nil {
		l.pshards = shards
	} else {
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

// refreshTexts finds each reference's full text, reads the files that changed, indexes
// the passages of the references whose text changed, and says what it skipped.
func (l *Library) refreshTexts(refs []Reference, ch *Changes) error {
	candidates, loose, skipped := l.textCandidates(refs)
	chosen := map[string]string{}
	tried := map[string]bool{}
	next := map[string]int{}
	for {
		var paths []string
		for id, c := range candidates {
			if _, done := chosen[id]; done || next[id] >= len(c) {
				continue
			}
			if p := c[next[id]]; !tried[p] && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
		read, err := l.readTexts(context.Background(), paths)
		if err != nil {
			return err
		}
		ch.Texts = append(ch.Texts, read...)
		for _, p := range paths {
			tried[p] = true
		}
		// Each reference takes its candidate if it read, else goes on to its next.
		progress := false
		for id, c := range candidates {
			if _, done := chosen[id]; done || next[id] >= len(c) || !tried[c[next[id]]] {
				continue
			}
			progress = true
			if tf := l.text.Files[c[next[id]]]; tf != nil && tf.Problem == "" && tf.Digest != "" {
				chosen[id] = c[next[id]]
			} else {
				next[id]++
			}
		}
		if !progress {
			break
		}
	}
	for p := range tried {
		if tf := l.text.Files[p]; tf != nil && tf.Problem != "" {
			skipped = append(skipped, Skipped{File: l.textName(p), Reason: tf.Problem})
		}
	}
	for _, p := range loose {
		skipped = append(skipped, Skipped{File: l.textName(p), Reason: "a full text no reference claims: name it in its reference's file field, or name it (or its folder) by the reference's citation key or DOI"})
	}
	for p := range l.text.Files { // files gone, or no longer anyone's
		if !tried[p] {
			delete(l.text.Files, p)
		}
	}
	texts := map[string]Text{}
	for id, p := range chosen {
		tf := l.text.Files[p]
		texts[id] = Text{Path: p, Name: l.textName(p), Digest: tf.Digest, Kind: fulltext.KindOf(p), Pages: tf.Pages, NoText: tf.NoText, Count: tf.Passages}
	}
	changed, err := l.reindexTexts(texts, ch)
	if err != nil {
		return err
	}
	if changed || len(ch.Texts) > 0 {
		if err := l.saveTextState(); err != nil {
			return err
		}
		l.pruneTexts()
	}
	slices.SortFunc(skipped, func(a, b Skipped) int { return strings.Compare(a.File, b.File) })
	l.mu.Lock()
	l.texts, l.textSkipped = texts, skipped
	l.mu.Unlock()
	return nil
}

// reindexTexts brings the passage index to texts: the passages of each reference whose
// text changed indexed again, those of references without a text any more deleted.
func (l *Library) reindexTexts(texts map[string]Text, ch *Changes) (bool, error) {
	b := newShardBatches(l.pshards, passageBatch/shards, "index passages")
	changed := false
	drop := func(id string) {
		i := shardOf(id)
		for _, pid := range l.text.Indexed[id].IDs {
			b.delete(i, id+"#"+pid)
		}
		delete(l.text.Indexed, id)
		changed = true
	}
	for id := range l.text.Indexed {
		if _, ok := texts[id]; !ok {
			drop(id)
			ch.TextsRemoved++
		}
	}
	ids := make([]string, 0, len(texts))
	for id := range texts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		t := texts[id]
		if old, ok := l.text.Indexed[id]; ok && old.Digest == t.Digest {
			continue
		}
		doc, ok := l.storedText(t.Digest)
		if !ok {
			delete(l.text.Files, t.Path) // its text is gone from the store: read it again next time
			continue
		}
		if _, had := l.text.Indexed[id]; had {
			drop(id)
		}
		i := shardOf(id)
		var pids []string
		for _, p := range doc.Passages {
			if err := b.index(i, id+"#"+p.ID, passageDoc{Text: p.Text}); err != nil {
				return changed, fmt.Errorf("index passages of %s: %w", id, err)
			}
			pids = append(pids, p.ID)
		}
		l.text.Indexed[id] = indexedDoc{Digest: t.Digest, IDs: pids}
		ch.TextsIndexed++
		changed = true
	}
	return changed, b.flush()
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
