package citation

// Records reads a tool result as the records it holds, so a citation is checked against
// what the tool said of that one source (a search hit's title and snippet, a fetched
// record's abstract), never against the rest of the result: a quote from hit B cited
// under hit A's id is not in A's text. It reads the shapes literature tools give:
//
//   - cosci's literature server (search hits and fetched references) and CSL-JSON;
//   - cosci's analyses of the session's lab data: {"id": "analysis:<id>", "title",
//     "text"}, whose text states each number the analysis found (activities' rendering
//     of an analysis record), read by the JSON reader as any record is;
//   - PubMed E-utilities: esummary JSON and XML, efetch PubMed XML (articles and Bookshelf chapters);
//   - Europe PMC REST search (lite and core results);
//   - the arXiv API's Atom feed;
//   - OpenAlex works (a list or one work; the abstract rebuilt from its inverted index);
//   - Crossref works (a list or one work; the JATS abstract as text);
//   - the markdown and the structured JSON of @cyanheads/pubmed-mcp-server's tools
//     (pubmed_search_articles, pubmed_fetch_articles, pubmed_europepmc_search,
//     pubmed_find_related, pubmed_fetch_fulltext), and Semantic Scholar's papers;
//   - any other JSON by its usual field names, in any case and with any separators
//     ("Abstract", "abstract_text"), and an abstract under a key of its own;
//   - plain text listing sources as blocks of fields ("Title: ...", "DOI: ...",
//     "Abstract: ..."), one record a block;
//   - prose: one record, holding the whole text, naming the ids the text writes whole
//     with their scheme ("doi:", a doi.org link, "PMID: n", "PubMed ID: n", "PMC n",
//     "arXiv:", "ISBN"). Prose that names more than one source (Record.Unsplit) is no one
//     source's text: a quote cited from it is unsupported, whichever id it cites.
//
// An id a result lists with nothing said of it (PubMed's list of PMIDs beyond the
// summaries) is a record without text: the source was returned, and any quote of it is
// unsupported. A JSON or XML result of a shape not known here is read as prose (its
// strings), with the ids its id fields give.
//
// Tool results are data from outside: everything read is bounded (the size read, the
// depth of nesting, the number of values, elements and records), a malformed or cut-off
// result is read as far as it goes, and nothing here panics on any input.

import (
	"slices"
	"strings"
)

// Bounds on what is read of one tool result.
const (
	maxContent = 2 << 20 // bytes of a result read (far more than a result a model reads); the rest is ignored
	maxDepth   = 64      // nesting of JSON values, XML elements, markdown headings
	maxValues  = 500_000 // JSON values or XML tokens read
	maxRecords = 2000    // records of one result
	maxAuthors = 200     // authors kept of one record
	maxWords   = 100_000 // words of an OpenAlex abstract index
)

// Record is one source as a tool result gives it: a search hit or a fetched record.
type Record struct {
	IDs     []ID    // every identifier the record gives (doi, pmid, pmcid, arxiv, openalex, its own id/key)
	Text    string  // what the record says in prose (title, snippet, abstract, ...), of this record only
	Details Details // bibliographic details
	// Unsplit marks a result read as prose that names more than one source (two DOIs,
	// two PMIDs): the reader could not split it into a record of each, so its text is no
	// one source's, and no quote can be checked against it.
	Unsplit bool
}

// sources is how many sources a record's ids name at least: the most ids of one scheme.
func (r Record) sources() int {
	n := map[string]int{}
	most := 1
	for _, id := range r.IDs {
		n[id.Scheme]++
		most = max(most, n[id.Scheme])
	}
	return most
}

// Details are what a record says of its source. ID is the record's own id as the tool
// wrote it ("" when it gives none but its DOI, PMID...); DOI, PMID, PMCID, ArXiv and
// OpenAlex are the normal forms of ParseID.
type Details struct {
	ID, DOI, PMID, PMCID, ArXiv, OpenAlex, Title, Venue, URL string
	Authors                                                  []string // "Family, Given" where known
	Year                                                     int
}

// Has says whether the record names id, whole and in its scheme.
func (r Record) Has(id string) bool {
	want := ParseID(id)
	return slices.ContainsFunc(r.IDs, want.Matches)
}

// FindRecord is the record a tool result gives for id: the records naming it whole,
// merged (a result may give one source twice: a list of PMIDs and a summary), with their
// texts joined and the richest details, filled in from the others.
func FindRecord(content, id string) (Record, bool) { return findRecord(Records(content), id) }

// findRecord is FindRecord over a result's records, read already.
func findRecord(recs []Record, id string) (Record, bool) {
	want := ParseID(id)
	if want.Value == "" {
		return Record{}, false
	}
	var found []Record
	for _, r := range recs {
		if slices.ContainsFunc(r.IDs, want.Matches) {
			found = append(found, r)
		}
	}
	if len(found) == 0 {
		return Record{}, false
	}
	return merge(found), true
}

