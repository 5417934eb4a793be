package simulator

// How an evolved hypothesis is worded. The evolution agent wrote each kind from one
// template, so two simplifications (or two out-of-the-box analogies) of unrelated parents
// shared a sentence of a dozen content words and read as near-duplicates: in
// BenchmarkGrounding 27 of the 32 near-duplicates excluded with no ancestor in common
// were pairs of one kind, 16 simplifications and 11 analogies. A model writes what it
// keeps and changes in other words each time; each template here has several phrasings,
// drawn from the wording stream (newWording), apart from what the hypothesis claims.
// Each takes its arguments in the order of the first; every rationale says "Evolved".

var (
	// simplifiedStatements take the parent's title (lower-cased).
	simplifiedStatements = []string{
		"We hypothesise, in the simplest form that still explains the observations, that %s.",
		"Stripped to its core, the claim is that %s.",
		"Put minimally: %s, with nothing added that the data do not demand.",
		"The parsimonious version: %s.",
	}
	// simplifiedRationales take the parent's id twice and its title.
	simplifiedRationales = []string{
		"Evolved from %s by simplification: it keeps %s's central claim (%q) and drops the mediator and the context, which the evidence does not yet require.",
		"Evolved as a simplification of %s: what remains of %s is its central claim (%q); mediator and setting are left out until some result needs them.",
		"Evolved, simplified, from %s, keeping only what %s asserts at heart (%q): fewer moving parts, the same observations explained.",
	}
	// outOfBoxStatements take the parents' ids, the topic, the analogy, the mechanism, the
	// effect and the context.
	outOfBoxStatements = []string{
		"Departing from %s, we hypothesise that %s behaves like %s: %s %s it %s.",
		"Setting %s aside, consider %s as if it were %s: %s %s it %s.",
		"Unlike %s, this treats %s by analogy with %s, where %s %s it %s.",
	}
	// outOfBoxRationales take the parents' ids, the first parent's id and title, and the
	// analogy.
	outOfBoxRationales = []string{
		"Evolved by out-of-the-box thinking from %s: it keeps only the question %s (%q) asks, and replaces its mechanism by an analogy with %s, which none of the parents considered.",
		"Evolved as a lateral step from %s: of %s (%q) it keeps the question alone, and answers it with %s instead.",
		"Evolved out of the box from %s: the question of %s (%q) stays; the mechanism gives way to a borrowed one, %s.",
	}
	// groundedRationales take the parent's id twice, its title, a weakness and the evidence.
	groundedRationales = []string{
		"Evolved from %s by grounding: it keeps %s's mechanism (%q) and fills its weakest gap, that %s, with %s.",
		"Evolved to ground %s: the mechanism of %s (%q) stays, and its weakest point, that %s, is shored up with %s.",
		"Evolved, grounding %s: it keeps what %s proposes (%q) and answers the gap that %s with %s.",
	}
	// feasibleRationales take the parent's id twice, its title and the assay.
	feasibleRationales = []string{
		"Evolved from %s for feasibility: it keeps %s's core idea (%q) and replaces its slowest experiment with %s in a model system that already exists.",
		"Evolved into a more feasible %s: the idea of %s (%q) is unchanged, but its test becomes %s in an available model.",
		"Evolved, made testable, from %s: it holds to %s's idea (%q) and swaps the slowest experiment for %s on systems labs already run.",
	}
	// inspiredRationales take the parents' ids, the first parent's id and title, the topic
	// and the mechanism.
	inspiredRationales = []string{
		"Evolved by inspiration from %s: it takes from %s (%q) the idea that %s matters, and explores %s, which none of the parents considered.",
		"Evolved, inspired by %s: from %s (%q) it borrows the conviction that %s is central, then turns to %s.",
		"Evolved at the prompting of %s, it keeps one thought of %s (%q), that %s matters, and follows %s instead.",
	}
	// combinedRationales take the first parent's id and title and the second's.
	combinedRationales = []string{
		"Evolved by combination: it takes the mechanism of %s (%q) and joins it with that of %s (%q), so that each explains what the other leaves open; the predictions come from both.",
		"Evolved as a combination: the mechanism of %s (%q) and that of %s (%q) are put together, each covering the other's gap, with predictions from both.",
		"Evolved by joining %s (%q) with %s (%q): the two mechanisms fill each other's gaps, and both lend predictions.",
	}
)
