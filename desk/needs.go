package main

// What needs you: across sessions, which wait for the signed-in person (tool calls to
// approve, proposals to confirm, a suspension of their own) and why. Each running
// session keeps that in its memo (workflows.MemoNeeds), which Temporal's list returns, so
// no session is asked: the list is read at most once every needsTTL for every person and
// page of this desk. /needs answers the desk's script, which keeps the page's title ("(2)
// cosci desk") and, if the person opted in, the browser's notifications up to date.

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/auth"
)

// needsTTL is how long the desk believes the session list it read.
const needsTTL = 5 * time.Second

// listCache is the newest sessions, as read at most once every needsTTL.
type listCache struct {
	mu   sync.Mutex
	rows []Row
	at   time.Time
}

// sessions is the newest sessions (Backend.List), from the cache while it is fresh.
func (d *desk) sessions(ctx context.Context) ([]Row, error) {
	c := &d.listed
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := d.now(); c.rows == nil || now.Sub(c.at) >= needsTTL || now.Before(c.at) {
		rows, err := d.be.List(ctx, listLimit)
		if err != nil {
			return nil, err
		}
		c.rows, c.at = rows, now
	}
	return append([]Row(nil), c.rows...), nil
}

// waitsFor says whether a session waits for who: it needs its scientist, and who is its
// owner or may steer it by a grant (an admin's reach over every session is not a call to
// each of them).
func (d *desk) waitsFor(who auth.Who, rec access.Record, row Row) bool {
	if !row.Needs.Any() || who.ID == "" {
		return false
	}
	return access.Owned(rec) && rec.Owner == who.ID || rec.Level(who.ID) == access.Steer
}

// needing is one session that waits for the person, for /needs.
type needing struct {
	ID   string `json:"id"`
	Why  string `json:"why"`
	Goal string `json:"goal,omitempty"`
}

// needs answers the sessions that wait for the signed-in person, as JSON.
func (d *desk) needs(w http.ResponseWriter, r *http.Request) {
	who, _ := auth.WhoFrom(r.Context())
	rows, err := d.sessions(r.Context())
	if err != nil {
		req := d.logFailure(r, err)
		http.Error(w, "the sessions cannot be listed just now; the page asks again by itself (request id "+req+", in the desk's log)", http.StatusBadGateway)
		return
	}
	out := struct {
		Count    int       `json:"count"`
		Sessions []needing `json:"sessions"`
	}{Sessions: []needing{}}
	for _, row := range rows {
		if !row.Needs.Any() {
			continue
		}
		rec, err := d.record(r.Context(), row.ID, row.Scientist)
		if err != nil || !d.waitsFor(who, rec, row) {
			continue
		}
		out.Sessions = append(out.Sessions, needing{ID: row.ID, Why: row.Needs.Why(), Goal: row.Goal})
	}
	out.Count = len(out.Sessions)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
