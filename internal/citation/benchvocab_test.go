package citation_test

import (
	"regexp"
	"strings"
)

// The benchmark's own vocabularies: what a model drops, strengthens or swaps when it
// misquotes, and the ways honest text is written otherwise. They are written apart from
// the check's lists (words.go): each kind of edit has common words, which a list may hold,
// and words of the same use that a list of the check's would not be expected to hold, so
// that TestCitationVocabulary can keep at least half of each kind's edits outside the
// check's lists and the benchmark measures what the check does with words it was not
// written for.

// swap is one edit: from is the record's words, to the quote's.
type swap struct{ from, to string }

// tiers are the words of one kind of edit: common ones, which a list of the check's may
// hold, and rarer ones of the same use. Three in five of the benchmark's edits of a kind
// are drawn from the rare ones (generate sets g.rare).
type tiers[T any] struct{ common, rare []T }

// draw is the tier the citation being made is drawn from.
func draw[T any](g *generator, t tiers[T]) []T {
	if g.rare {
		return t.rare
	}
	return t.common
}

// hedgeEdits take a hedge out of a passage or make it stronger.
var hedgeEdits = tiers[swap]{
	common: []swap{
		{"may lower", "lowers"}, {"may identify", "identifies"}, {"may reflect", "reflects"}, {"may help restore", "restores"},
		{"may also contribute", "also contributes"}, {"may overestimate", "overestimate"}, {"may not signal", "does not signal"},
		{"may therefore be", "is therefore"}, {"may thus heighten", "thus heightens"}, {"may increase", "increases"},
		{"may explain", "explains"}, {"may bias", "biases"}, {"might respond", "respond"}, {"could prevent", "prevents"},
		{"could allow", "allows"}, {"could acquire", "acquires"}, {"could partly reflect", "reflects"},
		{"suggest that", "show that"}, {"suggests that", "shows that"}, {"appear to have", "have"},
		{"possibly enhanced", "enhanced"}, {"tentatively indicate", "prove"}, {"tentatively", ""},
	},
	rare: []swap{
		{"provisionally suggest", "suggest"}, {"ostensibly plaque-stabilising", "plaque-stabilising"},
		{"arguably, episodes", "episodes"}, {"arguably points", "points"}, {"arguably far above", "far above"},
		{"conceivably limit", "limit"}, {"could conceivably shorten", "could shorten"}, {"could plausibly be", "could be"},
		{"plausibly worth testing", "worth testing"}, {"seemingly strongest", "strongest"}, {"seemingly shifted", "shifted"},
		{"seemingly benefited", "benefited"},
	},
}

// causalEdits state an association as a cause.
var causalEdits = tiers[swap]{
	common: []swap{
		{"was associated with", "caused"}, {"were associated with", "caused"}, {"have been associated with", "cause"},
		{"correlated with", "drove"}, {"has been linked to", "causes"}, {"have been linked to", "caused"},
	},
	rare: []swap{
		{"tracked closely with", "was dictated by"}, {"tracked spring temperature", "were governed by spring temperature"},
		{"mirrored", "was dictated by"}, {"co-occurred with", "brought about"}, {"co-varied with", "spurred"},
		{"paralleled", "was precipitated by"}, {"went hand in hand with", "engendered"},
	},
}

// quantifierEdits make a claim about some into one about all.
var quantifierEdits = tiers[swap]{
	common: []swap{
		{"some participants", "all participants"}, {"some patients", "all patients"}, {"most older adults", "all older adults"},
		{"most northern sites", "all northern sites"}, {"several cohorts", "all cohorts"}, {"Several earlier cohorts", "All earlier cohorts"},
		{"Some of the participants", "All of the participants"}, {"many temperate plants", "all temperate plants"},
		{"some mammalian isolates", "all mammalian isolates"}, {"a subset of participants", "all participants"},
	},
	rare: []swap{
		{"a handful of late-season species", "the great bulk of late-season species"},
		{"a handful of participants", "the great bulk of participants"}, {"a fraction of the total", "the whole of the total"},
		{"a fraction of human tumours", "the whole run of human tumours"}, {"rarely transmit", "routinely transmit"},
		{"rarely replicated", "routinely replicated"}, {"rare and mild", "routine and mild"},
	},
}

// entityEdits put one cell, molecule, drug, material, outcome or group for another.
var entityEdits = []swap{
	{"microglia", "astrocytes"}, {"astrocytes", "microglia"}, {"Microglia", "Astrocytes"}, {"exosomes", "microvesicles"},
	{"IL-6", "IL-10"}, {"TNF-α", "IL-1β"}, {"macrophages", "neutrophils"}, {"colchicine", "allopurinol"},
	{"aspirin", "ibuprofen"}, {"perovskite", "organic"}, {"silicon", "germanium"}, {"graphite", "hard carbon"},
	{"nitrogen", "phosphorus"}, {"sodium", "potassium"}, {"coffee", "tea"}, {"amygdala", "hippocampus"},
	{"linezolid", "clofazimine"}, {"clothianidin", "imidacloprid"}, {"sulphate", "nitrate"}, {"strokes", "heart failure"},
	{"women", "men"}, {"girls", "boys"}, {"adolescents", "young adults"}, {"anxiety", "depression"}, {"fungal", "bacterial"},
	{"kelp", "seagrass"}, {"RUNX2", "PPARG"}, {"pollen", "nectar"}, {"falls", "fractures"}, {"spleen", "liver"},
}

