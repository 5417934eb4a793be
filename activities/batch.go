package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
)

// Batches: a round's step sends its turns through the provider's batch API, for half the
// price, in three activities. SubmitBatch renders each turn's request exactly as the turn
// would send it (it runs the turn with a model that records instead of calling) and
// submits them as one batch, recorded in the store under the step's name, leaders first
// (provider.Group: the first request of each group sharing a prefix at the front, the
// others after them), for the provider's caching inside the batch. AwaitBatch
// polls the provider, through its retry policy (one activity in the history however long
// the batch takes), and once the batch has ended stores each turn's result. Then each turn
// runs as always, with Turn.Batch naming the batch: its model answers from the stored
// result when the turn asks exactly what the batch carried, and otherwise (a request the
// batch failed, a prompt that changed since, a repair turn) calls the provider as usual.

// ErrBatchPending is AwaitBatch's failure while the batch is still running: retried, so
// that the wait costs no history.
const ErrBatchPending = "BatchPending"

// BatchTurn is one turn of a batch: exactly one of its inputs is set.
type BatchTurn struct {
	Generate *GenerateInput `json:"generate,omitempty"`
	Evolve   *EvolveInput   `json:"evolve,omitempty"`
	Review   *ReviewInput   `json:"review,omitempty"`
	Compare  *CompareInput  `json:"compare,omitempty"`
}

// BatchInput asks for a step's turns to go through the provider's batch API.
type BatchInput struct {
	SessionID string      `json:"session_id"`
	Name      string      `json:"name"` // the step's batch in the session, e.g. "round-3-reviews"
	Provider  string      `json:"provider"`
	Model     string      `json:"model,omitempty"`
	Turns     []BatchTurn `json:"turns"`
}

// BatchSubmitted is a submitted batch, or why the step's turns are made one by one.
type BatchSubmitted struct {
	ID       string `json:"id,omitempty"` // the provider's batch id
	Requests int    `json:"requests,omitempty"`
	Direct   string `json:"direct,omitempty"` // why there is no batch: the provider has no batch API, ...
	// NoAPI says the provider has no batch API at all: the session stops asking.
	NoAPI bool `json:"no_api,omitempty"`
}

// BatchRef names a submitted batch.
type BatchRef struct {
	SessionID string `json:"session_id"`
	Name      string `json:"name"`
	Provider  string `json:"provider"`
	Model     string `json:"model,omitempty"`
}

// BatchDone is what an ended batch brought: answers and failures (each failed request's
// turn calls the provider itself).
type BatchDone struct {
	Status   string `json:"status"`
	Answered int    `json:"answered"`
	Failed   int    `json:"failed"`
}

// modelKey carries a model that stands in for the turn's own (a Recorder's, for a batch).
type modelKey struct{}

// SubmitBatch submits the turns that have not run yet as one batch of the provider's. A
// retry finds the batch the first attempt recorded and submits nothing. A provider without
// a batch API, or a turn that cannot be recorded, leaves the turns to run directly.
func (a *Activities) SubmitBatch(ctx context.Context, in BatchInput) (BatchSubmitted, error) {
	// Alive while the requests upload: a submission taken for dead would be retried.
	stop := a.keepAlive(ctx)
	defer stop()
	if b, found, err := a.Store.Batch(ctx, in.SessionID, in.Name); err != nil {
		return BatchSubmitted{}, err
	} else if found {
		return BatchSubmitted{ID: b.ID, Requests: len(b.Requests)}, nil
	}
	llm, batcher, direct, err := a.batcher(in.Provider, in.Model)
	if err != nil || direct != "" {
		return BatchSubmitted{Direct: direct, NoAPI: direct != ""}, err
	}
	var (
		reqs    []provider.BatchRequest
		entries []store.BatchRequest
	)
	for i, bt := range in.Turns {
		turnID, run := a.batchTurn(bt)
		if turnID == "" {
			return BatchSubmitted{}, invalid("batch %s: turn %d names no input", in.Name, i)
		}
		if _, done, err := a.Store.Turn(ctx, in.SessionID, turnID); err != nil {
			return BatchSubmitted{}, err
		} else if done {
			continue
		}
		rec := &provider.Recorder{}
		_ = run(context.WithValue(ctx, modelKey{}, Model(llm.With(rec)))) // fails with ErrDeferred
		if len(rec.Got) != 1 {
			continue // it failed before asking the model: it will run, and fail, directly
		}
		id := fmt.Sprintf("t%d", i)
		reqs = append(reqs, provider.BatchRequest{ID: id, Completion: rec.Got[0]})
		entries = append(entries, store.BatchRequest{CustomID: id, TurnID: turnID, Digest: provider.Digest(rec.Got[0])})
	}
	if len(reqs) == 0 {
		return BatchSubmitted{Direct: "no turn of the step is left to batch"}, nil
	}
	if !a.KeepBatchOrder {
		order := provider.Group(reqs)
		grouped := make([]store.BatchRequest, len(entries))
		for i, from := range order {
			grouped[i] = entries[from]
		}
		entries = grouped
	}
	id, err := batcher.SubmitBatch(ctx, in.Name, reqs)
	if errors.Is(err, provider.ErrNoBatchAPI) {
		return BatchSubmitted{Direct: err.Error(), NoAPI: true}, nil
	}
	if err != nil {
		return BatchSubmitted{}, providerError(err)
	}
	// Recorded before the activity returns: a retry after a crash finds it. (A worker
	// killed between the provider's answer and this write submits again on retry.)
	b := store.Batch{Key: in.Name, ID: id, Provider: in.Provider, Model: in.Model, Submitted: session.Stamp(time.Now()), Requests: entries}
	if err := a.Store.PutBatch(ctx, in.SessionID, b); err != nil {
		return BatchSubmitted{}, err
	}
	return BatchSubmitted{ID: id, Requests: len(reqs)}, nil
}

