package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/session"
)

// TestIncrementalCheckpointsRestoreExactly: a session of 40 checkpoints, each sending only
// what changed (10 new hypotheses, 5 re-rated, new pairs and edges). Every checkpoint reads
// back as the whole session it was, Checkpoints agrees with Checkpoint, and the store keeps
// changes rather than copies: its bytes grow with the hypotheses (a whole checkpoint only
// once the changes since the last one outweigh it), and no chain passes maxCheckpointChain.
func TestIncrementalCheckpointsRestoreExactly(t *testing.T) {
	eachPlainStore(t, testIncrementalCheckpoints)
}

func testIncrementalCheckpoints(t *testing.T, s *Store) {
	const checkpoints, perRound = 40, 10
	elo := map[string]float64{} // the session's own view, to check against
	var whole []session.Snapshot
	for seq := 1; seq <= checkpoints; seq++ {
		delta := session.Snapshot{SessionID: "long", Seq: seq, State: session.Active, Goal: "g",
			Progress: session.Progress{HypothesesGenerated: seq * perRound, Checkpoints: seq}}
		for i := range perRound {
			id := fmt.Sprintf("h-%04d", (seq-1)*perRound+i)
			elo[id] = 1200
			delta.Hypotheses = append(delta.Hypotheses, session.Entry{ID: id, Title: "t " + id, Elo: 1200})
		}
		for i := 0; i < 5 && seq > 1; i++ {
			id := fmt.Sprintf("h-%04d", (seq*7+i*13)%((seq-1)*perRound))
			elo[id] += float64(10 * (i + 1))
			delta.Hypotheses = append(delta.Hypotheses, session.Entry{ID: id, Title: "t " + id, Elo: elo[id]})
			delta.Played = append(delta.Played, fmt.Sprintf("%s|h-%04d", id, seq*perRound))
			delta.Edges = append(delta.Edges, proximity.Edge{A: id, B: fmt.Sprintf("h-%04d", seq*perRound-1), Sim: 0.5})
		}
		base := seq - 1
		if seq == 1 {
			whole = append(whole, delta)
		} else {
			whole = append(whole, session.Merge(whole[seq-2], delta))
		}
		if _, err := s.PutCheckpointOver(tctx(t), base, delta, nil); err != nil {
			t.Fatalf("checkpoint %d: %v", seq, err)
		}
	}

	all, err := s.Checkpoints(tctx(t), "long")
	if err != nil || len(all) != checkpoints {
		t.Fatalf("Checkpoints = %d, %v; want %d", len(all), err, checkpoints)
	}
	var stored, asWhole, chain, longest int
	for seq := 1; seq <= checkpoints; seq++ {
		got, err := s.Checkpoint(tctx(t), "long", seq)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, whole[seq-1]) || !reflect.DeepEqual(all[seq-1], got) {
			t.Fatalf("checkpoint %d does not read back as the session it was", seq)
		}
		if len(got.Hypotheses) != seq*perRound {
			t.Errorf("checkpoint %d has %d hypotheses, want %d", seq, len(got.Hypotheses), seq*perRound)
		}
		for _, e := range got.Hypotheses {
			if seq == checkpoints && e.Elo != elo[e.ID] {
				t.Errorf("the last checkpoint rates %s %v, the session %v", e.ID, e.Elo, elo[e.ID])
			}
		}
		raw, err := s.Backend().Get(tctx(t), "long", checkpointKey(seq))
		if err != nil {
			t.Fatal(err)
		}
		if !compressed(raw) {
			t.Errorf("checkpoint %d is stored uncompressed", seq)
		}
		plain, err := unpack(raw)
		if err != nil {
			t.Fatal(err)
		}
		var rec storedCheckpoint
		if err := json.Unmarshal(plain, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Base > 0 {
			chain++
		} else {
			chain = 0
		}
		longest = max(longest, chain)
		// Weighed by their JSON: compression would hide whole copies.
		full, _ := json.Marshal(got)
		stored, asWhole = stored+len(plain), asWhole+len(full)
	}
	if longest >= maxCheckpointChain {
		t.Errorf("a chain of %d stored changes; at most %d before a whole checkpoint", longest, maxCheckpointChain-1)
	}
	if stored*5 > asWhole {
		t.Errorf("the store keeps %d bytes of checkpoints, more than a fifth of the %d bytes of whole ones", stored, asWhole)
	}
	// Linear: at most about twice the changes plus the whole checkpoints they add up to.
	last, _ := json.Marshal(all[checkpoints-1])
	if stored > 4*len(last) {
		t.Errorf("the store keeps %d bytes for a session whose last whole checkpoint is %d bytes; want at most 4 times that", stored, len(last))
	}
	t.Logf("%d checkpoints of up to %d hypotheses: %d bytes stored, %d as whole checkpoints", checkpoints, checkpoints*perRound, stored, asWhole)
}

