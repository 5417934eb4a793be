package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
)

// failing is a model whose generation turns fail with err.
type failing struct {
	simulator.Offline
	err   error
	calls int
}

// Answer answers with the methods of failing, which change some of the simulator's answers.
func (f *failing) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, f, q)
}

func (f *failing) Generate(ctx context.Context, req research.GenerateRequest) (research.Hypothesis, research.Usage, error) {
	f.calls++
	return research.Hypothesis{}, research.Usage{}, f.err
}

// TestProviderErrors: each provider or store failure becomes what Temporal must do next:
// stop (auth, a bad request, a malformed answer, a damaged or missing record), retry after
// the provider's delay (429), or retry with backoff (5xx, an unavailable store, anything
// unknown).
func TestProviderErrors(t *testing.T) {
	for _, tc := range []struct {
		name         string
		err          error
		typ          string // "" for an error returned as is
		nonRetryable bool
		delay        time.Duration
	}{
		{"auth", &provider.AuthError{Provider: "openai", Message: "401 invalid api key"}, ErrProviderAuth, true, 0},
		{"wrapped auth", fmt.Errorf("generate: %w", &provider.AuthError{Provider: "anthropic", Message: "quota exceeded"}), ErrProviderAuth, true, 0},
		{"request", &provider.RequestError{Provider: "openai", Message: "model not found", Status: 404}, ErrProviderRequest, true, 0},
		{"rate limit", &provider.RateLimitError{Provider: "openai", Message: "slow down", RetryAfter: 7 * time.Second}, ErrProviderRateLimit, false, 7 * time.Second},
		{"rate limit without Retry-After", &provider.RateLimitError{Provider: "openai", Message: "slow down"}, ErrProviderRateLimit, false, 0},
		{"malformed", &prompt.MalformedError{Agent: prompt.AgentGeneration, Problem: "the title is empty"}, ErrMalformedAnswer, true, 0},
		{"transient", &provider.TransientError{Provider: "openai", Message: "502 bad gateway", Status: 502}, "", false, 0},
		{"unknown", errors.New("connection reset by peer"), "", false, 0},
		{"damaged record", &store.DamagedError{SessionID: "s-1", Record: "/data/s-1/hypotheses/h-0002.json", Problem: "not a valid record"}, ErrStoreDamaged, true, 0},
		{"missing record", fmt.Errorf("load: %w", fs.ErrNotExist), ErrStoreDamaged, true, 0},
		{"store unavailable", &store.UnavailableError{Err: errors.New("store: write: no space left on device")}, ErrStoreUnavailable, false, 0},
		{"a write that found no directory", &store.UnavailableError{Err: fmt.Errorf("store: link .tmp-1 turns/t.json: %w", fs.ErrNotExist)}, ErrStoreUnavailable, false, 0},
		{"cancelled", context.Canceled, "", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := providerError(tc.err)
			if !errors.Is(got, tc.err) && got != tc.err {
				t.Errorf("the classified error %v does not wrap the provider's %v", got, tc.err)
			}
			var app *temporal.ApplicationError
			if tc.typ == "" {
				if got != tc.err {
					t.Errorf("got %v (%T); want the error as is, for Temporal to retry", got, got)
				}
				return
			}
			if !errors.As(got, &app) {
				t.Fatalf("got %v (%T); want an application error of type %s", got, got, tc.typ)
			}
			if app.Type() != tc.typ || app.NonRetryable() != tc.nonRetryable || app.NextRetryDelay() != tc.delay {
				t.Errorf("got type %s, non-retryable %v, next retry delay %s; want %s, %v, %s",
					app.Type(), app.NonRetryable(), app.NextRetryDelay(), tc.typ, tc.nonRetryable, tc.delay)
			}
			if !strings.Contains(app.Message(), tc.err.Error()) && tc.typ != ErrMalformedAnswer {
				t.Errorf("message %q does not carry the provider's %q", app.Message(), tc.err.Error())
			}
		})
	}
}

