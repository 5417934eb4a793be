package simulator

// Reading the lab's results (#46): a generation or evolution turn whose request carries
// the session's results from the lab cites one of them, analysis:<id>, quoting the
// sentence of its record that states the effect, word for word, so that a session run
// offline shows an analysis citation the check verifies. Only the citation is added: the
// citation draws nothing from the turn's random stream and is not one of the planted
// citations that lift a hypothesis' hidden quality (grounded), so the simulated
// generation draws the same quality whether or not it saw results, and a benchmark of
// what testing adds measures testing, not a generator that learns from it.

import (
	"strings"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// labCited is a hypothesis answer with the reference it makes to the lab's results, as
// the grounded schema carries it.
type labCited struct {
	hypothesisAnswer
	References []prompt.ModelRef `json:"references"`
}

// labCitation is the reference a turn makes to the lab's results it read: the newest
// pre-registered result (else the newest), its effect's sentence quoted, for a claim of
// the answer. false when the request carries no result with a sentence to quote.
func labCitation(c research.Context, a hypothesisAnswer) (prompt.ModelRef, bool) {
	pick := -1
	for i, r := range c.Lab {
		if effectSentence(r.Text) == "" {
			continue
		}
		if pick < 0 || r.Kind == "pre-registered" || c.Lab[pick].Kind != "pre-registered" {
			pick = i
		}
	}
	if pick < 0 {
		return prompt.ModelRef{}, false
	}
	r := c.Lab[pick]
	claim := "The lab's own data bear on this: " + strings.TrimSuffix(effectSentence(r.Text), ".") + "."
	if cs := claimsOf(a.Statement); len(cs) > 0 {
		claim = cs[0]
	}
	return prompt.ModelRef{ID: r.Analysis, Quote: effectSentence(r.Text), Claim: research.Shorten(claim, prompt.MaxClaimLength)}, true
}

// effectSentence is the sentence of an analysis's record that states its effect with its
// 95% CI (activities' rendering writes one a number), or its p-value; "" when it has
// neither (a refused run).
func effectSentence(text string) string {
	var p string
	for _, s := range strings.SplitAfter(strings.Join(strings.Fields(text), " "), ". ") {
		s = strings.TrimSpace(s)
		switch {
		case strings.Contains(s, "% CI ") && strings.HasPrefix(s, "The "):
			return s
		case p == "" && strings.HasPrefix(s, "The p-value was "):
			p = s
		}
	}
	return p
}

// citingLab is the answer a turn without tools gives: a as it is, or, when the request
// carries the lab's results, with one cited. The hypothesis' own words stay as they are:
// the proximity of hypotheses is read from them, and a sentence shared by every
// hypothesis citing one result would make them closer than they are.
func citingLab(c research.Context, a hypothesisAnswer) any {
	ref, ok := labCitation(c, a)
	if !ok {
		return a
	}
	return labCited{a, []prompt.ModelRef{ref}}
}

// labRefs is the lab's citation a turn that called tools adds to the ones it planted.
func labRefs(c research.Context, a hypothesisAnswer) []prompt.ModelRef {
	if ref, ok := labCitation(c, a); ok {
		return []prompt.ModelRef{ref}
	}
	return nil
}

// labFeedback is what a meta-review adds to its feedback from the lab's results: the
// newest pre-registered standing, by its analysis; "" without one.
func labFeedback(c research.Context) string {
	for i := len(c.Lab) - 1; i >= 0; i-- {
		if r := c.Lab[i]; r.Kind == "pre-registered" && r.Standing != "" {
			return " The lab's " + r.Analysis + " left hypothesis " + r.Hypothesis + " " + r.Standing + ": build on what it found."
		}
	}
	return ""
}
