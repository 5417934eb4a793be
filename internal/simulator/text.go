package simulator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// The answers below are what a model would write under package prompt's schemas. Their
// JSON field names must match those schemas; the round trip through the parsers in
// Offline's methods checks that they do.

type hypothesisAnswer struct {
	Title       string   `json:"title"`
	Statement   string   `json:"statement"`
	Rationale   string   `json:"rationale"`
	Predictions []string `json:"testable_predictions"`
}

type reviewAnswer struct {
	Scores      research.Scores       `json:"scores"`
	Critique    string                `json:"critique"`
	Verdict     string                `json:"verdict"`
	Assumptions []research.Assumption `json:"assumptions,omitempty"`
}

type comparisonAnswer struct {
	Winner    string `json:"winner"`
	Reasoning string `json:"reasoning"`
}

// Word lists. They are deliberately generic: the goal's own words (see topics) make a
// hypothesis read as if it were about the goal.
var (
	mechanisms = []string{
		"feedback inhibition", "allosteric regulation", "epigenetic silencing", "phase separation",
		"metabolic rewiring", "oxidative stress", "horizontal gene transfer", "circadian gating",
		"mechanical stress", "quorum sensing", "protein misfolding", "immune cross-talk",
		"nutrient sensing", "ion channel remodelling", "microbial competition", "stochastic switching",
		"threshold-dependent activation", "spatial compartmentalisation", "cooperative binding", "resource limitation",
	}
	effects  = []string{"drives", "modulates", "limits", "amplifies", "stabilises", "gates", "buffers", "triggers"}
	contexts = []string{
		"under chronic stress", "during early development", "at tissue boundaries", "in ageing populations",
		"under nutrient scarcity", "during inflammation", "across cell types", "at high density",
		"after acute injury", "in the transition to disease",
	}
	mediators = []string{
		"small-molecule signal", "previously uncharacterised transporter", "transcriptional repressor",
		"membrane-bound receptor", "secreted protease", "non-coding RNA", "lipid messenger",
		"kinase cascade", "extracellular matrix component", "symbiotic microbe",
	}
	blockers = []string{"CRISPR interference", "a selective inhibitor", "antibody blockade", "RNA interference", "a conditional knockout"}
	assays   = []string{"time-resolved imaging", "single-cell sequencing", "longitudinal sampling", "mass spectrometry", "quantitative PCR"}
	reasons  = []string{
		"studies of %[1]s report sensitivity to %[3]s, and a %[4]s has been found near %[2]s, but the two have never been linked",
		"analogous systems show that %[3]s can switch behaviour abruptly, which would explain the variability reported for %[1]s",
		"a %[4]s acting as the missing link would reconcile conflicting observations about %[1]s and %[2]s",
		"%[3]s is conserved across the systems in which %[1]s has been studied, which makes a shared mechanism the simplest explanation",
	}
	predictions = []string{
		"Blocking the %[4]s with %[5]s should reduce %[1]s relative to matched controls.",
		"Markers of %[3]s should rise and fall with %[1]s, as measured by %[6]s.",
		"Restoring the %[4]s after its loss should rescue the effect on %[2]s.",
		"The effect on %[1]s should be strongest %[7]s and weak otherwise.",
		"A dose–response relationship should link levels of the %[4]s to %[2]s.",
	}
	weaknesses = []string{
		"the proposed mediator has not been observed directly",
		"the predictions do not rule out a simpler explanation",
		"the expected effect may be too small to detect with the proposed assays",
		"confounding by the experimental context is not addressed",
		"the mechanism rests on an assumption that has not been tested",
		"the key experiment would take years to complete",
		"the safety of the proposed intervention is unclear",
	}
	// remedies say what a hypothesis does to answer each weakness, which it recognises by
	// a phrase; the first match wins.
	remedies = []struct{ phrase, remedy string }{
		{"mediator has not been observed directly", "names a mediator that can be measured directly"},
		{"do not rule out a simpler explanation", "includes a prediction that a simpler explanation would not make"},
		{"too small to detect", "predicts an effect large enough to detect with standard assays"},
		{"confounding by the experimental context", "controls for the experimental context with a matched design"},
		{"assumption that has not been tested", "builds only on assumptions that have been tested"},
		{"would take years to complete", "proposes a decisive experiment that takes months, not years"},
		{"safety of the proposed intervention", "uses an intervention whose safety is established"},
		{"key assumption fails", "rests on assumptions that survive deep verification"},
		{"safety concern", "avoids any intervention that could cause harm"},
	}
	strengths = []string{
		"makes sharper, more falsifiable predictions",
		"rests on a better-supported mechanism",
		"addresses the goal more directly",
		"could be tested sooner and more cheaply",
	}
	reviewStrengths = []string{
		"it names a concrete, measurable mediator",
		"its predictions are falsifiable",
		"it addresses the goal directly",
		"it builds on established mechanisms",
		"it can be tested with standard assays",
	}
	experts = []string{
		"molecular biologist", "clinician", "systems biologist", "biochemist", "epidemiologist",
		"computational modeller", "pharmacologist", "geneticist", "physiologist",
	}
	safetyConcerns = []string{
		"the proposed intervention could harm people if applied outside a controlled study",
		"the experiment would require handling a dangerous agent without adequate containment",
		"the results could be misused to cause harm (dual use)",
		"the protocol would expose participants to risk without clear consent",
	}
	holdNotes  = []string{"consistent with published observations", "supported by several independent lines of evidence", "follows from well-established biology"}
	doubtNotes = []string{"supported only indirectly", "the evidence is mixed", "not yet tested in the relevant system"}
	failNotes  = []string{"contradicted by reported observations", "the required effect size is implausible", "a known counterexample exists"}
	// findings say, per review type, what the reviewer did; see prompt.Review.
	findings = map[string]string{
		research.ReviewInitial:          "on a first reading",
		research.ReviewFull:             "weighed against the literature",
		research.ReviewDeepVerification: "checked assumption by assumption",
		research.ReviewObservation:      "set against reported observations",
		research.ReviewSimulation:       "simulated step by step",
		research.ReviewTournament:       "judged by the lessons of past matches",
	}
)