// BenchmarkSessionBytes writes the checkpoints of sessions that grow to 1,000, 2,500 and
// 5,000 hypotheses the way a round does (20 new, 60 re-rated, 40 pairs and 100
// similarities each) and reports the bytes their checkpoint records hold per hypothesis,
// against the bytes every checkpoint would take whole, as JSON; and the JSON the stored
// records hold before compression. A flat figure across the sizes is growth linear in the
// hypotheses. One iteration is one session.
func BenchmarkSessionBytes(b *testing.B) {
	for _, hypotheses := range []int{1000, 2500, 5000} {
		b.Run(fmt.Sprint(hypotheses), func(b *testing.B) { benchmarkSessionBytes(b, hypotheses) })
	}
}

func benchmarkSessionBytes(b *testing.B, hypotheses int) {
	const perRound, rerated = 20, 60
	eachStoreB(b, func(b *testing.B, s *Store) {
		var stored, plain, asWhole int
		for i := 0; b.Loop(); i++ {
			sid := fmt.Sprintf("grow-%d", i)
			var whole session.Snapshot
			stored, plain, asWhole = 0, 0, 0
			for seq := 1; seq*perRound <= hypotheses; seq++ {
				n := seq * perRound
				delta := bigSnapshot(sid, seq, 0)
				delta.Progress.HypothesesGenerated = n
				for j := n - perRound; j < n; j++ {
					delta.Hypotheses = append(delta.Hypotheses, growing(j, 0))
				}
				for j := range min(rerated, n-perRound) {
					k := (seq*7919 + j*104729) % (n - perRound)
					delta.Hypotheses = append(delta.Hypotheses, growing(k, seq))
					delta.Played = append(delta.Played, fmt.Sprintf("h-%04d|h-%04d", k, n-1-j%perRound))
				}
				for j := range 100 {
					delta.Edges = append(delta.Edges, proximity.Edge{A: fmt.Sprintf("h-%04d", n-1-j%perRound), B: fmt.Sprintf("h-%04d", (j*31)%n), Sim: 0.25})
				}
				delta.Played = delta.Played[:min(len(delta.Played), 40)]
				base := seq - 1
				if _, err := s.PutCheckpointOver(tctx(b), base, delta, nil); err != nil {
					b.Fatal(err)
				}
				if seq == 1 {
					whole = delta
				} else {
					whole = session.Merge(whole, delta)
				}
				w, _ := json.Marshal(whole)
				asWhole += len(w)
				raw, err := s.Backend().Get(tctx(b), sid, checkpointKey(seq))
				if err != nil {
					b.Fatal(err)
				}
				stored += len(raw)
				js, err := unpack(raw)
				if err != nil {
					b.Fatal(err)
				}
				plain += len(js)
			}
		}
		b.ReportMetric(float64(stored)/float64(hypotheses), "stored-B/hypothesis")
		b.ReportMetric(float64(plain)/float64(hypotheses), "json-B/hypothesis")
		b.ReportMetric(float64(asWhole)/float64(hypotheses), "whole-B/hypothesis")
	})
}

// growing is hypothesis k's record after `rated` re-ratings.
func growing(k, rated int) session.Entry {
	return session.Entry{ID: fmt.Sprintf("h-%04d", k), Title: fmt.Sprintf("Hypothesis number %d about how cells age", k),
		Origin: "generation", Strategy: "literature", Round: k / 20, Cluster: k, Elo: 1200 + float64(rated%97) - 48.5,
		Wins: rated / 2, Losses: rated - rated/2, Reviews: 1, Score: 6.5}
}

func events(from, to int) []session.Event {
	var evs []session.Event
	for i := from; i <= to; i++ {
		evs = append(evs, session.Event{Seq: i, Time: "2026-01-01T00:00:00Z", Kind: session.EventNote, Detail: fmt.Sprint("event ", i)})
	}
	return evs
}

func TestCheckpointEvents(t *testing.T) { eachStore(t, testCheckpointEvents) }

