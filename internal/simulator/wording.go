package simulator

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/prompt"
)

// How a generated hypothesis is worded. Two hypotheses a model writes for one goal share
// its subject and some of a field's vocabulary, not their sentences: on the proximity
// fixture (internal/proximity/testdata), distinct hypotheses on one topic share a median
// 4% of their words and word pairs, and at most 16%. So each thing a hypothesis says has
// several phrasings, each sentence several shapes, and each mediator a name of its own,
// all drawn from a stream apart from the one that decides what the hypothesis claims
// (proximity.TestSimulatorWordsDistinctHypothesesApart measures the result).

// wording draws a hypothesis' phrasings.
type wording struct{ rng *rand.Rand }

// newWording is the wording stream of a turn: like newRand, deterministic for a seed and
// turn, and apart from it.
func newWording(seed int64, turnID string) wording {
	return wording{rand.New(rand.NewPCG(uint64(seed)^0x9e3779b97f4a7c15, hash("wording:"+turnID)))}
}

func (w wording) pick(list []string) string { return list[w.rng.IntN(len(list))] }

// claim is what a hypothesis says, worded: its mechanism, effect (a verb) and context as
// phrased this time, its mediator at length (med: "the orphan receptor GPR137") and short
// (name: "GPR137"), and its two topics.
type claim struct {
	mech, effect, ctx, med, name string
	x, y                         string
}

// claim words the mechanism, effect, context and mediator kinds drawn for a hypothesis.
func (w wording) claim(mech, effect, ctx, mediator, x, y string) claim {
	c := claim{mech: w.variant(mechanismWords, mech), effect: w.variant(effectWords, effect), ctx: w.variant(contextWords, ctx), x: w.topic(x), y: w.topic(y)}
	c.med, c.name = w.mediator(mediator)
	return c
}

// topic is one of the ways to name a topic: whole, or (as a writer shortens a long
// phrase) the part of it that names the thing itself: "the spread of tau pathology" as
// "tau pathology", "cancer resistance in naked mole-rats" as "naked mole-rats", "tau
// protein propagation" as "protein propagation".
func (w wording) topic(t string) string {
	forms := topicForms(t)
	return forms[w.rng.IntN(len(forms))]
}

// topicForms are the names of a topic: itself first, then its shortenings (see topic).
func topicForms(t string) []string {
	forms := []string{t}
	words := strings.Fields(t)
	for _, sep := range []string{" of ", " in ", " from ", " to "} {
		if before, after, ok := strings.Cut(t, sep); ok && len(strings.Fields(after)) > 0 {
			if !strings.HasPrefix(before, "the ") {
				forms = append(forms, before)
			}
			return append(forms, after)
		}
	}
	if len(words) >= 3 {
		forms = append(forms, strings.Join(words[len(words)-2:], " "))
	}
	return forms
}

// variant is one phrasing of key: itself, or one of its alternatives.
func (w wording) variant(alternatives map[string][]string, key string) string {
	alts := alternatives[key]
	if n := w.rng.IntN(len(alts) + 1); n < len(alts) {
		return alts[n]
	}
	return key
}

// mediator names a mediator of a kind: at length and short, with a made-up symbol where
// the kind has named members ("the orphan receptor GPR137", "GPR137").
func (w wording) mediator(kind string) (long, short string) {
	forms := mediatorWords[kind]
	if len(forms) == 0 {
		return article(kind) + " " + kind, "the " + kind
	}
	f := forms[w.rng.IntN(len(forms))]
	name := ""
	if f.symbol != "" {
		name = fmt.Sprintf(f.symbol, 1+w.rng.IntN(f.max))
	}
	long, short = f.long, f.short
	if name != "" {
		long, short = fmt.Sprintf(f.long, name), fmt.Sprintf(f.short, name)
	}
	return long, short
}

