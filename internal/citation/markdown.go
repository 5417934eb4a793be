package citation

import (
	"regexp"
	"slices"
	"strings"
)

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
		"pubmed id": SchemePMID, "pubmed": SchemePMID, "pmc": SchemePMCID,
		"arxiv": SchemeArXiv, "arxiv id": SchemeArXiv, "openalex": SchemeOpenAlex, "openalex id": SchemeOpenAlex,
		"isbn": SchemeISBN, "epmc id": "", "id": "", "key": SchemeKey, "citation key": SchemeKey}
	linkLabels  = []string{"url", "link", "oa copy"}
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
	if recs, ok := blockRecords(s); ok {
		m.recs = append(m.recs, recs...)
		for _, k := range s.kids {
			m.section(k)
		}
		return
	}
	m.rest.WriteString(s.heading + "\n")
	m.items(s.lines)
	for _, k := range s.kids {
		m.section(k)
	}
}

// blockRecords reads a section's lines as blocks of fields of one source each, as a plain
// text result lists papers ("Title: ...", "DOI: ...", "Abstract: ...", then the next
// "Title: ..."): a field its block already has, or a separator line ("---"), starts the
// next block. It reads them so only if two blocks or more are records.
func blockRecords(s *mdSection) ([]Record, bool) {
	if len(s.lines) < 2 {
		return nil, false
	}
	var (
		recs  []Record
		cur   []string
		seen  = map[string]bool{}
		fails bool
	)
	// next closes the block read so far: every block is a record with prose of its own,
	// but for a preamble that names no source ("Found 2 papers:"); blocks that are only
	// ids ("DOI: a", "DOI: b", then the text) do not say whose the text is. A result that
	// fails is given up at its first block that is not one.
	next := func() {
		if len(cur) == 0 || fails {
			cur, seen = nil, map[string]bool{}
			return
		}
		r, ok := mdRecord(&mdSection{level: s.level, lines: cur})
		switch {
		case !ok && len(recs) == 0 && preamble(cur):
		case !ok || r.Text == "":
			fails = true
		default:
			recs = append(recs, r)
		}
		cur, seen = nil, map[string]bool{}
	}
	for _, line := range s.lines {
		if fails {
			return nil, false
		}
		if separatorRE.MatchString(line) {
			next()
			continue
		}
		var labels []string
		for _, f := range mdFields(line) {
			label := f.label
			if scheme, ok := idLabels[label]; ok && scheme != "" {
				label = scheme // "PMID" and "PubMed ID" are one field
			}
			labels = append(labels, label)
		}
		if slices.ContainsFunc(labels, func(l string) bool { return seen[l] }) || len(labels) > 0 && len(seen) == 0 && len(cur) > 0 {
			next() // a field the block has, or the first field after a preamble
		}
		for _, l := range labels {
			seen[l] = true
		}
		cur = append(cur, line)
	}
	next()
	return recs, !fails && len(recs) >= 2
}

// preamble says whether lines are a short note before a plain-text list of sources that
// names none of them.
func preamble(lines []string) bool {
	text := strings.Join(lines, "\n")
	return len(text) <= 300 && len(textIDs(text)) == 0
}

// separatorRE is a line that separates the blocks of a plain-text result.
var separatorRE = regexp.MustCompile(`^\s*(?:-{3,}|\*{3,}|_{3,}|={3,})\s*$`)

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
			if id := ParseID(trim); (id.Scheme == SchemePMCID || id.Scheme == SchemePMID) && len(trim) <= 24 &&
				strings.HasPrefix(strings.ToUpper(trim), "PM") {
				r.addID(id) // "PMC 9876543" on a line of its own
				continue
			}
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
				r.mdIDField(scheme, label, f.value)
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

// mdIDField reads a field whose label names an id (of scheme, or any scheme when "") into
// the record's ids, and its value as the record's id or, when a link, its URL.
func (r *Record) mdIDField(scheme, label, value string) {
	d := &r.Details
	if i := strings.Index(value, " ("); i > 0 {
		value = value[:i] // "PMC123 (PMC)"
	}
	var id ID
	if scheme == "" || scheme == SchemeKey {
		id = ParseID(value)
	} else {
		id, _ = parseAs(scheme, unwrap(value))
	}
	if _, link := parseLink(value); link {
		if id.Value != "" {
			r.addID(id) // "**PubMed:** https://pubmed.ncbi.nlm.nih.gov/1/"
		}
		if d.URL == "" {
			d.URL = value
		}
		return
	}
	if id.Value != "" {
		r.addID(id)
		if d.ID == "" || label == "id" || label == "key" || label == "epmc id" {
			d.ID = unwrap(value)
		}
	}
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
