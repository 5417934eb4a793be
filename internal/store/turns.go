package store

import (
	"context"
	"encoding/json"

	"github.com/cosci-dev/cosci/internal/research"
)

// Turns: the idempotency records of provider turns, under turns/<turn id>.json,
// compressed, their prompts in pieces (pieces.go).

// Turn is the idempotency record of a provider turn. The first successful result is
// stored; a retried turn finds it and returns it instead of calling the model again.
type Turn struct {
	ID       string          `json:"id"`
	Agent    string          `json:"agent"` // "generation", "reflection", "ranking", ...
	Prompt   string          `json:"prompt"`
	Result   json.RawMessage `json:"result"`
	Usage    research.Usage  `json:"usage"`
	Finished string          `json:"finished"` // RFC 3339
	// A step of a tool-using turn (its id is the turn's with ".step-N") also keeps its part
	// of the conversation, which the next step reads back: Given, the results of the
	// previous step's calls (their content in the tool records they name); and Said, what
	// the model answered, its text and the calls it asked for.
	Given []research.ToolResult `json:"given,omitempty"`
	Said  *research.ToolStep    `json:"said,omitempty"`
	// Cache is the prompt cache lifetime the turn asked its provider for
	// (provider.CacheLifetime): "5m" or "1h" (Anthropic), "24h", "30m" or "default"
	// (OpenAI: its own retention, which cosci cannot see), "" when the turn asked for no
	// cache or called no model.
	Cache string `json:"cache,omitempty"`
}

// Turn returns a stored turn. found is false, with a nil error, if there is none.
func (s *Store) Turn(ctx context.Context, sessionID, turnID string) (t Turn, found bool, err error) {
	k, err := key(sessionID, turnsDir, ".json", "turn id", turnID)
	if err != nil {
		return t, false, err
	}
	var rec storedTurn
	if found, err := s.find(ctx, sessionID, k, "turn", &rec); !found {
		return Turn{}, false, err
	}
	t = rec.Turn
	switch {
	case rec.Prompt != nil && rec.Parts != nil:
		return Turn{}, false, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, k), Problem: "it holds its prompt both whole and in parts"}
	case rec.Prompt != nil: // written whole, before prompts were split
		t.Prompt = *rec.Prompt
	default:
		if t.Prompt, err = s.prompt(ctx, sessionID, k, rec.Parts); err != nil {
			return Turn{}, false, err
		}
	}
	return t, true, nil
}

// PutTurn stores a finished turn under t.ID. If the session already holds that turn,
// PutTurn keeps it and returns nil.
//
// The record is compressed, and its prompt is kept in pieces (see pieces.go), each
// paragraph once per session however many prompts repeat it; the pieces are written first,
// so a turn record is never without them. Turn reads it back as it was, byte for byte.
func (s *Store) PutTurn(ctx context.Context, sessionID string, t Turn) error {
	k, err := key(sessionID, turnsDir, ".json", "turn id", t.ID)
	if err != nil {
		return err
	}
	parts, pieces := splitPrompt(t.Prompt)
	data, err := encodeCompact(k, storedTurn{Turn: t, Parts: parts})
	if err != nil {
		return err
	}
	if err := s.putPieces(ctx, sessionID, pieces); err != nil {
		return err
	}
	return s.b.Put(ctx, sessionID, k, data, true)
}
