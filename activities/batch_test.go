package activities

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
)

// TestBatchWithoutABatchAPI: a worker whose model for the session's provider has no batch
// API (its configuration changed after the batch was submitted) neither waits for the
// batch nor claims to cancel it: both fail at once, not to be retried, saying why.
func TestBatchWithoutABatchAPI(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutBatch(ctx, "s-1", store.Batch{Key: "round-1-reviews-1", ID: "batch_1", Provider: "openai", Model: "gpt-6-sol"}); err != nil {
		t.Fatal(err)
	}
	a := &Activities{Store: st, Models: map[string]Model{"openai": &simulator.Offline{}}}
	ref := BatchRef{SessionID: "s-1", Name: "round-1-reviews-1", Provider: "openai", Model: "gpt-6-sol"}
	_, awaitErr := a.AwaitBatch(ctx, ref)
	for name, err := range map[string]error{"await": awaitErr, "cancel": a.CancelBatch(ctx, ref)} {
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != ErrInvalidInput {
			t.Errorf("%s: %v; want a non-retryable %s", name, err, ErrInvalidInput)
			continue
		}
		if !strings.Contains(err.Error(), "batch_1") || !strings.Contains(err.Error(), "no batch API") {
			t.Errorf("%s: %q; want it to name the batch and say the worker has no batch API", name, err)
		}
	}
}
