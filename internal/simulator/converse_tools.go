package simulator

// The offline converse agent in a session with tools: a message about the literature (the
// papers, the evidence, the sources) searches for its subject, fetches the best hit, and
// answers quoting and citing what it read; any other message is answered at once, as
// Converse answers it, without a call. A call the session did not make (one that needs
// the scientist's approval, which a conversation does not wait for) is answered from what
// the other calls gave, saying why.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// aboutLiterature matches a message that asks what the literature says.
var aboutLiterature = regexp.MustCompile(`(?i)\b(?:literature|papers?|publications?|published|studies|articles?|evidence|sources?|references?|citations?)\b`)

// aboutSubject is what a message asks about: the words after "about", "on" or "for".
var aboutSubject = regexp.MustCompile(`(?i)\b(?:about|on|regarding|for)\s+([^?.!;]+)`)

// maxConverseCited is how many sources a converse answer cites.
const maxConverseCited = 2

// ConverseStep answers the scientist's message at one step of a converse turn that may
// call tools.
func (o *Offline) ConverseStep(ctx context.Context, req research.ConverseRequest) (research.Step[research.ConverseAnswer], research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentConverse, req.TurnID); err != nil {
		return research.Step[research.ConverseAnswer]{}, research.Usage{}, err
	}
	text := req.Prompt + toolText(req.Tooling)
	a := writeConverse(req)
	if len(a.Proposals) == 0 && aboutLiterature.MatchString(req.Message) {
		r := read(req.Tooling)
		if calls := literatureCalls(req.Tooling, r, subjectOf(req)); len(calls) > 0 {
			return research.Step[research.ConverseAnswer]{Calls: calls}, usage(text, mustJSON(calls)), nil
		}
		a = answerFromLiterature(req, r)
	}
	raw := mustJSON(a)
	ans, err := prompt.ConverseSpec.Parse(req, raw)
	if err != nil {
		return research.Step[research.ConverseAnswer]{}, research.Usage{}, bug(err)
	}
	return research.Step[research.ConverseAnswer]{Answer: ans}, usage(text, raw), nil
}

// subjectOf is what the message asks about, as a search box takes it: the words after
// "about" (and its like), else a topic of the goal.
func subjectOf(req research.ConverseRequest) string {
	if m := aboutSubject.FindStringSubmatch(req.Message); m != nil {
		words := strings.Fields(m[1])
		return strings.Join(words[:min(6, len(words))], " ")
	}
	return pick(newRand(req.Seed, req.TurnID), topics(req.Goal))
}

// literatureCalls are a converse step's calls: a search first; then a fetch of the best
// hit, once; then none (the answer). A turn whose budget is spent, or that is offered no
// search, calls nothing.
func literatureCalls(t research.Tooling, r reading, subject string) []research.ToolCall {
	if t.Final || r.search == "" {
		return nil
	}
	id := fmt.Sprintf("call-%d-1", len(t.Steps)+1)
	switch {
	case !r.searched():
		return []research.ToolCall{{ID: id, Name: r.search, Arguments: mustJSON(map[string]any{"query": subject, "limit": 5})}}
	case r.fetch != "" && !r.tried[r.fetch] && len(r.sources) > 0:
		return []research.ToolCall{{ID: id, Name: r.fetch, Arguments: mustJSON(map[string]string{"id": r.sources[0].id})}}
	}
	return nil
}

// answerFromLiterature answers from what the tools returned: each source read, fetched
// ones first, with a sentence of it quoted word for word and cited; and, for a call that
// was not made or failed, what its result said.
func answerFromLiterature(req research.ConverseRequest, r reading) converseAnswer {
	subject := subjectOf(req)
	a := converseAnswer{Proposals: []proposalAnswer{}, References: []citedAnswer{}}
	srcs := slices.Clone(r.sources)
	slices.SortStableFunc(srcs, func(x, y source) int {
		switch {
		case x.fetched == y.fetched:
			return 0
		case x.fetched:
			return -1
		}
		return 1
	})
	rng := newRand(req.Seed, req.TurnID)
	var b strings.Builder
	fmt.Fprintf(&b, "On %s, the session's tools found %d source(s).", subject, len(srcs))
	for _, s := range srcs {
		if len(a.References) == maxConverseCited {
			break
		}
		quote := sentence(rng, s.text)
		if len(strings.Fields(quote)) < prompt.MinQuoteWords {
			continue
		}
		claim := fmt.Sprintf("%s (%s) bears on %s.", s.id, research.Shorten(s.title, 120), research.Shorten(subject, 120))
		fmt.Fprintf(&b, " %s It reads: %q", claim, quote)
		a.References = append(a.References, citedAnswer{ID: s.id, Quote: quote, Claim: claim})
	}
	for _, res := range r.results {
		if res.IsError {
			fmt.Fprintf(&b, " My call of %s gave no result: %s.", res.Name, strings.TrimRight(research.Shorten(res.Content, 300), ". "))
		}
	}
	if len(a.References) == 0 {
		b.WriteString(" I have nothing from the literature to cite on it.")
	}
	a.Answer = research.Shorten(b.String(), prompt.MaxAnswerLength)
	return a
}