// writeHypothesis writes the answer a generation agent would give. The rationale says how
// the strategy produced the hypothesis; the context shows: the newest focus in the
// statement, a plan criterion and the scientist's newest feedback in the rationale.
//
// What the hypothesis claims (its topic, mechanism, effect, context and mediator, the kinds
// of its reason and predictions) is drawn from rng; how it is worded (which of several
// phrasings and sentence shapes, the mediator's name, the numbers) from a stream of its own
// (see wording), so that two distinct hypotheses share no template, as two a model wrote
// would not, while the draws from rng, and all that depends on them, stay as they were.
func writeHypothesis(rng *rand.Rand, req research.GenerateRequest) hypothesisAnswer {
	ts := topics(req.Goal)
	i := rng.IntN(len(ts))
	x, y := ts[i], "its downstream consequences"
	if len(ts) > 1 { // a second, different topic
		j := rng.IntN(len(ts) - 1)
		if j >= i {
			j++
		}
		y = ts[j]
	}
	w := newWording(req.Seed, req.TurnID)
	c := w.claim(pick(rng, mechanisms), pick(rng, effects), pick(rng, contexts), pick(rng, mediators), x, y)
	reason := w.reason(rng.IntN(len(reasons)), c)

	a := hypothesisAnswer{Title: w.title(c), Statement: w.statement(c)}
	switch req.Strategy {
	case research.StrategyLiterature, "":
		a.Rationale = w.pick(literatureOpeners) + reason + "."
	case research.StrategyDebate:
		e := rng.Perm(len(experts))
		a.Rationale = w.debate(c, experts[e[0]], experts[e[1]], experts[e[2]], pick(rng, weaknesses))
	case research.StrategyAssumptions:
		a.Rationale = w.assumptions(c)
	case research.StrategyFeedback:
		if m := req.Context.MetaReview; m != nil && len(m.Critiques) > 0 {
			critique := lowerFirst(trimDot(stripCount(m.Critiques[0])))
			a.Rationale = fmt.Sprintf(w.pick(feedbackOpeners), m.Round, critique, remedy(critique)) + " " + capitalise(reason) + "."
		} else {
			a.Rationale = w.pick(noMetaReview) + " " + capitalise(reason) + "."
		}
	default:
		a.Rationale = fmt.Sprintf("Following the %s strategy: ", req.Strategy) + reason + "."
	}

	focus := req.Focus
	if len(focus) == 0 {
		focus = req.Context.Focus
	}
	if f := newestFocus(focus); f != "" {
		a.Statement += " " + fmt.Sprintf(w.pick(focusSentences), strings.TrimRight(f, "."))
	}
	if p := req.Context.Plan; p != nil && len(p.Criteria) > 0 {
		a.Rationale += " " + fmt.Sprintf(w.pick(criterionSentences), strings.TrimRight(lowerFirst(pick(rng, p.Criteria)), "."))
	}
	if f := newestFocus(req.Context.Feedback); f != "" {
		a.Rationale += " " + followFeedback(f)
	}
	n := 2 + rng.IntN(3) // 2 to 4 predictions, all different
	for _, k := range rng.Perm(len(predictions))[:n] {
		a.Predictions = append(a.Predictions, w.prediction(k, c, pick(rng, blockers), pick(rng, assays)))
	}
	return a
}

