package citation

// Records reads a tool result as the records it holds, so a citation is checked against
// what the tool said of that one source (a search hit's title and snippet, a fetched
// record's abstract), never against the rest of the result: a quote from hit B cited
// under hit A's id is not in A's text. It reads the shapes literature tools give:
//
//   - cosci's literature server (search hits and fetched references) and CSL-JSON;
//   - PubMed E-utilities: esummary JSON and XML, efetch PubMed XML (articles and Bookshelf chapters);
//   - Europe PMC REST search (lite and core results);
//   - the arXiv API's Atom feed;
//   - OpenAlex works (a list or one work; the abstract rebuilt from its inverted index);
//   - Crossref works (a list or one work; the JATS abstract as text);
//   - the markdown and the structured JSON of @cyanheads/pubmed-mcp-server's tools
//     (pubmed_search_articles, pubmed_fetch_articles, pubmed_europepmc_search,
//     pubmed_find_related, pubmed_fetch_fulltext), and Semantic Scholar's papers;
//   - any other JSON by its usual field names;
//   - prose: one record, holding the whole text, naming the ids the text writes whole
//     with their scheme ("doi:", a doi.org link, "PMID: n", "arXiv:", "ISBN").
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
	"encoding/json"
	"encoding/xml"
	"errors"
	"html"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
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
func FindRecord(content, id string) (Record, bool) {
	want := ParseID(id)
	if want.Value == "" {
		return Record{}, false
	}
	var found []Record
	for _, r := range Records(content) {
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
// ids the text writes whole with their scheme, and any given.
func proseRecord(text string, ids []ID) Record {
	r := Record{Text: text}
	for _, id := range append(ids, textIDs(text)...) {
		r.addID(id)
	}
	r.finish()
	return r
}

// ---- ids in prose ----

var (
	doiTextRE   = regexp.MustCompile(`(?i)(?:^|[^\w./-])(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.[0-9]{4,9}/[^\s"'<>\[\]{}|\\^` + "`" + `]+)`)
	pmidTextRE  = regexp.MustCompile(`(?i)\bPMID\b[\]*:\s]*([0-9]{1,9})\b`)
	pmidsTextRE = regexp.MustCompile(`(?i)\bPMIDs\b[*:\s]+([0-9]{1,9}(?:\s*,\s*[0-9]{1,9})*)\b`)
	pmidLinkRE  = regexp.MustCompile(`(?i)\b(?:pubmed\.ncbi\.nlm\.nih\.gov/|ncbi\.nlm\.nih\.gov/pubmed/)([0-9]{1,9})\b`)
	pmcTextRE   = regexp.MustCompile(`\b(PMC[0-9]{3,10})\b`)
	arxivTextRE = regexp.MustCompile(`(?i)(?:\barxiv:\s*|arxiv\.org/(?:abs|pdf)/)([0-9]{4}\.[0-9]{4,5}(?:v[0-9]+)?|[a-z]+(?:-[a-z]+)*(?:\.[a-z]{2})?/[0-9]{7}(?:v[0-9]+)?)\b`)
	openAlexTRE = regexp.MustCompile(`(?i)openalex\.org/(?:works/)?(W[0-9]{1,12})\b`)
	isbnTextRE  = regexp.MustCompile(`(?i)\bISBN(?:-1[03])?:?\s*([0-9][0-9 -]{8,16}[0-9X])\b`)
)

// failureLine matches a line that says the tool did not return an id ("Unavailable
// PMIDs: 1, 2", "no reference with id 10.1/x", "Source PMID 3 not found", "Error: could
// not fetch 10.1/x"): a failure phrase at the line's start, or tied to an id's label. A
// failure word elsewhere in a line ("Missing heritability of tau", "Loss of BIN1 failed
// to slow tau") is a title's or an abstract's, and the ids on that line were returned.
var failureLine = regexp.MustCompile(`(?i)` +
	`^[\W_]*(?:error\b\W*)?(?:not found|no such|no results?\b|(?:could ?n[o']t|cannot|failed to|unable to) (?:fetch|find|retrieve|resolve|load|get|read))\b` +
	`|\b(?:unavailable|invalid|unknown|missing)\s+(?:pmids?|pmcids?|dois?|ids?|identifiers?|references?|records?)\b` +
	`|\bno (?:such )?(?:references?|records?|results?|articles?|works?|papers?) (?:with|for|matching)\b` +
	`|\b(?:pmids?|pmcids?|dois?|ids?|identifiers?)\b[^.\n]{0,40}?\b(?:not found|unavailable|does not exist|is invalid|was not found|could not be (?:found|fetched|retrieved))\b`)

// textIDs are the ids prose writes whole with their scheme. An id on a line that says
// the tool did not find it (failures) is not read as returned.
func textIDs(text string) []ID {
	var out []ID
	seen := map[ID]bool{}
	add := func(scheme, s string) {
		if id, ok := parseAs(scheme, unwrap(s)); ok && !seen[id] && len(out) < maxRecords {
			seen[id] = true
			out = append(out, id)
		}
	}
	var kept strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		if failureLine.MatchString(line) {
			continue
		}
		kept.WriteString(line)
		kept.WriteByte('\n')
		for _, m := range pmidsTextRE.FindAllStringSubmatch(line, -1) {
			for _, p := range strings.Split(m[1], ",") {
				add(SchemePMID, p)
			}
		}
		for _, m := range pmidTextRE.FindAllStringSubmatch(line, -1) {
			add(SchemePMID, m[1])
		}
	}
	text = kept.String()
	for _, m := range doiTextRE.FindAllStringSubmatch(text, -1) {
		add(SchemeDOI, m[1])
	}
	for _, m := range pmidLinkRE.FindAllStringSubmatch(text, -1) {
		add(SchemePMID, m[1])
	}
	for _, m := range pmcTextRE.FindAllStringSubmatch(text, -1) {
		add(SchemePMCID, m[1])
	}
	for _, m := range arxivTextRE.FindAllStringSubmatch(text, -1) {
		add(SchemeArXiv, m[1])
	}
	for _, m := range openAlexTRE.FindAllStringSubmatch(text, -1) {
		add(SchemeOpenAlex, m[1])
	}
	for _, m := range isbnTextRE.FindAllStringSubmatch(text, -1) {
		add(SchemeISBN, m[1])
	}
	return out
}

// ---- JSON ----

// decodeJSON reads the JSON values of a text (a tool may give several), as far as they
// go: a value cut short is kept up to the cut. Nesting beyond maxDepth is skipped, and
// reading stops after maxValues values. whole says the text is JSON: a value was read
// whole, or the text ended inside one; a text that is not JSON past its first bracket
// (markdown's "[PMID 1](...)") is not.
func decodeJSON(s string) (v any, whole bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	type frame struct {
		obj     map[string]any
		arr     []any
		isArr   bool
		key     string
		haveKey bool
		skip    bool // beyond maxDepth: read, not kept
	}
	var (
		stack []*frame
		roots []any
		n     int
	)
	put := func(v any) {
		if len(stack) == 0 {
			roots = append(roots, v)
			return
		}
		f := stack[len(stack)-1]
		switch {
		case f.skip:
		case f.isArr:
			f.arr = append(f.arr, v)
		case f.haveKey:
			f.obj[f.key], f.haveKey = v, false
		}
	}
	closeTop := func() {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.skip {
			if len(stack) > 0 && stack[len(stack)-1].haveKey {
				stack[len(stack)-1].haveKey = false
			}
			return
		}
		if f.isArr {
			put(f.arr)
		} else {
			put(f.obj)
		}
	}
	for n < maxValues {
		tok, err := dec.Token()
		if err != nil {
			var syntax *json.SyntaxError
			whole = len(roots) > 0 || !errors.As(err, &syntax)
			break
		}
		n++
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				skip := len(stack) >= maxDepth || len(stack) > 0 && stack[len(stack)-1].skip
				f := &frame{isArr: t == '[', skip: skip}
				if !f.isArr && !skip {
					f.obj = map[string]any{}
				}
				stack = append(stack, f)
			default:
				if len(stack) > 0 {
					closeTop()
				}
			}
		case string:
			if len(stack) > 0 && !stack[len(stack)-1].isArr && !stack[len(stack)-1].haveKey {
				stack[len(stack)-1].key, stack[len(stack)-1].haveKey = t, true
				continue
			}
			put(t)
		default:
			put(t)
		}
	}
	if n >= maxValues {
		whole = true
	}
	for len(stack) > 0 { // a value cut short: keep what was read
		closeTop()
	}
	switch len(roots) {
	case 0:
		return nil, false
	case 1:
		return roots[0], whole
	}
	return roots, whole
}

