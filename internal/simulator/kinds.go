package simulator

// Kinds of citation the simulator plants (recorded in its Truth): honest ones, and the
// ways real models get citations wrong.
const (
	PlantedVerbatim    = "verbatim"     // honest: copied word for word
	PlantedDrift       = "drift"        // honest: case, spacing, punctuation, Unicode drift
	PlantedSpelling    = "spelling"     // honest: British spelling for American, or the other way
	PlantedGreek       = "greek"        // honest: Greek letters spelled out ("TNF-alpha")
	PlantedNumberWords = "number-words" // honest: numbers in words for digits, or the other way
	PlantedNotation    = "notation"     // honest: "p < .01" for "P < 0.01", "10 to 15%" for "10–15%"
	PlantedFragment    = "fragment"     // honest: a clause that keeps what governs it
	PlantedElided      = "elided"       // honest: a middle of a sentence, or between two adjacent ones, left out, marked "..."
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

	PlantedHedgeDropped   = "hedge-dropped"   // a hedge left out or made stronger ("may reduce" as "reduces")
	PlantedCausal         = "causal"          // an association stated as a cause
	PlantedQuantifier     = "quantifier"      // a quantifier strengthened ("some" as "all")
	PlantedEntity         = "entity"          // a cell, molecule, drug, material or group put for another
	PlantedSpecies        = "species"         // a species put for another ("mice" as "humans")
	PlantedUnit           = "unit"            // a number's unit changed ("mg" as "g")
	PlantedSign           = "sign"            // a number's sign or a comparator changed ("−0.05" as "0.05", "<" as ">")
	PlantedDecimal        = "decimal"         // a decimal point moved or dropped ("2.5" as "25")
	PlantedContextDropped = "context-dropped" // a fragment without the negation, hedge or attribution that governs it
	PlantedElidedNegation = "elided-negation" // an elision over a negation or a hedge ("did ... reduce")
	PlantedElidedDistant  = "elided-distant"  // an elision joining sentences that are not next to each other
	PlantedUnsplit        = "unsplit"         // a quote of a result that names several sources and cannot be split
)

// Honest says whether a planted kind is an honest citation; "" (a citation the simulator
// did not plant) counts as one.
func Honest(kind string) bool {
	switch kind {
	case "", PlantedVerbatim, PlantedDrift, PlantedSpelling, PlantedGreek, PlantedNumberWords, PlantedNotation,
		PlantedFragment, PlantedElided:
		return true
	}
	return false
}
