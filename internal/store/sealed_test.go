package store

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

func keysOf(t *testing.T, lines ...string) *keyring.Keyring {
	t.Helper()
	k, err := keyring.Parse("test keys", strings.Join(lines, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newKey(t *testing.T, id string) string {
	t.Helper()
	line, err := keyring.New(id)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// TestEncryptedAtRest: with keys, no research text is readable in the backend (records,
// the event log, the session index), yet the store reads back what it wrote; another
// process with the same keys reads it too, one without them is refused with the key's
// name, never handed half a session; a rotated keyring reads the old key's records and
// seals new ones with the new key; records written before encryption still read.
func TestEncryptedAtRest(t *testing.T) {
	eachPlainStore(t, func(t *testing.T, plain *Store) {
		ctx := tctx(t)
		const sid = "s-secret"
		before := research.Hypothesis{ID: "h-0", Title: "Written before encryption", Statement: "A plain old statement about ageing cells."}
		if err := plain.PutHypothesis(ctx, sid, before); err != nil {
			t.Fatal(err)
		}

		old := newKey(t, "2026-05")
		s := New(plain.Backend(), plain.Location())
		s.Encrypt(keysOf(t, old))
		h := research.Hypothesis{ID: "h-1", Title: "Persister dormancy via ppGpp", Statement: "Persisters survive because ppGpp halts translation."}
		if err := s.PutHypothesis(ctx, sid, h); err != nil {
			t.Fatal(err)
		}
		snap := bigSnapshot(sid, 1, 3)
		snap.Goal = "Find why some bacteria tolerate antibiotics"
		evs := []session.Event{{Seq: 1, Time: "2026-01-01T00:00:00Z", Kind: session.EventCommand, Command: "refine-goal", Detail: "toward toxin-antitoxin modules"}}
		if _, err := s.PutCheckpoint(ctx, snap, evs); err != nil {
			t.Fatal(err)
		}

		// Nothing readable in the backend.
		raw, err := s.Backend().Get(ctx, sid, hypothesesDir+"/h-1.json")
		if err != nil || !keyring.IsSealed(raw) || bytes.Contains(raw, []byte("ppGpp")) {
			t.Errorf("the hypothesis at rest: sealed %v, %v", keyring.IsSealed(raw), err)
		}
		rawEvents, err := s.Backend().Events(ctx, sid)
		if err != nil || len(rawEvents) != 1 || strings.Contains(rawEvents[0].Detail, "toxin") || rawEvents[0].Command != "refine-goal" {
			t.Errorf("the event log at rest: %+v, %v; want the detail sealed and the command readable", rawEvents, err)
		}
		rows, err := s.Backend().Sessions(ctx)
		if err != nil || len(rows) != 1 || strings.Contains(rows[0].Goal, "bacteria") || rows[0].SessionID != sid {
			t.Errorf("the session index at rest: %+v, %v; want the goal sealed and the id readable", rows, err)
		}

		// Another process with the keys, after a rotation, reads everything.
		next := newKey(t, "2026-11")
		rotated := New(plain.Backend(), plain.Location())
		rotated.Encrypt(keysOf(t, next, old))
		if got, err := rotated.Hypothesis(ctx, sid, "h-1"); err != nil || got.Statement != h.Statement {
			t.Errorf("after rotation: %+v, %v", got, err)
		}
		if got, err := rotated.Hypothesis(ctx, sid, "h-0"); err != nil || got.Title != before.Title {
			t.Errorf("the record from before encryption: %+v, %v", got, err)
		}
		if got, err := rotated.Events(ctx, sid); err != nil || got[0].Detail != evs[0].Detail {
			t.Errorf("events after rotation: %+v, %v", got, err)
		}
		if got, err := rotated.Sessions(ctx); err != nil || got[0].Goal != snap.Goal {
			t.Errorf("index after rotation: %+v, %v", got, err)
		}
		if cp, err := rotated.Checkpoint(ctx, sid, 1); err != nil || cp.Goal != snap.Goal || len(cp.Hypotheses) != 3 {
			t.Errorf("checkpoint after rotation: %v", err)
		}
		h2 := research.Hypothesis{ID: "h-2", Title: "Sealed with the new key", Statement: "Toxins slow growth."}
		if err := rotated.PutHypothesis(ctx, sid, h2); err != nil {
			t.Fatal(err)
		}
		if raw, _ := s.Backend().Get(ctx, sid, hypothesesDir+"/h-2.json"); !bytes.Contains(raw, []byte("2026-11")) {
			t.Error("a record written after the rotation is not sealed with the new key")
		}

		// Without the keys, or with only the new one: a clear refusal.
		for name, k := range map[string]*keyring.Keyring{"no keys": nil, "only the new key": keysOf(t, next)} {
			other := New(plain.Backend(), plain.Location())
			other.Encrypt(k)
			_, err := other.Hypothesis(ctx, sid, "h-1")
			var damaged *DamagedError
			if !errors.As(err, &damaged) || !strings.Contains(err.Error(), "key 2026-05") {
				t.Errorf("%s: %v; want a DamagedError naming key 2026-05", name, err)
			}
			if _, err := other.Events(ctx, sid); err == nil || !strings.Contains(err.Error(), "2026-05") {
				t.Errorf("%s: events: %v; want an error naming key 2026-05", name, err)
			}
		}
	})
}
