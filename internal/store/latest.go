package store

import (
	"slices"
	"sync"

	"github.com/cosci-dev/cosci/internal/session"
)

// latest remembers, for the sessions this process works on, the newest checkpoint it has
// read, merged whole. A round's tournament reads checkpoint n, and its checkpoint n+1 is
// written over n: at thousands of hypotheses, reading and merging the chain of changes back
// to a whole checkpoint each time would cost more than the round's own work. Only what was
// read is remembered (a write may lose to an earlier one of the same number, which the
// store keeps), and a checkpoint never changes once written, so what is remembered is never
// stale; a worker that has not seen a checkpoint simply reads it.
type latest struct {
	mu    sync.Mutex
	by    map[string]remembered // session id -> its newest checkpoint seen
	order []string              // session ids, least recently kept first
}

type remembered struct {
	seq   int
	snap  session.Snapshot
	chain storedCheckpoint // how its stored chain stands, without the snapshot
}

// latestKept bounds the sessions remembered: a session of 5,000 hypotheses takes a few MB.
const latestKept = 32

// keep remembers checkpoint seq of snap's session, unless a newer one is remembered.
func (l *latest) keep(seq int, snap session.Snapshot, chain storedCheckpoint) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := snap.SessionID
	if r, ok := l.by[id]; ok && r.seq > seq {
		return
	}
	if l.by == nil {
		l.by = map[string]remembered{}
	}
	l.order = slices.DeleteFunc(l.order, func(x string) bool { return x == id })
	l.order = append(l.order, id)
	if len(l.order) > latestKept {
		delete(l.by, l.order[0])
		l.order = l.order[1:]
	}
	l.by[id] = remembered{seq: seq, snap: own(snap), chain: chain}
}

// get returns checkpoint seq of a session if it is the one remembered: a copy, which the
// caller may change.
func (l *latest) get(sessionID string, seq int) (session.Snapshot, storedCheckpoint, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.by[sessionID]
	if !ok || r.seq != seq {
		return session.Snapshot{}, storedCheckpoint{}, false
	}
	return own(r.snap), r.chain, true
}

// own copies the lists of a snapshot, so that neither the cache nor its caller sees the
// other's changes.
func own(snap session.Snapshot) session.Snapshot {
	snap.Hypotheses = slices.Clone(snap.Hypotheses)
	snap.Played = slices.Clone(snap.Played)
	snap.Edges = slices.Clone(snap.Edges)
	snap.Results = slices.Clone(snap.Results)
	return snap
}
