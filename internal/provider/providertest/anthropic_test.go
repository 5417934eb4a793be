package providertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
)

func anthropicClient(f *providertest.Server, key string) anthropic.Client {
	return anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(f.AnthropicBaseURL()), option.WithAPIKey(key), option.WithMaxRetries(0))
}

// answerTool is the comparison schema as cosci sends it: a tool named after the schema.
func answerTool(t *testing.T) anthropic.ToolUnionParam {
	t.Helper()
	var s struct {
		Properties any      `json:"properties"`
		Required   []string `json:"required"`
	}
	if err := json.Unmarshal(prompt.ComparisonSchema, &s); err != nil {
		t.Fatal(err)
	}
	return anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "comparison", Description: anthropic.String("Give your answer."),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: s.Properties, Required: s.Required}}}
}

// ephemeral is a 5-minute breakpoint. (The SDK omits a zero CacheControlEphemeralParam:
// its constructor sets the type.)
var ephemeral = anthropic.NewCacheControlEphemeralParam()

// message sends a comparison turn with the given system blocks and user blocks.
func message(t *testing.T, c anthropic.Client, model string, system []anthropic.TextBlockParam, user ...anthropic.ContentBlockParamUnion) anthropic.Usage {
	t.Helper()
	msg, err := send(c, model, system, []anthropic.MessageParam{anthropic.NewUserMessage(user...)}, answerTool(t))
	if err != nil {
		t.Fatal(err)
	}
	u := msg.Usage
	if u.InputTokens < 0 || u.CacheCreationInputTokens != u.CacheCreation.Ephemeral5mInputTokens+u.CacheCreation.Ephemeral1hInputTokens {
		t.Fatalf("usage %+v does not add up", u)
	}
	return u
}

func send(c anthropic.Client, model string, system []anthropic.TextBlockParam, msgs []anthropic.MessageParam, tools ...anthropic.ToolUnionParam) (*anthropic.Message, error) {
	return c.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model: anthropic.Model(model), MaxTokens: 1024, System: system, Messages: msgs, Tools: tools,
		ToolChoice: anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: "comparison"}},
	})
}

func total(u anthropic.Usage) int64 {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
}

func text(s string, cached bool) anthropic.TextBlockParam {
	b := anthropic.TextBlockParam{Text: s}
	if cached {
		b.CacheControl = ephemeral
	}
	return b
}

// hour is a one-hour breakpoint.
var hour = anthropic.CacheControlEphemeralParam{Type: "ephemeral", TTL: anthropic.CacheControlEphemeralTTLTTL1h}

// marked is a text block with a 5-minute breakpoint.
func marked(s string) anthropic.ContentBlockParamUnion {
	return anthropic.ContentBlockParamUnion{OfText: &anthropic.TextBlockParam{Text: s, CacheControl: ephemeral}}
}