// Field names, as the APIs write them.
var (
	ownIDKeys   = []string{"id", "ID", "uid", "key", "citationKey", "citekey", "paperId", "epmcId"}
	doiKeys     = []string{"doi", "DOI"}
	pmidKeys    = []string{"pmid", "PMID", "pubmed_id", "pubmedId", "PubMed"}
	pmcidKeys   = []string{"pmcid", "pmcId", "PMCID", "pmc_id", "PubMedCentral"}
	arxivKeys   = []string{"arxiv", "arxiv_id", "arxivId", "arXiv", "ArXiv", "arxivID"}
	openAlexKey = []string{"openalex"}
	isbnKeys    = []string{"isbn", "ISBN"}
	linkKeys    = []string{"url", "URL", "link", "pubmedUrl", "pmcUrl", "epmcUrl", "landing_page_url"}
	titleKeys   = []string{"title", "ArticleTitle", "display_name"}
	proseKeys   = []string{"title", "display_name", "subtitle", "snippet", "snippets", "abstract", "abstractText",
		"abstractSnippet", "abstract_inverted_index", "summary", "tldr", "description", "highlights", "sections",
		"content", "text", "body", "passages"}
	// Europe PMC's sources: a record from another source than MED whose id is digits
	// (an Agricola or a patent number) is not a PMID.
	epmcSources = []string{"MED", "PMC", "PPR", "PAT", "AGR", "CBA", "CTX", "ETH", "HIR", "CIT", "NBK"}
)

type jsonReader struct {
	recs     []Record
	listed   []ID // ids a result lists with nothing said of them
	fieldIDs []ID // ids of id fields anywhere: for a shape not known, read as prose
}

// records are the records read, then a record without text for each id listed that no
// record names.
func (j *jsonReader) records() []Record {
	out := j.recs
	for _, id := range j.listed {
		if !slices.ContainsFunc(out, func(r Record) bool { return slices.ContainsFunc(r.IDs, id.Matches) }) && len(out) < maxRecords {
			out = append(out, Record{IDs: []ID{id}})
		}
	}
	return out
}

// walk finds the records of a JSON value: the objects that name a source (an id field)
// and say something of it (a title or a prose field), and the lists of ids a result
// gives with nothing else said of them.
func (j *jsonReader) walk(v any, depth int) {
	if depth > maxDepth || len(j.recs) >= maxRecords {
		return
	}
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			j.walk(x, depth+1)
		}
	case map[string]any:
		ids := objectIDs(v)
		for _, id := range ids {
			if id.Scheme != SchemeKey && len(j.fieldIDs) < maxRecords && !slices.Contains(j.fieldIDs, id) {
				j.fieldIDs = append(j.fieldIDs, id)
			}
		}
		if len(ids) > 0 && isRecord(v) {
			j.recs = append(j.recs, jsonRecord(v, ids))
			return // a record's parts (its authors, its references) are not records
		}
		for _, k := range sortedMapKeys(v) {
			switch strings.ToLower(k) {
			case "pmids", "uids", "idlist": // ids listed with nothing said of them
				if list, ok := v[k].([]any); ok {
					for _, x := range list {
						if id, ok := parseAs(SchemePMID, scalar(x)); ok && len(j.listed) < maxRecords && !slices.Contains(j.listed, id) {
							j.listed = append(j.listed, id)
						}
					}
					continue
				}
			}
			j.walk(v[k], depth+1)
		}
	}
}

