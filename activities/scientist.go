package activities

// The scientist's own contributions, hypotheses and reviews, which call no model.

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
)

// manualReviewOffset keeps a scientist's reviews apart from the agents' in the store: the
// scientist's n-th review of a hypothesis is stored under index n+manualReviewOffset.
const manualReviewOffset = 1000

// AddHypothesis stores a scientist's own hypothesis as it was written, to compete with the
// agents'. It calls no model. Hypotheses are written once, so a retry changes nothing; an
// id that already names another hypothesis is refused.
func (a *Activities) AddHypothesis(ctx context.Context, in AddHypothesisInput) (GenerateResult, error) {
	h := research.Hypothesis{
		ID:          in.HypothesisID,
		Title:       strings.TrimSpace(in.Title),
		Statement:   strings.TrimSpace(in.Statement),
		Rationale:   strings.TrimSpace(in.Rationale),
		Predictions: slices.Clone(in.Predictions),
		Origin:      "scientist",
		Strategy:    "scientist",
		Goal:        in.Goal,
	}
	if h.ID == "" {
		return GenerateResult{}, invalid("the scientist's hypothesis has no id")
	}
	if err := h.Check(); err != nil {
		return GenerateResult{}, invalid("the scientist's hypothesis cannot compete: %v", err)
	}
	stored, err := a.putHypothesis(ctx, in.SessionID, h)
	if err != nil {
		return GenerateResult{}, err
	}
	if stored.Origin != h.Origin || stored.Statement != h.Statement {
		return GenerateResult{}, invalid("hypothesis id %s is already taken by another hypothesis", h.ID)
	}
	a.Metrics.Hypotheses(ctx, "scientist", 1)
	return GenerateResult{HypothesisID: stored.ID, Title: stored.Title}, nil
}

// Marks a manual review derives from a verdict given without a score.
var verdictMarks = map[string]float64{"accept": 8, "revise": 5, "reject": 2}

// ManualReview stores a scientist's review of one hypothesis. A score alone sets all four
// marks and implies the verdict (6.5 and above accept, 4 and above revise, else reject); a
// verdict alone implies the marks (accept 8, revise 5, reject 2). The review is stored
// apart from the agents' (index in.Index+1000), so it never replaces one. A scientist's
// review does not judge safety: its result's Safety is 10, so it never excludes a
// hypothesis on its own.
func (a *Activities) ManualReview(ctx context.Context, in ManualReviewInput) (ReviewResult, error) {
	if in.Index < 0 {
		return ReviewResult{}, invalid("manual review index %d is negative; number a scientist's reviews from 0", in.Index)
	}
	verdict := strings.ToLower(strings.TrimSpace(in.Verdict))
	if verdict != "" && !slices.Contains(research.Verdicts, verdict) {
		return ReviewResult{}, invalid("verdict %q is not one of %s", in.Verdict, strings.Join(research.Verdicts, ", "))
	}
	var score float64
	switch {
	case in.Score != nil:
		score = *in.Score
		if math.IsNaN(score) || score < 0 || score > 10 {
			return ReviewResult{}, invalid("score %g is not from 0 to 10", score)
		}
	case verdict != "":
		score = verdictMarks[verdict]
	default:
		return ReviewResult{}, invalid("a manual review needs a score, a verdict or both")
	}
	if verdict == "" {
		verdict = research.VerdictOf(score)
	}
	if _, err := a.Store.Hypothesis(ctx, in.SessionID, in.HypothesisID); errors.Is(err, fs.ErrNotExist) {
		return ReviewResult{}, invalid("session %s has no hypothesis %s to review", in.SessionID, in.HypothesisID)
	} else if err != nil {
		return ReviewResult{}, err
	}
	reviewer := strings.TrimSpace(in.Scientist)
	if reviewer == "" {
		reviewer = research.DefaultScientistID
	}
	r := research.Review{
		HypothesisID: in.HypothesisID,
		Type:         "scientist",
		Scores:       research.Scores{Novelty: score, Plausibility: score, Testability: score, Safety: score},
		Critique:     strings.TrimSpace(in.Critique),
		Verdict:      verdict,
		Reviewer:     reviewer,
	}
	if err := a.Store.PutReview(ctx, in.SessionID, in.Index+manualReviewOffset, r); err != nil {
		return ReviewResult{}, err
	}
	return ReviewResult{HypothesisID: in.HypothesisID, Type: r.Type, Score: score, Safety: 10, Verdict: verdict}, nil
}