func TestAnthropicMessage(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	c := anthropicClient(f, f.AnthropicKey())
	msg, err := send(c, "claude-sonnet-4-5", []anthropic.TextBlockParam{{Text: "Be brief."}},
		[]anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Which is better, A or B?"))}, answerTool(t))
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != anthropic.StopReasonToolUse || len(msg.Content) != 1 || msg.Content[0].Type != "tool_use" || msg.Content[0].Name != "comparison" {
		t.Fatalf("the answer %+v; want one call of the comparison tool", msg.Content)
	}
	if _, _, err := prompt.ParseComparison(msg.Content[0].Input); err != nil {
		t.Errorf("the answer %s does not parse as a comparison: %v", msg.Content[0].Input, err)
	}
	u := msg.Usage
	// The tool's definition, the system prompt, Anthropic's tool-use prompt for a forced
	// tool (313 tokens) and the message, as o200k_base counts them.
	if u.InputTokens < int64(313+providertest.Tokens("Be brief.")+providertest.Tokens("Which is better, A or B?")) {
		t.Errorf("input_tokens %d; want at least the tool prompt, the system prompt and the message", u.InputTokens)
	}
	if u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens != 0 || u.ServiceTier != "standard" {
		t.Errorf("usage %+v; want nothing cached without a breakpoint, standard tier", u)
	}
	if u.OutputTokens != int64(providertest.Tokens(string(msg.Content[0].Input))) {
		t.Errorf("output_tokens %d; want the answer's %d", u.OutputTokens, providertest.Tokens(string(msg.Content[0].Input)))
	}
}

func TestAnthropicBreakpoints(t *testing.T) {
	clock, f := startAt(t, providertest.Options{})
	c := anthropicClient(f, f.AnthropicKey())
	sys := []anthropic.TextBlockParam{text(long("tau", 1500), true)} // a breakpoint after ~1,500 tokens

	first := message(t, c, "claude-sonnet-4-5", sys, anthropic.NewTextBlock("Question one?"))
	if first.CacheReadInputTokens != 0 || first.CacheCreationInputTokens < 1024 || first.CacheCreation.Ephemeral5mInputTokens != first.CacheCreationInputTokens {
		t.Fatalf("first request %+v; want the tools and system written to the 5-minute cache, nothing read", first)
	}
	second := message(t, c, "claude-sonnet-4-5", sys, anthropic.NewTextBlock("Another question?"))
	if second.CacheReadInputTokens != first.CacheCreationInputTokens || second.CacheCreationInputTokens != 0 {
		t.Errorf("second request %+v; want the %d tokens the first wrote read, nothing written", second, first.CacheCreationInputTokens)
	}
	if second.InputTokens != total(second)-first.CacheCreationInputTokens {
		t.Errorf("input_tokens %d; want the rest after the breakpoint, %d", second.InputTokens, total(second)-first.CacheCreationInputTokens)
	}

	// A breakpoint on the message too: the system is read, the message written.
	third := message(t, c, "claude-sonnet-4-5", sys, marked("Question one?"))
	if third.CacheReadInputTokens != first.CacheCreationInputTokens || third.CacheCreationInputTokens == 0 || third.CacheReadInputTokens+third.CacheCreationInputTokens != total(third) {
		t.Errorf("third request %+v; want the system read and the rest written", third)
	}

	// Under the model's minimum: claude-haiku-4-5 caches nothing under 4,096 tokens.
	for range 2 {
		if u := message(t, c, "claude-haiku-4-5", sys, anthropic.NewTextBlock("Question one?")); u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens != 0 {
			t.Errorf("claude-haiku-4-5, a %d-token prefix: %+v; want nothing cached under 4,096", total(u), u)
		}
	}

	// After the lifetime without use, the entry is gone; a use renews it.
	clock.Advance(4 * time.Minute)
	if u := message(t, c, "claude-sonnet-4-5", sys, anthropic.NewTextBlock("Q?")); u.CacheReadInputTokens == 0 {
		t.Error("a hit 4 minutes after the last use missed")
	}
	clock.Advance(4 * time.Minute)
	if u := message(t, c, "claude-sonnet-4-5", sys, anthropic.NewTextBlock("Q?")); u.CacheReadInputTokens == 0 {
		t.Error("a hit 4 minutes after the last use (8 after the write) missed: a hit must renew the lifetime")
	}
	clock.Advance(5*time.Minute + time.Second)
	if u := message(t, c, "claude-sonnet-4-5", sys, anthropic.NewTextBlock("Q?")); u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens == 0 {
		t.Errorf("after more than 5 minutes without use: %+v; want a miss that writes again", u)
	}

	// A one-hour breakpoint outlives five minutes.
	sys1h := []anthropic.TextBlockParam{{Text: long("synuclein", 1500), CacheControl: hour}}
	if u := message(t, c, "claude-sonnet-4-5", sys1h, anthropic.NewTextBlock("Q?")); u.CacheCreation.Ephemeral1hInputTokens == 0 {
		t.Errorf("a 1h breakpoint wrote %+v; want it under ephemeral_1h_input_tokens", u.CacheCreation)
	}
	clock.Advance(30 * time.Minute)
	if u := message(t, c, "claude-sonnet-4-5", sys1h, anthropic.NewTextBlock("Q?")); u.CacheReadInputTokens == 0 {
		t.Error("a 1h breakpoint missed after 30 minutes")
	}
	s := f.Stats()
	if s.Anthropic.CacheRead == 0 || s.Anthropic.CacheWrite == 0 || s.Anthropic.CachedShare() <= 0 {
		t.Errorf("stats %+v; want reads, writes and a share of cached tokens", s.Anthropic)
	}
}

func TestAnthropicBreakpointRules(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	c := anthropicClient(f, f.AnthropicKey())
	five := []anthropic.TextBlockParam{text("one", true), text("two", true), text("three", true), text("four", true)}
	_, err := send(c, "claude-sonnet-4-5", five, []anthropic.MessageParam{anthropic.NewUserMessage(marked("five"))}, answerTool(t))
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.RawJSON(), "A maximum of 4 blocks with cache_control may be provided. Found 5.") {
		t.Errorf("five breakpoints: %v; want a 400 naming the limit", err)
	}
	if _, err := send(c, "claude-sonnet-4-5", five, []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("no fifth"))}, answerTool(t)); err != nil {
		t.Errorf("four breakpoints: %v; want them taken", err)
	}
	longAfterShort := []anthropic.TextBlockParam{text("short", true), {Text: "long", CacheControl: hour}}
	if _, err := send(c, "claude-sonnet-4-5", longAfterShort, []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Q?"))}, answerTool(t)); !errors.As(err, &apiErr) || apiErr.StatusCode != 400 {
		t.Errorf("a 1h breakpoint after a 5m one: %v; want a 400", err)
	}
	if s := f.Stats(); s.Refused != 2 || s.Anthropic.Requests != 1 {
		t.Errorf("refused %d, answered %d; want 2 and 1", s.Refused, s.Anthropic.Requests)
	}
}