// AwaitBatch checks a batch once: while it runs it fails with ErrBatchPending, for its
// retry policy to try again later; once it has ended it stores every turn's result and
// says how many were answered.
func (a *Activities) AwaitBatch(ctx context.Context, ref BatchRef) (BatchDone, error) {
	b, found, err := a.Store.Batch(ctx, ref.SessionID, ref.Name)
	if err != nil {
		return BatchDone{}, err
	}
	if !found {
		return BatchDone{}, invalid("session %s submitted no batch %s", ref.SessionID, ref.Name)
	}
	batcher, err := a.submittedTo(ref, b)
	if err != nil {
		return BatchDone{}, err
	}
	st, err := batcher.BatchState(ctx, b.ID)
	if err != nil {
		return BatchDone{}, providerError(err)
	}
	if !st.Ended {
		return BatchDone{}, temporal.NewApplicationError(fmt.Sprintf("batch %s (%s) of %d requests is %s: %d answered, %d failed so far",
			ref.Name, b.ID, len(b.Requests), st.Status, st.Done, st.Failed), ErrBatchPending)
	}
	results, err := batcher.BatchResults(ctx, b.ID)
	if err != nil {
		return BatchDone{}, providerError(err)
	}
	done := BatchDone{Status: st.Status}
	for _, r := range b.Requests {
		res := store.BatchResult{Digest: r.Digest}
		got, ok := results[r.CustomID]
		switch {
		case !ok:
			res.Err = "the batch ended (" + st.Status + ") without answering it"
		case got.Err != "":
			res.Err = got.Err
		default:
			res.Raw = got.Raw
		}
		if res.Err != "" {
			done.Failed++
		} else {
			done.Answered++
		}
		if err := a.Store.PutBatchResult(ctx, ref.SessionID, ref.Name, r.TurnID, res); err != nil {
			return BatchDone{}, err
		}
	}
	return done, nil
}

// CancelBatch asks the provider to stop a batch the session no longer wants (it was
// terminated); what the batch answered before stays unread.
func (a *Activities) CancelBatch(ctx context.Context, ref BatchRef) error {
	b, found, err := a.Store.Batch(ctx, ref.SessionID, ref.Name)
	if err != nil || !found {
		return err
	}
	batcher, err := a.submittedTo(ref, b)
	if err != nil {
		return err
	}
	return providerError(batcher.CancelBatch(ctx, b.ID))
}

// submittedTo is the batch API a batch was submitted to. A worker whose provider has none
// (its configuration changed under the session) fails at once, not retried: asking again
// would not bring one, and the turns call the provider themselves (batchModel).
func (a *Activities) submittedTo(ref BatchRef, b store.Batch) (provider.Batcher, error) {
	_, batcher, direct, err := a.batcher(ref.Provider, ref.Model)
	if err != nil {
		return nil, err
	}
	if direct != "" {
		return nil, invalid("batch %s (%s): %s on this worker", ref.Name, b.ID, direct)
	}
	return batcher, nil
}

// batcher is the session's model and its batch API, or why there is none (direct).
func (a *Activities) batcher(providerName, model string) (*provider.LLM, provider.Batcher, string, error) {
	m, err := a.model(Turn{Provider: providerName, Model: model})
	if err != nil {
		return nil, nil, "", err
	}
	llm, ok := m.(*provider.LLM)
	if !ok {
		return nil, nil, "the " + providerName + " model has no batch API", nil
	}
	b, ok := llm.Batcher()
	if !ok {
		return nil, nil, "the " + providerName + " provider has no batch API", nil
	}
	return llm, b, "", nil
}

// batchTurn is a batch turn's id and the turn that runs it.
func (a *Activities) batchTurn(bt BatchTurn) (string, func(context.Context) error) {
	switch {
	case bt.Generate != nil:
		return batched(a, generation, *bt.Generate)
	case bt.Evolve != nil:
		return batched(a, evolution, *bt.Evolve)
	case bt.Review != nil:
		return batched(a, reflection, *bt.Review)
	case bt.Compare != nil:
		return batched(a, comparison, *bt.Compare)
	}
	return "", nil
}

// batched is the id of ag's turn in and what runs it, as batchTurn returns them.
func batched[In input, Req, Ans, Res any](a *Activities, ag agent[In, Req, Ans, Res], in In) (string, func(context.Context) error) {
	return in.Identity().TurnID, func(ctx context.Context) error { _, err := runTurn(ctx, a, ag, in); return err }
}

// batchModel is the model of a turn whose request went out in a batch: it answers from
// the batch's stored result, or, where the batch has none for this very request, calls
// the provider.
func (a *Activities) batchModel(ctx context.Context, t Turn) (Model, error) {
	llm, batcher, direct, err := a.batcher(t.Provider, t.Model)
	if err != nil || direct != "" {
		return a.model(t) // the worker's provider changed under the session: call it
	}
	r, found, err := a.Store.BatchResult(ctx, t.SessionID, t.Batch, t.TurnID)
	if err != nil {
		return nil, err
	}
	if !found {
		return llm, nil
	}
	return llm.With(&provider.Answered{Digest: r.Digest, Result: provider.BatchResult{Raw: r.Raw, Err: r.Err}, Next: batcher}), nil
}
