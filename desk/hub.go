package main

// The live page. However many pages show a session, one watcher reads it (one page query
// a second at most, and the conversation's texts from the store when the conversation
// changed) and hands each new reading to every page (Server-Sent Events); each page's
// stream renders from it the parts that person sees (live.go). The watcher starts with
// the first page and stops when the last one leaves, so an idle desk asks nothing.

import (
	"context"
	"reflect"
	"sync"
	"time"

	"github.com/cosci-dev/cosci/workflows"
)

// snapshot is what one watcher read of a session: the page query's answer (the ranking's
// first page, the conversation's latest) and the conversation with its texts.
type snapshot struct {
	View    workflows.PageView
	Conv    ConversationPage
	ConvErr string
	Err     error     // the session did not answer
	At      time.Time // when it was asked for: it shows the session at this moment or later
}

// same says whether two readings show the same thing.
func (s *snapshot) same(o *snapshot) bool {
	return o != nil && reflect.DeepEqual(s.View, o.View) && reflect.DeepEqual(s.Conv, o.Conv) &&
		s.ConvErr == o.ConvErr && errText(s.Err) == errText(o.Err)
}

// sessionSource reads a session for its watcher; before is the last reading, whose
// conversation it may keep when the session's did not change.
type sessionSource interface {
	read(ctx context.Context, id string, before *snapshot) *snapshot
}

// hub keeps one watcher per watched session.
type hub struct {
	src      sessionSource
	interval time.Duration // between two readings of one session (1 s)
	mu       sync.Mutex
	watchers map[string]*watcher
}

type watcher struct {
	id     string
	subs   map[chan *snapshot]bool
	last   *snapshot // the latest reading, for a page that joins
	stop   context.CancelFunc
	exited chan struct{} // closed when the watcher's goroutine has returned
}

func newHub(src sessionSource, interval time.Duration) *hub {
	return &hub{src: src, interval: interval, watchers: map[string]*watcher{}}
}

// subscribe returns a channel of the session's readings (the latest one first, if known)
// and a function that ends the subscription. A page too slow to take a reading gets the
// next one in its place: it always ends with the latest.
func (h *hub) subscribe(id string) (<-chan *snapshot, func()) {
	ch := make(chan *snapshot, 1)
	h.mu.Lock()
	w := h.watchers[id]
	if w == nil {
		ctx, cancel := context.WithCancel(context.Background())
		w = &watcher{id: id, subs: map[chan *snapshot]bool{}, stop: cancel, exited: make(chan struct{})}
		h.watchers[id] = w
		go h.watch(ctx, w)
	}
	w.subs[ch] = true
	if w.last != nil {
		ch <- w.last
	}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(w.subs, ch)
		if len(w.subs) == 0 && h.watchers[id] == w {
			w.stop()
			delete(h.watchers, id)
		}
	}
}

// watch reads the session, waits an interval after each answer (so that a slow answer
// never brings the next question closer: at most one a second, one at a time), and sends
// each changed reading to every subscriber.
func (h *hub) watch(ctx context.Context, w *watcher) {
	defer close(w.exited)
	t := time.NewTimer(h.interval)
	defer t.Stop()
	for {
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		h.mu.Lock()
		before := w.last
		h.mu.Unlock()
		snap := h.src.read(qctx, w.id, before)
		cancel()
		if ctx.Err() != nil {
			return
		}
		h.mu.Lock()
		if !snap.same(w.last) {
			w.last = snap
			for ch := range w.subs {
				select { // the newest replaces one not taken yet
				case <-ch:
				default:
				}
				ch <- snap
			}
		}
		h.mu.Unlock()
		t.Reset(h.interval)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// watching counts the sessions with a watcher (tests, metrics).
func (h *hub) watching() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.watchers)
}