// merge is one record of several that name the same source.
func merge(rs []Record) Record {
	best := 0
	for i, r := range rs {
		if r.Details.fields() > rs[best].Details.fields() {
			best = i
		}
	}
	out := Record{Details: rs[best].Details}
	var texts []string
	for _, r := range append([]Record{rs[best]}, append(slices.Clone(rs[:best]), rs[best+1:]...)...) {
		out.Unsplit = out.Unsplit || r.Unsplit
		for _, id := range r.IDs {
			out.addID(id)
		}
		if t := strings.TrimSpace(r.Text); t != "" && !slices.Contains(texts, t) {
			texts = append(texts, t)
		}
		d, o := &out.Details, r.Details
		for _, f := range []struct {
			dst *string
			src string
		}{
			{&d.ID, o.ID}, {&d.DOI, o.DOI}, {&d.PMID, o.PMID}, {&d.PMCID, o.PMCID}, {&d.ArXiv, o.ArXiv},
			{&d.OpenAlex, o.OpenAlex}, {&d.Title, o.Title}, {&d.Venue, o.Venue}, {&d.URL, o.URL},
		} {
			if *f.dst == "" {
				*f.dst = f.src
			}
		}
		if len(d.Authors) == 0 {
			d.Authors = o.Authors
		}
		if d.Year == 0 {
			d.Year = o.Year
		}
	}
	out.Text = strings.Join(texts, "\n\n")
	return out
}

// fields is how much the details say: the merge keeps the fuller.
func (d Details) fields() int {
	n := 0
	for _, s := range []string{d.DOI, d.PMID, d.PMCID, d.ArXiv, d.OpenAlex, d.Title, d.Venue, d.URL} {
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

func (r *Record) addID(id ID) {
	if id.Value == "" || slices.Contains(r.IDs, id) {
		return
	}
	r.IDs = append(r.IDs, id)
}

// finish fills the details' ids from the record's and tidies its text.
func (r *Record) finish() {
	d := &r.Details
	for _, id := range r.IDs {
		var dst *string
		switch id.Scheme {
		case SchemeDOI:
			dst = &d.DOI
		case SchemePMID:
			dst = &d.PMID
		case SchemePMCID:
			dst = &d.PMCID
		case SchemeArXiv:
			dst = &d.ArXiv
		case SchemeOpenAlex:
			dst = &d.OpenAlex
		default:
			continue
		}
		if *dst == "" {
			*dst = id.Value
		}
	}
	d.Title = oneLine(d.Title)
	d.Venue = oneLine(d.Venue)
	d.URL = strings.TrimSpace(d.URL)
	r.Text = strings.TrimSpace(r.Text)
}

// Records is every record of a tool result's text, in the order the result gives them.
func Records(content string) []Record {
	if len(content) > maxContent {
		content = strings.ToValidUTF8(content[:maxContent], "")
	}
	body := strings.TrimSpace(content)
	if strings.HasPrefix(body, "```") { // a result that fences its JSON or XML
		if _, rest, ok := strings.Cut(body, "\n"); ok {
			if i := strings.LastIndex(rest, "```"); i >= 0 {
				rest = rest[:i]
			}
			body = strings.TrimSpace(rest)
		}
	}
	if body == "" {
		return nil
	}
	var recs []Record
	switch body[0] {
	case '{', '[':
		v, whole := decodeJSON(body)
		var j jsonReader
		j.walk(v, 0)
		recs = j.records()
		if len(recs) == 0 && whole {
			return []Record{proseRecord(j.strings(v), j.fieldIDs)}
		}
	case '<':
		root, ok := decodeXML(body)
		if !ok {
			break
		}
		if recs = xmlRecords(root); len(recs) == 0 {
			return []Record{proseRecord(root.text(), nil)}
		}
	}
	if recs == nil {
		recs = markdownRecords(content)
	}
	if len(recs) > maxRecords {
		recs = recs[:maxRecords]
	}
	for i := range recs {
		recs[i].finish()
	}
	return recs
}

// proseRecord is a result read as prose: one record holding the whole text, naming the
// ids the text writes whole with their scheme, and any given. When those are the ids of
// more than one source, the record is unsplit: the text is no one source's.
func proseRecord(text string, ids []ID) Record {
	r := Record{Text: text}
	for _, id := range append(ids, textIDs(text)...) {
		r.addID(id)
	}
	r.Unsplit = !oneArticle(r.IDs)
	r.finish()
	return r
}

// oneArticle says whether ids can be one article's as prose names it: at most one DOI,
// one PMID and one PMCID ("PMID: 1; doi:10.1/x"). Any other ids (two DOIs, a DOI and an
// arXiv id, an ISBN) may name several sources, and prose does not say which sentence is
// which source's.
func oneArticle(ids []ID) bool {
	for _, id := range ids {
		if id.Scheme != SchemeDOI && id.Scheme != SchemePMID && id.Scheme != SchemePMCID {
			return len(ids) <= 1
		}
	}
	return oneEach(ids)
}
