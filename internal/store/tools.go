package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
)

// ToolRecord is one tool result as the tool gave it: the session's audit trail of what its
// agents read. Records are content-addressed (see Digest), so the same answer to the same
// call is kept once, and a citation can name the very result it came from.
type ToolRecord struct {
	Tool      string          `json:"tool"` // server.tool
	Arguments json.RawMessage `json:"arguments"`
	// Content is the result's text, as the model read it; Structured the structured
	// result, if the tool gave one.
	Content    string          `json:"content"`
	Structured json.RawMessage `json:"structured,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	// By is "scientist" for a result the scientist gave in place of the tool's.
	By string `json:"by,omitempty"`
}

// Digest is the record's address: the SHA-256 of its JSON, in hex.
func (r ToolRecord) Digest() (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("store: encode a tool record: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

var digestRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// PutToolRecord stores a tool result in the session's audit trail and returns its digest.
// A record with the same digest is the same record, so a second Put changes nothing.
func (s *Store) PutToolRecord(ctx context.Context, sessionID string, r ToolRecord) (string, error) {
	d, err := r.Digest()
	if err != nil {
		return "", err
	}
	k, err := key(sessionID, toolsDir, ".json", "tool record", d)
	if err != nil {
		return "", err
	}
	return d, s.put(ctx, sessionID, k, r, true)
}

// ToolRecord reads a tool result of the session's audit trail by its digest.
func (s *Store) ToolRecord(ctx context.Context, sessionID, digest string) (ToolRecord, error) {
	var r ToolRecord
	if !digestRE.MatchString(digest) {
		return r, fmt.Errorf("store: %q is not a tool record's digest (64 hex digits)", digest)
	}
	k, err := key(sessionID, toolsDir, ".json", "tool record", digest)
	if err != nil {
		return r, err
	}
	if err := s.get(ctx, sessionID, k, "tool record "+digest[:12], &r); err != nil {
		return r, err
	}
	// The audit trail is evidence: a record changed since it was written is not.
	if d, err := r.Digest(); err != nil || d != digest {
		return ToolRecord{}, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, k), Problem: "its content does not match its digest"}
	}
	return r, nil
}

// Embedding is a hypothesis' embedding by one model: the proximity agent's cache, so each
// hypothesis is embedded once per model.
type Embedding struct {
	Model  string    `json:"model"`
	Vector []float32 `json:"vector"`
}

const embeddingsDir = "embeddings"

func embeddingKey(sessionID, model, id string) (string, error) {
	return key(sessionID, embeddingsDir, ".json", "embedding model", model, "hypothesis id", id)
}

// PutEmbedding stores a hypothesis' embedding by a model, once.
func (s *Store) PutEmbedding(ctx context.Context, sessionID, id string, e Embedding) error {
	k, err := embeddingKey(sessionID, e.Model, id)
	if err != nil {
		return err
	}
	b, err := json.Marshal(e) // compact: vectors are long and nobody reads them by eye
	if err != nil {
		return err
	}
	return s.b.Put(ctx, sessionID, k, append(b, '\n'), true)
}

// Embeddings returns the stored embeddings by model of the hypotheses ids, by id; a
// hypothesis not yet embedded is absent.
func (s *Store) Embeddings(ctx context.Context, sessionID, model string, ids []string) (map[string][]float32, error) {
	out := make(map[string][]float32, len(ids))
	for _, id := range ids {
		k, err := embeddingKey(sessionID, model, id)
		if err != nil {
			return nil, err
		}
		var e Embedding
		if err := s.get(ctx, sessionID, k, "embedding of "+id, &e); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		out[id] = e.Vector
	}
	return out, nil
}
