package store

import (
	"context"
	"errors"

	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/session"
)

// Encrypt has the store seal what it writes from now on with the keyring's current key:
// every record, the events' details, and the goal and stop reason in the session index
// (AES-256-GCM, see internal/keyring). Ids, kinds, states and numbers stay readable: the
// store and its index work on them. Records written before encryption was turned on read
// as they are. Call it before the store is shared.
//
// A store opened without keys still recognises sealed records, and refuses them with an
// error naming the key they need, never as damaged JSON.
func (s *Store) Encrypt(k *keyring.Keyring) {
	s.keys = k
	s.rewrap()
}

// rewrap builds the chain of backends the store calls: the error classification, the
// observer if any, the sealing, then the backend itself.
func (s *Store) rewrap() {
	var b Backend = sealed{s.raw, s.keys}
	if s.observe != nil {
		b = observed{b, s.observe}
	}
	s.b = guarded{b}
}

type sealed struct {
	Backend
	keys *keyring.Keyring
}

// Records are sealed bound to their key (not their session: Copy gives a continued
// session its parent's records as they are), and texts to what they are.
var (
	eventDetail = []byte("event detail")
	indexGoal   = []byte("session goal")
	indexStop   = []byte("session stop reason")
)

func (s sealed) open(sessionID, key string, b []byte) ([]byte, error) {
	if !keyring.IsSealed(b) {
		return b, nil
	}
	plain, err := s.keys.OpenBlob(b, []byte(key))
	if err != nil {
		return nil, s.damaged(sessionID, s.Where(sessionID, key), err)
	}
	return plain, nil
}

// damaged is a sealed text that does not open: the session suspends with the reason (a key
// the worker lacks, named), rather than read half of it.
func (s sealed) damaged(sessionID, record string, err error) error {
	var unknown *keyring.UnknownKeyError
	if errors.As(err, &unknown) {
		return &DamagedError{SessionID: sessionID, Record: record, Key: unknown.ID}
	}
	return &DamagedError{SessionID: sessionID, Record: record, Problem: err.Error()}
}

func (s sealed) Get(ctx context.Context, sessionID, key string) ([]byte, error) {
	b, err := s.Backend.Get(ctx, sessionID, key)
	if err != nil {
		return nil, err
	}
	return s.open(sessionID, key, b)
}

func (s sealed) Put(ctx context.Context, sessionID, key string, data []byte, once bool) error {
	if s.keys != nil {
		data = s.keys.SealBlob(data, []byte(key))
	}
	return s.Backend.Put(ctx, sessionID, key, data, once)
}

func (s sealed) Commit(ctx context.Context, c Commit) error {
	if s.keys != nil {
		if c.Key != "" {
			c.Data = s.keys.SealBlob(c.Data, []byte(c.Key))
		}
		events := make([]session.Event, len(c.Events))
		for i, e := range c.Events {
			e.Detail = s.keys.SealText(e.Detail, eventDetail)
			events[i] = e
		}
		c.Events = events
		if c.Index != nil {
			row := *c.Index
			row.Goal = s.keys.SealText(row.Goal, indexGoal)
			row.StopReason = s.keys.SealText(row.StopReason, indexStop)
			c.Index = &row
		}
	}
	return s.Backend.Commit(ctx, c)
}

func (s sealed) Events(ctx context.Context, sessionID string) ([]session.Event, error) {
	events, err := s.Backend.Events(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	for i := range events {
		if events[i].Detail, err = s.keys.OpenText(events[i].Detail, eventDetail); err != nil {
			return nil, s.damaged(sessionID, "the event log", err)
		}
	}
	return events, nil
}

func (s sealed) Sessions(ctx context.Context) ([]Summary, error) {
	rows, err := s.Backend.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		var err1, err2 error
		rows[i].Goal, err1 = s.keys.OpenText(rows[i].Goal, indexGoal)
		rows[i].StopReason, err2 = s.keys.OpenText(rows[i].StopReason, indexStop)
		if err := errors.Join(err1, err2); err != nil {
			return nil, s.damaged(rows[i].SessionID, "the session index", err)
		}
	}
	return rows, nil
}
