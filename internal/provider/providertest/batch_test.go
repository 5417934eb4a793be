package providertest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
)

// OpenAI batches: a JSONL input file, a batch, its status, its output and error files.

// openAIBatchFile is a batch input of n comparison requests sharing a long prefix, with
// custom_ids match-0 … match-(n-1).
func openAIBatchFile(t *testing.T, n int) []byte {
	t.Helper()
	var lines bytes.Buffer
	for i := range n {
		body, err := json.Marshal(openai.ChatCompletionNewParams{
			Model:    "gpt-4.1-mini",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(long("tau", 1300)), openai.UserMessage(fmt.Sprintf("Match %d: A or B?", i))},
			ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "comparison", Schema: prompt.ComparisonSchema},
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		line, _ := json.Marshal(map[string]any{"custom_id": fmt.Sprintf("match-%d", i), "method": "POST", "url": "/v1/chat/completions", "body": json.RawMessage(body)})
		lines.Write(line)
		lines.WriteByte('\n')
	}
	return lines.Bytes()
}

func submitOpenAI(t *testing.T, c openai.Client, input []byte, endpoint openai.BatchNewParamsEndpoint) *openai.Batch {
	t.Helper()
	ctx := context.Background()
	f, err := c.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader(input), "batch.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	if f.Purpose != "batch" || f.Bytes != int64(len(input)) {
		t.Fatalf("uploaded file %+v; want purpose batch and %d bytes", f, len(input))
	}
	b, err := c.Batches.New(ctx, openai.BatchNewParams{InputFileID: f.ID, Endpoint: endpoint, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != openai.BatchStatusValidating || b.InputFileID != f.ID {
		t.Fatalf("a new batch %+v; want validating, with its input file", b)
	}
	return b
}

func getOpenAI(t *testing.T, c openai.Client, id string) *openai.Batch {
	t.Helper()
	b, err := c.Batches.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// outputLine is a line of an output or error file.
type outputLine struct {
	ID       string `json:"id"`
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code, Message string
	} `json:"error"`
}

// fileLines reads an output or error file, keeping the order of its lines.
func fileLines(t *testing.T, c openai.Client, id string) []outputLine {
	t.Helper()
	if id == "" {
		return nil
	}
	resp, err := c.Files.Content(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []outputLine
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l outputLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("a line of file %s is not JSON: %v", id, err)
		}
		out = append(out, l)
	}
	return out
}

func TestOpenAIBatch(t *testing.T) {
	clock, f := startAt(t, providertest.Options{BatchDelay: 10 * time.Minute, Seed: 1,
		FailBatchRequest: func(r providertest.BatchRequest) bool { return r.CustomID == "match-3" }})
	c := openAIClient(f, f.OpenAIKey())
	b := submitOpenAI(t, c, openAIBatchFile(t, 8), openai.BatchNewParamsEndpointV1ChatCompletions)

	for _, step := range []struct {
		after time.Duration
		want  openai.BatchStatus
	}{{30 * time.Second, "validating"}, {2 * time.Minute, "in_progress"}, {6 * time.Minute, "in_progress"}, {time.Minute, "finalizing"}, {time.Minute, "completed"}} {
		clock.Advance(step.after)
		if got := getOpenAI(t, c, b.ID); got.Status != step.want {
			t.Fatalf("%s after creation: status %s; want %s", clock.Now().Sub(start), got.Status, step.want)
		}
	}
	b = getOpenAI(t, c, b.ID)
	if rc := b.RequestCounts; rc.Total != 8 || rc.Completed != 7 || rc.Failed != 1 || b.OutputFileID == "" || b.ErrorFileID == "" || b.CompletedAt == 0 {
		t.Fatalf("a completed batch %+v; want 8 requests, 7 completed, 1 failed, both files", b)
	}

	out := fileLines(t, c, b.OutputFileID)
	var order []string
	var cached int64
	for _, l := range out {
		order = append(order, l.CustomID)
		if l.Response == nil || l.Response.StatusCode != 200 || l.Error != nil {
			t.Errorf("output line %+v; want a 200 response", l)
			continue
		}
		var cc openai.ChatCompletion
		if err := json.Unmarshal(l.Response.Body, &cc); err != nil {
			t.Fatal(err)
		}
		if _, _, err := prompt.ParseComparison([]byte(cc.Choices[0].Message.Content)); err != nil {
			t.Errorf("%s: the answer does not parse: %v", l.CustomID, err)
		}
		cached += cc.Usage.PromptTokensDetails.CachedTokens
	}
	sorted := slices.Sorted(slices.Values(order))
	if want := []string{"match-0", "match-1", "match-2", "match-4", "match-5", "match-6", "match-7"}; !slices.Equal(sorted, want) {
		t.Errorf("the output file has %v; want %v", sorted, want)
	}
	if slices.Equal(order, sorted) {
		t.Errorf("the output file kept the input order %v; the real API does not, and the fake shuffles", order)
	}
	if cached == 0 || b.Usage.InputTokensDetails.CachedTokens != cached {
		t.Errorf("batch usage %+v, cached tokens in the results %d; want the requests after the first to hit the shared prefix", b.Usage, cached)
	}
	errs := fileLines(t, c, b.ErrorFileID)
	if len(errs) != 1 || errs[0].CustomID != "match-3" || errs[0].Response == nil || errs[0].Response.StatusCode != 500 {
		t.Errorf("the error file %+v; want match-3 with a 500", errs)
	}
	s := f.Stats()
	if s.OpenAIBatch.Requests != 7 || s.OpenAI.Requests != 0 || s.Batches["openai/completed"] != 1 {
		t.Errorf("stats: batch %+v, ordinary %+v, batches %v; want 7 turns in a completed batch", s.OpenAIBatch, s.OpenAI, s.Batches)
	}
}

