package research

// The sources hypotheses and reviews cite, and what checking their citations found: the
// check's verdict, a review's judgement of the quote's support, and the fabrications the
// simulator plants to test the checks.

// Reference is a source a hypothesis or a review cites. The model names only the ID and
// the Quote; the rest is filled in from the tool result that returned the ID, never from
// the model, so the bibliography holds what a library or search service said.
type Reference struct {
	// ID is the identifier a tool gave the source: a DOI where there is one (lower case,
	// without https://doi.org/), else the library's citation key.
	ID      string   `json:"id"`
	DOI     string   `json:"doi,omitempty"`
	Title   string   `json:"title,omitempty"`
	Authors []string `json:"authors,omitempty"` // "Family, Given", in order
	Year    int      `json:"year,omitempty"`
	Venue   string   `json:"venue,omitempty"` // journal, book or conference
	URL     string   `json:"url,omitempty"`
	// Quote is what the citing text takes from the source, in the source's own words;
	// reflection checks that the tool result holds it.
	Quote string `json:"quote,omitempty"`
	// Claim is the sentence of the citing text (the hypothesis or the review) that the
	// source is cited for; reviews judge whether the quote supports it.
	Claim string `json:"claim,omitempty"`
	// Passage is the passage of the source's full text that the quote is from, by the id
	// the tool gave it ("10.5555/x#p7.2"), and Page and Section where that is. The model
	// may name the passage, or only a page; the check then reads the quote against that
	// passage or page alone. The rest comes from the tool result, as do the details: a
	// quote the model did not place is placed in the passage of its source that holds it.
	Passage string `json:"passage,omitempty"`
	Page    int    `json:"page,omitempty"`
	Section string `json:"section,omitempty"`
	// File is the source's full-text file, as the literature server names it (relative
	// to the library), for the desk to link to at the page.
	File string `json:"file,omitempty"`
	// PMID, PMCID, ArXiv and OpenAlex are the source's other identifiers, as a literature
	// service's result gave them.
	PMID     string `json:"pmid,omitempty"`
	PMCID    string `json:"pmcid,omitempty"`
	ArXiv    string `json:"arxiv,omitempty"`
	OpenAlex string `json:"openalex,omitempty"`
	// Source is the digest of the tool result (the audit trail's record) that returned
	// the ID to the turn that cited it; "" when no tool result of that turn did.
	Source string `json:"source,omitempty"`
	// Fabricated marks a reference the offline simulator made up on purpose (an id no
	// tool returned, or a quote its source does not hold), so that benchmarks can measure
	// the citation check. Real models never set it.
	Fabricated bool `json:"fabricated,omitempty"`
	// Planted is the kind of citation the offline simulator made on purpose (one of
	// the Planted* kinds), the hidden truth the citation benchmark scores the check against.
	// Real models never set it.
	Planted string `json:"planted,omitempty"`
}

// Citation verdicts: what checking a reference against the record the tool returned for
// its id found.
const (
	CitationVerified     = "verified"     // the record holds the quote (up to case, spacing, punctuation, an elision)
	CitationAltered      = "altered"      // close to a passage of the record, but not equal: a warning
	CitationContradicted = "contradicted" // a passage of the record with its negation, a number or a direction changed
	CitationUnsupported  = "unsupported"  // the record does not hold the quote, or only in pieces spliced together
	CitationInvented     = "invented"     // no tool result the citing turn read returned the id
)

// Support judgements: whether a quote that passes the check supports the claim it is
// cited for, as a deep verification or full review judged it.
const (
	SupportSupports    = "supports"
	SupportContradicts = "contradicts"
	SupportIrrelevant  = "irrelevant"
)

// SupportJudgements are the judgements a review may make of a citation.
var SupportJudgements = []string{SupportSupports, SupportContradicts, SupportIrrelevant}

// CitationCheck is one reference checked against the audit trail.
type CitationCheck struct {
	ID      string `json:"id"`
	Verdict string `json:"verdict"` // one of the Citation* verdicts
	Note    string `json:"note,omitempty"`
	// Passage is the record's passage closest to an altered or contradicted quote, so the
	// report can show the difference.
	Passage string `json:"passage,omitempty"`
	// Support is the review's judgement of whether the quote supports the claim (one of
	// SupportJudgements), for a quote that passed; "" when the review did not judge it.
	Support     string `json:"support,omitempty"`
	SupportNote string `json:"support_note,omitempty"`
}

// Flagged says whether the check found the citation dishonest or unsound: anything but
// a verified quote that no review found contradicting or irrelevant to its claim.
func (c CitationCheck) Flagged() bool {
	return c.Verdict != CitationVerified || c.Support == SupportContradicts || c.Support == SupportIrrelevant
}

// SupportJudgement is a review's judgement of one citation: does its quote support the
// claim it is cited for?
type SupportJudgement struct {
	ID        string `json:"id"`
	Judgement string `json:"judgement"` // one of SupportJudgements
	Note      string `json:"note,omitempty"`
}

// Kinds of citation the offline simulator plants (Reference.Planted): honest ones, and
// the ways real models get citations wrong.
const (
	PlantedVerbatim    = "verbatim"     // honest: copied word for word
	PlantedDrift       = "drift"        // honest: case, spacing, punctuation, Unicode drift
	PlantedElided      = "elided"       // honest: a middle left out, marked "..."
	PlantedInventedID  = "invented-id"  // an id no tool returned
	PlantedNearMissID  = "near-miss-id" // an id cut short or off by a character
	PlantedOtherRecord = "other-record" // a quote from another record of the same result
	PlantedNegated     = "negated"      // a "not" added or removed
	PlantedNumber      = "number"       // a number changed
	PlantedDirection   = "direction"    // a direction word flipped (increases/decreases, ...)
	PlantedSpliced     = "spliced"      // two passages joined as one
	PlantedOwnText     = "own-text"     // the citing text's own words quoted as the source's
	PlantedIrrelevant  = "irrelevant"   // verbatim, cited for a claim it does not support
	PlantedWrongPage   = "wrong-page"   // a passage of a full text quoted word for word, cited at another page
)

// PlantedHonest says whether a planted kind is an honest citation.
func PlantedHonest(kind string) bool {
	return kind == "" || kind == PlantedVerbatim || kind == PlantedDrift || kind == PlantedElided
}
