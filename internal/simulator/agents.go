package simulator

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// The answers of the supervisor, debate and evolution agents, as a model
// would write them under package prompt's schemas (the meta-review agent's are in
// metareview.go), and the small text helpers they share with the others.

type advocateAnswer struct {
	Argument string `json:"argument"`
}

type judgementAnswer struct {
	Argument  string `json:"argument"`
	Winner    string `json:"winner"`
	Reasoning string `json:"reasoning"`
}

var (
	rebuttals = []string{
		"that evidence is indirect and fits either hypothesis equally well",
		"the effect it relies on has not been replicated",
		"it explains the average but not the variability that is reported",
		"the experiment it proposes would not tell the two hypotheses apart",
		"it moves the question rather than answering it",
	}
	evidence = []string{
		"published observations of the mediator in the relevant tissue",
		"a reanalysis of public datasets",
		"earlier perturbation studies in related systems",
		"reported dose–response data",
	}
	analogies = []string{
		"epidemic spread on a network", "ecological succession", "traffic congestion",
		"immune memory", "a market bubble", "crystal nucleation",
	}
)

// writePlan writes the supervisor's research plan from the goal's salient phrases: 3 to 5
// preferences, constraints and criteria, more for a goal with more to say.
func writePlan(rng *rand.Rand, goal string) research.Plan {
	ts := topics(goal)
	t := func(i int) string { return ts[i%len(ts)] }
	main, last := t(0), ts[len(ts)-1]
	preferences := []string{
		fmt.Sprintf("Mechanistic hypotheses that explain %s", main),
		fmt.Sprintf("Novel proposals rather than restatements of what is known about %s", main),
		"Hypotheses whose key prediction can be tested in existing model systems",
		fmt.Sprintf("Hypotheses that address %s directly", last),
		fmt.Sprintf("Hypotheses that link %s to %s", main, t(1)),
	}
	constraints := []string{
		fmt.Sprintf("Stay within the scope of %s", main),
		"No experiment on people without consent and ethical approval",
		"Use methods and materials available today",
		"Nothing that could enable harm, whatever the safety level",
		fmt.Sprintf("Every hypothesis makes at least one falsifiable prediction about %s", last),
	}
	criteria := []string{
		fmt.Sprintf("Plausibility given what is known about %s", main),
		fmt.Sprintf("Novelty relative to published work on %s", main),
		fmt.Sprintf("Testability: a decisive experiment on %s within a year", last),
		"Safety of the proposed experiments",
		fmt.Sprintf("Explanatory reach: accounts for %s as well as %s", main, t(1)),
	}
	n := 3 + min(2, len(ts)-1) // more topics, more to plan for
	choose := func(list []string) []string {
		// The first three are essential; the rest are added at random, in their order.
		out := slices.Clone(list[:3])
		extra := rng.Perm(len(list) - 3)[:n-3]
		slices.Sort(extra)
		for _, i := range extra {
			out = append(out, list[3+i])
		}
		return out
	}
	return research.Plan{
		Preferences: choose(preferences),
		Constraints: choose(constraints),
		Criteria:    choose(criteria),
		Summary: truncate(fmt.Sprintf("Seek novel, testable, mechanistic hypotheses on %s, judged on plausibility, novelty, testability and safety.",
			strings.Join(ts[:min(2, len(ts))], " and ")), prompt.MaxSummaryLength),
	}
}

// writeAdvocacy writes an advocate's turn: a case for its hypothesis that cites one of its
// predictions, answering the other side's last turn if there was one.
func writeAdvocacy(rng *rand.Rand, req research.DebateRequest, side string) advocateAnswer {
	h, other, otherSide := req.A, req.B, "B"
	if side == "B" {
		h, other, otherSide = req.B, req.A, "A"
	}
	own := fmt.Sprintf("Hypothesis %s (%s, %q) %s: it predicts that %s.",
		side, h.ID, h.Title, pick(rng, strengths), citation(rng, h))
	if len(req.Transcript) == 0 {
		return advocateAnswer{own + fmt.Sprintf(" Hypothesis %s (%s) cannot claim as much, because %s.", otherSide, other.ID, pick(rng, weaknesses))}
	}
	last := req.Transcript[len(req.Transcript)-1]
	return advocateAnswer{fmt.Sprintf("Against advocate %s's point in turn %d: %s. ", last.Speaker, last.Turn, pick(rng, rebuttals)) + own}
}

