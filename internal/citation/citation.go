// Package citation keeps a session's citations honest. A model names a source by an id and
// quotes it; Resolve ties each reference to the tool result that returned that id to the
// citing turn, and takes the bibliographic details from that result, never from the model;
// Check later reads each reference's result back from the audit trail and says whether
// the source was returned at all (else the reference is invented) and whether it holds
// the quote (else the claim is unsupported).
package citation

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/cosci-dev/cosci/internal/research"
)

// Result is a tool result a citing turn saw: its record's digest and its text.
type Result struct {
	Source  string // the digest of the audit trail's record
	Content string
}

// Resolve ties each reference to the result it quotes (of the results that name its id,
// one that holds its quote; else the one that says most of the source) and fills in what
// the results say of the source (title, authors, year, venue, DOI, URL). A reference no
// result names keeps an empty Source: reflection will find it invented. inherited are
// references the turn may cite without having fetched them again (an evolved hypothesis'
// parents'); a reference to one of them keeps its source and details.
func Resolve(refs []research.Reference, results []Result, inherited []research.Reference) []research.Reference {
	out := make([]research.Reference, len(refs))
	for i, ref := range refs {
		r := research.Reference{ID: ref.ID, Quote: ref.Quote, Fabricated: ref.Fabricated}
		best, quoted := -1, false
		if j := slices.IndexFunc(inherited, func(p research.Reference) bool { return SameID(p.ID, ref.ID) && p.Source != "" }); j >= 0 {
			p := inherited[j]
			r.ID, r.Source, r.DOI, r.Title, r.Authors, r.Year, r.Venue, r.URL = p.ID, p.Source, p.DOI, p.Title, p.Authors, p.Year, p.Venue, p.URL
			// The parent's source for the parent's own quote stays the source: a search
			// hit of this turn that names the work without holding the quote must not
			// take its place (reflection would then find the quote unsupported).
			quoted = ref.Quote != "" && slices.Equal(words(p.Quote), words(ref.Quote))
		}
		for _, res := range results {
			if !Names(res.Content, ref.ID) {
				continue
			}
			holds := ref.Quote != "" && Holds(res.Content, ref.Quote)
			if r.Source == "" || (holds && !quoted) {
				r.Source, quoted = res.Source, holds
			}
			// The richest description of the source gives its details: a fetched record
			// over a search hit.
			if d, ok := describe(res.Content, ref.ID); ok && d.fields() > best {
				best = d.fields()
				r.ID, r.DOI, r.Title, r.Authors, r.Year, r.Venue, r.URL = d.id(ref.ID), d.DOI, d.Title, d.Authors, d.Year, d.Venue, d.URL
				if !quoted {
					r.Source, quoted = res.Source, holds
				}
			}
		}
		out[i] = r
	}
	return out
}

// Check checks each reference against the audit trail: records maps a record's digest to
// its text (for every Source the references name that the trail holds). A reference
// whose source is not in the trail, or does not name it, is invented; one whose source
// does not hold its quote is unsupported; the rest are verified.
func Check(refs []research.Reference, records map[string]string) []research.CitationCheck {
	checks := make([]research.CitationCheck, 0, len(refs))
	for _, ref := range refs {
		c := research.CitationCheck{ID: ref.ID}
		text, ok := records[ref.Source]
		switch {
		case ref.Source == "" || !ok || !Names(text, ref.ID):
			c.Verdict, c.Note = research.CitationInvented, "no tool result the citing turn read returned this source"
		case strings.TrimSpace(ref.Quote) == "":
			c.Verdict, c.Note = research.CitationVerified, "a tool returned the source; no quote to check"
		case !Holds(text, ref.Quote):
			c.Verdict, c.Note = research.CitationUnsupported, fmt.Sprintf("the source as the tool returned it does not say %q", research.Shorten(ref.Quote, 120))
		default:
			c.Verdict = research.CitationVerified
		}
		checks = append(checks, c)
	}
	return checks
}

// Names says whether a tool result's text names the id: as it is, or, for a DOI, in any
// case and with or without its https://doi.org/ prefix.
func Names(text, id string) bool {
	id = strings.TrimSpace(id)
	if id == "" {
		return false
	}
	if strings.Contains(text, id) {
		return true
	}
	doi := NormalDOI(id)
	return doi != "" && strings.Contains(strings.ToLower(text), doi)
}

// SameID says whether two ids name the same source.
func SameID(a, b string) bool {
	if a == b {
		return true
	}
	da, db := NormalDOI(a), NormalDOI(b)
	return da != "" && da == db
}

// NormalDOI is a DOI in lower case without a resolver prefix, or "" if id is not a DOI.
func NormalDOI(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	for _, p := range []string{"https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi:"} {
		id = strings.TrimPrefix(id, p)
	}
	if !strings.HasPrefix(id, "10.") || !strings.Contains(id, "/") {
		return ""
	}
	return id
}

