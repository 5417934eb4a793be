package provider

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

// Batch APIs: OpenAI's Batch API and Anthropic's Message Batches take many requests at
// once and answer them within a day, for half the price. A session sends through them
// the calls a round makes many of at once (generation, evolution, reviews, matches); it
// waits for the answers durably (the workflow), and each turn then reads its answer.

// ErrNoBatchAPI is a provider without a batch API: an OpenAI-compatible local server (it
// answers the batch endpoints with 404), or a model that is not a provider's. The session
// makes the calls one by one instead.
var ErrNoBatchAPI = errors.New("the provider has no batch API")

// BatchRequest is one request of a batch: its completion, and the id the batch's results
// name it by (letters, digits, _ and -, at most 64, as both APIs want).
type BatchRequest struct {
	ID         string
	Completion Completion
}

// BatchState is how far a batch is.
type BatchState struct {
	Status string // the provider's own word: "in_progress", "finalizing", "ended", ...
	Ended  bool   // its results can be read (it completed, expired, failed or was cancelled)
	// Done and Failed count the requests answered and failed so far, of Total.
	Done, Failed, Total int
}

// BatchResult is one request's result: the provider's answer as it came (a chat
// completion, a message), which BatchAnswer reads for the completion it answers; or why
// the request failed.
type BatchResult struct {
	Raw json.RawMessage `json:"raw,omitempty"`
	Err string          `json:"error,omitempty"`
}

// Batcher is a Completer whose provider has a batch API. Each method makes one or a few
// HTTP requests and never retries: the workflow's activities do, through Temporal.
type Batcher interface {
	Completer
	// SubmitBatch sends the requests as one batch and returns its id; key names the batch
	// for the provider's records (OpenAI's metadata). A provider without the API answers
	// with an error wrapping ErrNoBatchAPI.
	SubmitBatch(ctx context.Context, key string, reqs []BatchRequest) (string, error)
	// BatchState says how far a batch is.
	BatchState(ctx context.Context, id string) (BatchState, error)
	// BatchResults reads an ended batch's results, by request id. A request the batch
	// did not answer (failed, expired, cancelled) has Err set, or no entry.
	BatchResults(ctx context.Context, id string) (map[string]BatchResult, error)
	// CancelBatch asks the provider to stop a batch; what it answered before stays.
	CancelBatch(ctx context.Context, id string) error
	// BatchAnswer reads a result as the answer to the completion it answers (Usage.Batched
	// is 1, for its price).
	BatchAnswer(req Completion, raw json.RawMessage) (Answer, error)
}

var (
	_ Batcher = (*OpenAI)(nil)
	_ Batcher = (*Anthropic)(nil)
)

// batchIDRE is what a request id in a batch may be.
var batchIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func checkBatch(reqs []BatchRequest) error {
	if len(reqs) == 0 {
		return errors.New("a batch needs at least one request")
	}
	seen := map[string]bool{}
	for _, r := range reqs {
		if !batchIDRE.MatchString(r.ID) || seen[r.ID] {
			return fmt.Errorf("batch request id %q is not unique letters, digits, _ and - (at most 64); this is a bug in cosci", r.ID)
		}
		seen[r.ID] = true
	}
	return nil
}

