package providertest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
)

// What one turn costs the fake, through the SDK and loopback HTTP: a ~2,000-token prefix
// shared by every turn (remembered by the tokenizer after the first) and a question of
// its own (tokenized each time), with the cache looked up and written. A benchmark of a
// whole session runs thousands of these; this says how much of its time is the fake's.
//
//	go test -run '^$' -bench Turn -count 5 ./internal/provider/providertest/

func BenchmarkOpenAITurn(b *testing.B) {
	f := providertest.Start(b, providertest.Options{})
	c := openAIClient(f, f.OpenAIKey())
	prefix := long("tau", 2000)
	i := 0
	for b.Loop() {
		i++
		_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model: "gpt-4.1-mini",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(prefix),
				openai.UserMessage(fmt.Sprintf("Match %d: which of hypothesis %d and hypothesis %d better explains the spread? %s", i, 2*i, 2*i+1, long(fmt.Sprint(i), 200)))},
			ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "comparison", Schema: prompt.ComparisonSchema}}},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAnthropicTurn(b *testing.B) {
	f := providertest.Start(b, providertest.Options{})
	c := anthropicClient(f, f.AnthropicKey())
	sys := []anthropic.TextBlockParam{{Text: long("tau", 2000), CacheControl: ephemeral}}
	i := 0
	for b.Loop() {
		i++
		_, err := c.Messages.New(context.Background(), anthropic.MessageNewParams{
			Model: "claude-sonnet-4-5", MaxTokens: 1024, System: sys, Tools: []anthropic.ToolUnionParam{comparisonTool()},
			ToolChoice: anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: "comparison"}},
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(
				fmt.Sprintf("Match %d: which of hypothesis %d and hypothesis %d better explains the spread? %s", i, 2*i, 2*i+1, long(fmt.Sprint(i), 200))))},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
