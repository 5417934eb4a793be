package report

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/research"
)

// Where a cited source is, and whether a reader may follow the address a model or a tool
// gave.

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

// SourceLink is where a reader may follow a cited source: its DOI's resolver, its URL or
// its registry page, when that is an address a page may link (an http(s) URL with a host
// and no user name); "" otherwise.
func SourceLink(r research.Reference) string { return link(r) }

// WebURL is a, when a page may link it (webURL): an http(s) URL with a host and no user
// name; "" otherwise.
func WebURL(a string) string { return webURL(a) }