// Group orders a batch's requests for a cache that must be written before it can be
// read: leaders first. Requests share a prefix when they share their cache key and
// prompt prefix (research.Cache: one agent's calls in one round), system prompt and
// schema; each such group's first request (its leader) goes at the front of the batch,
// one per group in the order the groups first appear, and the groups' other requests
// (their followers) after all the leaders, group by group, each group's by its whole
// prompt so that requests sharing more than the prefix (two matches of the same
// hypothesis) are neighbours; the leader is the first of its group in that order.
//
// Why not each group together: a provider works through a batch roughly in the order it
// was sent, several requests at once, and caches inside it only best effort: a request
// reads what another wrote only once that one has finished, and only while the entry
// lives. Requests of one group sent side by side start together, before any has
// written the prefix, and each writes it again; measured in the fakes (BENCHMARKS.md),
// that lost to the step's own order. Leaders first writes each prefix once, early, and
// the followers arrive after the leaders have had time to finish. Requests strewn as
// made would hit as often only by chance.
//
// It sorts reqs in place (stable: equal prompts keep their order) and returns the moves
// it made, order[i] being the index in the input of the request now at i.
func Group(reqs []BatchRequest) (order []int) {
	groupKey := func(c Completion) string {
		prefix := c.Prompt[:min(max(c.Cache.Prefix, 0), len(c.Prompt))]
		return c.Cache.Key + "\x00" + c.SchemaName + "\x00" + c.System + "\x00" + prefix
	}
	first := map[string]int{}
	order = make([]int, len(reqs))
	for i, r := range reqs {
		order[i] = i
		if _, ok := first[groupKey(r.Completion)]; !ok {
			first[groupKey(r.Completion)] = i
		}
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := reqs[i].Completion, reqs[j].Completion
		return cmp.Or(cmp.Compare(first[groupKey(a)], first[groupKey(b)]), strings.Compare(a.Prompt, b.Prompt))
	})
	// The first of each group in that order leads it; the rest follow, in that order.
	led := map[string]bool{}
	leaders, followers := make([]int, 0, len(first)), make([]int, 0, len(reqs)-len(first))
	for _, from := range order {
		if k := groupKey(reqs[from].Completion); !led[k] {
			led[k] = true
			leaders = append(leaders, from)
		} else {
			followers = append(followers, from)
		}
	}
	order = append(leaders, followers...)
	sorted := make([]BatchRequest, len(reqs))
	for i, from := range order {
		sorted[i] = reqs[from]
	}
	copy(reqs, sorted)
	return order
}

