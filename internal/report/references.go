package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/research"
)

// The references a session's hypotheses cite: each with what the citation checks of its
// reviews found, and the session's bibliography (BibTeX and CSL-JSON), which leaves out
// the sources no tool returned, since they do not exist as cited.

// Unchecked is the verdict of a citation no review has checked yet.
const Unchecked = "unchecked"

// flagged says whether a reader should distrust a citation: its check found it other
// than verified, or a review found its quote does not support its claim.
func flagged(c citation.Cited) bool {
	return c.Check.Verdict != Unchecked && c.Check.Flagged()
}

// A scale is a check's possible values, mildest first, each with how the report says it.
type scale []grade

// grade is one value of a scale and the words the report says it in.
type grade struct{ value, word string }

// verdicts are the citation checks' verdicts: the worst a review found is the reference's.
var verdicts = scale{
	{Unchecked, "not checked yet"},
	{research.CitationVerified, "verified"},
	{research.CitationAltered, "flagged: altered, not its source's words"},
	{research.CitationOverstated, "flagged: overstated, claims more than its source"},
	{research.CitationOutOfContext, "flagged: out of context, without what governs it in its source"},
	{research.CitationUnsupported, "flagged: its source does not say this"},
	{research.CitationContradicted, "flagged: its source says otherwise"},
	{research.CitationInvented, "flagged: no tool returned this source"},
}

// supports are the reviews' judgements of a quote against its claim: a quote one review
// found contradicting its claim stays so, whatever another found.
var supports = scale{
	{"", ""},
	{research.SupportSupports, "supports the claim"},
	{research.SupportIrrelevant, "flagged: does not bear on the claim"},
	{research.SupportOverstates, "flagged: the claim says more than it"},
	{research.SupportContradicts, "flagged: contradicts the claim"},
}

// rank is v's place on the scale, 0 the mildest; -1 for a value not on it.
func (s scale) rank(v string) int {
	return slices.IndexFunc(s, func(g grade) bool { return g.value == v })
}

// worse says whether a is further along the scale than b. A value not on the scale is
// never worse than one that is.
func (s scale) worse(a, b string) bool { return s.rank(a) > s.rank(b) }

// word is how the report says v; a value not on the scale is said as the mildest.
func (s scale) word(v string) string {
	if i := s.rank(v); i >= 0 {
		return s[i].word
	}
	return s[0].word
}

// citations are a hypothesis' citations as the report shows them (Citations).
func (v *view) citations(id string) []citation.Cited {
	h, ok := v.text(id)
	if !ok {
		return nil
	}
	return Citations(h.References, v.in.Reviews[id])
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
			if c.Check.Verdict == research.CitationInvented || c.Source == "" {
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
		refs[i].Quote, refs[i].Claim, refs[i].Source = "", "", "" // the source, not how it was used
		refs[i].Passage, refs[i].Page, refs[i].Section, refs[i].File = "", 0, "", ""
	}
	return refs, invented
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

// references writes a hypothesis' references, each with its check's verdict.
func references(b *bytes.Buffer, cs []citation.Cited) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(b, "**References:**\n\n")
	for _, c := range cs {
		ch := c.Check
		line := mdText(citationLine(c.Reference))
		switch {
		case ch.Verdict == research.CitationInvented || c.Source == "" && c.Title == "":
			line = code(c.ID) + " (no tool returned it)." // and no link: it may lead nowhere
		case c.Title == "":
			line = code(c.ID) + mdAddress(c.Reference) // a record without a title: the id names it
		default:
			line += mdAddress(c.Reference)
		}
		fmt.Fprintf(b, "- %s — *%s*", line, verdicts.word(ch.Verdict))
		if w := supports.word(ch.Support); w != "" {
			fmt.Fprintf(b, "; *%s*", w)
		}
		if cl := mdText(c.Claim); cl != "" {
			fmt.Fprintf(b, "\n  Claim: %s", cl)
		}
		if q := mdText(c.Quote); q != "" {
			fmt.Fprintf(b, "\n  > %s", q)
			if at := Location(c.Reference); at != "" {
				if l := link(c.Reference); l != "" && ch.Verdict != research.CitationInvented {
					fmt.Fprintf(b, " — [%s](%s)", at, l)
				} else {
					fmt.Fprintf(b, " — %s", at)
				}
			}
		}
		if p := mdText(ch.Passage); p != "" && ch.Verdict != research.CitationVerified {
			fmt.Fprintf(b, "\n  The source's words: %s", p)
		}
		if n := mdText(ch.Note); n != "" && ch.Verdict != research.CitationVerified {
			fmt.Fprintf(b, "\n  Check: %s", n)
		}
		if n := mdText(ch.SupportNote); n != "" && ch.Support != "" {
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
