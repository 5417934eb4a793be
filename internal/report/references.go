package report

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// link is where a reader finds a source: its DOI's resolver, or its URL.
func link(r research.Reference) string {
	if doi := citation.NormalDOI(r.DOI); doi != "" {
		return "https://doi.org/" + doi
	}
	if doi := citation.NormalDOI(r.ID); doi != "" {
		return "https://doi.org/" + doi
	}
	return r.URL
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
// any other text as UTF-8, which biber and modern BibTeX read.
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
			field("doi", doi)
		} else if doi := citation.NormalDOI(r.ID); doi != "" {
			field("doi", doi)
		}
		field("url", r.URL)
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

// texEscape escapes the characters LaTeX gives a meaning.
func texEscape(s string) string {
	r := strings.NewReplacer(`\`, `\textbackslash{}`, `{`, `\{`, `}`, `\}`, `&`, `\&`, `%`, `\%`, `$`, `\$`,
		`#`, `\#`, `_`, `\_`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`)
	return r.Replace(s)
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
	URL            string     `json:"URL,omitempty"`
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
		it := cslItem{ID: r.ID, Type: "article-journal", Title: r.Title, ContainerTitle: r.Venue, URL: r.URL,
			DOI: citation.NormalDOI(r.DOI)}
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
		line := citationLine(c.Reference)
		if c.Title == "" {
			line = code(c.ID) + " (no tool returned it)." // and no link: it may lead nowhere
		} else if l := link(c.Reference); l != "" {
			line += " <" + l + ">"
		}
		fmt.Fprintf(b, "- %s — *%s*", line, verdictWord(c.Verdict))
		if w := supportWord(c.Support); w != "" {
			fmt.Fprintf(b, "; *%s*", w)
		}
		if cl := oneLine(c.Claim); cl != "" {
			fmt.Fprintf(b, "\n  Claim: %s", cl)
		}
		if q := oneLine(c.Quote); q != "" {
			fmt.Fprintf(b, "\n  > %s", q)
		}
		if p := oneLine(c.Passage); p != "" {
			fmt.Fprintf(b, "\n  The source's words: %s", p)
		}
		if n := oneLine(c.Note); n != "" && c.Verdict != research.CitationVerified {
			fmt.Fprintf(b, "\n  Check: %s", n)
		}
		if n := oneLine(c.SupportNote); n != "" && c.Support != "" {
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
		line := citationLine(r)
		if l := link(r); l != "" {
			line += " <" + l + ">"
		}
		fmt.Fprintf(b, "%d. %s\n", i+1, line)
	}
	if len(refs) > 0 {
		b.WriteString("\n")
	}
	if invented > 0 {
		fmt.Fprintf(b, "%s were left out: no tool returned those sources to the turn that cited them.\n\n", count(invented, "citation"))
	}
}