// citation is one of a hypothesis' predictions, to continue a sentence with.
func citation(rng *rand.Rand, h research.Hypothesis) string {
	if len(h.Predictions) == 0 {
		return trimDot(lowerFirst(h.Statement))
	}
	return trimDot(lowerFirst(pick(rng, h.Predictions)))
}

// writeJudgement writes the judge's last turn, once it has decided.
func writeJudgement(rng *rand.Rand, req research.DebateRequest, aWins bool) judgementAnswer {
	win, lose, winner, loser := req.A, req.B, "A", "B"
	if !aWins {
		win, lose, winner, loser = req.B, req.A, "B", "A"
	}
	return judgementAnswer{
		Argument: fmt.Sprintf("Over %d turns, advocate A argued for %s (%q) and advocate B for %s (%q). Both cited testable predictions; the debate turned on which hypothesis could be told apart from a simpler explanation, and at what cost.",
			len(req.Transcript), req.A.ID, req.A.Title, req.B.ID, req.B.Title),
		Winner: winner,
		Reasoning: fmt.Sprintf("Hypothesis %s (%q) wins: its strength is that it %s; hypothesis %s's (%q) weakness is that %s.",
			winner, win.Title, pick(rng, strengths), loser, lose.Title, pick(rng, weaknesses)),
	}
}

