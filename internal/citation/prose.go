package citation

import (
	"regexp"
	"strings"
)

// Ids in prose: the ids a text writes whole with their scheme, except on a line that says
// the tool did not return them.

var (
	doiTextRE   = regexp.MustCompile(`(?i)(?:^|[^\w./-])(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.[0-9]{4,9}/[^\s"'<>\[\]{}|\\^` + "`" + `]+)`)
	pmidTextRE  = regexp.MustCompile(`(?i)\bPMID\b[\]*:\s]*([0-9]{1,9})\b`)
	pubmedIDRE  = regexp.MustCompile(`(?i)\bPubMed(?:\s*ID\b|\s*:)[\]*:\s]*([0-9]{1,9})\b`)
	pmidsTextRE = regexp.MustCompile(`(?i)\bPMIDs\b[*:\s]+([0-9]{1,9}(?:\s*,\s*[0-9]{1,9})*)\b`)
	pmidLinkRE  = regexp.MustCompile(`(?i)\b(?:pubmed\.ncbi\.nlm\.nih\.gov/|ncbi\.nlm\.nih\.gov/pubmed/)([0-9]{1,9})\b`)
	pmcTextRE   = regexp.MustCompile(`\b(PMC[0-9]{3,10})\b`)
	pmcSpaceRE  = regexp.MustCompile(`\b(?:PMC|PMCID:?)\s+(?:PMC)?([0-9]{3,10})\b`)
	arxivTextRE = regexp.MustCompile(`(?i)(?:\barxiv:\s*|arxiv\.org/(?:abs|pdf)/)([0-9]{4}\.[0-9]{4,5}(?:v[0-9]+)?|[a-z]+(?:-[a-z]+)*(?:\.[a-z]{2})?/[0-9]{7}(?:v[0-9]+)?)\b`)
	openAlexTRE = regexp.MustCompile(`(?i)openalex\.org/(?:works/)?(W[0-9]{1,12})\b`)
	isbnTextRE  = regexp.MustCompile(`(?i)\bISBN(?:-1[03])?:?\s*([0-9][0-9 -]{8,16}[0-9X])\b`)
)

// wholeIDsInText are the patterns of ids textIDs reads in the lines kept, in the order it
// reads them: the first submatch is the id.
var wholeIDsInText = []struct {
	re     *regexp.Regexp
	scheme string
}{
	{doiTextRE, SchemeDOI}, {pmidLinkRE, SchemePMID}, {pmcTextRE, SchemePMCID},
	{arxivTextRE, SchemeArXiv}, {openAlexTRE, SchemeOpenAlex}, {isbnTextRE, SchemeISBN},
}

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
		if strings.Contains(line, "PubMed") || strings.Contains(line, "PUBMED") || strings.Contains(line, "pubmed") {
			for _, m := range pubmedIDRE.FindAllStringSubmatch(line, -1) { // "PubMed ID: 36509999"
				add(SchemePMID, m[1])
			}
		}
		if strings.Contains(line, "PMC") {
			for _, m := range pmcSpaceRE.FindAllStringSubmatch(line, -1) { // "PMC 9876543", "PMCID: 9876543"
				add(SchemePMCID, "PMC"+m[1])
			}
		}
	}
	text = kept.String()
	for _, p := range wholeIDsInText {
		for _, m := range p.re.FindAllStringSubmatch(text, -1) {
			add(p.scheme, m[1])
		}
	}
	return out
}