func testCheckpointEvents(t *testing.T, s *Store) {
	steps := []struct {
		name    string
		seq     int
		events  []session.Event
		wantLog int // Seq of the last event in the log afterwards
	}{
		{"first checkpoint", 1, events(1, 3), 3},
		{"retried first checkpoint", 1, events(1, 3), 3},
		{"second overlaps the first", 2, events(2, 5), 5},
		{"retried second", 2, events(2, 5), 5},
		{"no new events", 3, nil, 5},
		{"duplicates within a batch", 4, append(events(6, 6), events(6, 7)...), 7},
	}
	for _, st := range steps {
		path, err := s.PutCheckpoint(tctx(t), session.Snapshot{SessionID: "wf/1", Seq: st.seq}, st.events)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		want := s.Where("wf/1", fmt.Sprintf("checkpoints/%06d.json", st.seq))
		if d, ok := s.Backend().(*Dir); ok {
			want = filepath.Join(d.SessionDir("wf/1"), checkpointsDir, fmt.Sprintf("%06d.json", st.seq))
		}
		if path != want {
			t.Errorf("%s: path = %s, want %s", st.name, path, want)
		}
		got, err := s.Events(tctx(t), "wf/1")
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for i, e := range got {
			if e.Seq != i+1 {
				t.Fatalf("%s: event %d has Seq %d; the log is %v", st.name, i, e.Seq, got)
			}
		}
		if len(got) != st.wantLog {
			t.Errorf("%s: log holds %d events, want %d", st.name, len(got), st.wantLog)
		}
	}
	got, _ := s.Events(tctx(t), "wf/1")
	if !reflect.DeepEqual(got, events(1, 7)) {
		t.Errorf("Events = %+v, want %+v", got, events(1, 7))
	}
	noDirTemps(t, s)

	// A log may number its events from 0: the first event is never taken for a repeat.
	if _, err := s.PutCheckpoint(tctx(t), session.Snapshot{SessionID: "zero", Seq: 1}, events(0, 1)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Events(tctx(t), "zero"); !reflect.DeepEqual(got, events(0, 1)) {
		t.Errorf("Events = %+v, want %+v", got, events(0, 1))
	}
}

func TestLatestCheckpoint(t *testing.T) { eachStore(t, testLatestCheckpoint) }

func testLatestCheckpoint(t *testing.T, s *Store) {
	// 2 and 10 sort as "2" > "10" lexically; 1000000 outgrows the padding.
	for _, seqs := range [][]int{{2, 10}, {10, 2}, {2, 10, 999999, 1000000}} {
		sid := fmt.Sprint(seqs)
		for _, seq := range seqs {
			if _, err := s.PutCheckpoint(tctx(t), session.Snapshot{SessionID: sid, Seq: seq, Goal: fmt.Sprint("goal ", seq)}, nil); err != nil {
				t.Fatal(err)
			}
		}
		// A leftover temporary file and a stray record must not count.
		if d, ok := s.Backend().(*Dir); ok {
			os.WriteFile(filepath.Join(d.SessionDir(sid), checkpointsDir, tempPrefix+"99999999"), []byte("{"), 0o644)
		}
		if err := s.Backend().Put(tctx(t), sid, "checkpoints/notes.json", []byte("{"), false); err != nil {
			t.Fatal(err)
		}

		snap, err := s.LatestCheckpoint(tctx(t), sid)
		if err != nil {
			t.Fatal(err)
		}
		want := seqs[0]
		for _, n := range seqs {
			want = max(want, n)
		}
		if snap.Seq != want || snap.Goal != fmt.Sprint("goal ", want) {
			t.Errorf("checkpoints %v: LatestCheckpoint = seq %d (%q), want %d", seqs, snap.Seq, snap.Goal, want)
		}
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		want := bigSnapshot("s", 1, 3)
		if _, err := s.PutCheckpoint(tctx(t), want, nil); err != nil {
			t.Fatal(err)
		}
		got, err := s.Checkpoint(tctx(t), "s", 1)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Checkpoint = %+v\nwant %+v", got, want)
		}
		if _, err := s.PutCheckpoint(tctx(t), session.Snapshot{SessionID: "s", Seq: -1}, nil); err == nil {
			t.Error("PutCheckpoint with a negative seq succeeded, want an error")
		}
	})
}

func TestCheckpoints(t *testing.T) { eachStore(t, testCheckpoints) }

func testCheckpoints(t *testing.T, s *Store) {
	if snaps, err := s.Checkpoints(tctx(t), "s"); len(snaps) != 0 || err != nil {
		t.Fatalf("Checkpoints(none) = %v, %v; want empty, nil", snaps, err)
	}
	for _, seq := range []int{3, 1, 1000000, 2} {
		if _, err := s.PutCheckpoint(tctx(t), session.Snapshot{SessionID: "s", Seq: seq, Goal: fmt.Sprint("goal ", seq)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A stray record among them is not a checkpoint.
	if err := s.Backend().Put(tctx(t), "s", "checkpoints/notes.txt", []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	snaps, err := s.Checkpoints(tctx(t), "s")
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	for _, snap := range snaps {
		seqs = append(seqs, snap.Seq)
		if snap.Goal != fmt.Sprint("goal ", snap.Seq) {
			t.Errorf("checkpoint %d has goal %q", snap.Seq, snap.Goal)
		}
	}
	if want := []int{1, 2, 3, 1000000}; !reflect.DeepEqual(seqs, want) {
		t.Errorf("Checkpoints seqs = %v, want %v", seqs, want)
	}
}

// TestPutEventsAppendsOnce: the events after a session's final checkpoint join its log
// once, however often the activity that stores them is retried.
func TestPutEventsAppendsOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		first := []session.Event{{Seq: 1, Kind: session.EventNote, Detail: "a"}, {Seq: 2, Kind: session.EventNote, Detail: "b"}}
		if _, err := s.PutCheckpoint(tctx(t), session.Snapshot{SessionID: "s", Seq: 1}, first); err != nil {
			t.Fatal(err)
		}
		tail := []session.Event{{Seq: 3, Kind: session.EventCheckpoint, Detail: "checkpoint 1"}, {Seq: 4, Kind: session.EventTransition, To: "completed"}}
		for range 2 {
			if err := s.PutEvents(tctx(t), "s", tail); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Events(tctx(t), "s")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 || got[3].To != "completed" {
			t.Errorf("log %+v; want 4 events ending with the completion", got)
		}
	})
}