// title is the hypothesis' title, naming its topic, in one of several shapes; a shape too
// long for a title loses its context, then falls back to the shortest.
func (w wording) title(c claim) string {
	shapes := []string{
		"%[1]s %[2]s %[3]s %[4]s",
		"%[5]s links %[1]s to %[3]s",
		"%[3]s %[4]s: a role for %[1]s",
		"%[1]s as the engine of %[3]s",
		"%[5]s at the heart of %[3]s",
		"%[5]s, %[1]s and %[3]s",
		"%[1]s %[2]s %[3]s through %[5]s",
	}
	s := shapes[w.rng.IntN(len(shapes))]
	t := capitalise(fmt.Sprintf(s, c.mech, c.effect, c.x, c.ctx, c.name))
	if utf8.RuneCountInString(t) > prompt.MaxTitleLength {
		t = capitalise(fmt.Sprintf("%s %s %s", c.mech, c.effect, c.x))
	}
	return truncate(t, prompt.MaxTitleLength)
}

// statement states the hypothesis in one of several shapes.
func (w wording) statement(c claim) string {
	shapes := []string{
		"We hypothesise that %[1]s, mediated by %[4]s, %[2]s %[5]s %[3]s, and that this in turn shapes %[6]s.",
		"%[1]s %[2]s %[5]s %[3]s because %[4]s carries the signal.",
		"The proposal is that %[4]s is the missing link between %[1]s and %[5]s, acting mainly %[3]s.",
		"What happens to %[5]s %[3]s reflects %[1]s: %[7]s %[2]s it, and the same route reaches %[6]s.",
		"We propose that %[1]s, acting through %[4]s, sets the course of %[5]s, an effect largest %[3]s.",
		"Our claim: %[1]s, relayed by %[7]s, %[2]s %[5]s.",
		"If %[1]s is what %[2]s %[5]s %[3]s, then %[4]s sits between the two.",
		"%[7]s %[2]s %[5]s %[3]s by way of %[1]s, which would also account for what happens to %[6]s.",
	}
	return capitalise(fmt.Sprintf(w.pick(shapes), c.mech, c.effect, c.ctx, c.med, c.x, c.y, c.name))
}

// reason words one of the kinds of reason (see reasons) a hypothesis is built on.
func (w wording) reason(kind int, c claim) string {
	return fmt.Sprintf(w.pick(reasonWords[kind]), c.x, c.y, c.mech, c.med, c.name)
}

// debate words the rationale of a hypothesis from a simulated debate among three experts:
// who proposed what, the objection, what answered it; each part in one of several forms.
func (w wording) debate(c claim, first, second, third, weakness string) string {
	panel := fmt.Sprintf(w.pick([]string{
		"Outcome of a simulated debate among %[1]s, %[2]s and %[3]s.",
		"In a simulated debate, %[1]s, %[2]s and %[3]s argued it out.",
		"Three simulated experts (%[1]s, %[2]s, %[3]s) debated %[4]s.",
	}), article(first)+" "+first, article(second)+" "+second, article(third)+" "+third, c.x)
	proposal := fmt.Sprintf(w.pick([]string{"The %s proposed that %s %s %s;", "The %s made the case that %s %s %s;", "First, the %s argued that %s %s %s;"}), first, c.mech, c.effect, c.x)
	objection := fmt.Sprintf(w.pick([]string{"the %s objected that %s;", "the %s countered that %s;", "the %s doubted it, since %s;"}), second, weakness)
	answer := fmt.Sprintf(w.pick([]string{"the %s answered that %s would explain both,", "the %s pointed to %s as the common thread,", "the %s put forward %s to reconcile the two,"}), third, c.med)
	closing := w.pick([]string{"and the panel converged on it as the link to test first.", "which carried the debate.", "and the others agreed to test that first.", "which is the version tested here."})
	return strings.Join([]string{panel, proposal, objection, answer, closing}, " ")
}

// assumptions words the rationale of a hypothesis built by iterative assumption
// identification: three numbered assumptions that together imply it.
func (w wording) assumptions(c claim) string {
	opener := w.pick(assumptionOpeners)
	one := fmt.Sprintf(w.pick([]string{"%[1]s operates %[2]s", "%[2]s, %[1]s is active", "%[1]s is at work %[2]s"}), c.mech, c.ctx)
	two := fmt.Sprintf(w.pick([]string{"%[1]s is present where %[3]s is observed", "%[2]s can be detected where %[3]s arises", "%[1]s co-occurs with %[3]s"}), c.med, c.name, c.x)
	three := fmt.Sprintf(w.pick([]string{"a change in %[1]s precedes the change in %[2]s", "%[1]s moves before %[2]s does", "perturbing %[1]s comes before any shift in %[2]s"}), c.name, c.y)
	closing := w.pick([]string{"Together they imply the hypothesis.", "If all three hold, the hypothesis follows.", "Jointly they entail the claim."})
	return fmt.Sprintf("%s (1) %s; (2) %s; (3) %s. %s", opener, one, two, three, closing)
}

