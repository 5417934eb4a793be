package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.temporal.io/api/operatorservice/v1"

	"github.com/cosci-dev/cosci/internal/connection"
)

// TestEnsureSearchAttributes: the worker's start-up check adds what the namespace lacks
// (as on a dev server started on an older database) and leaves what it has.
func TestEnsureSearchAttributes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Not an Int: the dev server's SQLite visibility allows 3 custom Int attributes, and
	// cosci uses them all (HypothesisCount, TotalTokens, SourceCheckpoint).
	want := map[string]string{"CosciProbeKeyword": "Keyword", "CosciProbeDouble": "Double", "SessionStatus": "Keyword"}
	added, err := connection.EnsureSearchAttributes(ctx, temporalClient, "default", want)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(added, []string{"CosciProbeDouble", "CosciProbeKeyword"}) {
		t.Errorf("added %v; want the two probes, not SessionStatus, which the server has", added)
	}
	list, err := temporalClient.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	for name := range want {
		if _, ok := list.GetCustomAttributes()[name]; !ok {
			t.Errorf("%s is not registered", name)
		}
	}
	if again, err := connection.EnsureSearchAttributes(ctx, temporalClient, "default", want); err != nil || len(again) != 0 {
		t.Errorf("a second check added %v (%v); want nothing", again, err)
	}
	if _, err := connection.EnsureSearchAttributes(ctx, temporalClient, "default", map[string]string{"CosciBad": "Colour"}); err == nil {
		t.Error("an unknown type was accepted")
	}
}