// Holds says whether a source's text holds a quote: word for word, ignoring case,
// punctuation, spacing and the escapes of a JSON text; or, for a quote whose wording
// drifted a little (a dropped word, another dash), when nine in ten of its runs of four
// words are in the source.
func Holds(text, quote string) bool {
	q := words(quote)
	if len(q) == 0 {
		return false
	}
	t := words(unescape(text))
	joined, qs := " "+strings.Join(t, " ")+" ", " "+strings.Join(q, " ")+" "
	if strings.Contains(joined, qs) {
		return true
	}
	if len(q) < 8 {
		return false
	}
	have := map[string]bool{}
	for i := 0; i+4 <= len(t); i++ {
		have[strings.Join(t[i:i+4], " ")] = true
	}
	found, all := 0, 0
	for i := 0; i+4 <= len(q); i++ {
		all++
		if have[strings.Join(q[i:i+4], " ")] {
			found++
		}
	}
	return found*10 >= all*9
}

// words are a text's words in lower case, letters and digits only.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// unescape undoes the escapes a JSON text puts in strings (\" \n \u00e9), so a quote of
// a JSON tool result is found in it: it decodes every string of the JSON, or returns the
// text as it is if it is not JSON.
func unescape(text string) string {
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return text
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v)
			b.WriteString(" \n ")
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, k := range sortedKeys(v) {
				walk(v[k])
			}
		}
	}
	walk(v)
	return b.String()
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// details is what a tool result says of one source.
type details struct {
	ID, DOI, Title, Venue, URL string
	Authors                    []string
	Year                       int
}

func (d details) fields() int {
	n := 0
	for _, s := range []string{d.DOI, d.Title, d.Venue, d.URL} {
		if s != "" {
			n++
		}
	}
	if len(d.Authors) > 0 {
		n++
	}
	if d.Year > 0 {
		n++
	}
	return n
}

// id is the source's id as the result gives it, or the cited one.
func (d details) id(cited string) string {
	if d.ID != "" {
		return d.ID
	}
	return cited
}

// describe finds, in a JSON tool result, the object that describes the source with that
// id (its "id" or "doi"), and reads the usual bibliographic fields of it, in the forms
// common exports use (CSL-JSON's among them).
func describe(content, id string) (details, bool) {
	var v any
	if json.Unmarshal([]byte(content), &v) != nil {
		return details{}, false
	}
	var found *details
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			oid, _ := str(v, "id")
			doi, _ := str(v, "doi", "DOI")
			if (oid != "" && SameID(oid, id)) || (doi != "" && SameID(doi, id)) {
				d := read(v)
				if found == nil || d.fields() > found.fields() {
					found = &d
				}
			}
			for _, k := range sortedKeys(v) {
				walk(v[k])
			}
		}
	}
	walk(v)
	if found == nil {
		return details{}, false
	}
	return *found, true
}

// read takes the bibliographic fields of one object.
func read(o map[string]any) details {
	var d details
	d.ID, _ = str(o, "id")
	d.DOI, _ = str(o, "doi", "DOI")
	d.DOI = NormalDOI(d.DOI)
	d.Title, _ = str(o, "title")
	d.Venue, _ = str(o, "venue", "container-title", "journal", "booktitle")
	d.URL, _ = str(o, "url", "URL")
	switch y := first(o, "year", "issued").(type) {
	case float64:
		d.Year = int(y)
	case string:
		_, _ = fmt.Sscanf(y, "%d", &d.Year)
	case map[string]any: // CSL-JSON: {"date-parts": [[2021, 5]]}
		if parts, ok := y["date-parts"].([]any); ok && len(parts) > 0 {
			if p, ok := parts[0].([]any); ok && len(p) > 0 {
				if f, ok := p[0].(float64); ok {
					d.Year = int(f)
				}
			}
		}
	}
	if as, ok := first(o, "authors", "author").([]any); ok {
		for _, a := range as {
			switch a := a.(type) {
			case string:
				d.Authors = append(d.Authors, a)
			case map[string]any: // CSL-JSON: {"family", "given"} or {"literal"}
				family, _ := str(a, "family")
				given, _ := str(a, "given")
				literal, _ := str(a, "literal")
				switch {
				case family != "" && given != "":
					d.Authors = append(d.Authors, family+", "+given)
				case family != "":
					d.Authors = append(d.Authors, family)
				case literal != "":
					d.Authors = append(d.Authors, literal)
				}
			}
		}
	}
	return d
}

// first is the value of the first of the keys the object has.
func first(o map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := o[k]; ok {
			return v
		}
	}
	return nil
}

// str is the first of the keys that holds a non-empty string.
func str(o map[string]any, keys ...string) (string, bool) {
	for _, k := range keys {
		if s, ok := o[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s), true
		}
	}
	return "", false
}
