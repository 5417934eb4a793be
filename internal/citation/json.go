package citation

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// JSON results, by their field names: cosci's literature server, CSL-JSON, PubMed's
// esummary, Europe PMC, OpenAlex, Crossref, Semantic Scholar and pubmed-mcp's structured
// output all name a record's ids, title and prose with the fields listed here, so one
// reader walks them all; what a record says of its source is read in jsondetails.go.

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
			if id, ok := parseLink(scalar(get(o, "id"))); !ok || id.Scheme != SchemeOpenAlex {
				continue
			}
		}
		if hasValue(get(o, k)) {
			return true
		}
	}
	return len(otherProse(o)) > 0
}

// proseWords are what the name of a field of prose holds, for a field no list here
// names ("paper_abstract", "AbstractText_en", "summaryText"): an abstract under a key of
// its own is still the record's text.
var proseWords = []string{"abstract", "summary", "snippet", "description", "content", "text", "body", "passage"}

// otherProse is the text of an object's string fields whose names hold a prose word and
// that proseKeys do not name.
func otherProse(o map[string]any) []string {
	var keys []string
	for k, v := range o {
		if s, ok := v.(string); !ok || strings.TrimSpace(s) == "" {
			continue
		}
		f := foldKey(k)
		if !foldedProseKeys[f] && slices.ContainsFunc(proseWords, func(w string) bool { return strings.Contains(f, w) }) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, stripMarkup(o[k].(string)))
	}
	return out
}

// foldedProseKeys are proseKeys folded (foldKey).
var foldedProseKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range proseKeys {
		m[foldKey(k)] = true
	}
	return m
}()

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
			for _, s := range scalars(get(o, k)) {
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
	source, _ := get(o, "source").(string)
	otherSource := slices.Contains(epmcSources, source) && source != "MED"
	for _, k := range ownIDKeys {
		s := scalar(get(o, k))
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
		if id, ok := parseLink(scalar(get(o, k))); ok {
			add(id)
		}
	}
	for _, k := range []string{"ids", "externalIds"} { // OpenAlex, Semantic Scholar
		if m, ok := get(o, k).(map[string]any); ok {
			for _, id := range objectIDs(m) {
				add(id)
			}
			if id, ok := parseAs(SchemeDOI, scalar(get(m, "DOI"))); ok {
				add(id)
			}
		}
	}
	if list, ok := get(o, "articleids").([]any); ok { // PubMed esummary
		for _, x := range list {
			a, _ := x.(map[string]any)
			value := scalar(get(a, "value"))
			switch scalar(get(a, "idtype")) {
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
		if d.ID = scalar(get(o, k)); d.ID != "" {
			break
		}
	}
	for _, k := range titleKeys {
		if d.Title = firstString(get(o, k)); d.Title != "" {
			break
		}
	}
	d.Title = stripMarkup(d.Title)
	d.Venue = jsonVenue(o)
	for _, k := range linkKeys {
		if d.URL = scalar(get(o, k)); d.URL != "" {
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
		if k == "display_name" && hasValue(get(o, "title")) {
			continue
		}
		if t := proseOf(k, get(o, k), 0); t != "" && !slices.Contains(parts, t) {
			parts = append(parts, t)
		}
	}
	for _, t := range otherProse(o) {
		if !slices.Contains(parts, t) {
			parts = append(parts, t)
		}
	}
	r.Text = strings.Join(parts, "\n")
	return r
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
