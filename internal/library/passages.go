package library

import (
	"context"
	"fmt"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/cosci-dev/cosci/internal/fulltext"
	"github.com/cosci-dev/cosci/internal/passage"
)

// Passages of the full texts: the best for a search, and those a fetch asks for (one by
// its id, a page, a section).

// PassageHit is a passage a search found, with its reference.
type PassageHit struct {
	Reference
	PassageID passage.ID       // the passage's id: its reference's id and its place
	Passage   fulltext.Passage // its ID is its place in the text, as the extractor gave it ("p7.2")
	File      string           // the full text's file, as the library names it
	Score     float64
}

// perSource is how many passages of one reference a search gives at most, so that one
// long paper does not fill the results.
const perSource = 2

// globalPassagesBelow is the passage count under which a passage search takes BM25's
// statistics over all shards (see globalStatsBelow).
const globalPassagesBelow = 50000

// passageID is the id of a passage of the reference source's text: the place the
// extractor gave it, in that source. ok is false for a place that is not one (a text
// stored by an older extractor would have to be read again).
func passageID(source string, p fulltext.Passage) (passage.ID, bool) { return placeIn(source, p.ID) }

// placeIn is the id of the passage at place ("p7.2") of the reference source's text.
func placeIn(source, place string) (passage.ID, bool) {
	id, err := passage.Parse(place)
	return id.In(source), err == nil && id.Source == ""
}

// searchPassages finds the best passages: first those that hold every word of the query
// (ranked by BM25), then, when they are too few, those that hold some. Most queries name
// what a passage must hold, and the first search is also the cheap one: the words' postings
// intersected, where a passage holding any word of a query of common words would make
// bleve score most of the library.
func (l *Library) searchPassages(ctx context.Context, text string, q Query) ([]PassageHit, error) {
	l.mu.RLock()
	n := 0
	for _, t := range l.texts {
		n += t.Count
	}
	l.mu.RUnlock()
	if n == 0 {
		return nil, nil
	}
	if n < globalPassagesBelow {
		ctx = context.WithValue(ctx, bsearch.SearchTypeKey, bsearch.GlobalScoring)
	}
	want := q.Passages * 3
	if q.YearFrom > 0 || q.YearTo > 0 {
		want = q.Passages * 20 // filtered by year below
	}
	var hits bsearch.DocumentMatchCollection
	seen := map[string]bool{}
	for _, op := range []query.MatchQueryOperator{query.MatchQueryOperatorAnd, query.MatchQueryOperatorOr} {
		m := bleve.NewMatchQuery(text)
		m.SetField("text")
		m.SetOperator(op)
		res, err := l.pidx.SearchInContext(ctx, bleve.NewSearchRequestOptions(m, want, 0, false))
		if err != nil {
			return nil, fmt.Errorf("search the full texts: %w", err)
		}
		for _, h := range res.Hits {
			if !seen[h.ID] {
				seen[h.ID] = true
				hits = append(hits, h)
			}
		}
		if len(hits) >= want {
			break
		}
	}
	var out []PassageHit
	per := map[string]int{}
	for _, h := range hits {
		if len(out) == q.Passages {
			break
		}
		id, err := passage.Parse(h.ID) // the index's key is the passage's id
		source := id.Source
		if err != nil || per[source] == perSource {
			continue
		}
		l.mu.RLock()
		r, ok := l.refs[source]
		t, has := l.texts[source]
		l.mu.RUnlock()
		if !ok || !has || q.YearFrom > 0 && r.Year < q.YearFrom || q.YearTo > 0 && (r.Year == 0 || r.Year > q.YearTo) {
			continue
		}
		p, ok := l.passage(t.Digest, id)
		if !ok {
			continue // changed since: the next Refresh indexes it again
		}
		out = append(out, PassageHit{Reference: r, PassageID: id.In(r.ID), Passage: p, File: t.Name, Score: h.Score})
		per[source]++
	}
	return out, nil
}

// textOf is a reference, what the library knows of its full text, and the text.
func (l *Library) textOf(id string) (Reference, Text, fulltext.Document, bool) {
	l.mu.RLock()
	r, ok := l.refs[id]
	t, has := l.texts[id]
	l.mu.RUnlock()
	if !ok || !has {
		return r, t, fulltext.Document{}, false
	}
	doc, ok := l.storedText(t.Digest)
	return r, t, doc, ok
}

// FullText is a reference's full text, by its id (a DOI in any form, or a citation key):
// what the library knows of it and its passages. ok is false when it has none.
func (l *Library) FullText(id string) (Reference, Text, fulltext.Document, bool) {
	r, found := l.Get(id)
	if !found {
		return r, Text{}, fulltext.Document{}, false
	}
	_, t, doc, ok := l.textOf(r.ID)
	return r, t, doc, ok
}