// claimTitle is the title of a claim that mech (effect)s x in the context ctx. The
// context is left out where it would make the title too long, so that the title ends
// with a phrase and not in the middle of one ("... in the transition to").
func claimTitle(mech, effect, x, ctx string) string {
	t := capitalise(fmt.Sprintf("%s %s %s %s", mech, effect, x, ctx))
	if utf8.RuneCountInString(t) > prompt.MaxTitleLength {
		t = capitalise(fmt.Sprintf("%s %s %s", mech, effect, x))
	}
	return truncate(t, prompt.MaxTitleLength)
}

// followFeedback says how a hypothesis follows the scientist's feedback, which reads
// "toward: ..." or "away from: ...".
func followFeedback(f string) string {
	lower := strings.ToLower(f)
	switch {
	case strings.HasPrefix(lower, "toward:"):
		return fmt.Sprintf("It moves toward %s, as the scientist asked.", strings.TrimRight(strings.TrimSpace(f[len("toward:"):]), "."))
	case strings.HasPrefix(lower, "away from:"):
		return fmt.Sprintf("It steers away from %s, as the scientist asked.", strings.TrimRight(strings.TrimSpace(f[len("away from:"):]), "."))
	}
	return fmt.Sprintf("It takes the scientist's feedback into account: %s.", strings.TrimRight(f, "."))
}

// remedy says what a hypothesis does about a critique: the fix for one of the simulator's
// own weaknesses, or a general one.
func remedy(critique string) string {
	lower := strings.ToLower(critique)
	for _, r := range remedies {
		if strings.Contains(lower, r.phrase) {
			return r.remedy
		}
	}
	return "names a mediator that can be measured directly and a decisive experiment that a simpler explanation would fail"
}

// unsafeRate is the share of hypotheses every review finds unsafe.
const unsafeRate = 0.03

// safetyFlag says whether a hypothesis is one of the unsafe few, and if so its safety mark
// (below 3) and the concern. It depends only on the session seed and the hypothesis id (or
// statement, for one without an id), so every review of a hypothesis agrees.
func safetyFlag(seed int64, h research.Hypothesis) (score float64, concern string, unsafe bool) {
	key := h.ID
	if key == "" {
		key = h.Statement
	}
	r := rand.New(rand.NewPCG(uint64(seed), hash("safety:"+key)))
	if r.Float64() >= unsafeRate {
		return 0, "", false
	}
	return mark(0.5 + 2*r.Float64()), pick(r, safetyConcerns), true
}