// TestProviderErrorThroughActivity: the classification survives the activity boundary.
func TestProviderErrorThroughActivity(t *testing.T) {
	for _, tc := range []struct {
		err          error
		typ          string
		nonRetryable bool
	}{
		{&provider.AuthError{Provider: "openai", Message: "401 Incorrect API key provided"}, ErrProviderAuth, true},
		{&provider.RequestError{Provider: "openai", Message: "400 bad request", Status: 400}, ErrProviderRequest, true},
		{&provider.RateLimitError{Provider: "openai", Message: "429 slow down", RetryAfter: time.Second}, ErrProviderRateLimit, false},
		{&prompt.MalformedError{Agent: prompt.AgentGeneration, Problem: "no JSON object"}, ErrMalformedAnswer, true},
	} {
		m := &failing{err: tc.err}
		env, a := newActivities(t, m)
		_, err := env.ExecuteActivity(a.Generate, generateInput("generate-h-0001"))
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != tc.typ || app.NonRetryable() != tc.nonRetryable {
			t.Errorf("%T: error %v; want type %s, non-retryable %v", tc.err, err, tc.typ, tc.nonRetryable)
		}
		if m.calls != 1 {
			t.Errorf("%T: the model was called %d times; want 1", tc.err, m.calls)
		}
	}
}

// resolver records what it was asked for and answers from a map or with an error.
type resolver struct {
	models map[string]Model
	err    error
	asked  []string
}

func (r *resolver) Model(providerName, model string) (Model, error) {
	r.asked = append(r.asked, providerName+"/"+model)
	if r.err != nil {
		return nil, r.err
	}
	return r.models[providerName], nil
}

// TestProvidersResolveEachTurn: a turn's model comes from its own provider and model
// names; Models take precedence; a missing key fails the turn as an auth error.
func TestProvidersResolveEachTurn(t *testing.T) {
	env, a := newActivities(t, &counting{})
	real := &counting{}
	r := &resolver{models: map[string]Model{"openai": real}}
	a.Providers = r

	in := generateInput("generate-h-0001")
	in.Provider, in.Model = "openai", "gpt-4o-mini"
	if _, err := env.ExecuteActivity(a.Generate, in); err != nil {
		t.Fatal(err)
	}
	if real.calls != 1 || len(r.asked) != 1 || r.asked[0] != "openai/gpt-4o-mini" {
		t.Errorf("resolver asked %v, model called %d times; want openai/gpt-4o-mini once", r.asked, real.calls)
	}

	// "offline" is in Models: the resolver is not asked.
	in = generateInput("generate-h-0002")
	in.HypothesisID = "h-0002"
	if _, err := env.ExecuteActivity(a.Generate, in); err != nil {
		t.Fatal(err)
	}
	if len(r.asked) != 1 {
		t.Errorf("resolver asked %v for an offline turn; want Models to answer", r.asked)
	}

	// A provider the resolver does not know.
	in = generateInput("generate-h-0003")
	in.HypothesisID, in.Provider = "h-0003", "oracle"
	_, err := env.ExecuteActivity(a.Generate, in)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrUnknownProvider || !app.NonRetryable() {
		t.Errorf("unknown provider: error %v; want a non-retryable %s", err, ErrUnknownProvider)
	}

	// A missing key is an auth error: the session suspends rather than retrying.
	r.err = &provider.AuthError{Provider: "anthropic", Message: "ANTHROPIC_API_KEY is not set in the worker's environment"}
	in = generateInput("generate-h-0004")
	in.HypothesisID, in.Provider = "h-0004", "anthropic"
	_, err = env.ExecuteActivity(a.Generate, in)
	if !errors.As(err, &app) || app.Type() != ErrProviderAuth || !app.NonRetryable() || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("missing key: error %v; want a non-retryable %s naming the variable", err, ErrProviderAuth)
	}

	// Any other refusal by the resolver is an unknown provider.
	r.err = errors.New(`provider "oracle" is not one of offline, openai, anthropic`)
	_, err = env.ExecuteActivity(a.Generate, in)
	if !errors.As(err, &app) || app.Type() != ErrUnknownProvider || !app.NonRetryable() || !strings.Contains(err.Error(), "not one of") {
		t.Errorf("resolver refusal: error %v; want a non-retryable %s with the resolver's reason", err, ErrUnknownProvider)
	}
}
