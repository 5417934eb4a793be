package activities

// The reflection agent: a review of one hypothesis, of one of the review types, in the
// shared context. It may call tools. cosci itself then checks the hypothesis' citations
// against the session's audit trail and weighs what it finds in the review's marks.

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// Review runs a reflection turn on one hypothesis, in the shared context in.Context names.
func (a *Activities) Review(ctx context.Context, in ReviewInput) (ReviewResult, error) {
	return runTurn(ctx, a, reflection, in)
}

var reflection = declare(agent[ReviewInput, research.ReviewRequest, research.Review, ReviewResult]{
	activity: "Review", label: AgentReflection, many: true, prompt: prompt.Review, spec: prompt.ReviewSpec,
	prepare: prepareReview, loop: ReviewInput.loop, refs: reviewRefs,
})

type reviewTurn = turn[research.ReviewRequest, research.Review, ReviewResult]

// prepareReview reads the hypothesis to review; its review is kept by keepReview.
func prepareReview(ctx context.Context, a *Activities, in ReviewInput, turnID string) (reviewTurn, error) {
	h, err := a.Store.Hypothesis(ctx, in.SessionID, in.HypothesisID)
	if err != nil {
		return reviewTurn{}, err
	}
	c, err := a.context(ctx, in.SessionID, in.Context)
	if err != nil {
		return reviewTurn{}, err
	}
	req := research.ReviewRequest{TurnID: turnID, Goal: in.Goal, Type: in.Type, Hypothesis: h, Context: c, Seed: in.Seed}
	var cited []citation.Cited // made once: for the prompt, and then for the marks
	if prompt.JudgesSupport(in.Type) {
		// The review judges each citation's support on its source's passage, beside
		// the quote and the check's verdict, not on the quote alone.
		if cited, err = a.cite(ctx, in.SessionID, h.References); err != nil {
			return reviewTurn{}, err
		}
		req.Citations = citation.Checks(cited)
	}
	keep := func(_ research.ReviewRequest, r research.Review, usage research.Usage) (ReviewResult, error) {
		return a.keepReview(ctx, in, h, cited, r, usage)
	}
	asked := func(calls []PendingCall, u research.Usage) ReviewResult {
		return ReviewResult{HypothesisID: h.ID, Type: in.Type, Calls: calls, Usage: u}
	}
	return reviewTurn{req: req, keep: keep, asked: asked}, nil
}

func (in ReviewInput) loop() Loop { return in.Loop }

// reviewRefs are the references a review cites.
func reviewRefs(r *research.Review) *[]research.Reference { return &r.References }

// keepReview checks a review of h, weighs h's citations in it (cited, when the turn
// checked them for its prompt; else they are checked here), stores it, and returns what
// the workflow keeps of it.
func (a *Activities) keepReview(ctx context.Context, in ReviewInput, h research.Hypothesis, cited []citation.Cited, r research.Review, usage research.Usage) (ReviewResult, error) {
	r.HypothesisID, r.Type = h.ID, in.Type
	if r.Reviewer == "" {
		r.Reviewer = "agent"
	}
	if in.Type == research.ReviewDeepVerification && len(r.Assumptions) == 0 {
		return ReviewResult{}, malformed(errors.New("a deep verification review lists no assumptions"))
	}
	if cited == nil {
		var err error
		if cited, err = a.cite(ctx, in.SessionID, h.References); err != nil {
			return ReviewResult{}, err
		}
	}
	weighCitations(cited, &r)
	if err := a.Store.PutReview(ctx, in.SessionID, 0, r); err != nil {
		return ReviewResult{}, err
	}
	failed := 0
	for _, as := range r.Assumptions {
		if as.Verdict == "fails" {
			failed++
		}
	}
	res := ReviewResult{
		HypothesisID: h.ID, Type: in.Type, Score: r.Scores.Overall(), Safety: r.Scores.Safety,
		Verdict: r.Verdict, FailedAssumptions: failed, Usage: usage,
	}
	for _, c := range r.Citations {
		switch {
		case c.Verdict == research.CitationInvented:
			res.Invented++
		case c.Penalised():
			res.Unsupported++
		}
	}
	return res, nil
}

// checkCitations checks the hypothesis' references against the session's audit trail,
// takes in the review's own judgement of whether each source's passage supports the claim
// it is cited for, records both in the review, and weighs each flagged citation in its
// marks and verdict (research.CitationCosts, SupportCosts): a hypothesis that cites what
// no tool returned, or quotes its source otherwise than it says (altered, overstated, out
// of context, unsupported, contradicted), is worth less, whatever the reviewer thought of
// it. The check is cosci's, not the model's, so it is the same for every review and every
// provider.
func (a *Activities) checkCitations(ctx context.Context, sessionID string, h research.Hypothesis, r *research.Review) error {
	cited, err := a.cite(ctx, sessionID, h.References)
	if err != nil {
		return err
	}
	weighCitations(cited, r)
	return nil
}

// weighCitations records the checks of a hypothesis' citations in a review of it, with
// the review's support judgements, and weighs each flagged citation (checkCitations).
func weighCitations(cited []citation.Cited, r *research.Review) {
	if len(cited) == 0 {
		return
	}
	r.Citations = citation.Checks(cited) // the review's own: its support judgements go in
	var flagged []string
	discredited := false
	for i, c := range r.Citations {
		if readsPassage(c.Verdict) {
			if j := slices.IndexFunc(r.Support, func(s research.SupportJudgement) bool { return citation.SameID(s.ID, c.ID) }); j >= 0 {
				r.Citations[i].Support, r.Citations[i].SupportNote = r.Support[j].Judgement, r.Support[j].Note
			}
		}
		for _, cost := range []research.CitationCost{research.CitationCosts[c.Verdict], research.SupportCosts[r.Citations[i].Support]} {
			if !cost.Weakens() {
				continue
			}
			r.Scores.Plausibility = max(0, r.Scores.Plausibility-cost.Plausibility)
			r.Scores.Testability = max(0, r.Scores.Testability-cost.Testability)
			flagged = append(flagged, c.ID+" ("+cost.Why+")")
			discredited = discredited || cost.Discredits
		}
	}
	if len(flagged) > 0 {
		r.Critique = strings.TrimSpace(r.Critique + " Citation check: " + strings.Join(flagged, "; ") + ".")
		switch {
		case discredited:
			r.Verdict = "reject"
		case r.Verdict == "accept":
			r.Verdict = "revise"
		}
	}
}

// readsPassage says whether a verdict found the record's passage of a quote, so that a
// review's judgement of the passage's support is kept: not for an invented source, nor
// a quote its record does not hold, nor one it contradicts.
func readsPassage(verdict string) bool {
	switch verdict {
	case research.CitationVerified, research.CitationAltered, research.CitationOverstated, research.CitationOutOfContext:
		return true
	}
	return false
}