// writeEvolved writes the evolution agent's new hypothesis: what it took from which parent
// and what the kind changed.
func writeEvolved(rng *rand.Rand, req research.EvolveRequest) hypothesisAnswer {
	p := req.Parents[0]
	q := p // a second parent, when there is one
	if len(req.Parents) > 1 {
		q = req.Parents[1]
	}
	ts := topics(req.Goal)
	x := pick(rng, ts)
	mech, effect, ctx, med := pick(rng, mechanisms), pick(rng, effects), pick(rng, contexts), pick(rng, mediators)
	ids := make([]string, len(req.Parents))
	for i, r := range req.Parents {
		ids[i] = r.ID
	}
	fresh := func() string { // a new prediction about the new hypothesis' own terms
		i := rng.IntN(len(predictions))
		return capitalise(fmt.Sprintf(predictions[i], x, pick(rng, ts), mech, med, pick(rng, blockers), pick(rng, assays), ctx))
	}
	w := newWording(req.Seed, req.TurnID) // phrasings, apart from rng: what the hypothesis claims is unchanged
	var a hypothesisAnswer
	switch req.Kind {
	case research.EvolveGrounding:
		ev := pick(rng, evidence)
		a = hypothesisAnswer{
			Title:     "Grounded: " + p.Title,
			Statement: fmt.Sprintf("%s, as supported by %s.", trimDot(p.Statement), ev),
			Rationale: fmt.Sprintf(w.pick(groundedRationales),
				p.ID, p.ID, p.Title, pick(rng, weaknesses), ev),
			Predictions: append(firstN(p.Predictions, 2), fmt.Sprintf("A reanalysis of existing data should already show the association %s predicts.", p.ID)),
		}
	case research.EvolveFeasibility:
		assay := pick(rng, assays)
		a = hypothesisAnswer{
			Title:     "Feasible: " + p.Title,
			Statement: fmt.Sprintf("%s, and this can be tested within a year with %s in an existing model system.", trimDot(p.Statement), assay),
			Rationale: fmt.Sprintf(w.pick(feasibleRationales),
				p.ID, p.ID, p.Title, assay),
			Predictions: append(firstN(p.Predictions, 1), fmt.Sprintf("In an existing model system, %s should detect the predicted change within weeks.", assay)),
		}
	case research.EvolveCombination:
		a = hypothesisAnswer{
			Title:     "Combined: " + research.Shorten(p.Title, 42) + " + " + research.Shorten(q.Title, 42),
			Statement: fmt.Sprintf("%s; moreover, %s.", trimDot(p.Statement), trimDot(lowerFirst(q.Statement))),
			Rationale: fmt.Sprintf(w.pick(combinedRationales),
				p.ID, p.Title, q.ID, q.Title),
			Predictions: append(firstN(p.Predictions, 1), firstN(q.Predictions, 1)...),
		}
		if p.ID == q.ID { // only one parent: nothing to combine it with but a new idea
			a.Predictions = append(a.Predictions[:1], fresh())
		}
	case research.EvolveSimplification:
		a = hypothesisAnswer{
			Title:     "Simplified: " + p.Title,
			Statement: fmt.Sprintf(w.pick(simplifiedStatements), trimDot(lowerFirst(p.Title))),
			Rationale: fmt.Sprintf(w.pick(simplifiedRationales),
				p.ID, p.ID, p.Title),
			Predictions: firstN(p.Predictions, 1),
		}
	case research.EvolveOutOfBox:
		analogy := pick(rng, analogies)
		a = hypothesisAnswer{
			Title:     capitalise(fmt.Sprintf("%s as %s", x, analogy)),
			Statement: fmt.Sprintf(w.pick(outOfBoxStatements), strings.Join(ids, " and "), x, analogy, mech, effect, ctx),
			Rationale: fmt.Sprintf(w.pick(outOfBoxRationales),
				strings.Join(ids, ", "), p.ID, p.Title, analogy),
			Predictions: []string{fresh(), fmt.Sprintf("A model of %s fitted to existing data on %s should predict its time course better than %s does.", analogy, x, p.ID)},
		}
	case research.EvolveInspiration:
		a = hypothesisAnswer{
			Title:     claimTitle(mech, effect, x, ctx),
			Statement: fmt.Sprintf("We hypothesise that %s, mediated by %s %s, %s %s %s: a mechanism suggested by, but distinct from, that of %s.", mech, article(med), med, effect, x, ctx, strings.Join(ids, " and ")),
			Rationale: fmt.Sprintf(w.pick(inspiredRationales),
				strings.Join(ids, ", "), p.ID, p.Title, x, mech),
			Predictions: append([]string{fresh()}, firstN(q.Predictions, 1)...),
		}
	default:
		a = hypothesisAnswer{
			Title:       "Evolved: " + p.Title,
			Statement:   fmt.Sprintf("%s, with %s %s as the link.", trimDot(p.Statement), article(med), med),
			Rationale:   fmt.Sprintf("Evolved from %s (%s): it keeps %s's claim (%q) and adds %s %s as the link.", p.ID, req.Kind, p.ID, p.Title, article(med), med),
			Predictions: append(firstN(p.Predictions, 1), fresh()),
		}
	}
	a.Title = truncate(a.Title, prompt.MaxTitleLength)
	if len(a.Predictions) == 0 {
		a.Predictions = []string{fresh()}
	}
	if m := req.Context.MetaReview; m != nil && len(m.Critiques) > 0 {
		a.Rationale += fmt.Sprintf(" It also answers the last round's recurring critique: it %s.", remedy(m.Critiques[0]))
	}
	if f := newestFocus(req.Context.Feedback); f != "" {
		a.Rationale += " " + followFeedback(f)
	}
	return a
}

// firstN returns a copy of at most the first n items.
func firstN(items []string, n int) []string { return slices.Clone(items[:min(n, len(items))]) }

func trimDot(s string) string { return strings.TrimRight(s, ". ") }

// countSuffix is the " (7 of 20 reviews)" a meta-review's critique ends with.
var countSuffix = regexp.MustCompile(`\s*\(\d+ of \d+ [^)]*\)\s*$`)

// stripCount removes a meta-review critique's count, to quote it in a sentence.
func stripCount(s string) string { return countSuffix.ReplaceAllString(s, "") }
