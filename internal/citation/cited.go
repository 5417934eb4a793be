package citation

import (
	"github.com/cosci-dev/cosci/internal/passage"
	"github.com/cosci-dev/cosci/internal/research"
)

// Cited is one citation whole: the reference as the citing turn resolved it (its source's
// details, its result, and where its quote is: Passage, Page, Section, File) and what
// checking it found. Check makes it; the review, the report, the desk's pages and the
// conversation carry it whole, so no reader pairs a check with its reference again by a
// rule of its own. Where a reference and its check were stored apart (a hypothesis'
// references, a review's checks), Join makes it again, by the one rule.
type Cited struct {
	research.Reference
	// Check is what checking the reference found; its Verdict is "" until it is checked.
	Check research.CitationCheck
}

// Checked says whether the citation has been checked.
func (c Cited) Checked() bool { return c.Check.Verdict != "" }

// At is the passage of its source the citation's quote is at, when it names one.
func (c Cited) At() (passage.ID, bool) {
	id, err := passage.Parse(c.Passage)
	return id, err == nil && id.Source != ""
}

// Checks is what checking each citation found, in order: what a review or an answer
// stores beside its references.
func Checks(cs []Cited) []research.CitationCheck {
	if len(cs) == 0 {
		return nil
	}
	out := make([]research.CitationCheck, len(cs))
	for i, c := range cs {
		out[i] = c.Check
	}
	return out
}

// Join pairs references with the checks stored of them, by the one rule every reader of
// a stored citation uses: the checks Check made of these references are theirs in order
// (two references of one source, with two quotes, keep their own checks); otherwise each
// reference takes the first check not yet taken of the same source (SameID). A reference
// without a check is unchecked (Checked is false).
func Join(refs []research.Reference, checks []research.CitationCheck) []Cited {
	out := make([]Cited, len(refs))
	inOrder := len(checks) == len(refs)
	for i, r := range refs {
		out[i].Reference = r
		inOrder = inOrder && SameID(checks[i].ID, r.ID)
	}
	if inOrder {
		for i := range out {
			out[i].Check = checks[i]
		}
		return out
	}
	taken := make([]bool, len(checks))
	for i := range out {
		for j, c := range checks {
			if !taken[j] && SameID(c.ID, out[i].ID) {
				out[i].Check, taken[j] = c, true
				break
			}
		}
	}
	return out
}
