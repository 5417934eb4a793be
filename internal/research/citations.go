package research

// The sources hypotheses and reviews cite, and what checking their citations found: the
// check's verdict and a review's judgement of the quote's support.

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
}

// Citation verdicts: what checking a reference against the record the tool returned for
// its id found.
const (
	CitationVerified     = "verified"       // the record holds the quote, up to how it is written (case, spacing, spelling, ...) and a marked elision that changes no meaning
	CitationAltered      = "altered"        // close to a passage of the record, with a content word changed, dropped or added
	CitationOverstated   = "overstated"     // a passage of the record claimed more strongly: a hedge dropped, association made causal, a quantifier strengthened
	CitationOutOfContext = "out of context" // the record's words, without the hedge, attribution, contrast or limitation that governs them
	CitationContradicted = "contradicted"   // a passage of the record with its negation, a number or a direction changed, or a governing negation left out
	CitationUnsupported  = "unsupported"    // the record does not hold the quote, or only in pieces spliced together or far apart
	CitationInvented     = "invented"       // no tool result the citing turn read returned the id
)

// CitationVerdicts are the verdicts, from the best to the worst.
var CitationVerdicts = []string{CitationVerified, CitationAltered, CitationOverstated, CitationOutOfContext,
	CitationUnsupported, CitationContradicted, CitationInvented}

// Support judgements: whether the source's passage supports the claim a citation is made
// for, as a deep verification or full review judged it with the passage beside the quote.
const (
	SupportSupports    = "supports"
	SupportOverstates  = "overstates" // the quote or the claim says more than the passage
	SupportContradicts = "contradicts"
	SupportIrrelevant  = "irrelevant"
)

// SupportJudgements are the judgements a review may make of a citation.
var SupportJudgements = []string{SupportSupports, SupportOverstates, SupportContradicts, SupportIrrelevant}

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
// a verified quote that no review found contradicting, overstating or irrelevant to its
// claim.
func (c CitationCheck) Flagged() bool {
	return c.Verdict != CitationVerified || c.Support == SupportContradicts || c.Support == SupportIrrelevant ||
		c.Support == SupportOverstates
}

// Penalised says whether the citation costs the hypothesis that makes it something
// (CitationCosts): its verdict or the review's support judgement weakens or discredits it.
func (c CitationCheck) Penalised() bool {
	return CitationCosts[c.Verdict].Weakens() || SupportCosts[c.Support].Weakens()
}

// CitationCost is what a citation costs a review of the hypothesis that makes it, as a
// reader weighs it: marks taken from plausibility and testability, and whether it
// discredits the hypothesis (the review's verdict becomes "reject"; else a weakened
// hypothesis' "accept" becomes "revise").
type CitationCost struct {
	Plausibility, Testability float64
	Discredits                bool
	Why                       string
}

// Weakens says whether the cost takes anything from the hypothesis.
func (c CitationCost) Weakens() bool { return c.Plausibility > 0 || c.Testability > 0 || c.Discredits }

// CitationCosts are the costs of the check's verdicts: only a verified quote is free. A
// quote its source does not hold as written (altered), claims more strongly (overstated)
// or without what governs it (out of context), or does not hold at all, weakens the
// hypothesis; an invented source or a quote its source contradicts discredits it.
var CitationCosts = map[string]CitationCost{
	CitationInvented:     {Plausibility: 3, Testability: 1, Discredits: true, Why: "no tool returned it"},
	CitationContradicted: {Plausibility: 3, Discredits: true, Why: "its source says otherwise"},
	CitationUnsupported:  {Plausibility: 1.5, Why: "its source does not say what is quoted"},
	CitationOutOfContext: {Plausibility: 1.5, Why: "its quote leaves out what governs it in its source"},
	CitationOverstated:   {Plausibility: 1.5, Why: "its quote claims more than its source"},
	CitationAltered:      {Plausibility: 1.5, Why: "its quote changes its source's words"},
}

// SupportCosts are the costs of a review's support judgements.
var SupportCosts = map[string]CitationCost{
	SupportContradicts: {Plausibility: 3, Discredits: true, Why: "its source contradicts the claim it is cited for"},
	SupportOverstates:  {Plausibility: 1.5, Why: "the claim it is cited for says more than its source"},
	SupportIrrelevant:  {Plausibility: 1, Why: "its source does not bear on the claim it is cited for"},
}

// SupportJudgement is a review's judgement of one citation: does its quote support the
// claim it is cited for?
type SupportJudgement struct {
	ID        string `json:"id"`
	Judgement string `json:"judgement"` // one of SupportJudgements
	Note      string `json:"note,omitempty"`
}
