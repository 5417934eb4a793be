package citation

import (
	"slices"
	"strings"
)

// The check's word lists: the words whose change, loss or addition changes what a passage
// claims. Words are compared in their canonical form (canon: lower case, American
// spelling, Greek letters named). What the lists do not hold is still read: any other
// change of a content word is an alteration, and what governs an omitted or elided
// passage is found by its structure too (context.go), so a word missing here weakens a
// verdict from contradicted or overstated to altered or out of context, never to verified.

// negations are the words that turn a statement into its negation (apostrophes are
// dropped inside words before comparing, so "didn't" is "didnt"; "non" is the first half
// of "non-carriers").
var negations = setOf("not", "no", "non", "never", "none", "neither", "nor", "without", "cannot", "nothing", "nobody",
	"absent", "absence", "lack", "lacks", "lacked", "lacking", "fail", "fails", "failed", "unable",
	"didnt", "doesnt", "dont", "isnt", "wasnt", "werent", "arent", "couldnt", "wont", "wouldnt",
	"hasnt", "havent", "hadnt", "shouldnt", "neednt")

// numberWords are numbers written out that the tokenizer does not read as values (those
// it does are in cardinals), and words of a number's size.
var numberWords = setOf("half", "halved", "twice", "thrice", "double", "doubled", "triple", "tripled", "quadrupled",
	"dozen", "single", "first", "second", "third", "fourth", "fifth", "tenth")

