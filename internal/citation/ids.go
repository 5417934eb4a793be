package citation

// Identifiers, as a model writes them in a citation and as a tool writes them in a
// result. A citation counts as returned only when a record of a tool result names its id
// whole, in the same scheme: a cut-short id (`…tau.01` for `…tau.010`, `kim2021` for
// `kim2021bin1`) is another id, never a prefix or a substring of one. So each id is
// first put in one normal form per scheme (a DOI without its resolver, a PMID from a
// PubMed link, an ISBN-10 as its ISBN-13, ...), and then compared whole.
//
// Decisions a reader of a verdict should know:
//   - arXiv: an id without a version names every version; two versions name different
//     texts, so 2101.01234v1 does not match 2101.01234v2 (a quote checked against v2 is
//     not a check of v1). A DataCite arXiv DOI (10.48550/arXiv.2101.01234) is the arXiv id.
//   - Citation keys (anything that is no other scheme) compare whole, ignoring case and
//     runs of spaces: models write Kim2021 for kim2021; two works of one result whose keys
//     differ only in case would not be told apart.
//   - Bare digits are a PMID (PubMed ids are all digits; a citation key rarely is); bare
//     ten- or thirteen-digit numbers with a valid ISBN check digit are an ISBN.
//   - Unicode a model's text puts in an id (a non-breaking hyphen, a full-width digit, a
//     zero-width space) is read as the ASCII it stands for.
//   - A written id longer than maxIDLen is no id at all: it matches nothing.

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// The schemes of an ID.
const (
	SchemeDOI      = "doi"
	SchemePMID     = "pmid"
	SchemePMCID    = "pmcid"
	SchemeArXiv    = "arxiv"
	SchemeOpenAlex = "openalex"
	SchemeISBN     = "isbn"
	SchemeKey      = "key"
	// SchemeAnalysis is an analysis of the session's lab data, cited as analysis:<id>
	// (the workflow's id of the run); its record is the analysis's rendering in the audit
	// trail (activities.AnalysisTool).
	SchemeAnalysis = "analysis"
)

// maxIDLen bounds a written id: no identifier of any scheme is this long.
const maxIDLen = 512

// ID is an identifier in its normal form: Scheme is one of the Scheme constants; Value
// is, per scheme, a DOI in lower case without a resolver ("10.1038/nn.4321"), a PMID's
// digits, "PMC" and digits, an arXiv id with its version if one was written
// ("2101.01234v2", "hep-th/9901001"), an OpenAlex work id ("W2741809807"), an ISBN-13's
// digits, or a citation key as written (trimmed). The zero ID names nothing.
type ID struct{ Scheme, Value string }

// String is the id as a reader writes it.
func (id ID) String() string {
	switch id.Scheme {
	case SchemePMID:
		return "PMID:" + id.Value
	case SchemeArXiv:
		return "arXiv:" + id.Value
	case SchemeISBN:
		return "ISBN " + id.Value
	case SchemeAnalysis:
		return "analysis:" + id.Value
	}
	return id.Value
}

// Matches says whether two ids name the same source: the same scheme and the same value,
// with arXiv versions and key case handled as the package comment says.
func (id ID) Matches(o ID) bool {
	if id.Value == "" || o.Value == "" || id.Scheme != o.Scheme {
		return false
	}
	switch id.Scheme {
	case SchemeArXiv:
		a, av := splitVersion(id.Value)
		b, bv := splitVersion(o.Value)
		return a == b && (av == "" || bv == "" || av == bv)
	case SchemeKey:
		return strings.EqualFold(id.Value, o.Value)
	}
	return id.Value == o.Value
}

// MatchID says whether two written ids name the same source: whole, per scheme, never
// as a substring.
func MatchID(a, b string) bool { return ParseID(a).Matches(ParseID(b)) }

var (
	digitsRE   = regexp.MustCompile(`^[0-9]{1,9}$`)
	pmcRE      = regexp.MustCompile(`^(?i:pmc)\s?([0-9]{1,10})$`)
	arxivNewRE = regexp.MustCompile(`^([0-9]{2}(?:0[1-9]|1[0-2])\.[0-9]{4,5})(v[0-9]{1,3})?$`)
	arxivOldRE = regexp.MustCompile(`^([a-z]+(?:-[a-z]+)*)(\.[a-z]{2})?/([0-9]{7})(v[0-9]{1,3})?$`)
	openAlexRE = regexp.MustCompile(`^[wW]([0-9]{1,12})$`)
	analysisRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	isbnCharRE = regexp.MustCompile(`^[0-9][0-9 -]{8,16}[0-9Xx]$`)
	spacesRE   = regexp.MustCompile(`\s+`)
)

