package store

import (
	"bytes"
	"encoding/base64"
	"errors"
	"slices"
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
// seals new ones with the new key; records written before encryption read while migrating.
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
		// The record from before encryption is refused, naming it, unless migrating.
		var damaged *DamagedError
		if _, err := rotated.Hypothesis(ctx, sid, "h-0"); !errors.As(err, &damaged) || damaged.Unbound == "" || !strings.Contains(err.Error(), "h-0.json") || !strings.Contains(err.Error(), "COSCI_STORE_MIGRATING=1") {
			t.Errorf("the record from before encryption, not migrating: %v; want it refused, named, with what to set", err)
		}
		migrating := New(plain.Backend(), plain.Location())
		migrating.Encrypt(keysOf(t, next, old))
		migrating.Migrating(true)
		if got, err := migrating.Hypothesis(ctx, sid, "h-0"); err != nil || got.Title != before.Title {
			t.Errorf("the record from before encryption, migrating: %+v, %v", got, err)
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

// sealedV1 seals as the store did before records were bound to their session (the old
// form, cosci-sealed-1): a record bound to its key, a text to what it is.
func sealedV1(t *testing.T, k *keyring.Keyring, plain []byte, context string) []byte {
	t.Helper()
	id, sealed := k.Seal(plain, []byte(context))
	b := append([]byte("cosci-sealed-1\x00"), byte(len(id)))
	return append(append(b, id...), sealed...)
}

func textV1(t *testing.T, k *keyring.Keyring, s, context string) string {
	return "sealed:" + base64.RawStdEncoding.EncodeToString(sealedV1(t, k, []byte(s), context))
}

// wantUnbound checks err refuses a record as not sealed to its place (how: "not sealed" or
// "earlier version"), naming it (where).
func wantUnbound(t *testing.T, what string, err error, how, where string) {
	t.Helper()
	var damaged *DamagedError
	if !errors.As(err, &damaged) || !strings.Contains(damaged.Unbound, how) || !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), "COSCI_STORE_MIGRATING=1") {
		t.Errorf("%s: %v; want it refused as %q, naming %s, saying to set COSCI_STORE_MIGRATING=1 if migrating", what, err, how, where)
	}
}

// wantMoved checks err refuses a sealed record that does not open where it is, naming it.
func wantMoved(t *testing.T, what string, err error, where string) {
	t.Helper()
	var damaged *DamagedError
	if !errors.As(err, &damaged) || damaged.Key != "" || damaged.Unbound != "" || !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), "moved") {
		t.Errorf("%s: %v; want a DamagedError naming %s, saying it was damaged or moved", what, err, where)
	}
}