func TestOpenAIBatchCancel(t *testing.T) {
	clock, f := startAt(t, providertest.Options{BatchDelay: time.Hour, CancelDelay: time.Minute})
	c := openAIClient(f, f.OpenAIKey())
	b := submitOpenAI(t, c, openAIBatchFile(t, 3), openai.BatchNewParamsEndpointV1ChatCompletions)
	clock.Advance(10 * time.Minute)
	got, err := c.Batches.Cancel(context.Background(), b.ID)
	if err != nil || got.Status != openai.BatchStatusCancelling {
		t.Fatalf("cancel: %+v, %v; want cancelling", got, err)
	}
	if got := getOpenAI(t, c, b.ID); got.Status != openai.BatchStatusCancelling {
		t.Errorf("within the cancel delay: %s; want cancelling", got.Status)
	}
	clock.Advance(time.Hour) // past the batch's own delay too: cancelled, not completed
	got = getOpenAI(t, c, b.ID)
	if got.Status != openai.BatchStatusCancelled || got.CancelledAt == 0 || got.OutputFileID != "" || got.RequestCounts.Completed != 0 {
		t.Fatalf("after the cancel delay: %+v; want cancelled, no output", got)
	}
	for _, l := range fileLines(t, c, got.ErrorFileID) {
		if l.Error == nil || l.Error.Code != "batch_cancelled" {
			t.Errorf("error line %+v; want batch_cancelled", l)
		}
	}
	if _, err := c.Batches.Cancel(context.Background(), b.ID); err == nil {
		t.Error("cancelling a cancelled batch succeeded; want an error")
	}
	if s := f.Stats(); s.OpenAIBatch.Requests != 0 || s.Batches["openai/cancelled"] != 1 {
		t.Errorf("stats %+v, %v; want nothing answered, one cancelled batch", s.OpenAIBatch, s.Batches)
	}
}

func TestOpenAIBatchBadInput(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	c := openAIClient(f, f.OpenAIKey())
	input := []byte(`{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4.1-mini","messages":[]}}
{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4.1-mini","messages":[]}}
{"custom_id":"b","method":"POST","url":"/v1/embeddings","body":{"model":"gpt-4.1-mini"}}
not json
`)
	b := submitOpenAI(t, c, input, openai.BatchNewParamsEndpointV1ChatCompletions)
	got := getOpenAI(t, c, b.ID)
	if got.Status != openai.BatchStatusFailed || len(got.Errors.Data) != 3 {
		t.Fatalf("a batch with bad lines: %+v; want failed with 3 errors", got)
	}
	var codes []string
	for _, e := range got.Errors.Data {
		codes = append(codes, fmt.Sprintf("%d:%s", e.Line, e.Code))
	}
	if want := []string{"2:duplicate_custom_id", "3:mismatched_endpoint", "4:invalid_json_line"}; !slices.Equal(codes, want) {
		t.Errorf("errors %v; want %v", codes, want)
	}
	// A batch over a file that does not exist is refused at once.
	_, err := c.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: "file-nope", Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: "24h"})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
		t.Errorf("a batch of a missing file: %v; want a 404", err)
	}
}