// ParseID puts an identifier as a model or a tool writes it in its normal form: with or
// without a scheme's prefix ("doi:", "PMID:", "arXiv:", "ISBN"), as a resolver's or a
// database's link (doi.org, pubmed, PMC, Europe PMC, arxiv.org abs and pdf, openalex.org),
// wrapped in quotes or brackets, or followed by a full stop. What is no other scheme is
// a citation key.
func ParseID(s string) ID {
	if len(s) > 4*maxIDLen {
		return ID{}
	}
	s = normID(s)
	if s == "" || len(s) > maxIDLen {
		return ID{}
	}
	s = unwrap(s)
	if s == "" {
		return ID{}
	}
	if id, ok := parseLink(s); ok {
		return id
	}
	lower := strings.ToLower(s)
	// An analysis is only ever written with its prefix and a colon: "analysis of
	// variance" is no analysis's id.
	if strings.HasPrefix(lower, "analysis:") {
		if id, ok := parseAs(SchemeAnalysis, strings.TrimSpace(s[len("analysis:"):])); ok {
			return id
		}
		return key(s)
	}
	// A scheme's prefix, as written before the id.
	for _, p := range []struct{ prefix, scheme string }{
		{"urn:isbn:", SchemeISBN}, {"isbn-13", SchemeISBN}, {"isbn-10", SchemeISBN}, {"isbn13", SchemeISBN}, {"isbn10", SchemeISBN}, {"isbn", SchemeISBN},
		{"doi", SchemeDOI}, {"pmcid", SchemePMCID}, {"pmid", SchemePMID}, {"pubmed id", SchemePMID}, {"pubmedid", SchemePMID},
		{"pubmed", SchemePMID},
		{"arxiv", SchemeArXiv}, {"openalex", SchemeOpenAlex},
	} {
		if !strings.HasPrefix(lower, p.prefix) {
			continue
		}
		rest := s[len(p.prefix):]
		digitOK := p.scheme == SchemeISBN || p.scheme == SchemePMID && p.prefix == "pmid"
		if rest == "" || !strings.ContainsRune(": \t", rune(rest[0])) && !(digitOK && rest[0] >= '0' && rest[0] <= '9') {
			continue // "doiron2020" is a key, not a DOI
		}
		rest = strings.TrimSpace(strings.TrimLeft(rest, ": \t"))
		if id, ok := parseAs(p.scheme, rest); ok {
			return id
		}
		return key(s)
	}
	if m := pmcRE.FindStringSubmatch(s); m != nil {
		return ID{SchemePMCID, "PMC" + m[1]}
	}
	// Bare digits are a PMID, never a PMCID: "PMC" is written when one is meant.
	for _, scheme := range []string{SchemeDOI, SchemePMID, SchemeArXiv, SchemeOpenAlex, SchemeISBN} {
		if id, ok := parseAs(scheme, s); ok {
			return id
		}
	}
	return key(s)
}

// idChars are the characters a model's text puts in an id for ASCII ones: Unicode's
// hyphens and minus for "-", and spaces that are no space. (NFKC has folded full-width
// forms already.)
var idChars = strings.NewReplacer("\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2212", "-",
	"\u200b", "", "\u200c", "", "\u200d", "", "\u2060", "", "\ufeff", "", "\u00ad", "")

// normID is s in the characters ids are written in.
func normID(s string) string { return strings.TrimSpace(idChars.Replace(norm.NFKC.String(s))) }

func key(s string) ID { return ID{SchemeKey, spacesRE.ReplaceAllString(s, " ")} }

// unwrap takes off what is around an id as prose writes it: quotes, brackets, a
// pandoc "@", a trailing full stop or comma, a closing bracket with no opening one.
func unwrap(s string) string {
	for range 8 {
		before := s
		s = strings.TrimSpace(s)
		for _, pair := range []string{`""`, "''", "``", "“”", "‘’", "<>", "[]", "()", "{}", "**"} {
			open, close := string([]rune(pair)[0]), string([]rune(pair)[1:])
			if len(s) > len(open)+len(close) && strings.HasPrefix(s, open) && strings.HasSuffix(s, close) {
				s = s[len(open) : len(s)-len(close)]
			}
		}
		s = strings.TrimPrefix(s, "@")
		s = strings.TrimRight(s, ".,;:!?")
		for _, pair := range [][2]string{{"(", ")"}, {"[", "]"}} {
			if strings.HasSuffix(s, pair[1]) && strings.Count(s, pair[0]) < strings.Count(s, pair[1]) {
				s = s[:len(s)-1]
			}
		}
		if s == before {
			break
		}
	}
	return strings.TrimSpace(s)
}