// isRecord says whether an object says something of the source it names.
func isRecord(o map[string]any) bool {
	for _, k := range proseKeys {
		if k == "display_name" {
			// OpenAlex names authors, institutions and journals too: only a work is a record.
			if id, ok := parseLink(scalar(o["id"])); !ok || id.Scheme != SchemeOpenAlex {
				continue
			}
		}
		if hasValue(o[k]) {
			return true
		}
	}
	return false
}

func hasValue(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v) != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return false
}

// objectIDs are the ids an object gives of itself.
func objectIDs(o map[string]any) []ID {
	var ids []ID
	add := func(id ID) {
		if id.Value != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	own := func(keys []string, scheme string) {
		for _, k := range keys {
			for _, s := range scalars(o[k]) {
				if id, ok := parseAs(scheme, s); ok {
					add(id)
				}
			}
		}
	}
	own(doiKeys, SchemeDOI)
	own(pmidKeys, SchemePMID)
	own(pmcidKeys, SchemePMCID)
	own(arxivKeys, SchemeArXiv)
	own(openAlexKey, SchemeOpenAlex)
	own(isbnKeys, SchemeISBN)
	source, _ := o["source"].(string)
	otherSource := slices.Contains(epmcSources, source) && source != "MED"
	for _, k := range ownIDKeys {
		s := scalar(o[k])
		if s == "" {
			continue
		}
		id := ParseID(s)
		if otherSource && id.Scheme == SchemePMID {
			id = ID{SchemeKey, s}
		}
		add(id)
	}
	for _, k := range linkKeys {
		if id, ok := parseLink(scalar(o[k])); ok {
			add(id)
		}
	}
	for _, k := range []string{"ids", "externalIds"} { // OpenAlex, Semantic Scholar
		if m, ok := o[k].(map[string]any); ok {
			for _, id := range objectIDs(m) {
				add(id)
			}
			if id, ok := parseAs(SchemeDOI, scalar(m["DOI"])); ok {
				add(id)
			}
		}
	}
	if list, ok := o["articleids"].([]any); ok { // PubMed esummary
		for _, x := range list {
			a, _ := x.(map[string]any)
			value := scalar(a["value"])
			switch scalar(a["idtype"]) {
			case "pubmed":
				if id, ok := parseAs(SchemePMID, value); ok {
					add(id)
				}
			case "doi":
				if id, ok := parseAs(SchemeDOI, value); ok {
					add(id)
				}
			case "pmc", "pmcid":
				if m := pmcTextRE.FindString(value); m != "" {
					add(ID{SchemePMCID, m})
				}
			}
		}
	}
	return ids
}

// jsonRecord reads one record object.
func jsonRecord(o map[string]any, ids []ID) Record {
	r := Record{IDs: ids}
	d := &r.Details
	for _, k := range ownIDKeys {
		if d.ID = scalar(o[k]); d.ID != "" {
			break
		}
	}
	for _, k := range titleKeys {
		if d.Title = firstString(o[k]); d.Title != "" {
			break
		}
	}
	d.Title = stripMarkup(d.Title)
	d.Venue = jsonVenue(o)
	for _, k := range linkKeys {
		if d.URL = scalar(o[k]); d.URL != "" {
			break
		}
	}
	if d.URL == "" {
		d.URL = scalar(dig(o, "primary_location", "landing_page_url"))
	}
	d.Year = jsonYear(o)
	d.Authors = jsonAuthors(o)
	var parts []string
	for _, k := range proseKeys {
		if k == "display_name" && hasValue(o["title"]) {
			continue
		}
		if t := proseOf(k, o[k], 0); t != "" && !slices.Contains(parts, t) {
			parts = append(parts, t)
		}
	}
	r.Text = strings.Join(parts, "\n")
	return r
}

// proseOf is the text of a prose field.
func proseOf(key string, v any, depth int) string {
	if depth > maxDepth {
		return ""
	}
	switch v := v.(type) {
	case string:
		return stripMarkup(v)
	case []any:
		var parts []string
		for _, x := range v {
			if t := proseOf(key, x, depth+1); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	case map[string]any:
		if key == "abstract_inverted_index" {
			return invertedAbstract(v)
		}
		// a section of a full text ({title, label, text, subsections}), a tldr ({text})
		var parts []string
		for _, k := range []string{"label", "title", "text", "subsections"} {
			if t := proseOf(key, v[k], depth+1); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// invertedAbstract rebuilds an OpenAlex abstract from its index of word positions.
func invertedAbstract(index map[string]any) string {
	words := map[int]string{}
	last := -1
	for _, w := range sortedMapKeys(index) {
		positions, _ := index[w].([]any)
		for _, p := range positions {
			n, ok := p.(json.Number)
			if !ok {
				continue
			}
			i, err := strconv.Atoi(n.String())
			if err != nil || i < 0 || i >= maxWords || len(words) >= maxWords {
				continue
			}
			words[i] = w
			last = max(last, i)
		}
	}
	var b strings.Builder
	for i := 0; i <= last; i++ {
		if w, ok := words[i]; ok {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
	}
	return b.String()
}

func jsonVenue(o map[string]any) string {
	for _, k := range []string{"venue", "container-title", "journalTitle", "fulljournalname", "journal", "booktitle", "journal_ref"} {
		switch v := o[k].(type) {
		case string, []any:
			if s := firstString(v); s != "" {
				return s
			}
		case map[string]any: // Semantic Scholar: {"name": ...}; pubmed-mcp: {"title": ...}
			for _, f := range []string{"title", "name"} {
				if s := scalar(v[f]); s != "" {
					return s
				}
			}
		}
	}
	for _, path := range [][]string{
		{"journalInfo", "journal", "title"}, {"journalInfo", "title"},
		{"primary_location", "source", "display_name"}, {"host_venue", "display_name"},
	} {
		if s := scalar(dig(o, path...)); s != "" {
			return s
		}
	}
	// PubMed's source is the journal's abbreviation; Europe PMC's is a database code.
	if s := scalar(o["source"]); s != "" && !slices.Contains(epmcSources, s) {
		return s
	}
	return ""
}

func jsonYear(o map[string]any) int {
	for _, k := range []string{"year", "publication_year", "pubYear", "pubdate", "pubDate", "sortpubdate",
		"firstPublicationDate", "issued", "published", "published-print", "published-online", "publicationDate",
		"publication_date", "created", "date"} {
		if y := yearOf(o[k]); y > 0 {
			return y
		}
	}
	for _, path := range [][]string{{"journalInfo", "yearOfPublication"}, {"journalInfo", "publicationDate"}} {
		if y := yearOf(dig(o, path...)); y > 0 {
			return y
		}
	}
	return 0
}

var yearRE = regexp.MustCompile(`\b(1[5-9][0-9]{2}|20[0-9]{2}|21[0-9]{2})\b`)

// yearOf reads a year from a number, a date string, CSL's date-parts or {year: ...}.
func yearOf(v any) int {
	switch v := v.(type) {
	case json.Number:
		if n, err := strconv.Atoi(v.String()); err == nil && n >= 1500 && n < 2200 {
			return n
		}
	case string:
		if m := yearRE.FindString(v); m != "" {
			n, _ := strconv.Atoi(m)
			return n
		}
	case map[string]any:
		if parts, ok := v["date-parts"].([]any); ok && len(parts) > 0 {
			if p, ok := parts[0].([]any); ok && len(p) > 0 {
				return yearOf(p[0])
			}
		}
		if y := yearOf(v["year"]); y > 0 {
			return y
		}
		return yearOf(v["medlineDate"])
	}
	return 0
}

func jsonAuthors(o map[string]any) []string {
	var out []string
	add := func(a string) {
		a = oneLine(a)
		if a != "" && !strings.EqualFold(strings.TrimRight(a, "."), "et al") && len(out) < maxAuthors {
			out = append(out, a)
		}
	}
	if as, ok := o["authorships"].([]any); ok { // OpenAlex
		for _, x := range as {
			if name := scalar(dig(x, "author", "display_name")); name != "" {
				add(givenFirst(name))
			} else {
				add(scalar(dig(x, "raw_author_name")))
			}
		}
		return out
	}
	for _, k := range []string{"authors", "author", "authorList", "authorString", "creators"} {
		v := o[k]
		if m, ok := v.(map[string]any); ok { // Europe PMC core: {"author": [...]}
			v = m["author"]
		}
		switch v := v.(type) {
		case string:
			for _, a := range splitAuthors(v) {
				add(a)
			}
		case []any:
			for _, x := range v {
				switch x := x.(type) {
				case string:
					add(x)
				case map[string]any:
					add(personName(x))
				}
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return out
}

// personName is one author object's name, "Family, Given" where the object says which
// is which.
func personName(a map[string]any) string {
	family := scalar(firstKey(a, "family", "lastName", "LastName", "last_name", "surname"))
	given := scalar(firstKey(a, "given", "firstName", "ForeName", "givenNames", "first_name", "initials", "Initials"))
	switch {
	case family != "" && given != "":
		return family + ", " + given
	case family != "":
		return family
	}
	if s := scalar(firstKey(a, "literal", "collectiveName", "CollectiveName")); s != "" {
		return s
	}
	if _, crossref := a["sequence"]; crossref { // Crossref names an organisation so
		return scalar(a["name"])
	}
	if s := scalar(firstKey(a, "fullName", "name")); s != "" {
		return pubmedName(s, true)
	}
	if s := scalar(firstKey(a, "display_name")); s != "" {
		return givenFirst(s)
	}
	return ""
}

// splitAuthors splits a list of authors in one string: PubMed's "Smith J, Doe AB, et
// al." or BibTeX's "Doe, Jane and Smith, John".
func splitAuthors(s string) []string {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "."))
	if strings.Contains(s, " and ") {
		var out []string
		for _, a := range strings.Split(s, " and ") {
			if a = oneLine(a); a != "" {
				out = append(out, a)
			}
		}
		return out
	}
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" && !strings.EqualFold(strings.TrimRight(a, "."), "et al") {
			out = append(out, pubmedName(a, false))
		}
	}
	return out
}

// pubmedName writes PubMed's "Smith JA" as "Smith, JA"; another name is kept as it is,
// or, when given is true, read as "Given Family".
func pubmedName(s string, given bool) string {
	s = oneLine(s)
	f := strings.Fields(s)
	if len(f) >= 2 && len(f[len(f)-1]) <= 3 && strings.ToUpper(f[len(f)-1]) == f[len(f)-1] && unicode.IsLetter(rune(f[len(f)-1][0])) {
		return strings.Join(f[:len(f)-1], " ") + ", " + f[len(f)-1]
	}
	if given {
		return givenFirst(s)
	}
	return s
}

// givenFirst writes a person's "Jane Q. van Doe" as "van Doe, Jane Q.", as BibTeX reads
// such a name: the last word, with the lower-case particles before it, is the family name.
func givenFirst(s string) string {
	s = oneLine(s)
	f := strings.Fields(s)
	if len(f) < 2 || strings.Contains(s, ",") {
		return s
	}
	i := len(f) - 1
	for i > 1 && isParticle(f[i-1]) {
		i--
	}
	return strings.Join(f[i:], " ") + ", " + strings.Join(f[:i], " ")
}

func isParticle(w string) bool {
	switch w {
	case "van", "von", "de", "der", "den", "da", "di", "du", "del", "della", "dos", "das", "le", "la", "ter", "ten", "zu":
		return true
	}
	return false
}

// strings is every string of a JSON value, for a shape not known: read as prose.
func (j *jsonReader) strings(v any) string {
	var b strings.Builder
	var walk func(any, int)
	walk = func(v any, depth int) {
		if depth > maxDepth {
			return
		}
		switch v := v.(type) {
		case string:
			b.WriteString(v)
			b.WriteString("\n")
		case []any:
			for _, x := range v {
				walk(x, depth+1)
			}
		case map[string]any:
			for _, k := range sortedMapKeys(v) {
				walk(v[k], depth+1)
			}
		}
	}
	walk(v, 0)
	return b.String()
}

// scalar is a string or a number of JSON as a trimmed string.
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case json.Number:
		return v.String()
	}
	return ""
}

// scalars is a scalar, or the scalars of a list.
func scalars(v any) []string {
	if list, ok := v.([]any); ok {
		var out []string
		for _, x := range list {
			if s := scalar(x); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	if s := scalar(v); s != "" {
		return []string{s}
	}
	return nil
}

// firstString is a string, or the first string of a list (Crossref's title: ["..."]).
func firstString(v any) string {
	if s := scalars(v); len(s) > 0 {
		return s[0]
	}
	return ""
}

// firstKey is the value of the first of the keys the object has.
func firstKey(o map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := o[k]; ok {
			return v
		}
	}
	return nil
}

// dig follows a path of object keys.
func dig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var tagRE = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9:_-]*(?:\s[^<>]*)?/?>`)

// stripMarkup takes the tags out of a text that has some (Crossref's JATS abstracts,
// Europe PMC's <i> and <sup>) and reads its entities.
func stripMarkup(s string) string {
	if strings.Contains(s, "<") && tagRE.MatchString(s) {
		s = tagRE.ReplaceAllStringFunc(s, func(tag string) string {
			name := strings.ToLower(strings.Trim(strings.Fields(tag)[0], "</>"))
			name = strings.TrimPrefix(name, "jats:")
			switch name {
			case "p", "title", "sec", "br", "div", "h1", "h2", "h3", "h4", "li":
				return "\n"
			}
			return ""
		})
		s = html.UnescapeString(s)
	} else if strings.Contains(s, "&") {
		s = html.UnescapeString(s)
	}
	return strings.TrimSpace(s)
}

// oneLine collapses a text's whitespace.
func oneLine(s string) string { return strings.TrimSpace(spacesRE.ReplaceAllString(s, " ")) }

// ---- XML ----

// xnode is an XML element: its name, attributes and content (text and elements).
type xnode struct {
	name  string
	attrs []xml.Attr
	parts []xpart
}

type xpart struct {
	text string
	node *xnode
}

// decodeXML reads an XML text as far as it goes, bounded in depth and size; HTML's
// entities are read, and an element left open is closed.
func decodeXML(s string) (*xnode, bool) {
	dec := xml.NewDecoder(strings.NewReader(s))
	dec.Strict = false
	dec.AutoClose = xml.HTMLAutoClose
	dec.Entity = xml.HTMLEntity
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	root := &xnode{}
	stack := []*xnode{root}
	skipped := 0 // elements open beyond maxDepth
	for n := 0; n < maxValues; n++ {
		tok, err := dec.RawToken()
		if err != nil {
			break
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) > maxDepth || skipped > 0 {
				skipped++
				continue
			}
			e := &xnode{name: t.Name.Local, attrs: slices.Clone(t.Attr)}
			if t.Name.Space != "" {
				e.name = t.Name.Space + ":" + t.Name.Local
			}
			top.parts = append(top.parts, xpart{node: e})
			stack = append(stack, e)
		case xml.EndElement:
			if skipped > 0 {
				skipped--
				continue
			}
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			if skipped == 0 {
				top.parts = append(top.parts, xpart{text: string(t)})
			}
		}
	}
	return root, len(root.parts) > 0
}

// local is an element's name without its namespace prefix.
func (e *xnode) local() string {
	if i := strings.LastIndexByte(e.name, ':'); i >= 0 {
		return e.name[i+1:]
	}
	return e.name
}

func (e *xnode) attr(name string) string {
	for _, a := range e.attrs {
		if strings.EqualFold(a.Name.Local, name) {
			return a.Value
		}
	}
	return ""
}

// kids are the child elements named name ("" for all).
func (e *xnode) kids(name string) []*xnode {
	var out []*xnode
	if e == nil {
		return nil
	}
	for _, p := range e.parts {
		if p.node != nil && (name == "" || p.node.local() == name) {
			out = append(out, p.node)
		}
	}
	return out
}

// kid follows a path of child elements.
func (e *xnode) kid(path ...string) *xnode {
	for _, name := range path {
		k := e.kids(name)
		if len(k) == 0 {
			return nil
		}
		e = k[0]
	}
	return e
}

// text is the element's text, its elements' included.
func (e *xnode) text() string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*xnode, int)
	walk = func(e *xnode, depth int) {
		if depth > maxDepth {
			return
		}
		for _, p := range e.parts {
			if p.node != nil {
				walk(p.node, depth+1)
			} else {
				b.WriteString(p.text)
			}
		}
	}
	walk(e, 0)
	return strings.TrimSpace(b.String())
}

// all are the elements named name anywhere under e, not under another one of them.
func (e *xnode) all(name string) []*xnode {
	var out []*xnode
	var walk func(*xnode, int)
	walk = func(e *xnode, depth int) {
		if depth > maxDepth {
			return
		}
		for _, k := range e.kids("") {
			if k.local() == name {
				out = append(out, k)
			} else {
				walk(k, depth+1)
			}
		}
	}
	walk(e, 0)
	return out
}

// xmlRecords reads PubMed's efetch XML (articles and Bookshelf chapters), PubMed's
// esummary XML and arXiv's Atom feed.
func xmlRecords(root *xnode) []Record {
	var out []Record
	for _, name := range []string{"PubmedArticle", "PubmedBookArticle"} {
		for _, a := range root.all(name) {
			if r, ok := pubmedArticle(a); ok {
				out = append(out, r)
			}
		}
	}
	for _, s := range root.all("DocumentSummary") {
		if r, ok := esummaryXML(s); ok {
			out = append(out, r)
		}
	}
	for _, e := range root.all("entry") {
		if r, ok := atomEntry(e); ok {
			out = append(out, r)
		}
	}
	return out
}

// pubmedArticle reads one PubmedArticle of efetch: the article's own ids (not those of
// its reference list).
func pubmedArticle(a *xnode) (Record, bool) {
	var r Record
	m, art, data := a.kid("MedlineCitation"), a.kid("MedlineCitation", "Article"), "PubmedData"
	book := a.local() == "PubmedBookArticle" // a chapter of NCBI's Bookshelf (GeneReviews, StatPearls)
	if book {
		m, data = a.kid("BookDocument"), "PubmedBookData"
		art = m
	}
	if id, ok := parseAs(SchemePMID, m.kid("PMID").text()); ok {
		r.addID(id)
		r.Details.ID = id.Value
	}
	for _, x := range a.kids(data) {
		for _, ai := range x.kid("ArticleIdList").kids("ArticleId") {
			xmlArticleID(&r, ai.attr("IdType"), ai.text())
		}
	}
	for _, loc := range art.kids("ELocationID") {
		xmlArticleID(&r, loc.attr("EIdType"), loc.text())
	}
	if len(r.IDs) == 0 {
		return r, false
	}
	d := &r.Details
	d.Title = oneLine(art.kid("ArticleTitle").text())
	j := art.kid("Journal")
	d.Venue = oneLine(j.kid("Title").text())
	pd := j.kid("JournalIssue", "PubDate")
	authors := art.kid("AuthorList")
	if book {
		b := m.kid("Book")
		if d.Venue = oneLine(b.kid("BookTitle").text()); d.Title == "" {
			d.Title = d.Venue
		}
		pd = b.kid("PubDate")
		for _, l := range m.kids("AuthorList") {
			if l.attr("Type") != "editors" {
				authors = l
				break
			}
		}
	}
	if d.Year = yearOf(pd.kid("Year").text()); d.Year == 0 {
		d.Year = yearOf(pd.kid("MedlineDate").text())
	}
	for _, au := range authors.kids("Author") {
		if len(d.Authors) >= maxAuthors {
			break
		}
		family, given := oneLine(au.kid("LastName").text()), oneLine(au.kid("ForeName").text())
		if given == "" {
			given = oneLine(au.kid("Initials").text())
		}
		switch {
		case family != "" && given != "":
			d.Authors = append(d.Authors, family+", "+given)
		case family != "":
			d.Authors = append(d.Authors, family)
		default:
			if c := oneLine(au.kid("CollectiveName").text()); c != "" {
				d.Authors = append(d.Authors, c)
			}
		}
	}
	parts := []string{d.Title}
	for _, t := range art.kid("Abstract").kids("AbstractText") {
		text := oneLine(t.text())
		if label := t.attr("Label"); label != "" {
			text = label + ": " + text
		}
		parts = append(parts, text)
	}
	r.Text = strings.Join(parts, "\n")
	return r, true
}

func xmlArticleID(r *Record, kind, value string) {
	var scheme string
	switch strings.ToLower(kind) {
	case "pubmed":
		scheme = SchemePMID
	case "doi":
		scheme = SchemeDOI
	case "pmc", "pmcid":
		scheme = SchemePMCID
	case "arxiv":
		scheme = SchemeArXiv
	default:
		return
	}
	if id, ok := parseAs(scheme, oneLine(value)); ok {
		r.addID(id)
	}
}

// esummaryXML reads one DocumentSummary of esummary (version 2.0).
func esummaryXML(s *xnode) (Record, bool) {
	var r Record
	if id, ok := parseAs(SchemePMID, s.attr("uid")); ok {
		r.addID(id)
		r.Details.ID = id.Value
	}
	for _, ai := range s.kid("ArticleIds").kids("ArticleId") {
		xmlArticleID(&r, ai.kid("IdType").text(), ai.kid("Value").text())
	}
	if len(r.IDs) == 0 {
		return r, false
	}
	d := &r.Details
	d.Title = oneLine(s.kid("Title").text())
	if d.Venue = oneLine(s.kid("FullJournalName").text()); d.Venue == "" {
		d.Venue = oneLine(s.kid("Source").text())
	}
	d.Year = yearOf(s.kid("PubDate").text())
	for _, a := range s.kid("Authors").kids("Author") {
		if name := a.kid("Name").text(); name != "" && len(d.Authors) < maxAuthors {
			d.Authors = append(d.Authors, pubmedName(name, false))
		}
	}
	r.Text = d.Title
	return r, true
}

// atomEntry reads one entry of arXiv's Atom feed (the feed's own title and id are not a
// record; nor is the entry arXiv gives for a malformed query, whose id is no arXiv id).
func atomEntry(e *xnode) (Record, bool) {
	var r Record
	rawID := oneLine(e.kid("id").text())
	if id, ok := parseLink(rawID); ok && id.Scheme == SchemeArXiv {
		r.addID(id)
		r.Details.ID = id.Value
	}
	for _, k := range e.kids("doi") {
		if id, ok := parseAs(SchemeDOI, oneLine(k.text())); ok {
			r.addID(id)
		}
	}
	if len(r.IDs) == 0 {
		return r, false
	}
	d := &r.Details
	d.Title = oneLine(e.kid("title").text())
	d.Year = yearOf(e.kid("published").text())
	d.Venue = oneLine(e.kid("journal_ref").text())
	d.URL = rawID
	for _, l := range e.kids("link") {
		if l.attr("rel") == "alternate" && l.attr("href") != "" {
			d.URL = l.attr("href")
		}
	}
	for _, a := range e.kids("author") {
		if name := a.kid("name").text(); name != "" && len(d.Authors) < maxAuthors {
			d.Authors = append(d.Authors, givenFirst(name))
		}
	}
	r.Text = d.Title + "\n" + oneLine(e.kid("summary").text())
	return r, true
}

// ---- markdown ----

// A markdown result (pubmed-mcp-server's, and prose tools'): a section under a heading
// whose own lines give an id field ("**PMID:** 123", "DOI: 10.1/x") is a record, with
// the sections under it that are not records themselves (its "Abstract"); a list item
// that names one source is a record (pubmed_find_related's "- **[PMID n](...)**");
// the ids of the rest (a list of PMIDs) are records without text. A text with none of
// these is one record, read as prose.

type mdSection struct {
	level   int
	heading string
	lines   []string
	kids    []*mdSection
}

var (
	headingRE   = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	boldFieldRE = regexp.MustCompile(`^\*\*([^*:]{1,40}?)(?:\s*\([^)]*\))?:\*\*\s*(.*)$`)
	fieldRE     = regexp.MustCompile(`^([A-Za-z][A-Za-z -]{0,30}?):\s+(\S.*)$`)
	listItemRE  = regexp.MustCompile(`^(?:[-*+]|[0-9]{1,3}[.)])\s+(.*)$`)
	relatedRE   = regexp.MustCompile(`^\*\*\[PMID ([0-9]{1,9})\]\(([^)\s]*)\)\*\*$`)
)

// Field labels of a record (lower case): the ids, and, for an unbolded "Label: value"
// line, the other labels read as fields rather than prose.
var (
	idLabels = map[string]string{"pmid": SchemePMID, "pmcid": SchemePMCID, "pmc id": SchemePMCID, "doi": SchemeDOI,
		"arxiv": SchemeArXiv, "arxiv id": SchemeArXiv, "openalex": SchemeOpenAlex, "openalex id": SchemeOpenAlex,
		"isbn": SchemeISBN, "epmc id": "", "id": "", "key": SchemeKey, "citation key": SchemeKey}
	linkLabels  = []string{"url", "pubmed", "pmc", "link", "oa copy"}
	plainLabels = []string{"title", "authors", "author", "journal", "venue", "year", "published", "source", "url", "link", "keywords", "type"}
)

type mdField struct{ label, value string }

// mdFields reads a line's fields: "**A:** x | **B:** y", or "Label: value" for a label
// of plainLabels or idLabels.
func mdFields(line string) []mdField {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "- **") {
		line = line[2:]
	}
	if strings.HasPrefix(line, "**") {
		var out []mdField
		for _, part := range strings.Split(line, " | ") {
			m := boldFieldRE.FindStringSubmatch(strings.TrimSpace(part))
			if m == nil {
				return out
			}
			out = append(out, mdField{strings.ToLower(strings.TrimSpace(m[1])), strings.TrimSpace(m[2])})
		}
		return out
	}
	if m := fieldRE.FindStringSubmatch(line); m != nil {
		label := strings.ToLower(strings.TrimSpace(m[1]))
		if _, ok := idLabels[label]; ok || slices.Contains(plainLabels, label) {
			return []mdField{{label, strings.TrimSpace(m[2])}}
		}
	}
	return nil
}

func markdownRecords(content string) []Record {
	root := &mdSection{}
	stack := []*mdSection{root}
	fence := false
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
		}
		if m := headingRE.FindStringSubmatch(line); m != nil && !fence {
			s := &mdSection{level: len(m[1]), heading: m[2]}
			for len(stack) > 1 && stack[len(stack)-1].level >= s.level {
				stack = stack[:len(stack)-1]
			}
			stack[len(stack)-1].kids = append(stack[len(stack)-1].kids, s)
			stack = append(stack, s)
			continue
		}
		top := stack[len(stack)-1]
		top.lines = append(top.lines, line)
	}
	var m mdReader
	m.section(root)
	if len(m.recs) == 0 {
		return []Record{proseRecord(content, nil)}
	}
	for _, id := range textIDs(m.rest.String()) {
		if !slices.ContainsFunc(m.recs, func(r Record) bool { return slices.ContainsFunc(r.IDs, id.Matches) }) {
			m.recs = append(m.recs, Record{IDs: []ID{id}})
		}
	}
	return m.recs
}

type mdReader struct {
	recs []Record
	rest strings.Builder // the text of no record
}

// section reads a section that is not part of a record: it is one, or holds some.
func (m *mdReader) section(s *mdSection) {
	if len(m.recs) >= maxRecords {
		return
	}
	if r, ok := mdRecord(s); ok {
		// Its text is its own and that of the sections under it that are not records
		// (its "Abstract"); those that are records are records of their own.
		parts := []string{r.Text}
		var sub func(*mdSection, int)
		sub = func(k *mdSection, depth int) {
			if _, ok := mdRecord(k); ok {
				m.section(k)
				return
			}
			if depth > maxDepth || notProse(k.heading) {
				return
			}
			parts = append(parts, k.heading)
			for _, l := range k.lines {
				if len(mdFields(l)) == 0 { // its keywords, its ids: not prose
					parts = append(parts, l)
				}
			}
			for _, kk := range k.kids {
				sub(kk, depth+1)
			}
		}
		at := len(m.recs)
		m.recs = append(m.recs, Record{})
		for _, k := range s.kids {
			sub(k, 0)
		}
		r.Text = strings.TrimSpace(strings.Join(parts, "\n"))
		m.recs[at] = r
		return
	}
	m.rest.WriteString(s.heading + "\n")
	m.items(s.lines)
	for _, k := range s.kids {
		m.section(k)
	}
}

// notProse says whether a section under a record is not what the source says: its
// reference list (other works, with their ids), its MeSH terms, its grants.
func notProse(heading string) bool {
	h := strings.ToLower(heading)
	for _, p := range []string{"references", "reference list", "mesh terms", "grants", "affiliations", "cited by"} {
		if strings.HasPrefix(h, p) {
			return true
		}
	}
	return false
}

// items reads a section's list items that each name one source as records, and keeps
// the other lines as the rest.
func (m *mdReader) items(lines []string) {
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		it := listItemRE.FindStringSubmatch(line)
		if it == nil {
			m.rest.WriteString(line + "\n")
			continue
		}
		j := i + 1
		for j < len(lines) && strings.HasPrefix(lines[j], "  ") && strings.TrimSpace(lines[j]) != "" {
			j++
		}
		item := lines[i:j]
		r, ok := mdItem(it[1], item[1:])
		if !ok {
			m.rest.WriteString(strings.Join(item, "\n") + "\n")
			i = j - 1
			continue
		}
		m.recs = append(m.recs, r)
		i = j - 1
	}
}

// mdItem reads a list item as a record, if it names one source and no other: the item
// of pubmed_find_related (its PMID link; then its title, *authors*, and journal and
// date), or an item that writes ids of one source only.
func mdItem(head string, more []string) (Record, bool) {
	var r Record
	if m := relatedRE.FindStringSubmatch(strings.TrimSpace(head)); m != nil {
		id, ok := parseAs(SchemePMID, m[1])
		if !ok {
			return r, false
		}
		r.addID(id)
		r.Details.ID, r.Details.URL = m[1], m[2]
		var text []string
		for k, l := range more {
			l = strings.TrimSpace(l)
			switch {
			case k == 0:
				r.Details.Title = l
				text = append(text, l)
			case strings.HasPrefix(l, "*") && strings.HasSuffix(l, "*") && r.Details.Authors == nil:
				r.Details.Authors = splitAuthors(strings.Trim(l, "*"))
			default:
				if y := yearOf(l); y > 0 && r.Details.Year == 0 {
					r.Details.Year = y
					r.Details.Venue = strings.TrimSpace(strings.Split(l, ",")[0])
				} else {
					text = append(text, l)
				}
			}
		}
		r.Text = strings.Join(text, "\n")
		return r, true
	}
	text := strings.TrimSpace(head + "\n" + strings.Join(more, "\n"))
	ids := textIDs(text)
	if len(ids) == 0 || !oneEach(ids) {
		return r, false
	}
	for _, id := range ids {
		r.addID(id)
	}
	r.Details.Year = yearOf(text)
	r.Text = text
	return r, true
}

// oneEach says whether ids hold at most one id of each scheme: the ids of one source.
func oneEach(ids []ID) bool {
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id.Scheme] {
			return false
		}
		seen[id.Scheme] = true
	}
	return true
}

// mdRecord reads a section as a record if its own lines give the ids of one source: its
// details and its own text, not that of the sections under it.
func mdRecord(s *mdSection) (Record, bool) {
	var r Record
	d := &r.Details
	var text []string
	var authors []string
	listOf := "" // the field whose list the next "- " lines are
	source := ""
	for _, line := range s.lines {
		trim := strings.TrimSpace(line)
		if listOf != "" && strings.HasPrefix(trim, "- ") {
			if listOf == "authors" && len(authors) < maxAuthors {
				authors = append(authors, mdPerson(trim[2:]))
			}
			continue
		}
		listOf = ""
		fields := mdFields(line)
		if len(fields) == 0 {
			text = append(text, line)
			continue
		}
		for _, f := range fields {
			label := strings.ToLower(f.label)
			if f.value == "" {
				listOf = label
				continue
			}
			if scheme, ok := idLabels[label]; ok {
				if i := strings.Index(f.value, " ("); i > 0 {
					f.value = f.value[:i] // "PMC123 (PMC)"
				}
				var id ID
				if scheme == "" || scheme == SchemeKey {
					id = ParseID(f.value)
				} else {
					id, _ = parseAs(scheme, unwrap(f.value))
				}
				if id.Value != "" {
					r.addID(id)
					if d.ID == "" || label == "id" || label == "key" || label == "epmc id" {
						d.ID = unwrap(f.value)
					}
				}
				continue
			}
			if slices.Contains(linkLabels, label) {
				if id, ok := parseLink(f.value); ok {
					r.addID(id)
				}
				if d.URL == "" || label == "url" {
					d.URL = f.value
				}
				continue
			}
			switch label {
			case "title":
				d.Title = f.value
			case "authors", "author":
				authors = splitAuthors(f.value)
			case "journal", "venue":
				d.Venue = mdVenue(f.value)
				if d.Year == 0 {
					issn, _, _ := strings.Cut(f.value, "ISSN")
					d.Year = yearOf(issn)
				}
			case "source":
				source = f.value
			case "year", "published", "publication date", "date":
				if y := yearOf(f.value); y > 0 {
					d.Year = y
				}
			}
		}
	}
	if len(r.IDs) == 0 || !oneEach(r.IDs) {
		return Record{}, false
	}
	if d.Title == "" && s.heading != "" && !slices.ContainsFunc(r.IDs, ParseID(s.heading).Matches) && !strings.HasPrefix(s.heading, "PMID ") {
		d.Title = s.heading
	}
	if d.Venue == "" && source != "" && !slices.Contains(epmcSources, strings.Fields(source)[0]) && !strings.Contains(source, "(") {
		d.Venue = source
	}
	d.Authors = authors
	parts := []string{}
	if d.Title != "" {
		parts = append(parts, d.Title)
	}
	if t := strings.TrimSpace(strings.Join(text, "\n")); t != "" {
		parts = append(parts, t)
	}
	r.Text = strings.Join(parts, "\n")
	return r, true
}

var mdPersonNoise = regexp.MustCompile(`\s*(\[aff [^\]]*\]|· ORCID \S+|\([A-Z]{1,4}\))`)

// mdPerson is an author of pubmed_fetch_articles' list ("Jane Q Doe (JQ) [aff 0] · ORCID
// ..."), as "Doe, Jane Q".
func mdPerson(s string) string {
	s = mdPersonNoise.ReplaceAllString(s, "")
	if c, ok := strings.CutSuffix(strings.TrimSpace(s), " (collective)"); ok {
		return c
	}
	if strings.Contains(s, " — ") { // a collective and a person: keep the collective
		s, _, _ = strings.Cut(s, " — ")
		return strings.TrimSuffix(strings.TrimSpace(s), " (collective)")
	}
	return givenFirst(s)
}

// mdVenue is the journal of pubmed-mcp's "Title (Abbrev), 2021 May 3, **12**(3), 45-67".
func mdVenue(s string) string {
	s, _, _ = strings.Cut(s, ", ")
	if i := strings.LastIndex(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
