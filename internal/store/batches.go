package store

import (
	"context"
	"encoding/json"
)

// Batches: a step of a session whose calls went through the provider's batch API keeps,
// under batches/, the batch it submitted (so that a retried submission finds it rather
// than submitting again) and, once the batch has ended, each turn's result (so that the
// turn reads its answer from the store, on whichever worker runs it).

const batchesDir = "batches"

// Batch is a submitted batch: the provider's id, when it was submitted, and its requests,
// each by the id the provider's results name it, the turn it is for and the digest of
// what it asked.
type Batch struct {
	Key       string         `json:"key"`
	ID        string         `json:"id"`
	Provider  string         `json:"provider"`
	Model     string         `json:"model,omitempty"`
	Submitted string         `json:"submitted"` // RFC 3339
	Requests  []BatchRequest `json:"requests"`
}

// BatchRequest is one request of a batch.
type BatchRequest struct {
	CustomID string `json:"custom_id"`
	TurnID   string `json:"turn_id"`
	Digest   string `json:"digest"`
}

// BatchResult is one turn's result from an ended batch: the provider's answer as it
// came, or why the request failed.
type BatchResult struct {
	Digest string          `json:"digest"`
	Raw    json.RawMessage `json:"raw,omitempty"`
	Err    string          `json:"error,omitempty"`
}

func batchKey(sessionID, name string) (string, error) {
	return key(sessionID, batchesDir, ".json", "batch key", name)
}

func batchResultKey(sessionID, name, turnID string) (string, error) {
	return key(sessionID, batchesDir, ".json", "batch key", name, "turn id", turnID)
}

// PutBatch records a submitted batch, once: a second record under the same key is
// ignored, and Batch returns the first.
func (s *Store) PutBatch(ctx context.Context, sessionID string, b Batch) error {
	k, err := batchKey(sessionID, b.Key)
	if err != nil {
		return err
	}
	return s.put(ctx, sessionID, k, b, true)
}

// Batch returns the batch submitted under name; found is false, with a nil error, if none
// was.
func (s *Store) Batch(ctx context.Context, sessionID, name string) (b Batch, found bool, err error) {
	k, err := batchKey(sessionID, name)
	if err != nil {
		return b, false, err
	}
	if found, err := s.find(ctx, sessionID, k, "batch "+name, &b); !found {
		return Batch{}, false, err
	}
	return b, true, nil
}

// PutBatchResult records a turn's result from the batch named name, once.
func (s *Store) PutBatchResult(ctx context.Context, sessionID, name, turnID string, r BatchResult) error {
	k, err := batchResultKey(sessionID, name, turnID)
	if err != nil {
		return err
	}
	b, err := json.Marshal(r) // compact: the provider's answer is read by code, not by eye
	if err != nil {
		return err
	}
	return s.b.Put(ctx, sessionID, k, append(b, '\n'), true)
}

// BatchResult returns a turn's result from the batch named name; found is false, with a
// nil error, when the batch brought none for it.
func (s *Store) BatchResult(ctx context.Context, sessionID, name, turnID string) (r BatchResult, found bool, err error) {
	k, err := batchResultKey(sessionID, name, turnID)
	if err != nil {
		return r, false, err
	}
	if found, err := s.find(ctx, sessionID, k, "result of turn "+turnID+" in batch "+name, &r); !found {
		return BatchResult{}, false, err
	}
	return r, true, nil
}
