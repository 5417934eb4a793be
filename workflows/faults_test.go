package workflows

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
)

// refusing is a store backend that refuses every write while it is down, as a full disk or
// a database in read-only mode does.
type refusing struct {
	store.Backend
	mu        sync.Mutex
	down      bool
	downAtEnd bool   // go down at the session's final checkpoint
	only      string // refuse only the records whose keys start with this ("": all)
	refused   int
}

func (r *refusing) set(down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = down
}

func (r *refusing) refuse(what string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.down {
		return nil
	}
	r.refused++
	return fmt.Errorf("store: write %s: no space left on device", what)
}

func (r *refusing) Put(ctx context.Context, sessionID, key string, data []byte, once bool) error {
	if !strings.HasPrefix(key, r.only) {
		return r.Backend.Put(ctx, sessionID, key, data, once)
	}
	if err := r.refuse(key); err != nil {
		return err
	}
	return r.Backend.Put(ctx, sessionID, key, data, once)
}

func (r *refusing) Commit(ctx context.Context, c store.Commit) error {
	if r.only != "" {
		return r.Backend.Commit(ctx, c)
	}
	r.mu.Lock()
	if r.downAtEnd && c.Index != nil && c.Index.Status == session.Completed {
		r.down, r.downAtEnd = true, false
	}
	r.mu.Unlock()
	if err := r.refuse("the event log"); err != nil {
		return err
	}
	return r.Backend.Commit(ctx, c)
}

// TestUnwritableStoreSuspends: the store refuses writes part-way; the session suspends
// saying why, resumes by itself once the store takes writes again, and completes with
// every hypothesis: the turns the store refused were run again, none booked as failed.
func TestUnwritableStoreSuspends(t *testing.T) {
	dir, err := store.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	backend := &refusing{Backend: dir}
	h := newHarnessOn(t, store.New(backend, dir.Root()), time.Second, nil)
	h.at(3500*time.Millisecond, func() { backend.set(true) })
	checked := false
	h.at(5*time.Minute, func() {
		checked = true
		st := query[Status](h, QueryStatus)
		if st.State != session.Suspended || !strings.Contains(st.Reason, "cannot be used") || !strings.Contains(st.Reason, "no space left on device") {
			t.Errorf("with the store refusing writes: %s (%q); want suspended, saying why", st.State, st.Reason)
		}
		backend.set(false)
	})
	res := h.run(goal(12))
	if res.State != session.Completed || res.Hypotheses != 12 {
		t.Fatalf("result: %s with %d hypotheses (%s); want completed with 12", res.State, res.Hypotheses, res.StopReason)
	}
	if backend.refused == 0 || !checked {
		t.Fatalf("the store refused %d writes, checked while refusing %v; want some, and checked", backend.refused, checked)
	}
	var suspended, resumed bool
	for _, e := range h.history() {
		switch {
		case e.Kind == session.EventTransition && e.To == string(session.Suspended):
			suspended = strings.Contains(e.Detail, "no space left on device")
		case e.Kind == session.EventTransition && e.From == string(session.Suspended):
			resumed = e.Detail == "the session store works again"
		case e.Kind == session.EventTurn && strings.Contains(e.Detail, " failed: "):
			t.Errorf("turn %s booked as failed: %s", e.Turn, e.Detail)
		}
	}
	if !suspended || !resumed {
		t.Errorf("the log shows suspended for the store %v, resumed by itself %v; want both", suspended, resumed)
	}
	if n := len(storedIDs(t, h.store, res.SessionID)); n != 12 {
		t.Errorf("the store holds %d hypotheses; want 12", n)
	}
}

