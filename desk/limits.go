package main

// What one person may take of the desk at once: live streams (each holds a connection and
// a share of a watcher) and questions (each a model turn, paid for). The counts are this
// desk's: several replicas each allow as many, which bounds what one person costs all the
// same. Nothing of a session lives here.

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

// perMinute allows each person at most limit acts in any minute (a sliding window).
type perMinute struct {
	limit int
	now   func() time.Time
	mu    sync.Mutex
	acts  map[string][]time.Time
}

func newPerMinute(limit int, now func() time.Time) *perMinute {
	return &perMinute{limit: limit, now: now, acts: map[string][]time.Time{}}
}

// allow counts an act of who now, if the minute before holds fewer than the limit; else
// it says how long until one more is allowed.
func (p *perMinute) allow(who string) (wait time.Duration, ok bool) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	recent := p.acts[who][:0]
	for _, t := range p.acts[who] {
		if now.Sub(t) < time.Minute {
			recent = append(recent, t)
		}
	}
	if p.limit > 0 && len(recent) >= p.limit {
		p.acts[who] = recent
		return time.Minute - now.Sub(recent[0]), false
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
