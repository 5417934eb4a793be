package simulator

// Planted citations of issue #37: honest ones written otherwise than the source (its
// spelling, Greek letters, numbers in words, p-values and ranges; a clause that keeps what
// governs it), and the misquotes real models make most: a claim stated more strongly than
// its source (a hedge dropped, association made causal, a quantifier strengthened), a
// wrong subject (an entity, a species), a number's unit, sign, comparator or decimal point
// changed, and the source's words lifted out of what governs them (a fragment without its
// hedge or negation, an elision over one, an elision joining sentences far apart). A
// quote of a result that names several sources in one text, the benchmark's last kind,
// is not planted: cosci's literature server never gives one.

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
)

// plantedWords are the swaps of the simulator's own kinds: the record's words, and the
// quote's.
var (
	britishWords = map[string]string{"internalisation": "internalization", "tumour": "tumor", "tumours": "tumors",
		"randomised": "randomized", "behaviour": "behavior", "analysed": "analyzed", "characterised": "characterized",
		"haemoglobin": "hemoglobin", "centre": "center", "signalling": "signaling", "modelling": "modeling",
		"labelled": "labeled", "neutralised": "neutralized", "oesophagus": "esophagus", "ageing": "aging",
		"internalised": "internalized", "colour": "color", "favour": "favor", "organised": "organized"}
	hedgeDrops = map[string]string{"may ": "", "might ": "", "could ": "", "suggests that": "shows that",
		"suggest that": "show that", "likely ": "", "possibly ": "", "potentially ": "", "appears to ": ""}
	causalSwaps = map[string]string{"associated with": "caused by", "correlated with": "drove", "linked to": "caused by"}
	quantSwaps  = map[string]string{"some ": "all ", "most ": "all ", "several ": "all ", "a subset of ": "all ", "many ": "all "}
	entitySwaps = map[string]string{"microglia": "astrocytes", "astrocytes": "microglia", "neurons": "oligodendrocytes",
		"exosomes": "lysosomes", "tau": "amyloid", "synapses": "axons", "TREM2": "CD33", "BIN1": "PICALM", "LRP1": "LDLR"}
	speciesSwaps = map[string]string{"mice": "rats", "humans": "mice", "volunteers": "mice", "patients": "mice",
		"mouse": "rat", "zebrafish": "medaka"}
	unitSwaps    = map[string]string{" mg": " g", " µg": " mg", " μg": " mg", " nM": " µM", " mM": " M", " ml": " l", " kDa": " Da"}
	governorsFor = []string{"suggests that ", "suggest that ", "proposed that ", "hypothesised that ", "thought to ",
		"may ", "might ", "could ", "did not ", "no evidence that "}
	negationsFor = []string{"did not ", "does not ", "not ", "no ", "may ", "might ", "could ", "failed to "}
	// governing are the simulator's words of what governs a clause: an honest fragment or
	// elision leaves none of them out.
	governing = regexp.MustCompile(`(?i)\b(not|no|never|none|neither|nor|without|cannot|failed|unable|may|might|could|can|would|should|must|suggests?|appears?|likely|possibly|potentially|proposed|thought|believed|hypothesi[sz]ed|whether|only|except|unless|although|though|but|however|whereas|while|yet|despite|unchanged|unaffected|preliminary|small|modest|partly|partially)\b`)
)

// rewrites are the kinds made by one change of a sentence of the source.
var rewrites = map[string]func(string) string{
	PlantedSpelling:     spliceWords(britishWords),
	PlantedGreek:        spellGreek,
	PlantedNumberWords:  wordNumbers,
	PlantedNotation:     renotate,
	PlantedHedgeDropped: spliceWords(hedgeDrops),
	PlantedCausal:       spliceWords(causalSwaps),
	PlantedQuantifier:   spliceWords(quantSwaps),
	PlantedEntity:       spliceWords(entitySwaps),
	PlantedSpecies:      spliceWords(speciesSwaps),
	PlantedUnit:         spliceWords(unitSwaps),
	PlantedSign:         resign,
	PlantedDecimal:      dropPoint,
}

// spliceWords makes a change of one of the swaps whose words a passage holds.
func spliceWords(table map[string]string) func(string) string {
	return func(s string) string {
		for _, from := range sortedKeys(table) {
			if i := strings.Index(s, from); i >= 0 && (i == 0 || !isLetterByte(s[i-1])) && endsWord(s, i+len(from)) {
				return s[:i] + table[from] + s[i+len(from):]
			}
		}
		return s
	}
}