// TestDamagedRecordSuspends: a hypothesis record is garbled part-way; the turn that reads
// it fails, and the session suspends naming the session and the record instead of going on
// without it. Once the record is restored and the scientist resumes, the session completes.
func TestDamagedRecordSuspends(t *testing.T) {
	dir, err := store.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, store.New(dir, dir.Root()), time.Second, nil)
	const victim = "h-0002"
	key := "hypotheses/" + victim + ".json"
	var (
		sound   []byte
		id      string
		checked bool
	)
	h.at(2500*time.Millisecond, func() {
		id = query[Status](h, QueryStatus).SessionID
		if sound, err = dir.Get(context.Background(), id, key); err != nil {
			t.Fatalf("the record to garble: %v", err)
		}
		if err := dir.Put(context.Background(), id, key, sound[:len(sound)/2], false); err != nil {
			t.Fatal(err)
		}
	})
	h.at(10*time.Minute, func() {
		checked = true
		st := query[Status](h, QueryStatus)
		if st.State != session.Suspended || !strings.Contains(st.Reason, dir.Where(id, key)) || !strings.Contains(st.Reason, id) {
			t.Errorf("with %s garbled: %s (%q); want suspended, naming the session and the record", key, st.State, st.Reason)
		}
		if err := dir.Put(context.Background(), id, key, sound, false); err != nil {
			t.Fatal(err)
		}
		h.mustUpdate(Resume, nil)
	})
	res := h.run(goal(12))
	if res.State != session.Completed || res.Hypotheses != 12 {
		t.Fatalf("result: %s with %d hypotheses (%s); want completed with 12", res.State, res.Hypotheses, res.StopReason)
	}
	if sound == nil || !checked {
		t.Fatalf("garbled %v, checked while suspended %v; want both", sound != nil, checked)
	}
	for _, e := range h.history() {
		if e.Kind == session.EventTurn && strings.Contains(e.Detail, " failed: ") {
			t.Errorf("turn %s booked as failed: %s", e.Turn, e.Detail)
		}
	}
}

// storedIDs lists the ids of a session's hypothesis records.
func storedIDs(t *testing.T, st *store.Store, sessionID string) []string {
	t.Helper()
	keys, err := st.Backend().List(context.Background(), sessionID, "hypotheses/")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestUnwritableStoreAtTheEnd: the store stops taking writes at the final checkpoint. The session does not
// end without it and its report: it suspends, resumes when the store works again, and then
// writes both.
func TestUnwritableStoreAtTheEnd(t *testing.T) {
	dir, err := store.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	backend := &refusing{Backend: dir, downAtEnd: true}
	h := newHarnessOn(t, store.New(backend, dir.Root()), time.Second, nil)
	checked := false
	h.at(6*time.Minute, func() {
		checked = true
		st := query[Status](h, QueryStatus)
		if st.State != session.Suspended || !strings.Contains(st.Reason, "no space left on device") {
			t.Errorf("with the final checkpoint refused: %s (%q); want suspended, saying why", st.State, st.Reason)
		}
		backend.set(false)
	})
	res := h.run(goal(12))
	if res.State != session.Completed || res.Hypotheses != 12 || res.ReportPath == "" {
		t.Fatalf("result: %s with %d hypotheses, report %q; want completed with 12 and the report", res.State, res.Hypotheses, res.ReportPath)
	}
	if backend.refused == 0 || !checked {
		t.Fatalf("the store refused %d final checkpoints, checked while refusing %v; want some, and checked", backend.refused, checked)
	}
	last, err := h.store.LatestCheckpoint(context.Background(), res.SessionID)
	if err != nil || last.State != session.Completed || len(last.Hypotheses) != 12 {
		t.Errorf("the last checkpoint: %s with %d hypotheses (%v); want the completed session's", last.State, len(last.Hypotheses), err)
	}
}

// TestStoreFaultTheCheckMisses: the store refuses only the turns' records, which the watch's
// check does not write. The session resumes and fails again, but each time it waits twice
// as long before the next check, so over an hour it resumes a handful of times, not once
// every 20 seconds; once the store works, it completes with every hypothesis.
func TestStoreFaultTheCheckMisses(t *testing.T) {
	dir, err := store.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	backend := &refusing{Backend: dir, only: "turns/"}
	h := newHarnessOn(t, store.New(backend, dir.Root()), time.Second, nil)
	h.at(3500*time.Millisecond, func() { backend.set(true) })
	h.at(time.Hour, func() { backend.set(false) })
	res := h.run(goal(12))
	if res.State != session.Completed || res.Hypotheses != 12 {
		t.Fatalf("result: %s with %d hypotheses (%s); want completed with 12", res.State, res.Hypotheses, res.StopReason)
	}
	resumes := 0
	for _, e := range h.history() {
		if e.Kind == session.EventTransition && e.Detail == "the session store works again" {
			resumes++
		}
	}
	// Without the backoff the session resumed about every 20 s: some 180 times in the hour.
	// With it: after 1, 2, 4, 8, 16 and 32 minutes.
	t.Logf("resumed by itself %d times", resumes)
	if resumes < 2 || resumes > 8 {
		t.Errorf("the session resumed by itself %d times in the hour the store refused turns; want a handful", resumes)
	}
}
