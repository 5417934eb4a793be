package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The errors a real provider returns, classified by what the caller should do next. Each
// Error() says what happened and what to do, and never contains an API key.
//
// They have no Temporal import: the activities map them to Temporal's error types (an
// AuthError pauses the session, a RequestError is not retried, the others are).

// ErrUnknownProvider is wrapped by Registry.Model for a provider name it does not serve.
var ErrUnknownProvider = errors.New("unknown provider")

// AuthError is a failure only a human can fix: the key is missing, wrong or lacks access
// (401, 403), the account is out of quota or credit, or the worker's configuration is
// unusable (a malformed base URL). Retrying does not help; the session must pause until
// someone fixes the worker's environment.
type AuthError struct {
	Provider string
	Message  string
	err      error
}

func (e *AuthError) Error() string { return e.Provider + ": " + e.Message }
func (e *AuthError) Unwrap() error { return e.err }

// RateLimitError is a 429: the provider asks the caller to slow down. RetryAfter is what
// its Retry-After header asked for (0 when it named no delay).
type RateLimitError struct {
	Provider   string
	Message    string
	RetryAfter time.Duration
	err        error
}

func (e *RateLimitError) Error() string {
	s := e.Provider + ": " + e.Message
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return s
}
func (e *RateLimitError) Unwrap() error { return e.err }

// RequestError is a request the provider refuses as it stands (400, 404, 413, 422): a
// model name it does not know, a schema it does not accept. Retrying the same request
// gets the same answer.
type RequestError struct {
	Provider string
	Message  string
	Status   int
	err      error
}

func (e *RequestError) Error() string { return e.Provider + ": " + e.Message }
func (e *RequestError) Unwrap() error { return e.err }

// TransientError is a failure that may pass: a 5xx or an overloaded provider, a timeout,
// a dropped connection. Status is 0 when no HTTP response arrived. Retry.
type TransientError struct {
	Provider string
	Message  string
	Status   int
	err      error
}

func (e *TransientError) Error() string { return e.Provider + ": " + e.Message }
func (e *TransientError) Unwrap() error { return e.err }

// apiFailure is what classify needs from an SDK's API error.
type apiFailure struct {
	status int
	code   string // OpenAI's error code ("insufficient_quota"), or ""
	kind   string // the error type ("rate_limit_error", "billing_error", ...), or ""
	text   string // the provider's own message, or ""
	header http.Header
}

// classify turns an HTTP error answer into one of the four error types. keyVar is the
// environment variable that holds the provider's key; secret is the key itself, removed
// from anything quoted.
func classify(provider, keyVar, secret string, f apiFailure, cause error) error {
	status := fmt.Sprintf("%d %s", f.status, http.StatusText(f.status))
	said := ""
	if t := quote(f.text, secret); t != "" {
		said = ": " + t
	}
	quota := f.code == "insufficient_quota" || f.kind == "insufficient_quota" || f.kind == "billing_error" ||
		strings.Contains(strings.ToLower(f.text), "credit balance")
	switch {
	case f.status == http.StatusUnauthorized:
		return &AuthError{provider, status + said + "; check " + keyVar + " in the worker's environment, then resume the session", cause}
	case f.status == http.StatusForbidden:
		return &AuthError{provider, status + said + "; the key in " + keyVar + " lacks access to this model or endpoint: grant it, or choose another model, then resume the session", cause}
	case f.status == http.StatusPaymentRequired || quota:
		return &AuthError{provider, status + said + "; the account behind " + keyVar + " is out of quota or credit: add credit or raise the limit, then resume the session", cause}
	case f.status == http.StatusTooManyRequests:
		return &RateLimitError{provider, status + said + "; slow down: retry later", retryAfter(f.header, time.Now()), cause}
	case f.status == http.StatusRequestTimeout || f.status == http.StatusConflict || f.status >= 500:
		return &TransientError{provider, status + said + "; the provider failed or is overloaded: retry", f.status, cause}
	case f.status == http.StatusNotFound:
		return &RequestError{provider, status + said + "; check the model name and the base URL", f.status, cause}
	default:
		return &RequestError{provider, status + said + "; the provider refused the request: fix the request (the model name, the schema) rather than retry", f.status, cause}
	}
}

// classifyOther classifies an error that came with no HTTP answer: the context's end, a
// timeout, a connection failure, or an answer the SDK could not read. ctx is the call's
// context; a cancelled call is returned as it is, since nobody awaits its answer.
func classifyOther(ctx context.Context, provider, secret string, err error) error {
	msg := quote(err.Error(), secret)
	var nerr net.Error
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return fmt.Errorf("%s: the call was cancelled: %w", provider, context.Canceled)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout():
		return &TransientError{provider, "timed out waiting for the provider (" + msg + "); retry, or give the turn more time", 0, err}
	case errors.As(err, &nerr), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &TransientError{provider, "cannot reach the provider (" + msg + "); check the network or the base URL, then retry", 0, err}
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return &TransientError{provider, "the provider's answer is not the JSON its API promises (" + msg + "); retry, and check the base URL if it persists", 0, err}
	}
	return &TransientError{provider, msg + "; retry", 0, err}
}

// retryAfter reads a Retry-After header (delay in seconds, or an HTTP date), falling back
// to OpenAI's retry-after-ms. It returns 0 when neither names a usable delay.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(0, t.Sub(now).Round(time.Second))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	return 0
}

// keyLike matches strings shaped like API keys (OpenAI's sk-..., Anthropic's
// sk-ant-...), whole or partly masked, as providers quote them in "incorrect API key"
// messages.
var keyLike = regexp.MustCompile(`\b(sk|key|pk)-[A-Za-z0-9_\-*.]{6,}`)

// maxQuote bounds how much of a provider's message an error repeats.
const maxQuote = 300

// quote makes a provider's text safe to put in an error: the key, and anything shaped
// like a key, is removed, it is folded onto one line and cut to maxQuote characters.
func quote(text, secret string) string {
	if secret != "" {
		text = strings.ReplaceAll(text, secret, "[redacted]")
	}
	text = keyLike.ReplaceAllString(text, "[redacted]")
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > maxQuote {
		text = string(r[:maxQuote-1]) + "…"
	}
	return text
}

// endpoint names what a provider's client is configured with, for the checks every
// provider makes alike.
type endpoint struct {
	provider, keyVar, urlVar string
	keyHint                  string // appended to the missing-key message
	exampleModel             string
	defaultBase              string
}

// check refuses a missing key or model and a malformed base URL, naming the variable to
// fix, and fills in the default base URL and HTTP client.
func (e endpoint) check(key, model, base string, hc *http.Client) (string, *http.Client, error) {
	if strings.TrimSpace(key) == "" {
		return "", nil, keyMissing(e.provider, e.keyVar, e.keyHint)
	}
	if strings.TrimSpace(model) == "" {
		return "", nil, &RequestError{Provider: e.provider, Message: "no model named; name one, e.g. " + e.exampleModel}
	}
	if err := checkBaseURL(e.provider, e.urlVar, base); err != nil {
		return "", nil, err
	}
	if base == "" {
		base = e.defaultBase
	}
	if hc == nil {
		hc = &http.Client{}
	}
	return base, hc, nil
}
