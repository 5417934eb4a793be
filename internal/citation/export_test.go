package citation

import "fmt"

// What the citation benchmark (package citation_test) needs of the check's insides: its
// word lists, to keep its dishonest edits mostly outside them, and weakened checks, to
// show it notices each weakening.

// Listed says whether the check's word lists hold a word (as the check reads it: "β" is
// "beta", "tumour" is "tumor"), or the word is one of its comparators.
func Listed(w string) bool {
	for _, t := range tokenize(w, 0) {
		if listed(t.word) || comparator(t.word) {
			return true
		}
	}
	return false
}

// Mutants are the weakened checks the benchmark must fail: one that does not read what a
// quote leaves out around and between its pieces, one that reads numbers as plain words
// (as the check of issue #27 did: no sign, comparator or decimal point), and one that
// verifies only a quote equal to the record's words after the usual normalising (case,
// spacing, punctuation, Unicode forms) and calls anything else unsupported, and one that
// does not tell an overstated quote from an altered one.
var Mutants = []string{"no-context", "plain-numbers", "exact-only", "no-overstated"}

// Weaken makes Compare and Check run the named mutant until restore is called.
func Weaken(name string) (restore func()) {
	saved := std
	switch name {
	case "no-context":
		std.context = false
	case "plain-numbers":
		std.values = false
	case "exact-only":
		std.near = false
	case "no-overstated":
		std.overstated = false
	default:
		panic(fmt.Sprintf("no mutant %q", name))
	}
	return func() { std = saved }
}
