package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/research"
)

// The session's bibliography as files: BibTeX, with keys a LaTeX document can cite, and
// CSL-JSON.

// File names of the bibliography.
const (
	BibTeXFile = "bibliography.bib"
	CSLFile    = "bibliography.json"
)

// BibTeX writes references as BibTeX entries: a stable key for each (first author's
// family name, year, first word of the title), LaTeX's special characters escaped, and
// any other text as UTF-8, which biber and modern BibTeX read. Every value's braces are
// balanced whatever its source wrote (texEscape, bibVerbatim), so none can close its
// field and start another: a DOI of "10.1/x},note={..." stays one DOI.
func BibTeX(refs []research.Reference) []byte {
	var b bytes.Buffer
	used := map[string]int{}
	for _, r := range refs {
		key := bibKey(r)
		if n := used[key]; n > 0 {
			used[key]++
			key = fmt.Sprintf("%s%c", key, 'a'+rune(n))
		} else {
			used[key] = 1
		}
		kind := "article"
		if r.Venue == "" {
			kind = "misc"
		}
		fmt.Fprintf(&b, "@%s{%s,\n", kind, key)
		field := func(name, value string) {
			if value = oneLine(value); value != "" {
				fmt.Fprintf(&b, "  %s = {%s},\n", name, value)
			}
		}
		var authors []string
		for _, a := range r.Authors {
			if !strings.Contains(a, ",") && strings.Contains(a, " ") {
				a = "{" + texEscape(a) + "}" // an organisation: one name, not first and last
			} else {
				a = texEscape(a)
			}
			authors = append(authors, a)
		}
		field("author", strings.Join(authors, " and "))
		field("title", "{"+texEscape(r.Title)+"}") // keep its capitals
		if kind == "article" {
			field("journal", texEscape(r.Venue))
		}
		if r.Year > 0 {
			field("year", fmt.Sprint(r.Year))
		}
		if doi := citation.NormalDOI(r.DOI); doi != "" {
			field("doi", bibVerbatim(doi))
		} else if doi := citation.NormalDOI(r.ID); doi != "" {
			field("doi", bibVerbatim(doi))
		}
		// A reference manager links the URL too: only an http(s) one is given.
		field("url", bibVerbatim(webURL(strings.TrimSpace(r.URL))))
		field("pmid", bibVerbatim(idOf(citation.SchemePMID, r.PMID, r.ID)))
		field("pmcid", bibVerbatim(idOf(citation.SchemePMCID, r.PMCID, r.ID)))
		if arxiv := idOf(citation.SchemeArXiv, r.ArXiv, r.ID); arxiv != "" {
			field("eprint", bibVerbatim(arxiv))
			field("eprinttype", "arxiv")
		}
		b.Truncate(b.Len() - 2) // the last ",\n"
		b.WriteString("\n}\n\n")
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

var keyRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_:-]*$`)

// bibKey is a citation key: the source's own key when it has no DOI (so a reference
// manager matches it to its record), else letters and digits of the first author's
// family name, the year, and the title's first long word.
func bibKey(r research.Reference) string {
	if citation.NormalDOI(r.ID) == "" && keyRE.MatchString(r.ID) {
		return r.ID
	}
	word := func(s string) string {
		var b strings.Builder
		for _, c := range strings.ToLower(research.Fold(s)) {
			if c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c)) {
				b.WriteRune(c)
			}
		}
		return b.String()
	}
	var key string
	if len(r.Authors) > 0 {
		family, _, _ := strings.Cut(r.Authors[0], ",")
		key = word(family)
	}
	if r.Year > 0 {
		key += fmt.Sprint(r.Year)
	}
	for _, w := range strings.Fields(r.Title) {
		if w = word(w); len(w) > 3 {
			key += w
			break
		}
	}
	if key == "" {
		key = "ref"
	}
	return key
}

// texEscape escapes the characters LaTeX gives a meaning. Braces become \textbraceleft{}
// and \textbraceright{}, not \{ and \}: BibTeX and biber count every brace, escaped or
// not, when they look for a field's end, so "\}" would close it.
func texEscape(s string) string { return texEscaper.Replace(s) }

var texEscaper = strings.NewReplacer(`\`, `\textbackslash{}`, `{`, `\textbraceleft{}`, `}`, `\textbraceright{}`, `&`, `\&`, `%`, `\%`,
	`$`, `\$`, `#`, `\#`, `_`, `\_`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`)

// bibVerbatim makes a DOI or a URL safe in a field that biblatex reads verbatim (no
// LaTeX escapes there): braces, backslashes, white space and control characters are
// percent-encoded, which a resolver reads as the same address.
func bibVerbatim(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f || c == '{' || c == '}' || c == '\\' {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// cslItem is a reference as CSL-JSON writes it.
type cslItem struct {
	ID             string     `json:"id"`
	Type           string     `json:"type"`
	Title          string     `json:"title"`
	Author         []cslName  `json:"author,omitempty"`
	Issued         *cslIssued `json:"issued,omitempty"`
	ContainerTitle string     `json:"container-title,omitempty"`
	DOI            string     `json:"DOI,omitempty"`
	PMID           string     `json:"PMID,omitempty"`
	PMCID          string     `json:"PMCID,omitempty"`
	URL            string     `json:"URL,omitempty"`
}

// idOf is the first of the ids that is of the scheme, in its normal form, or "".
func idOf(scheme string, ids ...string) string {
	for _, id := range ids {
		if p := citation.ParseID(id); p.Scheme == scheme {
			return p.Value
		}
	}
	return ""
}

type cslName struct {
	Family  string `json:"family,omitempty"`
	Given   string `json:"given,omitempty"`
	Literal string `json:"literal,omitempty"`
}

type cslIssued struct {
	DateParts [][]int `json:"date-parts"`
}

// CSL writes references as CSL-JSON, which Zotero, Pandoc and citeproc read.
func CSL(refs []research.Reference) ([]byte, error) {
	items := []cslItem{}
	for _, r := range refs {
		it := cslItem{ID: r.ID, Type: "article-journal", Title: r.Title, ContainerTitle: r.Venue, URL: webURL(strings.TrimSpace(r.URL)),
			DOI: citation.NormalDOI(r.DOI), PMID: idOf(citation.SchemePMID, r.PMID, r.ID), PMCID: idOf(citation.SchemePMCID, r.PMCID, r.ID)}
		if it.DOI == "" {
			it.DOI = citation.NormalDOI(r.ID)
		}
		if r.Venue == "" {
			it.Type = "document"
		}
		for _, a := range r.Authors {
			family, given, ok := strings.Cut(a, ",")
			if ok {
				it.Author = append(it.Author, cslName{Family: strings.TrimSpace(family), Given: strings.TrimSpace(given)})
			} else {
				it.Author = append(it.Author, cslName{Literal: strings.TrimSpace(a)})
			}
		}
		if r.Year > 0 {
			it.Issued = &cslIssued{DateParts: [][]int{{r.Year}}}
		}
		items = append(items, it)
	}
	b, err := json.MarshalIndent(items, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
