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

// The Answer hook sees the turn (agent from the schema, system, messages) and decides the
// answer and its output tokens; the usage reports them.
func TestAnswerHook(t *testing.T) {
	var turns []providertest.Turn
	var mu sync.Mutex
	f := providertest.Start(t, providertest.Options{Answer: func(turn providertest.Turn) providertest.Reply {
		mu.Lock()
		turns = append(turns, turn)
		mu.Unlock()
		return providertest.Reply{Text: `{"winner":"B","reasoning":"the hook says so"}`, OutputTokens: 777}
	}})
	oa := chat(t, openAIClient(f, f.OpenAIKey()), "Be brief.", "A or B?", "")
	if oa.Choices[0].Message.Content != `{"winner":"B","reasoning":"the hook says so"}` || oa.Usage.CompletionTokens != 777 {
		t.Errorf("openai: %q, %d completion tokens; want the hook's answer and 777", oa.Choices[0].Message.Content, oa.Usage.CompletionTokens)
	}
	an, err := send(anthropicClient(f, f.AnthropicKey()), "claude-sonnet-4-5", []anthropic.TextBlockParam{{Text: "Be brief."}},
		[]anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("A or B?"))}, answerTool(t))
	if err != nil {
		t.Fatal(err)
	}
	if string(an.Content[0].Input) != `{"winner":"B","reasoning":"the hook says so"}` || an.Usage.OutputTokens != 777 {
		t.Errorf("anthropic: %s, %d output tokens; want the hook's answer and 777", an.Content[0].Input, an.Usage.OutputTokens)
	}
	for _, turn := range turns {
		if turn.Agent != providertest.AgentComparison || turn.System != "Be brief." || len(turn.Messages) == 0 || turn.Messages[len(turn.Messages)-1].Text != "A or B?" ||
			turn.PromptTokens == 0 || turn.Default.Text == "" {
			t.Errorf("%s turn %+v; want a comparison with its system, messages, prompt tokens and the default answer", turn.Provider, turn)
		}
	}
	if s := f.Stats(); s.OpenAI.Output != 777 || s.Anthropic.Output != 777 {
		t.Errorf("output tokens %d and %d; want 777 each", s.OpenAI.Output, s.Anthropic.Output)
	}
}