// parseAs reads s (without a prefix) as an id of one scheme.
func parseAs(scheme, s string) (ID, bool) {
	if len(s) > 4*maxIDLen {
		return ID{}, false
	}
	s = normID(s)
	if id, ok := parseLink(s); ok {
		return id, id.Scheme == scheme || scheme == SchemeDOI && id.Scheme == SchemeArXiv
	}
	switch scheme {
	case SchemeDOI:
		d := doiOf(s)
		if d == "" {
			return ID{}, false
		}
		if a, ok := strings.CutPrefix(d, "10.48550/arxiv."); ok {
			if id, ok := parseAs(SchemeArXiv, a); ok {
				return id, true
			}
		}
		return ID{SchemeDOI, d}, true
	case SchemePMID:
		if digitsRE.MatchString(s) {
			n, _ := strconv.Atoi(s)
			if n > 0 {
				return ID{SchemePMID, strconv.Itoa(n)}, true
			}
		}
	case SchemePMCID:
		if m := pmcRE.FindStringSubmatch(s); m != nil {
			return ID{SchemePMCID, "PMC" + m[1]}, true
		}
		if digitsRE.MatchString(s) { // "PMCID: 123456"
			return ID{SchemePMCID, "PMC" + s}, true
		}
	case SchemeArXiv:
		a := strings.TrimSuffix(strings.TrimSuffix(s, ".pdf"), "/")
		if m := arxivNewRE.FindStringSubmatch(a); m != nil {
			return ID{SchemeArXiv, m[1] + m[2]}, true
		}
		if m := arxivOldRE.FindStringSubmatch(strings.ToLower(a)); m != nil {
			return ID{SchemeArXiv, m[1] + strings.ToUpper(m[2]) + "/" + m[3] + m[4]}, true
		}
	case SchemeOpenAlex:
		if m := openAlexRE.FindStringSubmatch(s); m != nil {
			return ID{SchemeOpenAlex, "W" + m[1]}, true
		}
	case SchemeAnalysis:
		if analysisRE.MatchString(s) {
			return ID{SchemeAnalysis, s}, true
		}
	case SchemeISBN:
		if isbnCharRE.MatchString(s) {
			if v, ok := isbn13(strings.NewReplacer("-", "", " ", "").Replace(s)); ok {
				return ID{SchemeISBN, v}, true
			}
		}
	}
	return ID{}, false
}

// doiOf is s, a DOI without prefix, in lower case; "" when it is not one ("10.", a
// registrant, "/", no space). It is the DOI rule of the whole tree (NormalDOI).
func doiOf(s string) string {
	d := strings.ToLower(strings.TrimSpace(s))
	if !strings.HasPrefix(d, "10.") || !strings.Contains(d, "/") || strings.ContainsAny(d, " \t\r\n") {
		return ""
	}
	return d
}

// NormalDOI is the DOI s writes, in lower case without its resolver ("https://doi.org/",
// "dx.doi.org/", percent-encoded in a link as a link may be) or its "doi:" prefix; "" when
// s is not a DOI. An arXiv DataCite DOI (10.48550/arXiv.2101.01234) is a DOI here, which
// ParseID reads as the arXiv id it names: a library that holds it keeps it. The library,
// the report and the desk all read DOIs by this rule.
func NormalDOI(s string) string {
	if len(s) > 4*maxIDLen {
		return ""
	}
	s = unwrap(normID(s))
	lower := strings.ToLower(s)
	for _, host := range []string{"doi.org/", "dx.doi.org/"} {
		if strings.HasPrefix(lower, host) {
			s, lower = "https://"+s, "https://"+lower
		}
	}
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		u, err := url.Parse(s)
		if err != nil || strings.TrimPrefix(strings.ToLower(u.Host), "www.") != "doi.org" && strings.ToLower(u.Host) != "dx.doi.org" {
			return ""
		}
		path := u.EscapedPath()
		if p, err := url.PathUnescape(path); err == nil {
			path = p
		}
		return doiOf(strings.Trim(path, "/"))
	}
	for _, p := range []string{"doi:", "doi "} {
		if strings.HasPrefix(lower, p) {
			return doiOf(strings.TrimLeft(s[len(p):], ": \t"))
		}
	}
	return doiOf(s)
}

