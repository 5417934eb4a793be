package main

// A session's live stream, and what ends it. A stream is read with the access behind it:
// before each reading it sends, and on a clock between readings, it checks again that the
// sign-in holds (not signed out, nor signed out everywhere, as this desk has read the
// sign-outs) and that the person may still read the session (its access record as the
// store has it now), and it ends with a last event that says why when either fails. What
// this desk itself changes (a sign-out, a share taken back) it tells the open streams of
// that sign-in, person or session at once (liveStreams), so they check then and there.
// Every write has a deadline: a reader that stops reading loses its slot, its share of the
// session's watcher, and its connection.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/auth"
)

// How long a stream lasts, and how often it checks what it was opened with.
const (
	// streamLength is how long one stream lasts; the browser's EventSource then reconnects
	// by itself, and the person's access is checked again from the start.
	streamLength = 5 * time.Minute
	// signInCheck is how often an open stream asks whether its sign-in still holds: from
	// the revocation cache, so a sign-out read from the store (at most RevocationTTL old)
	// ends the stream within this much more.
	signInCheck = time.Second
	// shareCheck is how often an open stream reads its session's access record again when
	// nothing else makes it (a reading to send, a share changed at this desk).
	shareCheck = 5 * time.Second
	// streamWrite bounds each write of a stream: a reader that takes none of it for this
	// long is gone, or stalling, and loses its slot.
	streamWrite = 10 * time.Second
)

// Why a stream ends, as its last event says it.
const (
	endSignedOut = "signed out: sign in again to follow this session"
	endUnshared  = "this session is no longer shared with you"
	endUnchecked = "your access to this session cannot be checked now; reload the page"
)

// liveStreams are this desk's open streams, so that what takes access away here reaches
// them at once rather than at their next check.
type liveStreams struct {
	mu   sync.Mutex
	open map[*liveStream]bool
}

// liveStream is one open stream: whose, by which sign-in, on which session; check asks it
// to check its access now.
type liveStream struct {
	person, sid, session string
	check                chan struct{}
}

// add registers a stream; the function it returns removes it.
func (l *liveStreams) add(who auth.Who, session string) (*liveStream, func()) {
	s := &liveStream{person: who.ID, sid: who.SID, session: session, check: make(chan struct{}, 1)}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open == nil {
		l.open = map[*liveStream]bool{}
	}
	l.open[s] = true
	return s, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.open, s)
	}
}

// poke asks every open stream that matches to check its access now; it says how many.
func (l *liveStreams) poke(match func(*liveStream) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for s := range l.open {
		if match(s) {
			n++
			select { // one check pending is as good as two
			case s.check <- struct{}{}:
			default:
			}
		}
	}
	return n
}

// streamParts are the parts a stream keeps up to date, and the digest of each as the page
// shows it, from the stream's address.
func streamParts(q map[string][]string) (parts []string, sent map[string]string) {
	for _, p := range q["parts"] {
		for _, p := range strings.Split(p, ",") {
			if slices.Contains(liveParts, p) && !slices.Contains(parts, p) {
				parts = append(parts, p)
			}
		}
	}
	sent = map[string]string{}
	for _, s := range q["shown"] {
		if p, h, ok := strings.Cut(s, ":"); ok && slices.Contains(parts, p) {
			sent[p] = h
		}
	}
	return parts, sent
}

// events streams the session's live line and the parts of its page that change (Server-
// Sent Events), from the hub's one watcher, each part rendered for this person, for as
// long as their sign-in and their access to the session hold.
func (d *desk) events(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	who, rec, ok := d.allowed(w, r, id, access.ActRead)
	if !ok {
		return
	}
	why := "refused: too many streams"
	defer func() { // after the slot is given back
		d.log.Debug("desk: stream ended", "session", id, "who", who.ID, "why", why)
		if d.streamEnded != nil {
			d.streamEnded(who.ID, id, why)
		}
	}()
	release, ok := d.streams.take(who.ID)
	if !ok {
		tooMany(w, 0, fmt.Sprintf("at most %d live pages at once for one person; close one (the page still reads without its live line)", maxStreams))
		return
	}
	defer release()
	s := &stream{d: d, w: w, rc: http.NewResponseController(w), who: who, rec: rec, owner: rec.Owner, id: id}
	s.parts, s.sent = streamParts(r.URL.Query())
	since, _ := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
	why = s.run(r.Context(), since)
}

