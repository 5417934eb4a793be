package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// fakeClient answers queries from memory; every other method of client.Client panics.
type fakeClient struct {
	client.Client
	progress session.Progress
	state    workflows.StateView
	stateErr error
	queries  []string // "name" or "name {page}"
}

func (f *fakeClient) QueryWorkflow(_ context.Context, _, _ string, name string, args ...any) (converter.EncodedValue, error) {
	q := name
	for _, a := range args {
		q += " " + mustJSONString(a)
	}
	f.queries = append(f.queries, q)
	switch name {
	case workflows.QueryProgress:
		return jsonValue{f.progress}, nil
	case workflows.QueryState:
		if f.stateErr != nil {
			return nil, f.stateErr
		}
		return jsonValue{f.state}, nil
	}
	return nil, fmt.Errorf("unexpected query %q", name)
}

func mustJSONString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// jsonValue is a query answer, decoded the way the SDK decodes one: through JSON.
type jsonValue struct{ v any }

func (j jsonValue) HasValue() bool { return true }

func (j jsonValue) Get(ptr any) error {
	b, err := json.Marshal(j.v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, ptr)
}

// recordingDisplay remembers what watch showed.
type recordingDisplay struct{ shown []string }

func (r *recordingDisplay) show(p session.Progress, agents []workflows.AgentStat) {
	r.shown = append(r.shown, progressDescription("s-1", p, agents))
}
func (r *recordingDisplay) note(msg string)           { r.shown = append(r.shown, "note: "+msg) }
func (r *recordingDisplay) finish(desc string, n int) {}

func TestWatcherShowsAgentTurnsCheaply(t *testing.T) {
	f := &fakeClient{
		progress: session.Progress{State: session.Active, ReviewsCompleted: 3, MatchesPlayed: 2},
		state: workflows.StateView{Agents: []workflows.AgentStat{{Agent: "generation", Turns: 4}, {Agent: "reflection", Turns: 3},
			{Agent: "ranking", Turns: 2}, {Agent: "evolution", Turns: 1}, {Agent: "meta-review", Turns: 0}}},
	}
	d := &recordingDisplay{}
	w := &watcher{c: f, id: "s-1", d: d}
	for range 3 {
		if err := w.poll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// The state query fails on the next round: the last counts stay.
	f.stateErr = errors.New("busy")
	f.state.Agents[0].Turns = 99
	for range 2 {
		if err := w.poll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	wantQueries := []string{
		`progress`, `state {"limit":1}`,
		`progress`,
		`progress`, `state {"limit":1}`,
		`progress`,
		`progress`, `state {"limit":1}`,
	}
	if fmt.Sprint(f.queries) != fmt.Sprint(wantQueries) {
		t.Errorf("queries %q, want %q", f.queries, wantQueries)
	}
	want := "active · 3 reviews · 2 matches · 0s · gen 4 · rev 3 · rank 2 · evo 1 · meta 0"
	if len(d.shown) != 5 {
		t.Fatalf("shown %q", d.shown)
	}
	for _, got := range d.shown {
		if got != want {
			t.Errorf("shown %q, want %q", got, want)
		}
	}
}
