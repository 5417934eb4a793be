package library

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/cosci-dev/cosci/internal/fulltext"
)

// Ranked search over the index, and the snippet of each hit.

// globalStatsBelow is the library size under which a search first gathers BM25's
// statistics (document counts, field lengths, term frequencies) over all the shards, a
// second pass over the query's postings: a shard of a small library is too small a
// sample to rank by alone. Above it each shard holds thousands of references drawn at
// random by id, whose statistics are those of the whole to within a percent.
const globalStatsBelow = 20000

// Query is a search.
type Query struct {
	Text             string
	Limit            int // 1 to MaxLimit; 0 means DefaultLimit
	YearFrom, YearTo int // 0: no bound
	// Passages is how many passages of the full texts to find: 1 to MaxPassages; 0
	// means DefaultPassages.
	Passages int
}

// Search limits.
const (
	DefaultLimit    = 10
	MaxLimit        = 50
	DefaultPassages = 5
	MaxPassages     = 20
	snippetMax      = 300
)

// Hit is one search result.
type Hit struct {
	Reference
	Score   float64
	Snippet string // the abstract's passage that best matches the query, word for word
}

// Results are a search's best hits and how many references matched, and the best
// passages of the full texts.
type Results struct {
	Total    int
	Hits     []Hit
	Passages []PassageHit
	// Reading is how many references' full texts were still being read when the search
	// began, of TextTotal with a full-text file: their passages are not among Passages.
	Reading, TextTotal int
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
	if q.Passages == 0 {
		q.Passages = DefaultPassages
	}
	if q.Passages < 1 || q.Passages > MaxPassages {
		return Results{}, fmt.Errorf("passages %d is out of range: give 1 to %d", q.Passages, MaxPassages)
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
	search := withYears(bleve.NewDisjunctionQuery(fields...), q)
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
	out.Reading, out.TextTotal = l.Reading()
	l.mu.RLock()
	for _, h := range res.Hits {
		r, ok := l.refs[h.ID]
		if !ok {
			continue // removed since: the next Refresh deletes it from the index
		}
		out.Hits = append(out.Hits, Hit{Reference: r, Score: h.Score, Snippet: snippet(r, terms, l.analyzer)})
	}
	l.mu.RUnlock()
	if out.Passages, err = l.searchPassages(ctx, text, q); err != nil {
		return Results{}, err
	}
	return out, nil
}

// withYears bounds a query to the years asked, if any.
func withYears(search query.Query, q Query) query.Query {
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
	return search
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

// splitSentences splits an abstract into its sentences by the full-text reader's rule
// (fulltext.Sentences), so a snippet and a passage agree on where a sentence ends: "et al.
// (2019)" or "Fig. 2" does not cut a snippet short.
func splitSentences(text string) []string {
	spans := fulltext.Sentences(text)
	out := make([]string, 0, len(spans)+1)
	for _, s := range spans {
		out = append(out, text[s.Start:s.End])
	}
	if len(out) == 0 {
		return []string{strings.TrimSpace(text)}
	}
	return out
}
