package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/research"
)

// meter wraps a turn's model and adds up what every call spent, whether or not it
// succeeded: a malformed answer and its repair turn cost tokens too, and a token budget
// must count them.
type meter struct {
	Model
	spent research.Usage
}

func (m *meter) Plan(ctx context.Context, req research.PlanRequest) (research.Plan, research.Usage, error) {
	return record(m, m.Model.Plan, ctx, req)
}

func (m *meter) Generate(ctx context.Context, req research.GenerateRequest) (research.Hypothesis, research.Usage, error) {
	return record(m, m.Model.Generate, ctx, req)
}

func (m *meter) Review(ctx context.Context, req research.ReviewRequest) (research.Review, research.Usage, error) {
	return record(m, m.Model.Review, ctx, req)
}

func (m *meter) Compare(ctx context.Context, req research.CompareRequest) (research.Comparison, research.Usage, error) {
	return record(m, m.Model.Compare, ctx, req)
}

func (m *meter) Debate(ctx context.Context, req research.DebateRequest) (research.DebateAnswer, research.Usage, error) {
	return record(m, m.Model.Debate, ctx, req)
}

func (m *meter) Evolve(ctx context.Context, req research.EvolveRequest) (research.Hypothesis, research.Usage, error) {
	return record(m, m.Model.Evolve, ctx, req)
}

func (m *meter) MetaReview(ctx context.Context, req research.MetaReviewRequest) (research.MetaReview, research.Usage, error) {
	return record(m, m.Model.MetaReview, ctx, req)
}

func (m *meter) Overview(ctx context.Context, req research.OverviewRequest) (research.Overview, research.Usage, error) {
	return record(m, m.Model.Overview, ctx, req)
}

// GenerateStep, ReviewStep and EvolveStep meter a tool-using turn's steps; the model
// behind the meter is a Stepper (see stepper).
func (m *meter) GenerateStep(ctx context.Context, req research.GenerateRequest) (research.Step[research.Hypothesis], research.Usage, error) {
	return record(m, m.Model.(Stepper).GenerateStep, ctx, req)
}

func (m *meter) ReviewStep(ctx context.Context, req research.ReviewRequest) (research.Step[research.Review], research.Usage, error) {
	return record(m, m.Model.(Stepper).ReviewStep, ctx, req)
}

func (m *meter) EvolveStep(ctx context.Context, req research.EvolveRequest) (research.Step[research.Hypothesis], research.Usage, error) {
	return record(m, m.Model.(Stepper).EvolveStep, ctx, req)
}

// record makes one call through the meter.
func record[Q, T any](m *meter, call func(context.Context, Q) (T, research.Usage, error), ctx context.Context, req Q) (T, research.Usage, error) {
	v, u, err := call(ctx, req)
	m.spent = m.spent.Add(u)
	return v, u, err
}

// withUsage attaches what a failed turn spent to its failure, as the failure's details,
// keeping its type, message and retry behaviour; the workflow adds it to the session's
// usage (see SpentBy). A failure that spent nothing is returned as is.
func withUsage(err error, spent research.Usage) error {
	if err == nil || spent == (research.Usage{}) {
		return err
	}
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		// A transient failure (5xx, a timeout): still retryable, now with its usage.
		return temporal.NewApplicationErrorWithOptions(err.Error(), "ProviderTransient", temporal.ApplicationErrorOptions{
			Cause: err, Details: []any{spent},
		})
	}
	return temporal.NewApplicationErrorWithOptions(app.Message(), app.Type(), temporal.ApplicationErrorOptions{
		NonRetryable:   app.NonRetryable(),
		NextRetryDelay: app.NextRetryDelay(),
		Cause:          errors.Unwrap(app),
		Details:        []any{spent},
	})
}

// SpentBy reads what a failed turn spent from its failure, as the workflow receives it.
func SpentBy(err error) research.Usage {
	var app *temporal.ApplicationError
	var u research.Usage
	if errors.As(err, &app) && app.HasDetails() && app.Details(&u) == nil {
		return u
	}
	return research.Usage{}
}
