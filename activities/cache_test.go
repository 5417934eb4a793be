package activities

import (
	"context"
	"testing"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// asking is the offline simulator, keeping the cache each question asked for.
type asking struct {
	simulator.Offline
	caches []research.Cache
}

func (m *asking) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	m.caches = append(m.caches, q.Cache)
	return simulator.Answer(ctx, m, q)
}

// TestBatchedTurnsCacheLong: a turn whose request goes in a batch, whether recorded for
// it (a recorder in the context) or run from it (Turn.Batch), asks for the long cache
// lifetime; any other turn for the short one.
func TestBatchedTurnsCacheLong(t *testing.T) {
	recording := context.WithValue(context.Background(), modelKey{}, Model(&simulator.Offline{}))
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		batch string
		want  bool
	}{
		{"a direct turn", context.Background(), "", false},
		{"recorded for a batch", recording, "", true},
		{"run from a batch", context.Background(), "round-1-reviews-1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tu := turnOf("generate-h-0001")
			tu.Batch = tc.batch
			_, c := cached(tu, "generation", prompt.Text{Prompt: "SHARED|OWN", Prefix: 7}, true, batching(tc.ctx, tu))
			if c.Long != tc.want || c.Prefix != 7 || !c.Breakpoints || c.Key == "" {
				t.Errorf("cache %+v; want Long %v, the prefix, breakpoints and a key", c, tc.want)
			}
		})
	}
}

// TestTurnRecordsItsCacheLifetime: the turn's record names the cache lifetime the turn
// asked its provider for: Anthropic's 5 minutes for a direct turn, an hour for a batched
// one; OpenAI's extended retention for a batched turn on a model that offers it; nothing
// on the offline provider, which caches nothing.
func TestTurnRecordsItsCacheLifetime(t *testing.T) {
	for _, tc := range []struct {
		name            string
		provider, model string
		batch           string
		want            string
	}{
		{"anthropic, direct", "anthropic", "claude-sonnet-5-5", "", "5m"},
		{"anthropic, batched", "anthropic", "claude-sonnet-5-5", "round-1-generation-1", "1h"},
		{"openai gpt-5.4, batched", "openai", "gpt-5.4", "round-1-generation-1", "24h"},
		{"openai gpt-6, direct", "openai", "gpt-6-sol", "", "30m"},
		{"offline", "offline", "", "round-1-generation-1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &asking{}
			env, a := newActivities(t, m)
			a.Models[tc.provider] = m
			in := generateInput("generate-h-0001")
			in.Provider, in.Model, in.Batch = tc.provider, tc.model, tc.batch
			must(t, run(t, env, a.Generate, in, nil))
			rec, ok, err := a.Store.Turn(t.Context(), "s-1", "generate-h-0001")
			if err != nil || !ok {
				t.Fatalf("no record: %v", err)
			}
			if rec.Cache != tc.want {
				t.Errorf("the record's cache = %q, want %q", rec.Cache, tc.want)
			}
			if len(m.caches) != 1 || m.caches[0].Long != (tc.batch != "") {
				t.Errorf("the model was asked %+v; want one question, Long %v", m.caches, tc.batch != "")
			}
		})
	}
}
