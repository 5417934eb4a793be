package main

// The live line. However many pages show a session, one watcher asks Temporal for its
// progress, at most once a second, and hands each new line to every page (Server-Sent
// Events). The watcher starts with the first page and stops a little after the last one
// leaves, so an idle desk asks nothing.

import (
	"context"
	"sync"
	"time"

	"github.com/cosci-dev/cosci/internal/session"
)

// progressSource is what a watcher asks: one query per tick.
type progressSource interface {
	Progress(ctx context.Context, id string) (session.Progress, error)
}

// hub keeps one watcher per watched session.
type hub struct {
	src      progressSource
	interval time.Duration // between two queries of one session (1 s)
	mu       sync.Mutex
	watchers map[string]*watcher
}

type watcher struct {
	id   string
	subs map[chan string]bool
	last string // the latest line, for a page that joins
	stop context.CancelFunc
}

func newHub(src progressSource, interval time.Duration) *hub {
	return &hub{src: src, interval: interval, watchers: map[string]*watcher{}}
}

// subscribe returns a channel of the session's lines (the latest one first, if known) and
// a function that ends the subscription.
func (h *hub) subscribe(id string) (<-chan string, func()) {
	ch := make(chan string, 4)
	h.mu.Lock()
	w := h.watchers[id]
	if w == nil {
		ctx, cancel := context.WithCancel(context.Background())
		w = &watcher{id: id, subs: map[chan string]bool{}, stop: cancel}
		h.watchers[id] = w
		go h.watch(ctx, w)
	}
	w.subs[ch] = true
	if w.last != "" {
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

// watch asks for the session's progress, waits an interval after each answer (so that a
// slow answer never brings the next question closer: at most one a second, one at a time),
// and sends each changed line to every subscriber; a subscriber too slow to take it misses
// that line, never blocks the others.
func (h *hub) watch(ctx context.Context, w *watcher) {
	t := time.NewTimer(h.interval)
	defer t.Stop()
	for {
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		p, err := h.src.Progress(qctx, w.id)
		cancel()
		line := ""
		if err != nil {
			line = "not answering: " + err.Error()
		} else {
			line = progressLine(p)
		}
		h.mu.Lock()
		if line != w.last {
			w.last = line
			for ch := range w.subs {
				select {
				case ch <- line:
				default:
				}
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