// writeReview writes the answer a reflection agent would give. Each mark is the quality
// on a 0–10 scale plus the reviewer's noise; plausibility tracks the truth most closely
// and safety least, since most hypotheses are safe to test. A deep verification lists
// 3 to 5 assumptions, and each one that is doubtful or fails costs plausibility.
func writeReview(rng *rand.Rand, req research.ReviewRequest) reviewAnswer {
	q := quality(req.Hypothesis)
	s := research.Scores{
		Novelty:      mark(5 + 1.2*q + 1.2*rng.NormFloat64()),
		Plausibility: 5 + 1.5*q + rng.NormFloat64(),
		Testability:  mark(5.5 + 1.2*q + rng.NormFloat64()),
		// Safe hypotheses never fall below 4, so only the unsafe few meet a standard floor.
		Safety: mark(max(4, 8+0.5*q+0.8*rng.NormFloat64())),
	}
	// Reviewers keep returning to the same few weaknesses: favour the first in the list.
	weakness := weaknesses[min(rng.IntN(len(weaknesses)), rng.IntN(len(weaknesses)))]
	strength := pick(rng, reviewStrengths)

	var as []research.Assumption
	var failed *research.Assumption
	if req.Type == research.ReviewDeepVerification {
		as = writeAssumptions(rng, req.Hypothesis, q)
		for i, a := range as {
			switch a.Verdict {
			case "fails":
				s.Plausibility -= 0.7
				if failed == nil {
					failed = &as[i]
				}
			case "doubtful":
				s.Plausibility -= 0.2
			}
		}
	}
	s.Plausibility = mark(s.Plausibility)
	safetyScore, concern, unsafe := safetyFlag(req.Seed, req.Hypothesis)
	if unsafe {
		s.Safety = safetyScore
	}

	var verdict, judgement string
	switch o := s.Overall(); {
	case unsafe:
		verdict, judgement = "reject", "the hypothesis should not be pursued as proposed"
	case o >= 6.5:
		verdict, judgement = "accept", "the hypothesis holds up and is ready to test"
	case o >= 4:
		verdict, judgement = "revise", "the hypothesis is promising but not yet ready to test"
	default:
		verdict, judgement = "reject", "the hypothesis is unlikely to hold"
	}
	how, ok := findings[req.Type]
	if !ok {
		how = "taken as a whole"
	}
	name := strings.ReplaceAll(req.Type, "_", " ")
	if name == "" {
		name = "general"
	}
	critique := fmt.Sprintf("%s review: %s, %s. Its main strength is that %s. The main weakness is that %s.",
		capitalise(name), how, judgement, strength, weakness)
	if failed != nil {
		critique += fmt.Sprintf(" An assumption fails: %s (%s).", lowerFirst(failed.Text), failed.Note)
	}
	if unsafe {
		critique += fmt.Sprintf(" Safety concern: %s.", concern)
	}
	return reviewAnswer{Scores: s, Critique: critique, Verdict: verdict, Assumptions: as}
}

// writeAssumptions decomposes a hypothesis of quality q into 3 to 5 assumptions and checks
// each: the lower q, the more fail.
func writeAssumptions(rng *rand.Rand, h research.Hypothesis, q float64) []research.Assumption {
	title := strings.TrimRight(lowerFirst(h.Title), ".")
	prediction := "its first prediction holds"
	if len(h.Predictions) > 0 {
		prediction = strings.TrimRight(lowerFirst(h.Predictions[0]), ".")
	}
	templates := []string{
		fmt.Sprintf("the mechanism behind %q operates in the system the goal is about", title),
		"the effect is large enough to measure with current assays",
		"the causal direction is as stated, not the reverse",
		fmt.Sprintf("no simpler explanation predicts that %s", prediction),
		"the proposed intervention acts on its target without off-target effects",
		"the experimental conditions reflect those of the research goal",
	}
	n := 3 + rng.IntN(3)
	as := make([]research.Assumption, 0, n)
	for _, i := range rng.Perm(len(templates))[:n] {
		a := research.Assumption{Text: capitalise(templates[i])}
		switch x := q + rng.NormFloat64(); {
		case x < -1:
			a.Verdict, a.Note = "fails", pick(rng, failNotes)
		case x < 0:
			a.Verdict, a.Note = "doubtful", pick(rng, doubtNotes)
		default:
			a.Verdict, a.Note = "holds", pick(rng, holdNotes)
		}
		as = append(as, a)
	}
	return as
}

// writeComparison writes the answer a ranking agent would give once it has decided.
func writeComparison(rng *rand.Rand, a, b research.Hypothesis, aWins bool) comparisonAnswer {
	win, lose, winner, loser := a, b, "A", "B"
	if !aWins {
		win, lose, winner, loser = b, a, "B", "A"
	}
	return comparisonAnswer{
		Winner: winner,
		Reasoning: fmt.Sprintf("Hypothesis %s (%q) %s, whereas for hypothesis %s (%q) %s.",
			winner, win.Title, pick(rng, strengths), loser, lose.Title, pick(rng, weaknesses)),
	}
}

func pick(rng *rand.Rand, list []string) string { return list[rng.IntN(len(list))] }

// mark clamps a score to [0, 10] and keeps one decimal, as a reviewer would write it.
func mark(x float64) float64 { return math.Round(min(10, max(0, x))*10) / 10 }

// newestFocus returns the scientist's latest non-blank refinement.
func newestFocus(focus []string) string {
	for i := len(focus) - 1; i >= 0; i-- {
		if f := strings.TrimSpace(focus[i]); f != "" {
			return f
		}
	}
	return ""
}
