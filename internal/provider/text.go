package provider

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"unicode"
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
	Scores   research.Scores `json:"scores"`
	Critique string          `json:"critique"`
	Verdict  string          `json:"verdict"`
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
	strengths = []string{
		"makes sharper, more falsifiable predictions",
		"rests on a better-supported mechanism",
		"addresses the goal more directly",
		"could be tested sooner and more cheaply",
	}
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

// writeHypothesis writes the answer a generation agent would give.
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
	mech, effect, ctx, med := pick(rng, mechanisms), pick(rng, effects), pick(rng, contexts), pick(rng, mediators)
	strategy := req.Strategy
	if strategy == "" {
		strategy = prompt.DefaultStrategy
	}

	a := hypothesisAnswer{
		Title: truncate(capitalise(fmt.Sprintf("%s %s %s %s", mech, effect, x, ctx)), 100),
		Statement: fmt.Sprintf("We hypothesise that %s, mediated by %s %s, %s %s %s, and that this in turn shapes %s.",
			mech, article(med), med, effect, x, ctx, y),
		Rationale: fmt.Sprintf("Following the %s strategy: ", strategy) +
			fmt.Sprintf(pick(rng, reasons), x, y, mech, med) + ".",
	}
	if f := newestFocus(req.Focus); f != "" {
		a.Statement += fmt.Sprintf(" This addresses the scientist's newest focus: %s.", strings.TrimRight(f, "."))
	}
	n := 2 + rng.IntN(3) // 2 to 4 predictions, all different
	for _, i := range rng.Perm(len(predictions))[:n] {
		a.Predictions = append(a.Predictions, capitalise(fmt.Sprintf(predictions[i], x, y, mech, med, pick(rng, blockers), pick(rng, assays), ctx)))
	}
	return a
}

// writeReview writes the answer a reflection agent would give on a hypothesis of quality q.
// Each mark is the quality on a 0–10 scale plus the reviewer's noise; plausibility tracks
// the truth most closely and safety least, since most hypotheses are safe to test.
func writeReview(rng *rand.Rand, reviewType string, q float64) reviewAnswer {
	s := research.Scores{
		Novelty:      mark(5 + 1.2*q + 1.2*rng.NormFloat64()),
		Plausibility: mark(5 + 1.5*q + rng.NormFloat64()),
		Testability:  mark(5.5 + 1.2*q + rng.NormFloat64()),
		Safety:       mark(8 + 0.5*q + 0.8*rng.NormFloat64()),
	}
	var verdict, judgement string
	switch o := s.Overall(); {
	case o >= 6.5:
		verdict, judgement = "accept", "the hypothesis holds up and is ready to test"
	case o >= 4:
		verdict, judgement = "revise", "the hypothesis is promising but not yet ready to test"
	default:
		verdict, judgement = "reject", "the hypothesis is unlikely to hold"
	}
	how, ok := findings[reviewType]
	if !ok {
		how = "taken as a whole"
	}
	name := strings.ReplaceAll(reviewType, "_", " ")
	if name == "" {
		name = "general"
	}
	return reviewAnswer{
		Scores:   s,
		Critique: fmt.Sprintf("%s review: %s, %s. The main weakness is that %s.", capitalise(name), how, judgement, pick(rng, weaknesses)),
		Verdict:  verdict,
	}
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

// topics returns the salient phrases of a goal: runs of up to three consecutive content
// words, so "Why does tau pathology spread between brain regions?" gives "tau pathology
// spread" and "brain regions". Punctuation ends a run.
func topics(goal string) []string {
	var out, run []string
	seen := map[string]bool{}
	flush := func() {
		if len(run) > 3 {
			run = run[len(run)-3:] // in English the head noun comes last
		}
		if t := strings.Join(run, " "); t != "" && !seen[strings.ToLower(t)] {
			seen[strings.ToLower(t)] = true
			out = append(out, t)
		}
		run = nil
	}
	notWord := func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
	for i, field := range strings.Fields(goal) {
		w := strings.TrimFunc(field, notWord)
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		if strings.TrimLeftFunc(field, notWord) != field {
			flush() // an opening bracket or quote starts a new phrase
		}
		if i == 0 && isCapitalised(w) {
			w = strings.ToLower(w) // capitalised only because it starts the sentence
		}
		if utf8.RuneCountInString(w) < 3 || stopwords[strings.ToLower(w)] {
			flush()
		} else {
			run = append(run, w)
		}
		if strings.TrimRightFunc(field, notWord) != field {
			flush()
		}
	}
	flush()
	if len(out) == 0 {
		return []string{"the system under study"}
	}
	return out
}

// isCapitalised reports whether w is a capital followed by lower-case letters only ("Why",
// not "DNA" or "McCarthy").
func isCapitalised(w string) bool {
	r, n := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r) && strings.ToLower(w[n:]) == w[n:]
}

func capitalise(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

func article(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an"
	}
	return "a"
}

// truncate shortens s to at most n runes, at a word boundary when there is one.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	s = string([]rune(s)[:n])
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	return s
}

// stopwords are words that say nothing about a goal's subject: function words, and the
// verbs and adjectives goals are phrased with ("identify novel ...").
var stopwords = set(`a about above across after again against all also an and any are as at be because been
before being below between both but by can could did do does doing down during each either few for from
further had has have having here how however if in into is it its itself just may might more most much must
no nor not now of off on once only or other our out over own same should so some such than that the their
them then there these they this those through to too under until up upon very was we were what when where
whether which while who whom why will with within without would you your
identify identifying explain explaining explore exploring understand understanding investigate investigating
determine determining develop developing propose proposing find finding discover discovering study studying
novel new potential possible possibly likely role roles mechanism mechanisms cause causes causing factor factors
way ways use using used based approach approaches hypothesis hypotheses goal research`)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
