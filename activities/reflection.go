package activities

// The reflection agent: a review of one hypothesis, of one of the review types, in the
// shared context. It may call tools. cosci itself then checks the hypothesis' citations
// against the session's audit trail and weighs what it finds in the review's marks.

import (
	"context"
	"errors"
	"io/fs"
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
	keep := func(_ research.ReviewRequest, r research.Review, usage research.Usage) (ReviewResult, error) {
		return a.keepReview(ctx, in, h, r, usage)
	}
	asked := func(calls []PendingCall, u research.Usage) ReviewResult {
		return ReviewResult{HypothesisID: h.ID, Type: in.Type, Calls: calls, Usage: u}
	}
	req := research.ReviewRequest{TurnID: turnID, Goal: in.Goal, Type: in.Type, Hypothesis: h, Context: c, Seed: in.Seed}
	return reviewTurn{req: req, keep: keep, asked: asked}, nil
}

func (in ReviewInput) loop() Loop { return in.Loop }

// reviewRefs are the references a review cites.
func reviewRefs(r *research.Review) *[]research.Reference { return &r.References }

// keepReview checks a review of h, weighs h's citations in it, stores it, and returns
// what the workflow keeps of it.
func (a *Activities) keepReview(ctx context.Context, in ReviewInput, h research.Hypothesis, r research.Review, usage research.Usage) (ReviewResult, error) {
	r.HypothesisID, r.Type = h.ID, in.Type
	if r.Reviewer == "" {
		r.Reviewer = "agent"
	}
	if in.Type == research.ReviewDeepVerification && len(r.Assumptions) == 0 {
		return ReviewResult{}, malformed(errors.New("a deep verification review lists no assumptions"))
	}
	if err := a.checkCitations(ctx, in.SessionID, h, &r); err != nil {
		return ReviewResult{}, err
	}
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
		case c.Verdict == research.CitationContradicted, c.Verdict == research.CitationUnsupported,
			c.Support == research.SupportContradicts, c.Support == research.SupportIrrelevant:
			res.Unsupported++
		}
	}
	return res, nil
}

// citationCost is what a flagged citation costs a review, as a reader weighs it: an
// altered quote is a warning (named in the critique, no mark lost); a quote its source
// does not hold, or that does not bear on its claim, weakens the hypothesis; an invented
// source, a quote its source contradicts, or one that contradicts its own claim discredits
// it (the verdict becomes "reject").
type citationCost struct {
	plausibility, testability float64
	discredits, warns         bool
	why                       string
}

var (
	verdictCosts = map[string]citationCost{
		research.CitationInvented:     {plausibility: 3, testability: 1, discredits: true, why: "no tool returned it"},
		research.CitationContradicted: {plausibility: 3, discredits: true, why: "its source says otherwise"},
		research.CitationUnsupported:  {plausibility: 1.5, why: "its source does not say what is quoted"},
		research.CitationAltered:      {warns: true, why: "quoted inexactly"},
	}
	supportCosts = map[string]citationCost{
		research.SupportContradicts: {plausibility: 3, discredits: true, why: "its quote contradicts the claim it is cited for"},
		research.SupportIrrelevant:  {plausibility: 1, why: "its quote does not bear on the claim it is cited for"},
	}
)

// checkCitations checks the hypothesis' references against the session's audit trail,
// takes in the review's own judgement of whether each quote that passed supports its
// claim, records both in the review, and weighs each flagged citation in its marks and
// verdict (citationCost): a hypothesis that cites what no tool returned, or claims what
// its source does not say, is worth less, whatever the reviewer thought of it. The check
// is cosci's, not the model's, so it is the same for every review and every provider.
func (a *Activities) checkCitations(ctx context.Context, sessionID string, h research.Hypothesis, r *research.Review) error {
	if len(h.References) == 0 {
		return nil
	}
	records := map[string]string{}
	for _, ref := range h.References {
		if ref.Source == "" {
			continue
		}
		if _, done := records[ref.Source]; done {
			continue
		}
		tr, err := a.Store.ToolRecord(ctx, sessionID, ref.Source)
		if errors.Is(err, fs.ErrNotExist) {
			continue // not in the trail: the check finds the reference invented
		}
		if err != nil {
			return err
		}
		records[ref.Source] = tr.Content
	}
	r.Citations = citation.Check(h.References, records)
	var flagged, warned []string
	discredited := false
	for i, c := range r.Citations {
		if c.Verdict == research.CitationVerified || c.Verdict == research.CitationAltered {
			if j := slices.IndexFunc(r.Support, func(s research.SupportJudgement) bool { return citation.SameID(s.ID, c.ID) }); j >= 0 {
				r.Citations[i].Support, r.Citations[i].SupportNote = r.Support[j].Judgement, r.Support[j].Note
			}
		}
		for _, cost := range []citationCost{verdictCosts[c.Verdict], supportCosts[r.Citations[i].Support]} {
			switch {
			case cost.warns:
				warned = append(warned, c.ID+" ("+cost.why+")")
			case cost.why != "":
				r.Scores.Plausibility = max(0, r.Scores.Plausibility-cost.plausibility)
				r.Scores.Testability = max(0, r.Scores.Testability-cost.testability)
				flagged = append(flagged, c.ID+" ("+cost.why+")")
				discredited = discredited || cost.discredits
			}
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
	if len(warned) > 0 {
		r.Critique = strings.TrimSpace(r.Critique + " Citation warning: " + strings.Join(warned, "; ") + ".")
	}
	return nil
}