// A tool loop's growing conversation: each turn marks its last block; the next turn reads
// what the last one wrote (found by the lookback) and writes only what it added.
func TestAnthropicGrowingConversation(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	c := anthropicClient(f, f.AnthropicKey())
	sys := []anthropic.TextBlockParam{{Text: long("tau", 1200)}}
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(marked("Start."))}
	var prev int64
	for turn := range 4 {
		m, err := send(c, "claude-sonnet-4-5", sys, msgs, answerTool(t))
		if err != nil {
			t.Fatal(err)
		}
		u := m.Usage
		if u.CacheReadInputTokens != prev || u.InputTokens != 0 || total(u) <= prev {
			t.Errorf("turn %d: %+v; want %d read (the last turn's prefix), the rest written", turn, u, prev)
		}
		prev = total(u)
		// The last block loses its mark; the turn's reply and a new question come after.
		last := msgs[len(msgs)-1]
		last.Content[len(last.Content)-1].OfText.CacheControl = anthropic.CacheControlEphemeralParam{}
		msgs = append(msgs, anthropic.NewAssistantMessage(anthropic.NewTextBlock("Noted: "+long("reply", 100))),
			anthropic.NewUserMessage(marked("Go on.")))
	}
}

// Changing tool_choice keeps the tools and system cached but not the messages.
func TestAnthropicToolChoiceInvalidatesMessagesOnly(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	c := anthropicClient(f, f.AnthropicKey())
	sys := []anthropic.TextBlockParam{text(long("tau", 1200), true)}
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(marked(long("question", 1200)))}
	tools := []anthropic.ToolUnionParam{answerTool(t)}
	forced := anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: "comparison"}}
	anyTool := anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
	var usages []anthropic.Usage
	for _, choice := range []anthropic.ToolChoiceUnionParam{forced, forced, anyTool} {
		m, err := c.Messages.New(context.Background(), anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 100, System: sys, Messages: msgs, Tools: tools, ToolChoice: choice})
		if err != nil {
			t.Fatal(err)
		}
		usages = append(usages, m.Usage)
	}
	if usages[1].CacheReadInputTokens != total(usages[1]) {
		t.Errorf("the same request again: %+v; want all of it read", usages[1])
	}
	if r := usages[2].CacheReadInputTokens; r == 0 || r >= usages[1].CacheReadInputTokens || usages[2].CacheCreationInputTokens == 0 {
		t.Errorf("tool_choice changed: %+v; want the tools and system read, the messages written again", usages[2])
	}
}

