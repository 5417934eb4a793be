// Package citation keeps a session's citations honest. A model names a source by an id,
// quotes it, and names the claim the quote supports; Resolve ties each reference to the
// tool result that returned that id to the citing turn, and takes the bibliographic
// details from that result's record of the source, never from the model; Check later
// reads each reference's result back from the audit trail, finds the record of the cited
// id in it (a search hit, a fetched record: never the rest of the result) and compares
// the quote with that record alone (Compare).
//
// Ids match whole, per scheme (ids.go); records are read from the result shapes of cosci's
// literature server and of the services labs use (records.go).
package citation

import (
	"fmt"
	"slices"

	"github.com/cosci-dev/cosci/internal/research"
)

// Result is a tool result a citing turn saw: its record's digest and its text.
type Result struct {
	Source  string // the digest of the audit trail's record
	Content string
}

// read is a tool result read once, however many references cite it: its records, and
// (when a reference names a passage or a page, or is to be placed) its full text's
// passages.
type read struct {
	Result
	records []Record
	ps      []Passage
	psRead  bool
}

func readResult(r Result) *read { return &read{Result: r, records: Records(r.Content)} }

// passages is the result's full-text passages (PassagesIn), read the first time asked.
func (r *read) passages() []Passage {
	if !r.psRead {
		r.ps, r.psRead = PassagesIn(r.Content), true
	}
	return r.ps
}

// Resolve ties each reference to the result it quotes (of the results with a record of
// its id, the one whose record holds its quote best; else the first) and fills in what
// the records say of the source (title, authors, year, venue, identifiers, URL). A
// reference no result has a record of keeps an empty Source: the check will find it
// invented. inherited are references the turn may cite without having fetched them again
// (an evolved hypothesis' parents'); a reference to one of them keeps its source and
// details.
func Resolve(refs []research.Reference, results []Result, inherited []research.Reference) []research.Reference {
	reads := make([]*read, len(results)) // each result read once for the turn, not once a reference
	for i, res := range results {
		reads[i] = readResult(res)
	}
	out := make([]research.Reference, len(refs))
	for i, ref := range refs {
		ref = passageOf(ref) // "10.5555/x#p7.2" cites the source 10.5555/x, at that passage
		r := research.Reference{ID: ref.ID, Quote: ref.Quote, Claim: ref.Claim, Passage: ref.Passage, Page: ref.Page}
		best, quoted := -1, unquoted
		// better says whether a record that holds the quote as well as held should be the
		// source: always, unless the source is a parent's record, which only a record
		// holding the quote's words (verified, altered, overstated, out of context)
		// replaces.
		better := func(held int) bool { return held < quoted }
		if j := slices.IndexFunc(inherited, func(p research.Reference) bool { return MatchID(p.ID, ref.ID) && p.Source != "" }); j >= 0 {
			p := inherited[j]
			r = p
			r.Quote, r.Claim = ref.Quote, ref.Claim
			if ref.Passage != "" || ref.Page > 0 {
				r.Passage, r.Page, r.Section, r.File = ref.Passage, ref.Page, "", ""
			}
			// The parent's source for the parent's own quote stays the source: a search
			// hit of this turn that names the work without holding the quote must not
			// take its place (the check would then find the quote unsupported); and the
			// parent's details stay unless this turn read a fuller record.
			if p.Quote == ref.Quote {
				quoted = 0
			}
			best = detailsOf(p).fields()
			better = func(held int) bool { return held < quoted && held < rank(research.CitationUnsupported) }
		}
		for _, res := range reads {
			rec, ok := findRecord(res.records, ref.ID)
			if !ok {
				continue
			}
			held := rank(compareRecord(rec, ref.Quote).Verdict)
			if r.Source == "" || better(held) {
				r.Source, quoted = res.Source, held
			}
			// The richest description of the source gives its details (a fetched record
			// over a search hit), and is the source too unless another holds the quote
			// better.
			if n := rec.Details.fields(); n > best {
				best = n
				describe(&r, rec.Details)
				if held == quoted || better(held) {
					r.Source, quoted = res.Source, held
				}
			}
		}
		place(&r, reads)
		out[i] = r
	}
	return out
}

