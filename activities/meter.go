package activities

// What a failed turn spent travels with its failure: runTurn counts what its model call
// spent, whether or not it succeeded (a malformed answer and its repair turn cost tokens
// too, and a token budget must count them), and withUsage attaches it.

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/research"
)

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