// TestSealedToPlace: whoever can write the store cannot move a sealed record, event
// detail or index text to another session or key, nor slip in a plain one: each is
// refused with the record named. A migrating deployment reads plain texts and those of the
// old form (sealed without the session), but an old-form record still does not move to
// another key, and a new record relabelled as old does not open.
func TestSealedToPlace(t *testing.T) {
	eachPlainStore(t, func(t *testing.T, plain *Store) {
		ctx := tctx(t)
		k := keysOf(t, newKey(t, "k"))
		s := New(plain.Backend(), plain.Location())
		s.Encrypt(k)
		raw := s.Backend()
		h := research.Hypothesis{ID: "h-1", Title: "Persister dormancy", Statement: "ppGpp halts translation."}
		for _, sid := range []string{"a", "b"} {
			if err := s.PutHypothesis(ctx, sid, h); err != nil {
				t.Fatal(err)
			}
			snap := bigSnapshot(sid, 1, 1)
			snap.Goal, snap.StopReason = "goal of "+sid, "stopped "+sid
			evs := []session.Event{
				{Seq: 1, Kind: session.EventCommand, Command: "refine-goal", Detail: "detail 1 of " + sid},
				{Seq: 2, Kind: session.EventCommand, Command: "refine-goal", Detail: "detail 2 of " + sid},
			}
			if _, err := s.PutCheckpoint(ctx, snap, evs); err != nil {
				t.Fatal(err)
			}
		}
		hKey := hypothesesDir + "/h-1.json"

		// A record moved to another session, or to another key of its own.
		sealedA, err := raw.Get(ctx, "a", hKey)
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.Put(ctx, "c", hKey, sealedA, false); err != nil {
			t.Fatal(err)
		}
		_, err = s.Hypothesis(ctx, "c", "h-1")
		wantMoved(t, "a record moved to another session", err, s.Where("c", hKey))
		if err := raw.Put(ctx, "a", hypothesesDir+"/h-2.json", sealedA, false); err != nil {
			t.Fatal(err)
		}
		_, err = s.Hypothesis(ctx, "a", "h-2")
		wantMoved(t, "a record moved to another key", err, s.Where("a", hypothesesDir+"/h-2.json"))

		// Event details and index texts moved to another session.
		rawEvents, err := raw.Events(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.Commit(ctx, Commit{SessionID: "d", Events: rawEvents}); err != nil {
			t.Fatal(err)
		}
		_, err = s.Events(ctx, "d")
		wantMoved(t, "event details moved to another session", err, "event 1")
		rows, err := raw.Sessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		row := rows[slices.IndexFunc(rows, func(r Summary) bool { return r.SessionID == "a" })]
		row.SessionID = "e"
		if err := raw.Commit(ctx, Commit{SessionID: "e", Index: &row}); err != nil {
			t.Fatal(err)
		}
		_, err = s.Sessions(ctx)
		wantMoved(t, "an index row's goal moved to another session", err, "goal in the session index")
		swapped := rawEvents[1]
		swapped.Seq, swapped.Detail = 3, rawEvents[0].Detail
		if err := raw.Commit(ctx, Commit{SessionID: "a", Events: []session.Event{swapped}}); err != nil {
			t.Fatal(err)
		}
		_, err = s.Events(ctx, "a")
		wantMoved(t, "an event's detail moved to another event", err, "event 3")

		// Plain texts where sealed ones belong, then the old form; refused, then read while
		// migrating.
		plainH, _ := encode(hKey, research.Hypothesis{ID: "h-1", Title: "Slipped in"})
		oldH := sealedV1(t, k, plainH, hKey)
		for _, tc := range []struct {
			form       string
			record     []byte
			detail     string
			goal, stop string
			how        string
		}{
			{"plain", plainH, "plain detail", "plain goal", "plain stop", "not sealed"},
			{"old form", oldH, textV1(t, k, "plain detail", "event detail"), textV1(t, k, "plain goal", "session goal"), textV1(t, k, "plain stop", "session stop reason"), "earlier version"},
		} {
			sid := "f-" + strings.ReplaceAll(tc.form, " ", "-")
			if err := raw.Put(ctx, sid, hKey, tc.record, false); err != nil {
				t.Fatal(err)
			}
			ev := session.Event{Seq: 1, Kind: session.EventCommand, Command: "stop", Detail: tc.detail}
			row := Summary{SessionID: sid, Status: "completed", Goal: tc.goal, StopReason: tc.stop, Checkpoint: 1}
			if err := raw.Commit(ctx, Commit{SessionID: sid, Events: []session.Event{ev}, Index: &row}); err != nil {
				t.Fatal(err)
			}
			_, err := s.Hypothesis(ctx, sid, "h-1")
			wantUnbound(t, tc.form+" record", err, tc.how, s.Where(sid, hKey))
			_, err = s.Events(ctx, sid)
			wantUnbound(t, tc.form+" event detail", err, tc.how, "event 1")

			m := New(raw, plain.Location())
			m.Encrypt(k)
			m.Migrating(true)
			if got, err := m.Hypothesis(ctx, sid, "h-1"); err != nil || got.Title != "Slipped in" {
				t.Errorf("%s record, migrating: %+v, %v", tc.form, got, err)
			}
			if got, err := m.Events(ctx, sid); err != nil || len(got) != 1 || got[0].Detail != "plain detail" {
				t.Errorf("%s event, migrating: %+v, %v", tc.form, got, err)
			}
			// The moved rows aside, the index reads.
			if err := raw.Commit(ctx, Commit{SessionID: "e", Index: &Summary{SessionID: "e", Checkpoint: 2}}); err != nil {
				t.Fatal(err)
			}
			got, err := m.Sessions(ctx)
			if i := slices.IndexFunc(got, func(r Summary) bool { return r.SessionID == sid }); err != nil || i < 0 || got[i].Goal != "plain goal" || got[i].StopReason != "plain stop" {
				t.Errorf("%s index row, migrating: %v", tc.form, err)
			}
			_, err = s.Sessions(ctx)
			wantUnbound(t, tc.form+" index row", err, tc.how, "session index")

			// This row aside (no texts), the next form's row is the one refused.
			if err := raw.Commit(ctx, Commit{SessionID: sid, Index: &Summary{SessionID: sid, Checkpoint: 2}}); err != nil {
				t.Fatal(err)
			}

			// An old-form record moved to another key does not open, even migrating.
			if tc.form == "old form" {
				if err := raw.Put(ctx, sid, hypothesesDir+"/h-9.json", oldH, false); err != nil {
					t.Fatal(err)
				}
				_, err := m.Hypothesis(ctx, sid, "h-9")
				wantMoved(t, "an old-form record moved to another key, migrating", err, "h-9.json")
			}
		}

		// A record sealed now, relabelled as the old form to be read with the old binding
		// in another session: it does not open.
		down := append([]byte("cosci-sealed-1\x00"), sealedA[len("cosci-sealed-2\x00"):]...)
		if err := raw.Put(ctx, "g", hKey, down, false); err != nil {
			t.Fatal(err)
		}
		m := New(raw, plain.Location())
		m.Encrypt(k)
		m.Migrating(true)
		_, err = m.Hypothesis(ctx, "g", "h-1")
		wantMoved(t, "a new record relabelled as old and moved, migrating", err, s.Where("g", hKey))

		// What is sealed in its place reads, and a branch reseals what it copies for its
		// new session.
		if got, err := s.Hypothesis(ctx, "b", "h-1"); err != nil || got.Statement != h.Statement {
			t.Errorf("the record in its place: %+v, %v", got, err)
		}
		if err := s.copyRecords(ctx, "b", "h", []string{hKey}); err != nil {
			t.Fatal(err)
		}
		if got, err := reopen(s).Hypothesis(ctx, "h", "h-1"); err != nil || got.Statement != h.Statement {
			t.Errorf("a copied record: %+v, %v", got, err)
		}
	})
}