// cardinals are the number words read as values: "sixteen" is 16, "twenty-four" 24.
var cardinals = map[string]float64{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
	"sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

// multipliers scale the cardinals before them: "two hundred", "three thousand".
var multipliers = map[string]float64{"hundred": 100, "thousand": 1000, "million": 1e6, "billion": 1e9}

// Direction words, on two axes: how much or how active something is (increases, promotes;
// decreases, inhibits), and whether an outcome gets better or worse (improves, alleviates;
// worsens, exacerbates). A word replaced by one of the same axis and way is a paraphrase;
// by one of the other way or the other axis, it says something else. Stems of five letters
// or more match any word they begin; shorter words match whole.
var directions = []struct {
	axis, way int
	words     []string
}{
	{1, +1, []string{"increas", "elevat", "raise", "raising", "enhanc", "augment", "amplif", "higher", "more",
		"greater", "gain", "gains", "rise", "rises", "rose", "risen", "boost", "up", "larger", "upregulat", "exceed",
		"promot", "activat", "stimulat", "potentiat", "induc", "facilitat", "accelerat", "agonis", "agoniz",
		"faster", "positiv", "strong", "major", "above", "over"}},
	{1, -1, []string{"decreas", "reduc", "lower", "diminish", "less", "fewer", "smaller", "loss", "lost", "lose",
		"declin", "drop", "dropped", "fell", "fall", "falls", "deplet", "lessen", "downregulat", "down",
		"inhibit", "suppress", "block", "prevent", "abolish", "abrogat", "slow", "slower", "slowed", "slows",
		"antagonis", "antagoniz", "attenuat", "negativ", "weak", "minor", "below", "under", "invers"}},
	{2, +1, []string{"improv", "alleviat", "ameliorat", "rescu", "protect", "mitigat", "benefit", "restor"}},
	{2, -1, []string{"worsen", "exacerbat", "aggravat", "impair", "harm", "damag", "deteriorat"}},
}

// hedges are the words by which a passage claims less than certainty: a modal, an
// evidential, a proposal; a quote that drops one, or puts a stronger word in its place,
// claims more than its source.
var hedges = setOf("may", "might", "could", "can", "would", "possibly", "possible", "potentially", "potential",
	"perhaps", "probably", "probable", "likely", "unlikely", "presumably", "putative", "putatively", "apparently",
	"seem", "seems", "seemed", "suggest", "suggests", "suggested", "suggesting",
	"suggestive", "hypothesis", "hypotheses", "hypothesize", "hypothesized", "hypothetical", "speculate",
	"speculated", "speculative", "propose", "proposed", "thought", "believed", "preliminary", "tentative",
	"tentatively", "uncertain", "unclear", "unknown", "whether", "assumed")

// limitations are the words that narrow a finding: how much, for whom, how sure. A quote
// that leaves one out claims more than its source.
var limitations = setOf("only", "solely", "exclusively", "except", "unless", "provided", "albeit", "partly",
	"partially", "partial", "modest", "modestly", "slight", "slightly", "marginal", "marginally", "trend",
	"pilot", "small", "mild", "mildly", "limited", "weakly", "moderately", "somewhat", "nominal", "nominally")

// attributions are the words by which a passage reports what others hold rather than what
// it found: the quoted words are then theirs.
var attributions = setOf("reported", "reportedly", "claimed", "claim", "claims", "argued", "according", "previously",
	"purported", "purportedly", "alleged", "allegedly", "widely", "traditionally", "conventionally", "prevailing")

// contrasts are the words that set what follows them against what the source holds.
var contrasts = setOf("contrary", "unlike", "rather", "instead", "despite", "notwithstanding")

// associations say two things go together; causes that one makes the other happen.
var (
	associations = setOf("associated", "associate", "associates", "association", "associations", "correlated",
		"correlate", "correlates", "correlation", "linked", "link", "links", "related", "relationship", "accompanied",
		"coincided", "covaried", "predicted", "predicts", "predictor")
	causes = setOf("cause", "causes", "caused", "causing", "causal", "causally", "drive", "drives", "drove", "driven",
		"determine", "determines", "determined", "induce", "induces", "induced", "result", "results", "resulted",
		"lead", "leads", "led", "produce", "produces", "produced", "trigger", "triggers", "triggered", "responsible",
		"underlie", "underlies", "mediate", "mediates", "mediated", "effect", "effects")
)

// quantifiers, from the weakest claim to the strongest: a quote that puts a later one for
// an earlier one, or drops one short of "all", generalises.
var quantifiers = []string{"few", "some", "several", "subset", "minority", "many", "often", "frequently", "most",
	"majority", "mostly", "usually", "nearly", "almost", "all", "every", "each", "always", "entire", "universally",
	"invariably", "consistently"}

// boosters are words a quote adds to claim more certainty or generality than its source.
var boosters = setOf("clearly", "definitely", "conclusively", "certainly", "undoubtedly", "unequivocally", "proves",
	"prove", "proved", "proven", "demonstrates", "demonstrate", "demonstrated", "establishes", "established",
	"confirms", "confirm", "confirmed", "shows", "show", "showed", "shown", "always", "all", "every", "invariably")

// neutralAdverbs are adverbs a quote may leave out without claiming more: they strengthen
// or place what they modify ("significantly reduced") rather than hedge it.
var neutralAdverbs = setOf("significantly", "markedly", "substantially", "strongly", "greatly", "dramatically",
	"highly", "robustly", "consistently", "respectively", "also", "further", "furthermore", "additionally",
	"notably", "importantly", "specifically", "directly", "rapidly", "severely", "early", "only", "largely",
	"statistically", "approximately", "nearly", "independently", "together", "finally", "recently", "daily",
	"newly", "highly", "sharply", "steadily", "progressively", "similarly", "likewise", "overall")

// factives are the verbs by which a source states its own finding: what follows their
// "that" is asserted ("we found that X"), not attributed or hedged.
var factives = setOf("found", "find", "finds", "show", "shows", "showed", "shown", "demonstrate", "demonstrates",
	"demonstrated", "observed", "observe", "observes", "confirm", "confirms", "confirmed", "reveal", "reveals",
	"revealed", "establish", "establishes", "established", "known", "report", "detected", "identified", "noted",
	"determined", "verified", "indicate", "indicates", "indicated", "document", "documented", "estimated", "estimate",
	"estimates", "calculated", "measured", "conclude", "concluded", "confirmed")

// auxiliaries are the verbs a negation or a predicate leans on ("did not", "was not",
// "may not").
var auxiliaries = setOf("do", "does", "did", "is", "was", "were", "are", "be", "been", "being", "has", "have", "had",
	"can", "could", "may", "might", "will", "would", "should", "must", "remains", "remained", "remain", "appears",
	"appeared", "seems", "seemed")

// complementizers open a clause that another clause governs: "the view that ...".
var complementizers = setOf("that", "whether", "if")

// anaphors refer back to what went before: "..., although this was not significant".
var anaphors = setOf("this", "these", "that", "it", "such", "which", "they")

// anaphoricNouns are the nouns by which a clause refers back to a finding: "..., but the
// difference was not significant".
var anaphoricNouns = setOf("difference", "differences", "effect", "effects", "association", "associations",
	"change", "changes", "reduction", "increase", "decrease", "finding", "findings", "result", "results", "trend",
	"correlation", "relationship", "benefit", "improvement", "magnitude", "estimate", "estimates", "gain", "loss")

// concessives open a clause that limits the one before.
var concessives = setOf("although", "though", "but", "yet", "however", "while", "whereas", "albeit")

// units are the units a number may carry, in their canonical forms (unitAliases).
var units = setOf("mg", "g", "kg", "ug", "ng", "pg", "ml", "l", "ul", "dl", "mm", "cm", "m", "km", "um", "nm",
	"mol", "mmol", "umol", "nmol", "pmol", "mm", "um", "nm", "pm", "h", "hr", "hrs", "min", "s", "sec", "ms", "d",
	"wk", "wks", "mo", "y", "yr", "yrs", "iu", "u", "kda", "da", "bp", "kb", "mb", "gb", "kcal", "j", "kj", "w",
	"kw", "mw", "v", "mv", "hz", "khz", "mhz", "ghz", "pa", "kpa", "mpa", "gpa", "c", "k", "ppm", "ppb", "mmhg",
	"fold", "percent", "years", "year", "months", "month", "weeks", "week", "days", "day", "hours", "hour",
	"minutes", "minute", "seconds", "second")

// unitAliases put a unit's other spellings in one form.
var unitAliases = map[string]string{
	"μg": "ug", "mcg": "ug", "microgram": "ug", "micrograms": "ug", "milligram": "mg", "milligrams": "mg",
	"gram": "g", "grams": "g", "kilogram": "kg", "kilograms": "kg", "nanogram": "ng", "nanograms": "ng",
	"μl": "ul", "microliter": "ul", "microliters": "ul", "milliliter": "ml", "milliliters": "ml", "liter": "l",
	"liters": "l", "μm": "um", "micrometer": "um", "micrometers": "um", "micron": "um", "microns": "um",
	"nanometer": "nm", "nanometers": "nm", "millimeter": "mm", "millimeters": "mm", "centimeter": "cm",
	"centimeters": "cm", "meter": "m", "meters": "m", "kilometer": "km", "kilometers": "km", "μmol": "umol",
	"micromole": "umol", "micromoles": "umol", "mmole": "mmol", "millimole": "mmol", "millimoles": "mmol",
	"μs": "us", "μmol/l": "umol", "pct": "percent",
}

// listed says whether a word (in canonical form) is in any of the check's lists: the
// vocabulary the citation benchmark keeps at most half of each dishonest kind's edits in.
func listed(w string) bool {
	if w == "" {
		return false
	}
	if a, _ := direction(w); a != 0 {
		return true
	}
	for _, set := range []map[string]bool{negations, numberWords, hedges, limitations, attributions, contrasts,
		associations, causes, boosters, neutralAdverbs, factives, auxiliaries, complementizers, anaphors,
		anaphoricNouns, concessives, units} {
		if set[w] {
			return true
		}
	}
	_, card := cardinals[w]
	_, mult := multipliers[w]
	_, alias := unitAliases[w]
	return card || mult || alias || slices.Contains(quantifiers, w)
}

// The lists are written as words are spelled; a text's words are compared in their
// canonical form (canon), which may differ ("smaller" reads as "smaler" by the -ller
// pattern of British and American spelling): each list holds its words' canonical forms
// too, or the check would not know "smaller" for a direction.
func init() {
	for _, set := range []map[string]bool{negations, numberWords, hedges, limitations, attributions, contrasts,
		associations, causes, boosters, neutralAdverbs, factives, auxiliaries, complementizers, anaphors,
		anaphoricNouns, concessives, units} {
		var add []string
		for w := range set {
			if c := canon(w); c != w {
				add = append(add, c)
			}
		}
		for _, c := range add {
			set[c] = true
		}
	}
	for i := range directions {
		for _, w := range directions[i].words {
			if c := canon(w); c != w {
				directions[i].words = append(directions[i].words, c)
			}
		}
	}
	for _, w := range quantifiers {
		if c := canon(w); c != w {
			panic("citation: the quantifier " + w + " reads as " + c) // its place is its index
		}
	}
}

// quantity is a quantifier's place from the weakest to the strongest, or -1.
func quantity(w string) int { return slices.Index(quantifiers, w) }

// universal says whether a quantifier claims all.
func universal(w string) bool { return quantity(w) >= quantity("all") }

// direction is the axis and way a word points, or 0, 0.
func direction(w string) (axis, way int) {
	if w == "" {
		return 0, 0
	}
	for _, d := range directions {
		if slices.ContainsFunc(d.words, func(s string) bool { return w == s || (len(s) >= 5 && strings.HasPrefix(w, s)) }) {
			return d.axis, d.way
		}
	}
	return 0, 0
}

// qualifier says whether a word is an adverb that qualifies what it modifies (an "-ly"
// adverb that is not one of the neutral ones): a quote that leaves it out claims more.
func qualifier(w string) bool {
	return len(w) > 4 && strings.HasSuffix(w, "ly") && !neutralAdverbs[w] && !boosters[w] && !strings.HasSuffix(w, "ply") && w != "family" && w != "early"
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