// stream is one open stream's state.
type stream struct {
	d     *desk
	w     http.ResponseWriter
	rc    *http.ResponseController
	who   auth.Who
	rec   access.Record // the session's access record as last read, which the parts are rendered for
	owner string        // the session's owner when it was opened: its owner while the store has no record
	id    string
	parts []string
	sent  map[string]string
}

// run sends the stream until it ends, and says why it ended.
func (s *stream) run(ctx context.Context, since int64) string {
	s.w.Header().Set("Content-Type", "text/event-stream")
	s.w.Header().Set("Cache-Control", "no-store")
	s.deadline()
	s.w.WriteHeader(http.StatusOK)
	if err := s.rc.Flush(); err != nil {
		return "write: " + err.Error()
	}
	live, done := s.d.live.add(s.who, s.id)
	defer done()
	readings, unsubscribe := s.d.hub.subscribe(s.id)
	defer unsubscribe()
	end := time.NewTimer(streamLength)
	defer end.Stop()
	signIn, share := time.NewTicker(s.d.signInCheck), time.NewTicker(s.d.shareCheck)
	defer signIn.Stop()
	defer share.Stop()
	for {
		var why string
		select {
		case <-ctx.Done():
			return "the reader left"
		case <-end.C:
			return "its time is up; the browser reconnects"
		case <-live.check:
			why = s.check(ctx, true)
		case <-signIn.C:
			why = s.check(ctx, false)
		case <-share.C:
			why = s.check(ctx, true)
		case snap := <-readings:
			if snap.At.UnixNano() < since {
				continue // the page shows a later moment already
			}
			if why = s.check(ctx, true); why == "" {
				if err := s.send(snap); err != nil {
					return "write: " + err.Error()
				}
			}
		}
		if why != "" {
			_ = s.event("end", why)
			return why
		}
	}
}

// check says why the stream must end now, "" while the sign-in holds and (with shares)
// the person may still read the session, whose record it keeps to render for.
func (s *stream) check(ctx context.Context, shares bool) string {
	who, err := s.d.auth.Recheck(ctx, s.who)
	if err != nil {
		return endSignedOut
	}
	s.who = who // the roles as the policy has them now
	if shares {
		rec, found, err := s.d.st.Access(ctx, s.id)
		if err != nil {
			s.d.log.Warn("desk: a stream cannot read its session's access", "session", s.id, "err", err)
			return endUnchecked
		}
		if !found {
			rec = access.Record{SessionID: s.id, Owner: s.owner}
		}
		s.rec = rec
	}
	if !access.Decide(s.who.Identity, s.rec, access.ActRead).Allowed {
		return endUnshared
	}
	return ""
}

// deadline gives the next write its deadline.
func (s *stream) deadline() {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.d.streamWrite))
}

// event writes one event, with its deadline, and flushes it.
func (s *stream) event(name, data string) error {
	s.deadline()
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, strings.ReplaceAll(data, "\n", " ")); err != nil {
		return err
	}
	return s.rc.Flush()
}

// send writes a reading's live line and each part that differs from what the page shows
// (sent: the digest of each part as the page has it, updated).
func (s *stream) send(snap *snapshot) error {
	line := "not answering just now; this line follows the session again when it does"
	if snap.Err == nil {
		line = progressLine(snap.View.Progress)
	}
	if line != s.sent["progress"] {
		s.sent["progress"] = line
		if err := s.event("progress", line); err != nil {
			return err
		}
	}
	if snap.Err != nil {
		return nil
	}
	data := s.d.sessionData(s.who, s.rec, s.id, snap, 0)
	for _, p := range s.parts {
		html, err := s.d.part(p, data)
		if err != nil {
			s.d.log.Warn("desk: rendering a live part", "part", p, "err", err)
			continue
		}
		if digest(html) == s.sent[p] {
			continue
		}
		s.sent[p] = digest(html)
		msg, _ := json.Marshal(map[string]string{"id": p, "html": html}) // one line: JSON escapes newlines
		if err := s.event("part", string(msg)); err != nil {
			return err
		}
	}
	return nil
}