func isLetterByte(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// endsWord says whether position i of s ends a word (or the swap ended in a space).
func endsWord(s string, i int) bool { return i >= len(s) || s[i-1] == ' ' || !isLetterByte(s[i]) }

// greekLetters are spelled out by an honest quote.
var greekLetters = strings.NewReplacer("α", "alpha", "β", "beta", "γ", "gamma", "δ", "delta", "ε", "epsilon", "κ", "kappa")

func spellGreek(s string) string { return greekLetters.Replace(s) }

// smallNumbers are written in words by an honest quote, or the other way.
var (
	smallNumber = regexp.MustCompile(`(^| )([2-9]|1[0-9]|20)( [a-z])`)
	numberNames = []string{"", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
		"twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"}
)

// wordNumbers writes a small number of a passage in words, or one in words in digits.
func wordNumbers(s string) string {
	if m := smallNumber.FindStringSubmatchIndex(s); m != nil && !strings.HasSuffix(s[:m[4]], "= ") {
		n, _ := strconv.Atoi(s[m[4]:m[5]])
		return s[:m[4]] + numberNames[n] + s[m[5]:]
	}
	for n := 2; n < len(numberNames); n++ {
		if i := strings.Index(s, " "+numberNames[n]+" "); i >= 0 {
			return s[:i+1] + strconv.Itoa(n) + s[i+1+len(numberNames[n]):]
		}
	}
	return s
}

// renotate writes a p-value or a range another way: "P < 0.01" as "p<.01", "3–7" as
// "3 to 7".
var (
	pValue   = regexp.MustCompile(`\b[Pp] ?([<=>]) ?0\.(\d+)`)
	rangeNum = regexp.MustCompile(`\b(\d+)–(\d+)\b`)
)

func renotate(s string) string {
	if pValue.MatchString(s) {
		return pValue.ReplaceAllString(s, "p$1.$2")
	}
	return rangeNum.ReplaceAllString(s, "$1 to $2")
}

// resign turns a comparator around, or takes a number's minus sign off.
var (
	comparator = regexp.MustCompile(`([Pp] ?)<`)
	minus      = regexp.MustCompile(`(^|[ (=])[−-](\d)`)
)

func resign(s string) string {
	switch {
	case comparator.MatchString(s):
		return comparator.ReplaceAllString(s, "$1>")
	case minus.MatchString(s):
		return minus.ReplaceAllString(s, "$1$2")
	}
	return s
}

// dropPoint drops the decimal point of a number: "2.5-fold" as "25-fold".
var pointed = regexp.MustCompile(`(^|[ (])([1-9]\d*)\.(\d+)`)

func dropPoint(s string) string { return pointed.ReplaceAllString(s, "$1$2$3") }

// clauseMark ends a clause within a sentence.
var clauseMark = regexp.MustCompile(`[,;:] `)

// fragment quotes a clause of a sentence (from its start or after a comma, to a comma or
// its end) when what it leaves out governs nothing: "" when no sentence has one.
func fragment(rng *rand.Rand, ss []string) string {
	for _, i := range rng.Perm(len(ss)) {
		s := ss[i]
		bounds := clauseMark.FindAllStringIndex(s, -1)
		if len(bounds) == 0 {
			continue
		}
		b := bounds[rng.IntN(len(bounds))]
		for _, q := range []struct{ quote, rest string }{{s[:b[0]], s[b[0]:]}, {s[b[1]:], s[:b[1]]}} {
			if len(wordsOf(q.quote)) >= 6 && !governing.MatchString(q.rest) {
				return q.quote
			}
		}
	}
	return ""
}

// contextDropped quotes the clause after what governs it ("suggests that X" as "X").
func contextDropped(rng *rand.Rand, ss []string) string {
	for _, i := range rng.Perm(len(ss)) {
		for _, g := range governorsFor {
			if at := strings.Index(ss[i], g); at >= 0 {
				rest := ss[i][at+len(g):]
				if m := clauseMark.FindStringIndex(rest); m != nil {
					rest = rest[:m[0]]
				}
				if q := strings.TrimSuffix(rest, "."); len(wordsOf(q)) >= 5 {
					return q
				}
			}
		}
	}
	return ""
}

// elideNegation leaves a negation or a hedge out, marked: "did not reduce" as "did ...
// reduce".
func elideNegation(rng *rand.Rand, ss []string) string {
	for _, i := range rng.Perm(len(ss)) {
		for _, n := range negationsFor {
			if at := strings.Index(ss[i], " "+n); at > 0 {
				return ss[i][:at] + " ... " + ss[i][at+1+len(n):]
			}
		}
	}
	return ""
}

// distant joins two sentences that are not next to each other with an elision mark.
func distant(rng *rand.Rand, ss []string) string {
	if len(ss) < 3 {
		return ""
	}
	i := rng.IntN(len(ss) - 2)
	return ss[i] + " ... " + ss[i+2+rng.IntN(len(ss)-i-2)]
}

// sortedKeys are a table's keys, the longest first (a longer swap before its part).
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if len(keys[j]) > len(keys[i]) || len(keys[j]) == len(keys[i]) && keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

// negate takes a "not" or "no" away, or adds one.
func negate(s string) string {
	for _, r := range [][2]string{
		{" did not ", " did "}, {" does not ", " does "}, {" was not ", " was "}, {" were not ", " were "},
		{" is not ", " is "}, {" are not ", " are "}, {" not ", " "}, {" no significant ", " a significant "},
		{" no ", " a "}, {" without ", " with "},
	} {
		if strings.Contains(s, r[0]) {
			return strings.Replace(s, r[0], r[1], 1)
		}
	}
	for _, aux := range []string{" may ", " can ", " could ", " is ", " are ", " was ", " were "} {
		if strings.Contains(s, aux) {
			return strings.Replace(s, aux, aux+"not ", 1)
		}
	}
	ws := strings.Split(s, " ")
	for i, w := range ws {
		if i > 0 && negations[w] != "" { // "blocked tau uptake" -> "did not block tau uptake"
			ws[i] = negations[w]
			return strings.Join(ws, " ")
		}
	}
	return s
}

// negations are verbs as an abstract states a finding, and their negations.
var negations = map[string]string{
	"reduced": "did not reduce", "increased": "did not increase", "blocked": "did not block", "slowed": "did not slow",
	"halved": "did not halve", "prevented": "did not prevent", "promoted": "did not promote", "lowered": "did not lower",
	"raised": "did not raise", "showed": "did not show", "improved": "did not improve", "restored": "did not restore",
	"inhibited": "did not inhibit", "neutralised": "did not neutralise", "decreased": "did not decrease",
	"reduces": "does not reduce", "increases": "does not increase", "controls": "does not control", "binds": "does not bind",
	"promotes": "does not promote", "slows": "does not slow", "blocks": "does not block", "drives": "does not drive",
	"raise": "do not raise", "reduce": "do not reduce", "promote": "do not promote", "increase": "do not increase",
}

// opposites are direction words and their opposites.
var opposites = map[string]string{
	"increase": "decrease", "increases": "decreases", "increased": "decreased", "decrease": "increase",
	"decreases": "increases", "decreased": "increased", "reduce": "increase", "reduces": "increases",
	"reduced": "increased", "higher": "lower", "lower": "higher", "more": "less", "less": "more",
	"promote": "inhibit", "promotes": "inhibits", "promoted": "inhibited", "inhibit": "promote",
	"inhibits": "promotes", "inhibited": "promoted", "up-regulated": "down-regulated",
	"down-regulated": "up-regulated", "upregulated": "downregulated", "downregulated": "upregulated",
	"accelerates": "slows", "accelerated": "slowed", "slows": "accelerates", "slowed": "accelerated",
	"slow": "accelerate", "faster": "slower", "slower": "faster", "enhances": "impairs", "enhanced": "impaired",
	"impairs": "enhances", "impaired": "enhanced", "halved": "doubled", "doubled": "halved",
	"prevents": "causes", "prevented": "caused", "blocks": "enables", "blocked": "enabled", "drives": "prevents",
}

// flip turns the first direction word of a sentence into its opposite.
func flip(s string) string { return replaceFirst(s, opposites) }

// replaceFirst replaces the first word of a sentence that the table names (its trailing
// punctuation kept), or returns the sentence as it is.
func replaceFirst(s string, table map[string]string) string {
	ws := strings.Split(s, " ")
	for i, w := range ws {
		core := strings.TrimRight(w, ".,;:)")
		if o, ok := table[core]; ok {
			ws[i] = o + w[len(core):]
			return strings.Join(ws, " ")
		}
	}
	return s
}
