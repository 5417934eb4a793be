package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/research"
)

// The references a session's hypotheses cite: each with what the citation checks of its
// reviews found, and the session's bibliography (BibTeX and CSL-JSON), which leaves out
// the sources no tool returned, since they do not exist as cited.

// File names of the bibliography.
const (
	BibTeXFile = "bibliography.bib"
	CSLFile    = "bibliography.json"
)

// Verdicts beyond the citation checks': a reference no review has checked yet.
const unchecked = "unchecked"

// cited is a reference as the report shows it: the source, what its checks found, and
// whether a review judged that its quote supports the claim it is cited for.
type cited struct {
	research.Reference
	Verdict string // research.Citation* or unchecked
	Note    string
	Passage string // the record's passage closest to an altered or contradicted quote
	Support string // research.Support*, or "" when no review judged it
	// SupportNote is the judging review's reason.
	SupportNote string
}

// Flagged says whether a reader should distrust the citation: its check found it other
// than verified, or a review found its quote does not support its claim.
func (c cited) Flagged() bool {
	return c.Verdict != unchecked && research.CitationCheck{Verdict: c.Verdict, Support: c.Support}.Flagged()
}

// severity orders the verdicts: the worst a review found is the reference's.
func severity(v string) int {
	switch v {
	case research.CitationInvented:
		return 5
	case research.CitationContradicted:
		return 4
	case research.CitationUnsupported:
		return 3
	case research.CitationAltered:
		return 2
	case research.CitationVerified:
		return 1
	}
	return 0
}

// supportSeverity orders the support judgements: a quote one review found contradicting
// its claim stays so, whatever another found.
func supportSeverity(s string) int {
	switch s {
	case research.SupportContradicts:
		return 3
	case research.SupportIrrelevant:
		return 2
	case research.SupportSupports:
		return 1
	}
	return 0
}

