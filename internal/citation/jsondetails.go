package citation

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// What a JSON record says of its source, in the fields each API writes it in: its prose
// (OpenAlex's abstract rebuilt from its inverted index), venue, year and authors.

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
			if t := proseOf(key, get(v, k), depth+1); t != "" {
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
		switch v := get(o, k).(type) {
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
	if s := scalar(get(o, "source")); s != "" && !slices.Contains(epmcSources, s) {
		return s
	}
	return ""
}

func jsonYear(o map[string]any) int {
	for _, k := range []string{"year", "publication_year", "pubYear", "pubdate", "pubDate", "sortpubdate",
		"firstPublicationDate", "issued", "published", "published-print", "published-online", "publicationDate",
		"publication_date", "created", "date"} {
		if y := yearOf(get(o, k)); y > 0 {
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
		if parts, ok := get(v, "date-parts").([]any); ok && len(parts) > 0 {
			if p, ok := parts[0].([]any); ok && len(p) > 0 {
				return yearOf(p[0])
			}
		}
		if y := yearOf(get(v, "year")); y > 0 {
			return y
		}
		return yearOf(get(v, "medlineDate"))
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
	if as, ok := get(o, "authorships").([]any); ok { // OpenAlex
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
		v := get(o, k)
		if m, ok := v.(map[string]any); ok { // Europe PMC core: {"author": [...]}
			v = get(m, "author")
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
	if _, crossref := lookup(a, "sequence"); crossref { // Crossref names an organisation so
		return scalar(get(a, "name"))
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
