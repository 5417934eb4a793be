package providertest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
)

var start = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// startAt starts the fake with o on a fake clock set at start, and returns the clock, for
// the test to move, with the fake.
func startAt(t *testing.T, o providertest.Options) (*providertest.FakeClock, *providertest.Server) {
	clock := providertest.NewFakeClock(start)
	o.Clock = clock
	return clock, providertest.Start(t, o)
}

func openAIClient(f *providertest.Server, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(f.OpenAIBaseURL()), option.WithAPIKey(key), option.WithMaxRetries(0))
}

// long is text of about n tokens that differs for each seed word.
func long(seed string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < 5*n; i++ {
		b.WriteString(seed)
		b.WriteString(" and the ")
		b.WriteString([]string{"kinase", "synapse", "microglia", "exosome", "lysosome"}[i%5])
		b.WriteString(" pathway. ")
	}
	return b.String()
}

// chat sends a comparison turn: a system prompt and a user message, with the answer schema.
func chat(t *testing.T, c openai.Client, system, user, cacheKey string) *openai.ChatCompletion {
	t.Helper()
	params := openai.ChatCompletionNewParams{
		Model:    shared.ChatModel("gpt-4.1-mini"),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage(user)},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "comparison", Strict: openai.Bool(true), Schema: prompt.ComparisonSchema},
		}},
	}
	if cacheKey != "" {
		params.PromptCacheKey = openai.String(cacheKey)
	}
	resp, err := c.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestOpenAIChatCompletion(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	resp := chat(t, openAIClient(f, f.OpenAIKey()), "Be brief.", "Which is better, A or B?", "")
	if len(resp.Choices) != 1 || resp.Choices[0].FinishReason != "stop" {
		t.Fatalf("choices %+v; want one that stopped", resp.Choices)
	}
	winner, _, err := prompt.ParseComparison([]byte(resp.Choices[0].Message.Content))
	if err != nil || (winner != "A" && winner != "B") {
		t.Errorf("the answer %q does not parse as a comparison: %v", resp.Choices[0].Message.Content, err)
	}
	u := resp.Usage
	// What the request carries, counted with o200k_base: the answer schema, two framed
	// messages (3 tokens and the role each) and the reply's priming (3 tokens).
	schema := `{"name":"comparison","schema":` + string(compactJSON(t, prompt.ComparisonSchema)) + `}`
	want := providertest.Tokens(schema) + 3 + providertest.Tokens("system") + providertest.Tokens("Be brief.") +
		3 + providertest.Tokens("user") + providertest.Tokens("Which is better, A or B?") + 3
	if u.PromptTokens != int64(want) {
		t.Errorf("prompt_tokens %d; want %d", u.PromptTokens, want)
	}
	if u.CompletionTokens != int64(providertest.Tokens(resp.Choices[0].Message.Content)) || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage %+v does not add up", u)
	}
	if u.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("a prompt of %d tokens had %d cached; nothing under 1,024 is", u.PromptTokens, u.PromptTokensDetails.CachedTokens)
	}
}

func TestOpenAIPromptCache(t *testing.T) {
	shared := long("tau", 1500) // a prefix of ~1,500 tokens, the same in every request below
	clock, f := startAt(t, providertest.Options{})
	c := openAIClient(f, f.OpenAIKey())

	first := chat(t, c, shared, "Question one?", "")
	if got := first.Usage.PromptTokensDetails.CachedTokens; got != 0 {
		t.Fatalf("the first request had %d cached tokens; want 0", got)
	}
	// The same request again: all of it is cached, rounded down to 1,024 + k·128.
	again := chat(t, c, shared, "Question one?", "")
	n := again.Usage.PromptTokens
	if want := 1024 + (n-1024)/128*128; again.Usage.PromptTokensDetails.CachedTokens != want {
		t.Errorf("an identical request of %d tokens had %d cached; want %d", n, again.Usage.PromptTokensDetails.CachedTokens, want)
	}
	// Another question after the same prefix: the shared part is cached, not the rest.
	other := chat(t, c, shared, "A different question, longer than the first one was?", "")
	cached := other.Usage.PromptTokensDetails.CachedTokens
	if cached < 1024 || cached%128 != 0 || cached > other.Usage.PromptTokens-int64(providertest.Tokens("A different question, longer than the first one was?")) {
		t.Errorf("a request sharing its prefix had %d of %d tokens cached; want a multiple of 128, at least 1,024, not the new question", cached, other.Usage.PromptTokens)
	}

	// A use within the lifetime renews it; past the lifetime without use, it is gone.
	clock.Advance(4 * time.Minute)
	if got := chat(t, c, shared, "Question one?", "").Usage.PromptTokensDetails.CachedTokens; got == 0 {
		t.Error("a hit 4 minutes after the last use missed")
	}
	clock.Advance(4 * time.Minute)
	if got := chat(t, c, shared, "Question one?", "").Usage.PromptTokensDetails.CachedTokens; got == 0 {
		t.Error("a hit 4 minutes after the last use (8 after the write) missed: a hit must renew the lifetime")
	}
	clock.Advance(providertest.DefaultOpenAICacheTTL + time.Second)
	if got := chat(t, c, shared, "Question one?", "").Usage.PromptTokensDetails.CachedTokens; got != 0 {
		t.Errorf("%d tokens cached after more than the lifetime without use; want 0", got)
	}

	// Under the minimum: never cached.
	short := "A short system prompt."
	chat(t, c, short, "Question?", "")
	if got := chat(t, c, short, "Question?", ""); got.Usage.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("a prompt of %d tokens had %d cached; nothing under 1,024 is", got.Usage.PromptTokens, got.Usage.PromptTokensDetails.CachedTokens)
	}

	s := f.Stats()
	if s.OpenAI.Requests != 8 || s.OpenAI.CacheRead == 0 || s.OpenAI.CachedShare() <= 0 || s.OpenAI.CachedShare() >= 1 {
		t.Errorf("stats %+v; want 8 requests and a share of cached tokens between 0 and 1", s.OpenAI)
	}
}