// citations are a hypothesis' references, each with the worst verdict any of its reviews'
// checks gave it.
func (v *view) citations(id string) []cited {
	h, ok := v.text(id)
	if !ok {
		return nil
	}
	var out []cited
	for _, r := range h.References {
		c := cited{Reference: r, Verdict: unchecked}
		for _, rv := range v.in.Reviews[id] {
			for _, ch := range rv.Citations {
				if !citation.SameID(ch.ID, r.ID) {
					continue
				}
				if severity(ch.Verdict) > severity(c.Verdict) {
					c.Verdict, c.Note, c.Passage = ch.Verdict, ch.Note, ch.Passage
				}
				if supportSeverity(ch.Support) > supportSeverity(c.Support) {
					c.Support, c.SupportNote = ch.Support, ch.SupportNote
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// bibliography is every source the ranked hypotheses (and their reviews) cite, once each,
// in the order the ranking first cites them, without those a check found invented. It
// also counts the invented citations it left out.
func (v *view) bibliography() (refs []research.Reference, invented int) {
	add := func(r research.Reference) {
		if i := slices.IndexFunc(refs, func(x research.Reference) bool { return citation.SameID(x.ID, r.ID) }); i >= 0 {
			if refs[i].Title == "" {
				refs[i] = r
			}
			return
		}
		refs = append(refs, r)
	}
	for _, e := range v.ranked {
		for _, c := range v.citations(e.ID) {
			if c.Verdict == research.CitationInvented || c.Source == "" {
				invented++
				continue
			}
			add(c.Reference)
		}
		for _, rv := range v.in.Reviews[e.ID] {
			for _, r := range rv.References {
				if r.Source != "" {
					add(r)
				}
			}
		}
	}
	for i := range refs {
		refs[i].Quote, refs[i].Claim, refs[i].Source, refs[i].Fabricated, refs[i].Planted = "", "", "", false, "" // the source, not how it was used
	}
	return refs, invented
}

// address is where a source is, as given: its DOI's resolver, or its URL. It may be any
// text a model or a tool wrote; link says whether a reader may follow it.
func address(r research.Reference) string {
	if doi := citation.NormalDOI(r.DOI); doi != "" {
		return doiURL(doi)
	}
	if doi := citation.NormalDOI(r.ID); doi != "" {
		return doiURL(doi)
	}
	if u := strings.TrimSpace(r.URL); u != "" {
		return u
	}
	return registryURL(r)
}

// registryURL is a source's page at the registry of its PubMed, PMC, arXiv or OpenAlex
// id, for a source a literature service gave no DOI or URL: each id is put in its normal
// form (citation.ParseID), so what goes into the link is only the id's own characters.
func registryURL(r research.Reference) string {
	for _, id := range []string{r.PMID, r.PMCID, r.ArXiv, r.OpenAlex, r.ID} {
		switch p := citation.ParseID(id); p.Scheme {
		case citation.SchemePMID:
			return "https://pubmed.ncbi.nlm.nih.gov/" + url.PathEscape(p.Value) + "/"
		case citation.SchemePMCID:
			return "https://pmc.ncbi.nlm.nih.gov/articles/" + url.PathEscape(p.Value) + "/"
		case citation.SchemeArXiv:
			return "https://arxiv.org/abs/" + p.Value // new-style or old-style (hep-th/9901001) ids, both path-safe
		case citation.SchemeOpenAlex:
			return "https://openalex.org/" + url.PathEscape(p.Value)
		}
	}
	return ""
}

// link is the source's address when the report may link it (webURL).
func link(r research.Reference) string { return webURL(address(r)) }

// webURL is a, when a reader may follow it: an http(s) URL with a host, no user name
// (https://trusted.example@elsewhere.example reads as trusted) and nothing a Markdown
// autolink would end at or a browser would read as a slash. Anything else (javascript:,
// data:, file:, a relative or protocol-relative path) is "": shown as text, never linked,
// since a viewer that does not sanitise would follow it.
func webURL(a string) string {
	u, err := url.Parse(a)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	if strings.ContainsFunc(a, func(c rune) bool {
		return c <= ' ' || strings.ContainsRune("<>\\", c) || unicode.IsControl(c) || unicode.Is(unicode.Cf, c)
	}) {
		return ""
	}
	return a
}

// doiURL is a DOI's link at doi.org, with what a URL path cannot hold ("#", "?", "%",
// spaces, "<>" as SICI DOIs have) percent-encoded, and the rest as written.
func doiURL(doi string) string {
	var b strings.Builder
	b.WriteString("https://doi.org/")
	for i := 0; i < len(doi); i++ {
		c := doi[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~!$&()*+,;=:@/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// mdAddress is a source's address in report.md: an autolink when it may be followed, else
// a code span, which no renderer links.
func mdAddress(r research.Reference) string {
	if l := link(r); l != "" {
		return " <" + l + ">"
	}
	if a := address(r); a != "" {
		return " " + code(a)
	}
	return ""
}

// authorsShort is up to three authors, then "et al.".
func authorsShort(authors []string) string {
	if len(authors) == 0 {
		return ""
	}
	names := make([]string, 0, 3)
	for _, a := range authors[:min(3, len(authors))] {
		names = append(names, strings.TrimSpace(a))
	}
	s := strings.Join(names, "; ")
	if len(authors) > 3 {
		s += " et al."
	}
	return s
}

// citationLine is a reference in a sentence: "Ito, Kenji et al. (2021). Title. Venue."
func citationLine(r research.Reference) string {
	var parts []string
	head := authorsShort(r.Authors)
	if r.Year > 0 {
		head = strings.TrimSpace(fmt.Sprintf("%s (%d)", head, r.Year))
	}
	if head != "" {
		parts = append(parts, head)
	}
	parts = append(parts, orText(oneLine(r.Title)))
	if r.Venue != "" {
		parts = append(parts, oneLine(r.Venue))
	}
	return strings.Join(parts, ". ") + "."
}

// verdictWord is a check's verdict as the report says it.
func verdictWord(v string) string {
	switch v {
	case research.CitationVerified:
		return "verified"
	case research.CitationAltered:
		return "altered: close to its source, not its words"
	case research.CitationContradicted:
		return "flagged: its source says otherwise"
	case research.CitationUnsupported:
		return "flagged: its source does not say this"
	case research.CitationInvented:
		return "flagged: no tool returned this source"
	}
	return "not checked yet"
}

// supportWord says what a review judged of a quote against its claim.
func supportWord(s string) string {
	switch s {
	case research.SupportSupports:
		return "supports the claim"
	case research.SupportContradicts:
		return "flagged: contradicts the claim"
	case research.SupportIrrelevant:
		return "flagged: does not bear on the claim"
	}
	return ""
}

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
		for _, c := range strings.ToLower(fold(s)) {
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

// fold removes accents: "García" is "Garcia".
func fold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
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

// references writes a hypothesis' references, each with its check's verdict.
func references(b *bytes.Buffer, cs []cited) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(b, "**References:**\n\n")
	for _, c := range cs {
		line := mdText(citationLine(c.Reference))
		switch {
		case c.Verdict == research.CitationInvented || c.Source == "" && c.Title == "":
			line = code(c.ID) + " (no tool returned it)." // and no link: it may lead nowhere
		case c.Title == "":
			line = code(c.ID) + mdAddress(c.Reference) // a record without a title: the id names it
		default:
			line += mdAddress(c.Reference)
		}
		fmt.Fprintf(b, "- %s — *%s*", line, verdictWord(c.Verdict))
		if w := supportWord(c.Support); w != "" {
			fmt.Fprintf(b, "; *%s*", w)
		}
		if cl := mdText(c.Claim); cl != "" {
			fmt.Fprintf(b, "\n  Claim: %s", cl)
		}
		if q := mdText(c.Quote); q != "" {
			fmt.Fprintf(b, "\n  > %s", q)
		}
		if p := mdText(c.Passage); p != "" {
			fmt.Fprintf(b, "\n  The source's words: %s", p)
		}
		if n := mdText(c.Note); n != "" && c.Verdict != research.CitationVerified {
			fmt.Fprintf(b, "\n  Check: %s", n)
		}
		if n := mdText(c.SupportNote); n != "" && c.Support != "" {
			fmt.Fprintf(b, "\n  Support: %s", n)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// bibliographySection writes the session's bibliography.
func bibliographySection(b *bytes.Buffer, v *view) {
	refs, invented := v.bibliography()
	if len(refs) == 0 && invented == 0 {
		return
	}
	section(b, "References", fmt.Sprintf("Every source the ranked hypotheses and their reviews cite, as the tools returned it (also in %s and %s).", BibTeXFile, CSLFile))
	for i, r := range refs {
		fmt.Fprintf(b, "%d. %s%s\n", i+1, mdText(citationLine(r)), mdAddress(r))
	}
	if len(refs) > 0 {
		b.WriteString("\n")
	}
	if invented > 0 {
		fmt.Fprintf(b, "%s were left out: no tool returned those sources to the turn that cited them.\n\n", count(invented, "citation"))
	}
}