// The requests of a batch that fail as ordinary requests would come back in the error
// file with the status and body an ordinary request gets.
func TestOpenAIBatchRequestRefused(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	c := openAIClient(f, f.OpenAIKey())
	input := []byte(`{"custom_id":"empty","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4.1-mini","messages":[]}}
{"custom_id":"fine","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4.1-mini","messages":[{"role":"user","content":"hi"}]}}
`)
	b := getOpenAI(t, c, submitOpenAI(t, c, input, openai.BatchNewParamsEndpointV1ChatCompletions).ID)
	if b.Status != openai.BatchStatusCompleted || b.RequestCounts.Completed != 1 || b.RequestCounts.Failed != 1 {
		t.Fatalf("batch %+v; want completed, 1 completed and 1 failed", b)
	}
	errs := fileLines(t, c, b.ErrorFileID)
	if len(errs) != 1 || errs[0].CustomID != "empty" || errs[0].Response.StatusCode != 400 || !bytes.Contains(errs[0].Response.Body, []byte("invalid_request_error")) {
		t.Errorf("error file %+v; want the empty request refused with a 400", errs)
	}
}

func TestOpenAIEmbeddingsBatch(t *testing.T) {
	f := providertest.Start(t, providertest.Options{}) // BatchDelay 0: done at the first look
	c := openAIClient(f, f.OpenAIKey())
	input := []byte(`{"custom_id":"h-1","method":"POST","url":"/v1/embeddings","body":{"model":"text-embedding-3-small","input":["tau seeds spread"]}}
{"custom_id":"h-2","method":"POST","url":"/v1/embeddings","body":{"model":"text-embedding-3-small","input":["exosomes carry tau"]}}
`)
	b := getOpenAI(t, c, submitOpenAI(t, c, input, openai.BatchNewParamsEndpointV1Embeddings).ID)
	if b.Status != openai.BatchStatusCompleted {
		t.Fatalf("status %s; want completed", b.Status)
	}
	for _, l := range fileLines(t, c, b.OutputFileID) {
		var e openai.CreateEmbeddingResponse
		if err := json.Unmarshal(l.Response.Body, &e); err != nil || len(e.Data) != 1 || len(e.Data[0].Embedding) == 0 {
			t.Errorf("%s: %s; want one embedding", l.CustomID, l.Response.Body)
		}
	}
}

// Anthropic message batches.

func anthropicBatchRequests(n int, bad string) []anthropic.MessageBatchNewParamsRequest {
	sys := []anthropic.TextBlockParam{{Text: long("tau", 1300), CacheControl: hour}}
	var reqs []anthropic.MessageBatchNewParamsRequest
	for i := range n {
		id := fmt.Sprintf("q-%d", i)
		p := anthropic.MessageBatchNewParamsRequestParams{
			Model: "claude-sonnet-4-5", MaxTokens: 1024, System: sys,
			Messages:   []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(fmt.Sprintf("Match %d: A or B?", i)))},
			Tools:      []anthropic.ToolUnionParam{comparisonTool()},
			ToolChoice: anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: "comparison"}},
		}
		if id == bad { // refused when processed: five breakpoints
			p.System = []anthropic.TextBlockParam{text("1", true), text("2", true), text("3", true), text("4", true), text("5", true)}
		}
		reqs = append(reqs, anthropic.MessageBatchNewParamsRequest{CustomID: id, Params: p})
	}
	return reqs
}

func comparisonTool() anthropic.ToolUnionParam {
	var s struct {
		Properties any      `json:"properties"`
		Required   []string `json:"required"`
	}
	_ = json.Unmarshal(prompt.ComparisonSchema, &s)
	return anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "comparison", InputSchema: anthropic.ToolInputSchemaParam{Properties: s.Properties, Required: s.Required}}}
}