// parseLink reads an id from a resolver's or a database's link.
func parseLink(s string) (ID, bool) {
	lower := strings.ToLower(s)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		for _, host := range []string{"doi.org/", "dx.doi.org/", "arxiv.org/", "www.ncbi.nlm.nih.gov/", "pubmed.ncbi.nlm.nih.gov/", "pmc.ncbi.nlm.nih.gov/", "europepmc.org/", "openalex.org/"} {
			if strings.HasPrefix(lower, host) {
				return parseLink("https://" + s)
			}
		}
		return ID{}, false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ID{}, false
	}
	host := strings.TrimPrefix(strings.ToLower(u.Host), "www.")
	path := u.EscapedPath()
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	path = strings.Trim(path, "/")
	parts := strings.Split(path, "/")
	switch host {
	case "doi.org", "dx.doi.org":
		return parseAs(SchemeDOI, path)
	case "arxiv.org", "export.arxiv.org":
		if len(parts) >= 2 && (parts[0] == "abs" || parts[0] == "pdf" || parts[0] == "html") {
			return parseAs(SchemeArXiv, strings.Join(parts[1:], "/"))
		}
	case "pubmed.ncbi.nlm.nih.gov":
		if len(parts) == 1 {
			return parseAs(SchemePMID, parts[0])
		}
	case "ncbi.nlm.nih.gov":
		if len(parts) == 2 && parts[0] == "pubmed" {
			return parseAs(SchemePMID, parts[1])
		}
		if len(parts) == 3 && parts[0] == "pmc" && parts[1] == "articles" {
			return parseAs(SchemePMCID, parts[2])
		}
	case "pmc.ncbi.nlm.nih.gov":
		if len(parts) == 2 && parts[0] == "articles" {
			return parseAs(SchemePMCID, parts[1])
		}
	case "europepmc.org":
		if len(parts) == 3 && (parts[0] == "article" || parts[0] == "abstract") {
			switch strings.ToUpper(parts[1]) {
			case "MED":
				return parseAs(SchemePMID, parts[2])
			case "PMC":
				return parseAs(SchemePMCID, parts[2])
			}
		}
		if len(parts) == 2 && parts[0] == "articles" {
			return parseAs(SchemePMCID, parts[1])
		}
	case "openalex.org", "api.openalex.org":
		if len(parts) == 2 && parts[0] == "works" {
			parts = parts[1:]
		}
		if len(parts) == 1 {
			return parseAs(SchemeOpenAlex, parts[0])
		}
	}
	return ID{}, false
}

// isbn13 is an ISBN's ISBN-13 digits, if s is a valid ISBN-10 or ISBN-13.
func isbn13(s string) (string, bool) {
	switch len(s) {
	case 10:
		sum := 0
		for i, c := range s {
			var d int
			switch {
			case c >= '0' && c <= '9':
				d = int(c - '0')
			case (c == 'X' || c == 'x') && i == 9:
				d = 10
			default:
				return "", false
			}
			sum += d * (10 - i)
		}
		if sum%11 != 0 {
			return "", false
		}
		body := "978" + s[:9]
		return body + strconv.Itoa(isbn13Check(body)), true
	case 13:
		for _, c := range s {
			if c < '0' || c > '9' {
				return "", false
			}
		}
		if !strings.HasPrefix(s, "978") && !strings.HasPrefix(s, "979") || isbn13Check(s[:12]) != int(s[12]-'0') {
			return "", false
		}
		return s, true
	}
	return "", false
}

func isbn13Check(body string) int {
	sum := 0
	for i, c := range body {
		d := int(c - '0')
		if i%2 == 1 {
			d *= 3
		}
		sum += d
	}
	return (10 - sum%10) % 10
}

// splitVersion splits an arXiv id into the id and its version ("v2"), if any.
func splitVersion(v string) (string, string) {
	i := strings.LastIndexByte(v, 'v')
	if i <= 0 || i == len(v)-1 {
		return v, ""
	}
	for _, c := range v[i+1:] {
		if c < '0' || c > '9' {
			return v, ""
		}
	}
	return v[:i], v[i:]
}