// prediction words one of the kinds of prediction (see predictions), in the model system
// a prediction may name.
func (w wording) prediction(kind int, c claim, blocker, assay string) string {
	n := []int{20, 25, 30, 40, 50}[w.rng.IntN(5)]
	days := []int{3, 7, 10, 14, 21, 28}[w.rng.IntN(6)]
	s := fmt.Sprintf(w.pick(predictionWords[kind]), c.x, c.y, c.mech, c.med, blocker, assay, c.ctx, c.name, n, days, w.pick(modelSystems))
	return capitalise(s)
}

// The phrasings. Each key of the maps is itself one of its phrasings.
var (
	mechanismWords = map[string][]string{
		"feedback inhibition":            {"a negative feedback loop", "end-product inhibition", "self-limiting feedback"},
		"allosteric regulation":          {"an allosteric switch", "allosteric control of enzyme activity"},
		"epigenetic silencing":           {"promoter methylation", "heterochromatin spreading", "histone deacetylation"},
		"phase separation":               {"liquid condensate formation", "biomolecular condensates"},
		"metabolic rewiring":             {"a shift from respiration to glycolysis", "altered NAD+ balance", "a switch in carbon source use"},
		"oxidative stress":               {"reactive oxygen species", "lipid peroxidation", "redox imbalance"},
		"horizontal gene transfer":       {"plasmid exchange", "conjugative transfer of genes"},
		"circadian gating":               {"clock-controlled timing", "diurnal rhythms of gene expression"},
		"mechanical stress":              {"tissue stiffness", "shear forces", "mechanotransduction"},
		"quorum sensing":                 {"density-dependent signalling", "autoinducer accumulation"},
		"protein misfolding":             {"templated misfolding", "proteostasis failure", "chaperone overload"},
		"immune cross-talk":              {"cytokine signalling between immune and resident cells", "complement activation"},
		"nutrient sensing":               {"mTORC1 signalling", "AMPK activation", "amino-acid sensing"},
		"ion channel remodelling":        {"altered calcium handling", "loss of potassium channels"},
		"microbial competition":          {"interference competition between strains", "bacteriocin warfare"},
		"stochastic switching":           {"bet-hedging", "noise in gene expression", "bistable switching"},
		"threshold-dependent activation": {"a tipping point", "all-or-none activation above a critical level"},
		"spatial compartmentalisation":   {"subcellular sequestration", "niche-restricted signalling"},
		"cooperative binding":            {"multivalent binding", "avidity effects"},
		"resource limitation":            {"energy scarcity", "competition for a limiting cofactor"},
	}
	// effectWords are no verbs that package topics reads as a goal's verb, so that a title
	// never reads as a clause of the goal.
	effectWords = map[string][]string{
		"drives":     {"fuels", "underlies", "powers"},
		"modulates":  {"tunes", "reshapes"},
		"limits":     {"restrains", "caps", "holds back"},
		"amplifies":  {"magnifies", "exaggerates"},
		"stabilises": {"locks in", "consolidates"},
		"gates":      {"licenses", "permits"},
		"buffers":    {"dampens", "blunts"},
		"triggers":   {"initiates", "sets off", "sparks"},
	}
	contextWords = map[string][]string{
		"under chronic stress":         {"when stress lasts for weeks", "in chronically stressed tissue"},
		"during early development":     {"in the embryo", "before maturity"},
		"at tissue boundaries":         {"at the interface between compartments", "along tissue borders"},
		"in ageing populations":        {"in old individuals", "late in life"},
		"under nutrient scarcity":      {"during starvation", "when nutrients run low"},
		"during inflammation":          {"in an inflamed milieu", "while inflammation lasts"},
		"across cell types":            {"in several cell lineages", "whatever the cell type"},
		"at high density":              {"in crowded populations", "when cells are tightly packed"},
		"after acute injury":           {"in the days after an injury", "following tissue damage"},
		"in the transition to disease": {"at the onset of disease", "as disease sets in"},
	}
	// mediatorWords are the forms of each kind of mediator: at length and short, with a
	// symbol (a format of one number, up to max) where the form names one.
	mediatorWords = map[string][]struct {
		long, short, symbol string
		max                 int
	}{
		"small-molecule signal": {
			{"a diffusible metabolite", "the metabolite", "", 0}, {"succinate", "succinate", "", 0},
			{"kynurenine", "kynurenine", "", 0}, {"a polyamine", "the polyamine", "", 0}, {"itaconate", "itaconate", "", 0},
		},
		"previously uncharacterised transporter": {
			{"the solute carrier %s", "%s", "SLC%dA4", 45}, {"an orphan ABC transporter", "the transporter", "", 0},
			{"the uncharacterised transporter %s", "%s", "MFSD%d", 14},
		},
		"transcriptional repressor": {
			{"the zinc-finger repressor %s", "%s", "ZNF%d", 800}, {"a Polycomb-group repressor", "the Polycomb complex", "", 0},
			{"the repressor %s", "%s", "BHLHE%d", 41},
		},
		"membrane-bound receptor": {
			{"the orphan receptor %s", "%s", "GPR%d", 180}, {"a Toll-like receptor", "the Toll-like receptor", "", 0},
			{"the receptor tyrosine kinase %s", "%s", "EPHA%d", 8},
		},
		"secreted protease": {
			{"the metalloprotease %s", "%s", "ADAM%d", 33}, {"a secreted serine protease", "the protease", "", 0},
			{"the matrix metalloproteinase %s", "%s", "MMP%d", 28},
		},
		"non-coding RNA": {
			{"the microRNA %s", "%s", "miR-%d", 4000}, {"the long non-coding RNA %s", "%s", "LINC%d", 2800},
			{"a circular RNA", "the circular RNA", "", 0},
		},
		"lipid messenger": {
			{"a sphingolipid messenger", "the sphingolipid", "", 0}, {"ceramide", "ceramide", "", 0},
			{"a prostaglandin", "the prostaglandin", "", 0}, {"the lysophospholipid %s", "%s", "LPA%d", 6},
		},
		"kinase cascade": {
			{"the kinase %s", "%s", "DYRK%d", 4}, {"a MAP kinase cascade", "the MAP kinases", "", 0},
			{"the stress-activated kinase %s", "%s", "MAP3K%d", 21},
		},
		"extracellular matrix component": {
			{"a matrix proteoglycan", "the proteoglycan", "", 0}, {"collagen cross-links", "the cross-links", "", 0},
			{"fibronectin", "fibronectin", "", 0}, {"hyaluronan", "hyaluronan", "", 0},
		},
		"symbiotic microbe": {
			{"a commensal Bacteroides strain", "the Bacteroides strain", "", 0}, {"an endosymbiont", "the endosymbiont", "", 0},
			{"a gut commensal", "the commensal", "", 0},
		},
	}
	// reasonWords word each kind of reason of reasons: %[1]s and %[2]s are the topics,
	// %[3]s the mechanism, %[4]s the mediator at length and %[5]s short.
	reasonWords = [][]string{
		{
			"studies of %[1]s report sensitivity to %[3]s, and %[4]s has been found near %[2]s, but the two have never been linked",
			"%[1]s is known to respond to %[3]s, and %[5]s turns up wherever %[2]s is studied; nobody has connected them",
			"two literatures, one on %[3]s in %[1]s and one on %[4]s in %[2]s, have grown up apart",
		},
		{
			"analogous systems show that %[3]s can switch behaviour abruptly, which would explain the variability reported for %[1]s",
			"in other systems %[3]s produces sudden switches, the kind of variability seen in %[1]s",
			"abrupt, switch-like changes are the signature of %[3]s elsewhere, and reports on %[1]s describe exactly that",
		},
		{
			"%[4]s acting as the missing link would reconcile conflicting observations about %[1]s and %[2]s",
			"conflicting reports on %[1]s and %[2]s make sense if %[5]s links them",
			"the contradictions between findings on %[1]s and on %[2]s disappear once %[5]s is placed between them",
		},
		{
			"%[3]s is conserved across the systems in which %[1]s has been studied, which makes a shared mechanism the simplest explanation",
			"every system where %[1]s has been examined also shows %[3]s, so a common cause is the parsimonious reading",
			"%[3]s recurs wherever %[1]s does, which argues for one mechanism rather than many",
		},
	}
	// predictionWords word each kind of prediction of predictions: %[1]s and %[2]s are the
	// topics, %[3]s the mechanism, %[4]s and %[8]s the mediator at length and short,
	// %[5]s a blocker, %[6]s an assay, %[7]s the context, %[9]d a percentage and %[10]d a
	// number of days.
	predictionWords = [][]string{
		{
			"Blocking %[8]s with %[5]s should reduce %[1]s relative to matched controls.",
			"%[5]s against %[8]s should lower %[1]s in %[11]s by at least %[9]d%% compared with untreated ones.",
			"Removing %[8]s (%[5]s) will blunt %[1]s within %[10]d days in %[11]s.",
			"In %[11]s treated with %[5]s, %[1]s should fall short of controls by about %[9]d%%.",
			"Without %[8]s, %[1]s should stall: %[5]s is the test.",
		},
		{
			"Markers of %[3]s should rise and fall with %[1]s, as measured by %[6]s.",
			"%[6]s of %[11]s should show %[3]s tracking %[1]s over time.",
			"Read-outs of %[3]s and of %[1]s should correlate across samples in %[6]s data.",
			"Where %[3]s is high, %[1]s should be too; %[6]s can tell.",
			"Sampled every %[10]d days, %[11]s should show %[3]s leading %[1]s.",
		},
		{
			"Restoring %[8]s after its loss should rescue the effect on %[2]s.",
			"Re-expressing %[8]s in %[11]s that lack it should bring %[2]s back to baseline within %[10]d days.",
			"Adding back %[8]s after its removal should reverse the change in %[2]s.",
			"A rescue with %[8]s should undo what its absence does to %[2]s.",
		},
		{
			"The effect on %[1]s should be strongest %[7]s and weak otherwise.",
			"%[1]s should respond most %[7]s, and barely at all otherwise.",
			"Measured %[7]s, the change in %[1]s should be %[9]d%% larger than at baseline.",
			"In %[11]s, the full effect on %[1]s should appear only %[7]s.",
		},
		{
			"A dose–response relationship should link levels of %[8]s to %[2]s.",
			"Graded levels of %[8]s should produce graded changes in %[2]s.",
			"Titrating %[8]s over a tenfold range should move %[2]s monotonically.",
			"Doubling %[8]s in %[11]s should roughly double the shift in %[2]s.",
		},
	}
	// modelSystems are where a prediction may be tested.
	modelSystems = []string{
		"patient-derived organoids", "knock-in mice", "primary cultures", "zebrafish larvae", "iPSC-derived cells",
		"post-mortem samples", "yeast cells", "fruit flies", "nematodes", "cohort samples", "tissue explants",
		"rats", "cell lines", "primates", "conditional mutants",
	}
	noMetaReview = []string{
		"Expansion from feedback: with no meta-review yet, it builds on the scientist's feedback and the plan.",
		"There is no meta-review yet, so this one follows the plan and the scientist's comments.",
		"Built from the plan and the scientist's remarks, as there is no meta-review yet.",
	}
	assumptionOpeners = []string{
		"Built by iterative assumption identification on three assumptions, each plausible on its own:",
		"Three assumptions, each testable alone, lead here:", "Assumption by assumption:",
	}
	literatureOpeners = []string{"Literature exploration: ", "From the literature: ", "What published work suggests: ", "Reading the literature: "}
	feedbackOpeners   = []string{
		"Expansion from the meta-review's feedback: the recurring critique of round %d was that %s, so this hypothesis is built to answer it: it %s.",
		"Answering the meta-review of round %d, whose recurring critique was that %s: this hypothesis %s.",
	}
	focusSentences = []string{
		"This addresses the scientist's newest focus: %s.",
		"It takes up the newest focus the scientist gave: %s.",
		"It answers the scientist's newest focus: %s.",
	}
	criterionSentences = []string{
		"It is designed to meet the plan's criterion: %s.",
		"It meets the plan's criterion: %s.",
		"The plan's criterion it answers: %s.",
	}
)
