package main

// What one person may take of the desk at once: live streams (each holds a connection and
// a share of a watcher), questions (each a model turn, paid for), and sessions started (each
// many model turns) an hour and running at once. The counts of streams, questions and
// starts are this desk's: several replicas each allow as many, which bounds what one
// person costs all the same; the running sessions are counted from Temporal's list, the
// same at every desk. Nothing of a session lives here.

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// perPerson counts what each person holds open, up to a limit.
type perPerson struct {
	limit int
	mu    sync.Mutex
	held  map[string]int
}

func newPerPerson(limit int) *perPerson { return &perPerson{limit: limit, held: map[string]int{}} }

// take holds one more for who, if they hold fewer than the limit; release gives it back.
func (p *perPerson) take(who string) (release func(), ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held[who] >= p.limit {
		return nil, false
	}
	p.held[who]++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.held[who]--; p.held[who] <= 0 {
			delete(p.held, who)
		}
	}, true
}

// perWindow allows each person at most limit acts in any window (a sliding one); a limit
// of 0 allows any number.
type perWindow struct {
	limit  int
	window time.Duration
	now    func() time.Time
	mu     sync.Mutex
	acts   map[string][]time.Time
}

func newPerWindow(limit int, window time.Duration, now func() time.Time) *perWindow {
	return &perWindow{limit: limit, window: window, now: now, acts: map[string][]time.Time{}}
}

// allow counts an act of who now, if the window before holds fewer than the limit; else
// it says how long until one more is allowed.
func (p *perWindow) allow(who string) (wait time.Duration, ok bool) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	recent := p.acts[who][:0]
	for _, t := range p.acts[who] {
		if now.Sub(t) < p.window {
			recent = append(recent, t)
		}
	}
	if p.limit > 0 && len(recent) >= p.limit {
		p.acts[who] = recent
		return p.window - now.Sub(recent[0]), false
	}
	p.acts[who] = append(recent, now)
	return 0, true
}

// tooMany answers 429 with when to try again.
func tooMany(w http.ResponseWriter, wait time.Duration, what string) {
	secs := max(int(wait.Round(time.Second)/time.Second), 1)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	http.Error(w, fmt.Sprintf("too many requests: %s; try again in %d s", what, secs), http.StatusTooManyRequests)
}
