package providertest_test

import (
	"context"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"

	"github.com/cosci-dev/cosci/internal/provider/providertest"
)

// Requests in flight: the Answer hook holds every turn until all of them have arrived, so
// all must be in flight at once, and the counter must say so, and come back to zero.
func TestInFlightAndConcurrentTurns(t *testing.T) {
	const n = 8
	var arrived sync.WaitGroup
	arrived.Add(n)
	f := providertest.Start(t, providertest.Options{Answer: func(turn providertest.Turn) providertest.Reply {
		arrived.Done()
		arrived.Wait()
		return turn.Default
	}})
	oc, ac := openAIClient(f, f.OpenAIKey()), anthropicClient(f, f.AnthropicKey())
	var done sync.WaitGroup
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			var err error
			if i%2 == 0 {
				_, err = oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "gpt-4.1-mini",
					Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(long("tau", 1200))}})
			} else {
				_, err = ac.Messages.New(context.Background(), anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 100,
					Messages: []anthropic.MessageParam{anthropic.NewUserMessage(marked(long("tau", 1200)))}})
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	done.Wait()
	s := f.Stats()
	if s.MaxInFlight != n || s.InFlight != 0 {
		t.Errorf("max in flight %d, in flight now %d; want %d and 0", s.MaxInFlight, s.InFlight, n)
	}
	if s.OpenAI.Requests != n/2 || s.Anthropic.Requests != n/2 || s.Requests["POST /v1/chat/completions"] != n/2 || s.Keys["Bearer "+f.OpenAIKey()] != n/2 {
		t.Errorf("stats %+v; want %d turns on each API", s, n/2)
	}
}