// speciesEdits put one species for another.
var speciesEdits = []swap{
	{"mice", "rats"}, {"mouse", "rat"}, {"ferrets", "pigs"}, {"Bombus terrestris", "Apis mellifera"},
	{"bumblebees", "honeybees"}, {"Honeybee", "Bumblebee"}, {"Ecklonia radiata", "Macrocystis pyrifera"},
	{"Acer platanoides", "Quercus robur"}, {"Klebsiella pneumoniae", "Pseudomonas aeruginosa"},
	{"human mesenchymal stem cells", "rat mesenchymal stem cells"}, {"human embryonic kidney cells", "mouse embryonic kidney cells"},
	{"germ-free mice", "germ-free rats"}, {"PS19 mice", "PS19 rats"}, {"P301S mice", "P301S rats"},
	{"patients", "mice"}, {"humans", "macaques"}, {"wild-type mice", "wild-type rats"},
}

// unitEdits change a number's unit.
var unitEdits = tiers[swap]{
	common: []swap{
		{" mg", " g"}, {" g ", " mg "}, {" µg", " mg"}, {" μg", " mg"}, {"ng/g", "µg/g"}, {"pg/mL", "ng/mL"},
		{"mmol/L", "µmol/L"}, {"nmol/L", "mmol/L"}, {" kPa", " MPa"}, {" mm Hg", " cm Hg"}, {" μm", " mm"},
		{" IU ", " mIU "}, {" hPa", " Pa"},
	},
	rare: []swap{
		{" Gy", " cGy"}, {" lux", " klux"}, {" wt%", " at%"}, {" mAh g−1", " Ah g−1"}, {" Tg ", " Gg "},
		{"ha−1", "acre−1"}, {" cfu", " pfu"},
	},
}

// comparatorEdits turn a comparison around.
var comparatorEdits = tiers[swap]{
	common: []swap{
		{"P < ", "P > "}, {"p < ", "p > "}, {"≥ ", "≤ "}, {"more than", "less than"}, {"less than", "more than"},
		{"above", "below"}, {"at most", "at least"}, {"at least", "at most"}, {"up to", "at least"},
	},
	rare: []swap{
		{"older than", "younger than"}, {"younger than", "older than"}, {"shorter than", "longer than"},
		{"longer than", "shorter than"},
	},
}

// governors are what a passage puts before a clause it does not assert, or after a
// finding it limits: what a fragment leaves out when it drops its context. before ends
// where the quoted clause starts.
var governors = tiers[string]{
	common: []string{
		"It is tempting to speculate that", "has been proposed as", "have been proposed to", "It has been hypothesised that", "It has been suggested that",
		"is widely thought to", "is thought to", "are thought to", "is believed to", "is widely believed to",
		"have been claimed to", "it has been argued that", "It has been claimed that", "reported that", "suggest that",
		"suggests that", "the idea that", "There was no evidence that", "did not", "may", "might", "could",
	},
	rare: []string{
		"has been posited to", "have been mooted as", "have contended that", "It has long been presumed that",
		"have surmised that", "It has been theorised that", "have intimated that", "conjectured that",
		"have envisaged that", "It was once presumed that",
	},
}

// limits are what a passage puts after a finding to limit it.
var limits = []string{
	", but only in", ", although this", ", although the", ", but this", ", which did not", ", but were tested only",
	", although they", ", although none", " and did not persist", ", although five nights",
}

// negators are what an elision leaves out to turn a sentence around: a negation or a
// hedge and the words it leans on.
var negators = tiers[string]{
	common: []string{
		"did not ", "did not significantly ", "not ", "no ", "Neither ", "nor ", "failed to ", "may ", "might ", "could ",
		"cannot ", "none of ",
	},
	rare: []string{
		"scarcely ", "barely ", "hardly ", "seldom ", "did little to ", "rarely ",
	},
}

