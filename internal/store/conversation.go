package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// The conversation between the scientist and the session: one record per message, under
// conversation/<message id>.json (m-0001.json, ...), written once. The workflow keeps the
// ids, who wrote each and the proposals' status; the texts are here.

const conversationDir = "conversation"

// PutMessage stores one message of the conversation. If the session already holds a
// message of that id, PutMessage keeps it and returns nil: a retried turn never changes
// what an earlier attempt stored.
func (s *Store) PutMessage(ctx context.Context, sessionID string, m research.Message) error {
	if session.MessageNumber(m.ID) == 0 {
		return fmt.Errorf("store: message id %q is not m-NNNN", m.ID)
	}
	return s.putByID(ctx, sessionID, conversationDir, "message", m.ID, m, true)
}

// Message returns one message of the conversation. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Message(ctx context.Context, sessionID, id string) (research.Message, error) {
	return getByID[research.Message](ctx, s, sessionID, conversationDir, "message", id)
}

// Messages returns the messages of the given ids, in that order, skipping those the store
// does not hold (a message whose turn never stored it).
func (s *Store) Messages(ctx context.Context, sessionID string, ids []string) ([]research.Message, error) {
	var out []research.Message
	for _, id := range ids {
		m, err := s.Message(ctx, sessionID, id)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Conversation returns the session's whole conversation, oldest first.
func (s *Store) Conversation(ctx context.Context, sessionID string) ([]research.Message, error) {
	if _, err := escape("session id", sessionID); err != nil {
		return nil, err
	}
	keys, err := s.b.List(ctx, sessionID, conversationDir+"/")
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, k := range keys {
		id := strings.TrimSuffix(path.Base(k), ".json")
		if session.MessageNumber(id) > 0 {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return session.MessageNumber(a) - session.MessageNumber(b) })
	return s.Messages(ctx, sessionID, ids)
}