func results(t *testing.T, c anthropic.Client, id string) []anthropic.MessageBatchIndividualResponse {
	t.Helper()
	stream := c.Messages.Batches.ResultsStreaming(context.Background(), id, anthropic.MessageBatchResultsParams{})
	defer stream.Close()
	var out []anthropic.MessageBatchIndividualResponse
	for stream.Next() {
		out = append(out, stream.Current())
	}
	if err := stream.Err(); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return out
}

func TestAnthropicBatch(t *testing.T) {
	clock, f := startAt(t, providertest.Options{BatchDelay: 30 * time.Minute, Seed: 2,
		FailBatchRequest: func(r providertest.BatchRequest) bool { return r.CustomID == "q-2" }})
	c := anthropicClient(f, f.AnthropicKey())
	ctx := context.Background()
	b, err := c.Messages.Batches.New(ctx, anthropic.MessageBatchNewParams{Requests: anthropicBatchRequests(7, "q-5")})
	if err != nil {
		t.Fatal(err)
	}
	if b.ProcessingStatus != anthropic.MessageBatchProcessingStatusInProgress || b.RequestCounts.Processing != 7 || b.ResultsURL != "" {
		t.Fatalf("a new batch %+v; want in progress, 7 processing, no results yet", b)
	}
	if _, err := c.Messages.Batches.Get(ctx, b.ID, anthropic.MessageBatchGetParams{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(29 * time.Minute)
	if got, _ := c.Messages.Batches.Get(ctx, b.ID, anthropic.MessageBatchGetParams{}); got.ProcessingStatus != anthropic.MessageBatchProcessingStatusInProgress {
		t.Errorf("before its delay: %s; want in_progress", got.ProcessingStatus)
	}
	clock.Advance(time.Minute)
	got, err := c.Messages.Batches.Get(ctx, b.ID, anthropic.MessageBatchGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if rc := got.RequestCounts; got.ProcessingStatus != anthropic.MessageBatchProcessingStatusEnded || rc.Succeeded != 5 || rc.Errored != 2 || rc.Processing != 0 || got.ResultsURL == "" {
		t.Fatalf("after its delay: %+v; want ended, 5 succeeded, 2 errored", got)
	}

	rs := results(t, c, b.ID)
	var order []string
	var read int64
	for _, r := range rs {
		order = append(order, r.CustomID)
		switch r.CustomID {
		case "q-2":
			if r.Result.Type != "errored" || r.Result.Error.Error.Type != "api_error" {
				t.Errorf("q-2: %+v; want errored by the hook (api_error)", r.Result)
			}
		case "q-5":
			if r.Result.Type != "errored" || r.Result.Error.Error.Type != "invalid_request_error" {
				t.Errorf("q-5: %+v; want errored as invalid (five breakpoints)", r.Result)
			}
		default:
			m := r.Result.Message
			if r.Result.Type != "succeeded" || len(m.Content) != 1 || m.Content[0].Name != "comparison" || m.Usage.ServiceTier != "batch" {
				t.Errorf("%s: %+v; want a comparison, on the batch tier", r.CustomID, r.Result)
				continue
			}
			if _, _, err := prompt.ParseComparison(m.Content[0].Input); err != nil {
				t.Errorf("%s: %v", r.CustomID, err)
			}
			read += m.Usage.CacheReadInputTokens
		}
	}
	sorted := slices.Sorted(slices.Values(order))
	if !slices.Equal(sorted, []string{"q-0", "q-1", "q-2", "q-3", "q-4", "q-5", "q-6"}) || slices.Equal(order, sorted) {
		t.Errorf("results in the order %v; want every request once, not in the input order", order)
	}
	if read == 0 {
		t.Error("no request of the batch read the shared 1h-cached system prompt")
	}
	if s := f.Stats(); s.AnthropicBatch.Requests != 5 || s.AnthropicBatch.CacheRead != int(read) || s.Batches["anthropic/ended"] != 1 {
		t.Errorf("stats %+v, %v; want 5 turns reading %d cached tokens, one ended batch", s.AnthropicBatch, s.Batches, read)
	}
}

func TestAnthropicBatchCancel(t *testing.T) {
	_, f := startAt(t, providertest.Options{BatchDelay: time.Hour})
	c := anthropicClient(f, f.AnthropicKey())
	ctx := context.Background()
	b, err := c.Messages.Batches.New(ctx, anthropic.MessageBatchNewParams{Requests: anthropicBatchRequests(3, "")})
	if err != nil {
		t.Fatal(err)
	}
	early := c.Messages.Batches.ResultsStreaming(ctx, b.ID, anthropic.MessageBatchResultsParams{})
	if early.Next() || early.Err() == nil {
		t.Error("the results of a batch in progress were given; want an error until it ends")
	}
	early.Close()
	got, err := c.Messages.Batches.Cancel(ctx, b.ID, anthropic.MessageBatchCancelParams{})
	if err != nil || got.ProcessingStatus != anthropic.MessageBatchProcessingStatusCanceling || got.CancelInitiatedAt.IsZero() {
		t.Fatalf("cancel: %+v, %v; want canceling", got, err)
	}
	got, _ = c.Messages.Batches.Get(ctx, b.ID, anthropic.MessageBatchGetParams{})
	if got.ProcessingStatus != anthropic.MessageBatchProcessingStatusEnded || got.RequestCounts.Canceled != 3 {
		t.Fatalf("after cancelling: %+v; want ended, 3 canceled", got)
	}
	for _, r := range results(t, c, b.ID) {
		if r.Result.Type != "canceled" {
			t.Errorf("%s: %s; want canceled", r.CustomID, r.Result.Type)
		}
	}
	if _, err := c.Messages.Batches.Cancel(ctx, b.ID, anthropic.MessageBatchCancelParams{}); err == nil {
		t.Error("cancelling an ended batch succeeded; want an error")
	}
}

// A batch whose delay runs past the 24-hour window expires, on both APIs.
func TestBatchesExpire(t *testing.T) {
	clock, f := startAt(t, providertest.Options{BatchDelay: 25 * time.Hour})
	oc, ac := openAIClient(f, f.OpenAIKey()), anthropicClient(f, f.AnthropicKey())
	ob := submitOpenAI(t, oc, openAIBatchFile(t, 2), openai.BatchNewParamsEndpointV1ChatCompletions)
	ab, err := ac.Messages.Batches.New(context.Background(), anthropic.MessageBatchNewParams{Requests: anthropicBatchRequests(2, "")})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(24*time.Hour - time.Second)
	if got := getOpenAI(t, oc, ob.ID); got.Status != openai.BatchStatusInProgress {
		t.Errorf("a second before the window ends: %s; want in_progress", got.Status)
	}
	clock.Advance(time.Second)
	got := getOpenAI(t, oc, ob.ID)
	if got.Status != openai.BatchStatusExpired || got.RequestCounts.Failed != 2 {
		t.Errorf("at the end of the window: %+v; want expired, 2 failed", got)
	}
	for _, l := range fileLines(t, oc, got.ErrorFileID) {
		if l.Error == nil || l.Error.Code != "batch_expired" {
			t.Errorf("error line %+v; want batch_expired", l)
		}
	}
	for _, r := range results(t, ac, ab.ID) {
		if r.Result.Type != "expired" {
			t.Errorf("%s: %s; want expired", r.CustomID, r.Result.Type)
		}
	}
}

// With a negative delay only CompleteBatch ends a batch; BatchNoCache keeps batches out of
// the prompt cache.
func TestCompleteBatchByHandWithoutCache(t *testing.T) {
	clock, f := startAt(t, providertest.Options{BatchDelay: -1, BatchNoCache: true})
	c := anthropicClient(f, f.AnthropicKey())
	b, err := c.Messages.Batches.New(context.Background(), anthropic.MessageBatchNewParams{Requests: anthropicBatchRequests(4, "")})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(23 * time.Hour)
	if got, _ := c.Messages.Batches.Get(context.Background(), b.ID, anthropic.MessageBatchGetParams{}); got.ProcessingStatus != anthropic.MessageBatchProcessingStatusInProgress {
		t.Fatalf("after 23 hours: %s; want in_progress until completed by hand", got.ProcessingStatus)
	}
	if err := f.CompleteBatch(b.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.CompleteBatch(b.ID); err == nil {
		t.Error("completing an ended batch again succeeded; want an error")
	}
	for _, r := range results(t, c, b.ID) {
		if u := r.Result.Message.Usage; r.Result.Type != "succeeded" || u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens != 0 {
			t.Errorf("%s: %s, %+v; want succeeded without the cache", r.CustomID, r.Result.Type, u)
		}
	}
}