// contextWords are the benchmark's own words of what governs a clause: an honest
// fragment or elision leaves none of them out. The list is broad on purpose.
var contextWords = setOf(
	"not", "no", "never", "none", "neither", "nor", "without", "cannot", "failed", "fail", "lack", "lacking", "absent",
	"absence", "unable", "little", "scarcely", "barely", "hardly", "rarely", "seldom", "unaffected", "unchanged",
	"unrelated", "insensitive", "ineffective", "inconsistent", "undetectable", "unproven", "unclear", "unknown",
	"uncertain", "may", "might", "could", "can", "would", "should", "suggest", "suggests", "suggested", "appear",
	"appears", "seem", "seems", "likely", "unlikely", "possibly", "potentially", "perhaps", "probably", "putative",
	"presumed", "presumably", "tentatively", "conceivably", "arguably", "plausibly", "ostensibly", "provisionally",
	"seemingly", "speculate", "hypothesised", "hypothesized", "proposed", "thought", "believed", "assumed", "claimed",
	"argued", "posited", "mooted", "contended", "intimated", "surmised", "conjectured", "theorised", "envisaged",
	"reported", "whether", "if", "preliminary", "pilot", "small", "modest", "modestly", "slightly", "partly",
	"partially", "only", "except", "unless", "although", "though", "but", "however", "whereas", "while", "yet",
	"despite", "contrary", "unlike", "rather", "instead", "tempting", "widely", "commonly", "idea", "notion", "view",
	"evidence", "indicate", "largely", "scarce", "contested", "limited", "cannot", "lacking", "needed", "remains",
	"regardless", "once", "long", "earlier", "previously", "commentators", "authors", "some", "most", "several")

// factiveLeadIns are a source's statements of its own finding before a clause it asserts.
var factiveLeadIns = []string{"we find that", "we found that", "We show that", "we estimated that", "We found that"}

// stopwords are the words an edit's vocabulary is counted without: articles,
// prepositions, conjunctions, auxiliaries, pronouns, complementizers.
var stopwords = setOf("a", "an", "the", "of", "in", "on", "at", "to", "by", "for", "with", "from", "as", "and", "or",
	"that", "this", "these", "it", "its", "their", "they", "is", "are", "was", "were", "be", "been", "has", "have",
	"had", "did", "do", "does", "which", "than", "there", "we", "our", "into", "over", "also", "thus", "therefore",
	"so", "whole", "run", "great")

// britishAmerican are spellings of the same words.
var britishAmerican = []swap{
	{"tumour", "tumor"}, {"tumours", "tumors"}, {"Tumour", "Tumor"}, {"randomised", "randomized"},
	{"ischaemic", "ischemic"}, {"revascularisations", "revascularizations"}, {"stabilising", "stabilizing"},
	{"centre", "center"}, {"hypothesised", "hypothesized"}, {"favour", "favor"}, {"fertilisation", "fertilization"},
	{"sulphate", "sulfate"}, {"vapour", "vapor"}, {"deionised", "deionized"}, {"centimetre", "centimeter"},
	{"unfavourable", "unfavorable"}, {"titres", "titers"}, {"glycaemic", "glycemic"}, {"Hypoglycaemic", "Hypoglycemic"},
	{"theorised", "theorized"}, {"oesophagus", "esophagus"}, {"internalised", "internalized"}, {"behaviour", "behavior"},
	{"characterised", "characterized"}, {"haemoglobin", "hemoglobin"}, {"analysed", "analyzed"}, {"labelled", "labeled"},
	{"ageing", "aging"}, {"neutralised", "neutralized"}, {"colour", "color"}, {"organised", "organized"},
}

// greekNames are the Greek letters a quote may spell out.
var greekNames = []swap{
	{"α", "alpha"}, {"β", "beta"}, {"γ", "gamma"}, {"δ", "delta"}, {"ε", "epsilon"}, {"κ", "kappa"}, {"ρ", "rho"},
	{"τ", "tau"}, {"θ", "theta"}, {"ω", "omega"},
}

// spelledNumbers are numbers in words.
var spelledNumbers = map[int]string{1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
	9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen", 16: "sixteen",
	17: "seventeen", 18: "eighteen", 19: "nineteen", 20: "twenty", 24: "twenty-four", 30: "thirty", 36: "thirty-six",
	40: "forty", 42: "forty-two", 48: "forty-eight", 50: "fifty", 60: "sixty", 64: "sixty-four", 68: "sixty-eight",
	70: "seventy", 75: "seventy-five", 96: "ninety-six"}

// notations are ways of writing a p-value or a range: each pattern and its other form.
var notations = []struct {
	re  *regexp.Regexp
	out string
}{
	{regexp.MustCompile(`\bP < 0\.(\d+)`), "p<.$1"},
	{regexp.MustCompile(`\bP = 0\.(\d+)`), "p = .$1"},
	{regexp.MustCompile(`\bp < 0\.(\d+)`), "P < .$1"},
	{regexp.MustCompile(`\b(\d+(?:\.\d+)?) to (\d+(?:\.\d+)?)( ?%| years| months| weeks| days|\))`), "$1–$2$3"},
	{regexp.MustCompile(`\b(\d+(?:\.\d+)?)–(\d+(?:\.\d+)?)( ?%| years| months| weeks| days|\))`), "$1 to $2$3"},
	{regexp.MustCompile(`\((\d+) to (\d+)%\)`), "($1%–$2%)"},
}

func setOf(ws ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range ws {
		m[strings.ToLower(w)] = true
	}
	return m
}