// prompt_cache_key narrows the cache: a request hits only what requests with the same key
// (or, without a key, other requests without one) cached.
func TestOpenAIPromptCacheKey(t *testing.T) {
	shared := long("amyloid", 1300)
	_, f := startAt(t, providertest.Options{})
	c := openAIClient(f, f.OpenAIKey())
	chat(t, c, shared, "Q?", "session-1/round-1")
	for _, tc := range []struct {
		key string
		hit bool
	}{{"session-1/round-1", true}, {"session-2/round-1", false}, {"", false}} {
		got := chat(t, c, shared, "Q?", tc.key).Usage.PromptTokensDetails.CachedTokens
		if (got > 0) != tc.hit {
			t.Errorf("key %q: %d tokens cached; want a hit: %v", tc.key, got, tc.hit)
		}
	}
}

// prompt_cache_retention "24h" keeps a prefix for a day instead of minutes.
func TestOpenAIExtendedRetention(t *testing.T) {
	shared := long("prion", 1300)
	clock, f := startAt(t, providertest.Options{})
	c := openAIClient(f, f.OpenAIKey())
	send := func() int64 {
		resp, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model: "gpt-5.1", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(shared)},
			PromptCacheRetention: openai.ChatCompletionNewParamsPromptCacheRetention("24h"),
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Usage.PromptTokensDetails.CachedTokens
	}
	send()
	clock.Advance(3 * time.Hour)
	if got := send(); got == 0 {
		t.Error("a prefix kept for 24 hours missed after 3 hours")
	}
}

func TestOpenAIToolCall(t *testing.T) {
	f := providertest.Start(t, providertest.Options{CallTools: true})
	c := openAIClient(f, f.OpenAIKey())
	tool := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "literature__search",
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}, "required": []string{"query"}}})
	params := openai.ChatCompletionNewParams{Model: "gpt-4.1-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Find sources.")},
		Tools: []openai.ChatCompletionToolUnionParam{tool}}
	resp, err := c.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if ch := resp.Choices[0]; ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].Function.Name != "literature__search" {
		t.Errorf("a turn offering a tool got %+v; want a call of it", ch)
	}
	params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
	resp, err = c.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if ch := resp.Choices[0]; ch.FinishReason != "stop" || len(ch.Message.ToolCalls) != 0 {
		t.Errorf("with tool_choice none the fake answered %+v; want no call", ch)
	}
}

func TestOpenAIEmbeddings(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	c := openAIClient(f, f.OpenAIKey())
	for _, format := range []openai.EmbeddingNewParamsEncodingFormat{"", openai.EmbeddingNewParamsEncodingFormatBase64} {
		resp, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{
			Model: "text-embedding-3-small", EncodingFormat: format,
			Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"tau seeds spread", "exosomes carry tau"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Data) != 2 || len(resp.Data[0].Embedding) == 0 || resp.Data[1].Index != 1 {
			t.Errorf("format %q: %d embeddings; want 2, in order", format, len(resp.Data))
		}
		if want := providertest.Tokens("tau seeds spread") + providertest.Tokens("exosomes carry tau"); resp.Usage.PromptTokens != int64(want) {
			t.Errorf("format %q: prompt_tokens %d; want %d", format, resp.Usage.PromptTokens, want)
		}
	}
	if s := f.Stats(); s.Embeddings.Texts != 4 || s.Embeddings.PerText["tau seeds spread"] != 2 {
		t.Errorf("embeddings stats %+v; want 4 texts, each twice", s.Embeddings)
	}
}

func TestOpenAIRefusesAWrongKey(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	for _, key := range []string{"sk-wrong-key-0000000000", ""} {
		c := openAIClient(f, key)
		_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model: "gpt-4.1-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Type != "invalid_request_error" {
			t.Errorf("key %q: %v; want a 401 invalid_request_error", key, err)
		}
		if key != "" && (apiErr == nil || apiErr.Code != "invalid_api_key" || strings.Contains(apiErr.Message, key)) {
			t.Errorf("key %q: %+v; want code invalid_api_key and the key masked", key, apiErr)
		}
	}
	if s := f.Stats(); s.Unauthorized != 2 || s.OpenAI.Requests != 0 {
		t.Errorf("unauthorized %d, answered %d; want 2 and 0", s.Unauthorized, s.OpenAI.Requests)
	}
}
