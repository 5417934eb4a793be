package activities

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
)

// counting wraps the offline simulator and counts the model calls that reach it.
type counting struct {
	simulator.Offline
	calls int
	// title, when set, replaces the generated title (an empty one makes a malformed answer).
	title *string
}

// Answer answers with the methods of counting, which change some of the simulator's answers.
func (c *counting) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return simulator.Answer(ctx, c, q)
}

func (c *counting) Generate(ctx context.Context, req research.GenerateRequest) (research.Hypothesis, research.Usage, error) {
	c.calls++
	h, u, err := c.Offline.Generate(ctx, req)
	if c.title != nil {
		h.Title = *c.title
	}
	return h, u, err
}

func newActivities(t *testing.T, m Model) (*testsuite.TestActivityEnvironment, *Activities) {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	a := &Activities{Store: st, Models: map[string]Model{"offline": m}}
	env.RegisterActivity(a)
	return env, a
}

func generateInput(turn string) GenerateInput {
	return GenerateInput{
		Turn:         Turn{SessionID: "s-1", TurnID: turn, Goal: "Find drug targets for tau propagation", Provider: "offline", Seed: 7},
		HypothesisID: "h-0001",
	}
}

// TestTurnIsIdempotent: a turn that already succeeded returns its stored result and does
// not ask the model again, so a retried or re-run turn never adds a hypothesis.
func TestTurnIsIdempotent(t *testing.T) {
	m := &counting{}
	env, a := newActivities(t, m)
	var first, second GenerateResult
	for _, out := range []*GenerateResult{&first, &second} {
		v, err := env.ExecuteActivity(a.Generate, generateInput("generate-h-0001"))
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Get(out); err != nil {
			t.Fatal(err)
		}
	}
	if m.calls != 1 {
		t.Fatalf("the model was called %d times for one turn, want 1", m.calls)
	}
	if !reflect.DeepEqual(first, second) || first.HypothesisID != "h-0001" || first.Title == "" || first.Usage.Requests != 1 {
		t.Fatalf("first %+v, second %+v", first, second)
	}
	h, err := a.Store.Hypothesis(t.Context(), "s-1", "h-0001")
	if err != nil || h.Title != first.Title || h.Goal != "Find drug targets for tau propagation" {
		t.Fatalf("stored hypothesis %+v, %v", h, err)
	}
	turn, ok, err := a.Store.Turn(t.Context(), "s-1", "generate-h-0001")
	if err != nil || !ok || !strings.Contains(turn.Prompt, "tau propagation") || turn.Agent != "generation" {
		t.Fatalf("stored turn %+v, %v, %v", turn, ok, err)
	}
}

func TestMalformedAnswerIsNotRetried(t *testing.T) {
	empty := ""
	env, a := newActivities(t, &counting{title: &empty})
	_, err := env.ExecuteActivity(a.Generate, generateInput("generate-h-0001"))
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrMalformedAnswer || !app.NonRetryable() {
		t.Fatalf("error %v; want a non-retryable %s", err, ErrMalformedAnswer)
	}
	if _, ok, _ := a.Store.Turn(t.Context(), "s-1", "generate-h-0001"); ok {
		t.Error("a failed turn was stored as done")
	}
	if spent := SpentBy(err); spent.Requests != 1 || spent.Tokens() == 0 {
		t.Errorf("the failure says the turn spent %+v; want the model call's tokens", spent)
	}
	if _, err := a.Store.Hypothesis(t.Context(), "s-1", "h-0001"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a malformed hypothesis reached the store: %v", err)
	}
}

func TestUnknownProviderIsNotRetried(t *testing.T) {
	env, a := newActivities(t, &counting{})
	in := generateInput("generate-h-0001")
	in.Provider = "oracle"
	_, err := env.ExecuteActivity(a.Generate, in)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrUnknownProvider || !app.NonRetryable() || !strings.Contains(err.Error(), `no provider "oracle"`) {
		t.Fatalf("error %v; want a non-retryable %s naming the provider", err, ErrUnknownProvider)
	}
}

func TestTransientFailureIsRetryable(t *testing.T) {
	env, a := newActivities(t, &simulator.Offline{ErrorRate: 1})
	_, err := env.ExecuteActivity(a.Generate, generateInput("generate-h-0001"))
	var app *temporal.ApplicationError
	if err == nil || (errors.As(err, &app) && app.NonRetryable()) {
		t.Fatalf("error %v; want a retryable failure", err)
	}
}

// TestReviewCompareCheckpointReport runs the other activities over one stored session.
func TestReviewCompareCheckpointReport(t *testing.T) {
	env, a := newActivities(t, &simulator.Offline{})
	for _, id := range []string{"h-0001", "h-0002"} {
		in := generateInput("generate-" + id)
		in.HypothesisID = id
		if _, err := env.ExecuteActivity(a.Generate, in); err != nil {
			t.Fatal(err)
		}
	}
	turn := func(id string) Turn {
		return Turn{SessionID: "s-1", TurnID: id, Goal: "Find drug targets for tau propagation", Provider: "offline"}
	}
	v, err := env.ExecuteActivity(a.Review, ReviewInput{Turn: turn("review-h-0001-full"), HypothesisID: "h-0001", Type: "full"})
	if err != nil {
		t.Fatal(err)
	}
	var rv ReviewResult
	if err := v.Get(&rv); err != nil || rv.Type != "full" || rv.Score <= 0 || rv.Score > 10 {
		t.Fatalf("review %+v, %v", rv, err)
	}
	v, err = env.ExecuteActivity(a.Compare, CompareInput{Turn: turn("match-h-0001-h-0002"), A: "h-0001", B: "h-0002"})
	if err != nil {
		t.Fatal(err)
	}
	var cmp CompareResult
	if err := v.Get(&cmp); err != nil || (cmp.Winner != "h-0001" && cmp.Winner != "h-0002") {
		t.Fatalf("comparison %+v, %v", cmp, err)
	}
	snap := session.Snapshot{SessionID: "s-1", Seq: 1, State: session.Completed, Goal: "Find drug targets for tau propagation",
		Hypotheses: []session.Entry{{ID: "h-0001", Elo: 1216}, {ID: "h-0002", Elo: 1184}}}
	if _, err := env.ExecuteActivity(a.Checkpoint, CheckpointInput{Snapshot: snap}); err != nil {
		t.Fatal(err)
	}
	v, err = env.ExecuteActivity(a.Report, ReportInput{SessionID: "s-1", Checkpoint: 1})
	if err != nil {
		t.Fatal(err)
	}
	var path string
	if err := v.Get(&path); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(report), "h-0001") || !strings.Contains(string(report), "full") {
		t.Fatalf("report at %s: %v\n%s", path, err, report)
	}
}
