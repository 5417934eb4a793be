package store

import (
	"encoding/json"
	"fmt"
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