// Automatic caching: the top-level cache_control marks the last block.
func TestAnthropicAutomaticCaching(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	c := anthropicClient(f, f.AnthropicKey())
	params := anthropic.MessageNewParams{Model: "claude-sonnet-4-6", MaxTokens: 100, CacheControl: ephemeral,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(long("tau", 1500)))}}
	first, err := c.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if first.Usage.CacheCreationInputTokens != total(first.Usage) || second.Usage.CacheReadInputTokens != total(second.Usage) {
		t.Errorf("automatic caching: %+v then %+v; want all written, then all read", first.Usage, second.Usage)
	}
	if second.Content[0].Type != "text" || second.StopReason != anthropic.StopReasonEndTurn {
		t.Errorf("a turn without an answer tool got %+v; want prose", second.Content)
	}
}

func TestAnthropicRefusesAWrongKey(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	_, err := send(anthropicClient(f, "sk-ant-wrong"), "claude-sonnet-4-5", nil, []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}, answerTool(t))
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Type() != "authentication_error" {
		t.Errorf("a wrong key: %v; want a 401 authentication_error", err)
	}
	// The OpenAI key is not an Anthropic key.
	_, err = send(anthropicClient(f, f.OpenAIKey()), "claude-sonnet-4-5", nil, []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}, answerTool(t))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
		t.Errorf("the OpenAI key on Anthropic: %v; want a 401", err)
	}
	if s := f.Stats(); s.Unauthorized != 2 || s.Anthropic.Requests != 0 {
		t.Errorf("unauthorized %d, answered %d; want 2 and 0", s.Unauthorized, s.Anthropic.Requests)
	}
}

// AnthropicTokenScale stands in for Claude's tokenizer counting higher: a prefix under
// the minimum by o200k_base can reach it.
func TestAnthropicTokenScale(t *testing.T) {
	sys := []anthropic.TextBlockParam{text(long("tau", 650), true)} // ~850 o200k tokens with the tool
	for _, tc := range []struct {
		scale  float64
		cached bool
	}{{1, false}, {1.3, true}} {
		f := providertest.Start(t, providertest.Options{AnthropicTokenScale: tc.scale})
		u := message(t, anthropicClient(f, f.AnthropicKey()), "claude-sonnet-4-5", sys, anthropic.NewTextBlock("Q?"))
		if (u.CacheCreationInputTokens > 0) != tc.cached {
			t.Errorf("scale %g: %+v; want the prefix cached: %v", tc.scale, u, tc.cached)
		}
	}
}

// A breakpoint on a tool caches the tools (the start of the prompt).
func TestAnthropicToolBreakpoint(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	c := anthropicClient(f, f.AnthropicKey())
	tool := anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "literature__search", Description: anthropic.String(long("search", 1200)),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"query": map[string]any{"type": "string"}}}, CacheControl: ephemeral}}
	var usages []anthropic.Usage
	for _, q := range []string{"First?", "Second?"} {
		m, err := send(c, "claude-sonnet-4-5", nil, []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(q))}, tool, answerTool(t))
		if err != nil {
			t.Fatal(err)
		}
		usages = append(usages, m.Usage)
	}
	if w := usages[0].CacheCreationInputTokens; w < 1024 || usages[1].CacheReadInputTokens != w || usages[1].CacheCreationInputTokens != 0 {
		t.Errorf("a breakpoint on the first tool: %+v then %+v; want the tool written, then read", usages[0], usages[1])
	}
}
