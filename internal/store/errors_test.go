package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// broken is a Backend of records in memory whose reads or writes fail with given errors.
type broken struct {
	memory
	get, put error
}

func (b *broken) Get(ctx context.Context, sessionID, key string) ([]byte, error) {
	if b.get != nil {
		return nil, b.get
	}
	return b.memory.Get(ctx, sessionID, key)
}

func (b *broken) Put(ctx context.Context, sessionID, key string, data []byte, once bool) error {
	if b.put != nil {
		return b.put
	}
	return b.memory.Put(ctx, sessionID, key, data, once)
}

// TestFaultKinds: a backend's failure reaches the store's caller as the kind of fault it
// is. A write that fails is the store being unavailable, even when the error says "no such
// file" (a directory gone mid-write: the recording of a session's faults found that it
// passed for a missing record, and the session waited for a repair nobody could make). A
// read of a record that is not there is a missing record; any other failed read is the
// store being unavailable; a cancelled context is neither.
func TestFaultKinds(t *testing.T) {
	noFile := fmt.Errorf("store: link .tmp-1 hypotheses/h1.json: %w", fs.ErrNotExist)
	for _, tc := range []struct {
		name        string
		get, put    error
		write       bool // the failing call writes (PutHypothesis) or reads (Hypothesis)
		unavailable bool
		missing     bool
	}{
		{name: "write: no such file", put: noFile, write: true, unavailable: true},
		{name: "write: disk full", put: errors.New("store: write: no space left on device"), write: true, unavailable: true},
		{name: "write: cancelled", put: fmt.Errorf("store: %w", context.Canceled), write: true},
		{name: "read: no such record", get: fmt.Errorf("store: %w", fs.ErrNotExist), missing: true},
		{name: "read: connection refused", get: errors.New("store: read: connection refused"), unavailable: true},
		{name: "read: cancelled", get: fmt.Errorf("store: %w", context.Canceled)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(&broken{get: tc.get, put: tc.put}, "memory")
			var err error
			if tc.write {
				err = s.PutHypothesis(t.Context(), "s-1", hyp("h1", "t"))
			} else {
				_, err = s.Hypothesis(t.Context(), "s-1", "h1")
			}
			var u *UnavailableError
			if err == nil || errors.As(err, &u) != tc.unavailable || (!tc.unavailable && errors.Is(err, fs.ErrNotExist) != tc.missing) {
				t.Errorf("error %v (%T): unavailable %v, missing %v; want %v, %v", err, err, errors.As(err, &u), errors.Is(err, fs.ErrNotExist), tc.unavailable, tc.missing)
			}
		})
	}
}