// unquoted ranks a reference no result has tied to its quote yet: below every verdict
// Compare gives (rank).
const unquoted = 7

// compareRecord checks a quote against a record: its text, unless the record is a result
// the reader could not split into its sources.
func compareRecord(rec Record, quote string) Finding {
	if rec.Unsplit {
		return Finding{Verdict: research.CitationUnsupported, Note: fmt.Sprintf(
			"the tool result names %d sources in text the check could not split into one record each: it cannot tell which source the quote is from", rec.sources())}
	}
	return Compare(rec.Text, quote)
}

// detailsOf is what a reference says of its source, as a record's details.
func detailsOf(r research.Reference) Details {
	return Details{ID: r.ID, DOI: r.DOI, PMID: r.PMID, PMCID: r.PMCID, ArXiv: r.ArXiv, OpenAlex: r.OpenAlex,
		Title: r.Title, Venue: r.Venue, URL: r.URL, Authors: r.Authors, Year: r.Year}
}

// describe fills a reference's bibliographic details from a record's.
func describe(r *research.Reference, d Details) {
	if d.ID != "" && MatchID(d.ID, r.ID) {
		r.ID = d.ID // the id as the tool wrote it, when it is the one cited
	}
	r.DOI, r.PMID, r.PMCID, r.ArXiv, r.OpenAlex = d.DOI, d.PMID, d.PMCID, d.ArXiv, d.OpenAlex
	r.Title, r.Authors, r.Year, r.Venue, r.URL = d.Title, d.Authors, d.Year, d.Venue, d.URL
}

// Check checks each reference against the audit trail: records maps a record's digest to
// its text (for every Source the references name that the trail holds). A reference
// whose source is not in the trail, or has no record of its id, is invented; the rest get
// what comparing the quote with the record of its id found (Compare). Each comes back
// whole, the reference with its check (Cited), in order.
func Check(refs []research.Reference, records map[string]string) []Cited {
	checks := make([]Cited, 0, len(refs))
	reads := map[string]*read{} // each result read once, however many references cite it
	readOf := func(source string) *read {
		if r, ok := reads[source]; ok {
			return r
		}
		r := readResult(Result{Source: source, Content: records[source]})
		reads[source] = r
		return r
	}
	for _, ref := range refs {
		c := research.CitationCheck{ID: ref.ID}
		_, ok := records[ref.Source]
		var rec Record
		if ok {
			rec, ok = findRecord(readOf(ref.Source).records, ref.ID)
		}
		if ref.Source == "" || !ok {
			c.Verdict, c.Note = research.CitationInvented, "no tool result the citing turn read returned this source"
			checks = append(checks, Cited{Reference: ref, Check: c})
			continue
		}
		f := compareRecord(rec, ref.Quote)
		if ref.Passage != "" || ref.Page > 0 {
			f = checkAt(of(readOf(ref.Source).passages(), ref.ID), ref) // the passage or page cited, not the whole source
		}
		c.Verdict, c.Note, c.Passage = f.Verdict, f.Note, f.Passage
		if f.Verdict == research.CitationUnsupported {
			if other := quotedFrom(readOf(ref.Source).records, ref); other != "" {
				c.Note = fmt.Sprintf("the quote is from another source of the same result, %s, not from %s", other, ref.ID)
			}
		}
		checks = append(checks, Cited{Reference: ref, Check: c})
	}
	return checks
}

// quotedFrom names the other record of a result that holds a reference's quote, if one
// does: a model that mixed up two search hits.
func quotedFrom(recs []Record, ref research.Reference) string {
	for _, o := range recs {
		if !o.Has(ref.ID) && !o.Unsplit && Compare(o.Text, ref.Quote).Verdict == research.CitationVerified && len(o.IDs) > 0 {
			return o.IDs[0].String()
		}
	}
	return ""
}

// SameID says whether two written ids name the same source (MatchID).
func SameID(a, b string) bool { return MatchID(a, b) }