// Digest names a completion by what it asks, so that an answer a batch brings back is
// used only for the very completion it answers: a turn whose prompt changed since (the
// scientist refined the goal while the batch ran) asks the model anew.
func Digest(c Completion) string {
	b, _ := json.Marshal(struct {
		Agent, System, Prompt, SchemaName string
		Schema                            json.RawMessage
		Repair, Previous                  string
		Tooling                           any
	}{c.Agent, c.System, c.Prompt, c.SchemaName, c.Schema, c.Repair, c.Previous, c.Tooling})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// noBatchAPI says whether an error is a server's way of saying it has no such endpoint.
func noBatchAPI(status int) bool {
	return status == http.StatusNotFound || status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented
}

// ---------------------------------------------------------------------------------------
// OpenAI: a JSONL file of requests, uploaded with purpose "batch", then a batch over it;
// the answers come back in an output file, the failures in an error file.

// SubmitBatch uploads the requests and starts a batch of chat completions.
func (o *OpenAI) SubmitBatch(ctx context.Context, key string, reqs []BatchRequest) (string, error) {
	if err := checkBatch(reqs); err != nil {
		return "", err
	}
	var body bytes.Buffer
	for _, r := range reqs {
		line, err := json.Marshal(map[string]any{"custom_id": r.ID, "method": "POST", "url": "/v1/chat/completions", "body": o.params(r.Completion)})
		if err != nil {
			return "", err
		}
		body.Write(line)
		body.WriteByte('\n')
	}
	f, err := o.files.New(ctx, openai.FileNewParams{File: openai.File(&body, "cosci-"+key+".jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	if err != nil {
		return "", o.batchError(ctx, err)
	}
	b, err := o.batches.New(ctx, openai.BatchNewParams{
		InputFileID:      f.ID,
		Endpoint:         openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h,
		Metadata:         shared.Metadata{"cosci_batch": key},
	})
	if err != nil {
		return "", o.batchError(ctx, err)
	}
	return b.ID, nil
}

// BatchState reads a batch's status.
func (o *OpenAI) BatchState(ctx context.Context, id string) (BatchState, error) {
	b, err := o.batches.Get(ctx, id)
	if err != nil {
		return BatchState{}, o.classify(ctx, err)
	}
	st := BatchState{Status: string(b.Status), Done: int(b.RequestCounts.Completed), Failed: int(b.RequestCounts.Failed), Total: int(b.RequestCounts.Total)}
	switch b.Status {
	case openai.BatchStatusCompleted, openai.BatchStatusExpired, openai.BatchStatusFailed, openai.BatchStatusCancelled:
		st.Ended = true
	}
	return st, nil
}

// BatchResults reads the output and error files of an ended batch.
func (o *OpenAI) BatchResults(ctx context.Context, id string) (map[string]BatchResult, error) {
	b, err := o.batches.Get(ctx, id)
	if err != nil {
		return nil, o.classify(ctx, err)
	}
	out := map[string]BatchResult{}
	for _, file := range []string{b.OutputFileID, b.ErrorFileID} {
		if file == "" {
			continue
		}
		if err := o.readResults(ctx, file, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// openAIResultLine is one line of a batch's output or error file.
type openAIResultLine struct {
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (o *OpenAI) readResults(ctx context.Context, file string, out map[string]BatchResult) error {
	resp, err := o.files.Content(ctx, file)
	if err != nil {
		return o.classify(ctx, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var line openAIResultLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return &TransientError{Provider: "openai", Message: "a line of batch results is not JSON: " + err.Error()}
		}
		switch {
		case line.Error != nil:
			out[line.CustomID] = BatchResult{Err: strings.TrimSpace(line.Error.Code + ": " + line.Error.Message)}
		case line.Response == nil:
			out[line.CustomID] = BatchResult{Err: "no response"}
		case line.Response.StatusCode != http.StatusOK:
			out[line.CustomID] = BatchResult{Err: fmt.Sprintf("status %d: %s", line.Response.StatusCode, quote(string(line.Response.Body), o.key))}
		default:
			out[line.CustomID] = BatchResult{Raw: line.Response.Body}
		}
	}
	if err := sc.Err(); err != nil {
		return &TransientError{Provider: "openai", Message: "reading batch results: " + err.Error()}
	}
	return nil
}

// BatchAnswer reads a chat completion from a batch's output as the answer to req.
func (o *OpenAI) BatchAnswer(req Completion, raw json.RawMessage) (Answer, error) {
	return batchAnswer(raw, "openai", "a chat completion", func(cc *openai.ChatCompletion) Answer { return openAIAnswer(req, cc) })
}

// CancelBatch cancels a batch.
func (o *OpenAI) CancelBatch(ctx context.Context, id string) error {
	if _, err := o.batches.Cancel(ctx, id); err != nil {
		return o.classify(ctx, err)
	}
	return nil
}

// batchError classifies an error of the batch endpoints: a server without them has no
// batch API.
func (o *OpenAI) batchError(ctx context.Context, err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && noBatchAPI(apiErr.StatusCode) {
		return fmt.Errorf("%w (the server at the OpenAI base URL answered %d)", ErrNoBatchAPI, apiErr.StatusCode)
	}
	return o.classify(ctx, err)
}

// ---------------------------------------------------------------------------------------
// Anthropic: Message Batches, the requests' params in the batch itself; results streamed
// back as JSONL.

// SubmitBatch starts a message batch.
func (a *Anthropic) SubmitBatch(ctx context.Context, key string, reqs []BatchRequest) (string, error) {
	if err := checkBatch(reqs); err != nil {
		return "", err
	}
	var requests []anthropic.MessageBatchNewParamsRequest
	for _, r := range reqs {
		p, err := a.params(r.Completion)
		if err != nil {
			return "", err
		}
		// A batch request's params are a message request's, field for field: copied
		// through their JSON, so that none is left behind.
		var bp anthropic.MessageBatchNewParamsRequestParams
		raw, err := json.Marshal(p)
		if err == nil {
			err = json.Unmarshal(raw, &bp)
		}
		if err != nil {
			return "", fmt.Errorf("batch request %s: %w", r.ID, err)
		}
		requests = append(requests, anthropic.MessageBatchNewParamsRequest{CustomID: r.ID, Params: bp})
	}
	b, err := a.client.Messages.Batches.New(ctx, anthropic.MessageBatchNewParams{Requests: requests})
	if err != nil {
		var apiErr *anthropic.Error
		if errors.As(err, &apiErr) && noBatchAPI(apiErr.StatusCode) {
			return "", fmt.Errorf("%w (the server at the Anthropic base URL answered %d)", ErrNoBatchAPI, apiErr.StatusCode)
		}
		return "", a.classify(ctx, err)
	}
	return b.ID, nil
}

// BatchState reads a message batch's processing status.
func (a *Anthropic) BatchState(ctx context.Context, id string) (BatchState, error) {
	b, err := a.client.Messages.Batches.Get(ctx, id, anthropic.MessageBatchGetParams{})
	if err != nil {
		return BatchState{}, a.classify(ctx, err)
	}
	c := b.RequestCounts
	return BatchState{
		Status: string(b.ProcessingStatus), Ended: b.ProcessingStatus == anthropic.MessageBatchProcessingStatusEnded,
		Done: int(c.Succeeded), Failed: int(c.Errored + c.Canceled + c.Expired),
		Total: int(c.Processing + c.Succeeded + c.Errored + c.Canceled + c.Expired),
	}, nil
}

// BatchResults streams an ended message batch's results.
func (a *Anthropic) BatchResults(ctx context.Context, id string) (map[string]BatchResult, error) {
	stream := a.client.Messages.Batches.ResultsStreaming(ctx, id, anthropic.MessageBatchResultsParams{})
	defer stream.Close()
	out := map[string]BatchResult{}
	for stream.Next() {
		r := stream.Current()
		switch r.Result.Type {
		case "succeeded":
			out[r.CustomID] = BatchResult{Raw: json.RawMessage(r.Result.Message.RawJSON())}
		case "errored":
			out[r.CustomID] = BatchResult{Err: "errored: " + r.Result.Error.Error.Message}
		default:
			out[r.CustomID] = BatchResult{Err: r.Result.Type}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, a.classify(ctx, err)
	}
	return out, nil
}

// BatchAnswer reads a message from a batch's results as the answer to req.
func (a *Anthropic) BatchAnswer(req Completion, raw json.RawMessage) (Answer, error) {
	return batchAnswer(raw, "anthropic", "a message", func(msg *anthropic.Message) Answer { return anthropicAnswer(req, msg) })
}

// CancelBatch cancels a message batch.
func (a *Anthropic) CancelBatch(ctx context.Context, id string) error {
	if _, err := a.client.Messages.Batches.Cancel(ctx, id, anthropic.MessageBatchCancelParams{}); err != nil {
		return a.classify(ctx, err)
	}
	return nil
}

// batchAnswer reads what a provider's SDK decodes as M (what names it) from a batch's
// results, and makes it an answer, a batch's, by read.
func batchAnswer[M any](raw json.RawMessage, provider, what string, read func(*M) Answer) (Answer, error) {
	var m M
	if err := json.Unmarshal(raw, &m); err != nil {
		return Answer{}, &TransientError{Provider: provider, Message: "a batch's answer is not " + what + ": " + err.Error()}
	}
	return batched(read(&m)), nil
}

// batched marks an answer as a batch's, for its price.
func batched(a Answer) Answer {
	a.Usage.Batched = a.Usage.Requests
	return a
}

// ---------------------------------------------------------------------------------------
// Completers that stand in for a provider around a batch.

// ErrDeferred is what a Recorder answers: the call was not made, its completion was kept
// for a batch.
var ErrDeferred = errors.New("deferred to a batch")

// Recorder is a Completer that sends nothing: it keeps each completion it is asked for
// and fails the call with ErrDeferred. Running a turn with a Recorder in place of its
// provider gives the completion the turn would send, for a batch to carry.
type Recorder struct {
	Got []Completion
}

// Complete keeps the completion.
func (r *Recorder) Complete(_ context.Context, req Completion) (Answer, error) {
	r.Got = append(r.Got, req)
	return Answer{}, ErrDeferred
}

// Answered is a Completer that answers one completion from a batch: the first call that
// asks exactly what the batch carried (its Digest) gets the batch's answer; any other call
// (a repair turn, a prompt that changed, a request the batch failed) goes to Next, the
// provider itself, as an ordinary call.
type Answered struct {
	Digest string
	Result BatchResult
	Next   Batcher
	used   bool
}

// Complete answers from the batch, once, or asks Next.
func (a *Answered) Complete(ctx context.Context, req Completion) (Answer, error) {
	if !a.used && a.Result.Err == "" && len(a.Result.Raw) > 0 && Digest(req) == a.Digest {
		a.used = true
		return a.Next.BatchAnswer(req, a.Result.Raw)
	}
	return a.Next.Complete(ctx, req)
}

// With returns a copy of m that sends its completions to c: a Recorder or an Answered.
func (m *LLM) With(c Completer) *LLM {
	return &LLM{C: c, Model: m.Model, Prices: m.Prices}
}

// Batcher returns m's provider as a Batcher, when its provider has a batch API.
func (m *LLM) Batcher() (Batcher, bool) {
	b, ok := m.C.(Batcher)
	return b, ok
}
