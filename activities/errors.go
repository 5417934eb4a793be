package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/store"
)

// providerError is the one place where a failed turn's error becomes what Temporal does
// next. Temporal's retry policy is the only retry mechanism, so the classification decides
// everything:
//
//   - *provider.AuthError (401, 403, exhausted quota, a missing key): non-retryable
//     ErrProviderAuth. No retry can fix a key; the workflow suspends the session until a
//     human fixes the worker's environment and resumes it.
//   - *provider.RequestError (400, 404, 422: a bad model name, a prompt too long):
//     non-retryable ErrProviderRequest; the turn fails, the session goes on.
//   - *provider.RateLimitError (429): retryable ErrProviderRateLimit. When the provider
//     said how long to wait (Retry-After), the next attempt waits exactly that long
//     (NextRetryDelay) instead of the retry policy's backoff.
//   - *prompt.MalformedError (an answer still unusable after the provider's repair turn):
//     non-retryable ErrMalformedAnswer; asking again would cost tokens for nothing.
//   - *store.DamagedError, or a record the store lacks (fs.ErrNotExist) that no activity
//     expected to miss: non-retryable ErrStoreDamaged, naming the session and the record.
//   - *store.UnavailableError: retryable ErrStoreUnavailable, so that the workflow knows,
//     once the retries run out, that the store and not the turn failed.
//   - an error already classified (an *temporal.ApplicationError such as malformed() or
//     invalid() made), *provider.TransientError (5xx, timeouts) and anything else
//     (a cancelled context): returned as is, so Temporal retries with backoff.
//
// The messages are the providers' and the store's own; they never carry a credential.
func providerError(err error) error {
	if classified, ok := classify(err); ok {
		return classified
	}
	return err
}

// classify maps the provider errors providerError names; ok is false for any other error.
func classify(err error) (classified error, ok bool) {
	var (
		app     *temporal.ApplicationError
		auth    *provider.AuthError
		request *provider.RequestError
		rate    *provider.RateLimitError
		bad     *prompt.MalformedError
		damaged *store.DamagedError
		down    *store.UnavailableError
	)
	switch {
	case err == nil || errors.As(err, &app):
		return err, false
	case errors.As(err, &auth):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrProviderAuth, err), true
	case errors.As(err, &request):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrProviderRequest, err), true
	case errors.As(err, &rate):
		return temporal.NewApplicationErrorWithOptions(err.Error(), ErrProviderRateLimit, temporal.ApplicationErrorOptions{
			NextRetryDelay: max(rate.RetryAfter, 0), // 0: the retry policy's backoff
			Cause:          err,
		}), true
	case errors.As(err, &bad):
		return malformed(err), true
	case errors.As(err, &down): // first: a write that found no directory is not a missing record
		return temporal.NewApplicationErrorWithOptions(err.Error(), ErrStoreUnavailable, temporal.ApplicationErrorOptions{Cause: err}), true
	case errors.As(err, &damaged) || errors.Is(err, fs.ErrNotExist):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrStoreDamaged, err), true
	}
	return err, false
}

// Classifier is the worker interceptor that classifies every activity's failure as
// providerError does, so that a store's failure in any activity (a checkpoint, the
// tournament, a report) reaches the workflow with its kind. Register it on every worker
// that runs cosci's activities.
func Classifier() interceptor.WorkerInterceptor { return &classifier{} }

type classifier struct {
	interceptor.WorkerInterceptorBase
}

func (*classifier) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &classified{}
	i.Next = next
	return i
}

type classified struct {
	interceptor.ActivityInboundInterceptorBase
}

func (i *classified) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	out, err := i.Next.ExecuteActivity(ctx, in)
	return out, providerError(err)
}

// resolveError classifies a failure to resolve a turn's model. A missing key is an
// *provider.AuthError and is classified as such; anything else the resolver refuses (an
// unknown provider) cannot work on a retry either.
func resolveError(providerName string, err error) error {
	if classified, ok := classify(err); ok {
		return classified
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return err
	}
	return unknownProvider(providerName, err)
}

// unknownProvider fails a turn that names a provider this worker cannot serve.
func unknownProvider(name string, cause error) error {
	msg := fmt.Sprintf("this worker has no provider %q; start the worker with its credentials", name)
	if cause != nil {
		msg = fmt.Sprintf("this worker cannot serve provider %q: %v", name, cause)
	}
	return temporal.NewNonRetryableApplicationError(msg, ErrUnknownProvider, cause)
}
