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
func TestIncrementalCheckpointsRestoreExactly(t *testing.T) { eachStore(t, testIncrementalCheckpoints) }

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
		var rec storedCheckpoint
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Base > 0 {
			chain++
		} else {
			chain = 0
		}
		longest = max(longest, chain)
		full, _ := encode("", got)
		stored, asWhole = stored+len(raw), asWhole+len(full)
	}
	if longest >= maxCheckpointChain {
		t.Errorf("a chain of %d stored changes; at most %d before a whole checkpoint", longest, maxCheckpointChain-1)
	}
	if stored*5 > asWhole {
		t.Errorf("the store keeps %d bytes of checkpoints, more than a fifth of the %d bytes of whole ones", stored, asWhole)
	}
	// Linear: at most about twice the changes plus the whole checkpoints they add up to.
	last, _ := encode("", all[checkpoints-1])
	if stored > 4*len(last) {
		t.Errorf("the store keeps %d bytes for a session whose last whole checkpoint is %d bytes; want at most 4 times that", stored, len(last))
	}
	t.Logf("%d checkpoints of up to %d hypotheses: %d bytes stored, %d as whole checkpoints", checkpoints, checkpoints*perRound, stored, asWhole)
}
