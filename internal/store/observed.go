package store

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/cosci-dev/cosci/internal/session"
)

// Observer is told of every backend operation (get, list, put, copy, commit, events,
// sessions): how long it took and how it failed. A record that is missing is not a
// failure: the store asks for records that may not exist yet.
type Observer func(ctx context.Context, op string, took time.Duration, err error)

// Observe has the store tell f of every backend operation from now on; the worker's
// metrics use it. Call it before the store is shared.
func (s *Store) Observe(f Observer) {
	s.observe = f
	s.rewrap()
}

type observed struct {
	Backend
	f Observer
}

func (o observed) done(ctx context.Context, op string, began time.Time, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	o.f(ctx, op, time.Since(began), err)
}

func (o observed) Get(ctx context.Context, sessionID, key string) ([]byte, error) {
	began := time.Now()
	b, err := o.Backend.Get(ctx, sessionID, key)
	o.done(ctx, "get", began, err)
	return b, err
}

func (o observed) List(ctx context.Context, sessionID, dir string) ([]string, error) {
	began := time.Now()
	keys, err := o.Backend.List(ctx, sessionID, dir)
	o.done(ctx, "list", began, err)
	return keys, err
}

func (o observed) Put(ctx context.Context, sessionID, key string, data []byte, once bool) error {
	began := time.Now()
	err := o.Backend.Put(ctx, sessionID, key, data, once)
	o.done(ctx, "put", began, err)
	return err
}

func (o observed) Copy(ctx context.Context, from, to string, keys []string) error {
	began := time.Now()
	err := o.Backend.Copy(ctx, from, to, keys)
	o.done(ctx, "copy", began, err)
	return err
}

func (o observed) Commit(ctx context.Context, c Commit) error {
	began := time.Now()
	err := o.Backend.Commit(ctx, c)
	o.done(ctx, "commit", began, err)
	return err
}

func (o observed) Events(ctx context.Context, sessionID string) ([]session.Event, error) {
	began := time.Now()
	events, err := o.Backend.Events(ctx, sessionID)
	o.done(ctx, "events", began, err)
	return events, err
}

func (o observed) Sessions(ctx context.Context) ([]Summary, error) {
	began := time.Now()
	rows, err := o.Backend.Sessions(ctx)
	o.done(ctx, "sessions", began, err)
	return rows, err
}
