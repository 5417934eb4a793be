package store

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

func TestSessionIndex(t *testing.T) { eachStore(t, testSessionIndex) }

func testSessionIndex(t *testing.T, s *Store) {
	if rows, err := s.Sessions(tctx(t)); err != nil || len(rows) != 0 {
		t.Fatalf("Sessions of an empty store = %v, %v; want none", rows, err)
	}
	root := session.Snapshot{
		SessionID: "root", Seq: 1, State: session.Active, Goal: "Why do cells age?", ScientistID: "ada",
		StartedAt: "2026-01-01T00:00:00Z", Time: "2026-01-01T00:01:00Z",
		Hypotheses: []session.Entry{{ID: "h-1"}, {ID: "h-2"}},
		Usage:      research.Usage{PromptTokens: 100, CompletionTokens: 20, Requests: 3, CostUSD: 0.5},
		Progress:   session.Progress{ElapsedSeconds: 60},
	}
	child := session.Snapshot{
		SessionID: "root-fork-1", Seq: 1, State: session.Completed, StopReason: "max_hypotheses", Goal: "Why do cells age?",
		StartedAt: "2026-01-02T00:00:00Z", Time: "2026-01-02T00:01:00Z",
		Lineage: &lineage.Descriptor{Type: lineage.Subagent, Conversation: "root", Parent: "root", Relation: lineage.Spawn},
	}
	for _, snap := range []session.Snapshot{root, child} {
		if _, err := s.PutCheckpoint(tctx(t), snap, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A later checkpoint moves the row on; a retried earlier one does not take it back.
	later := root
	later.Seq, later.State, later.Time = 2, session.Completed, "2026-01-01T00:02:00Z"
	later.Hypotheses = append(later.Hypotheses, session.Entry{ID: "h-3"})
	if _, err := s.PutCheckpoint(tctx(t), later, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCheckpoint(tctx(t), root, nil); err != nil {
		t.Fatal(err)
	}

	rows, err := s.Sessions(tctx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []Summary{
		{SessionID: "root-fork-1", Parent: "root", Conversation: "root", Type: lineage.Subagent, Relation: lineage.Spawn, Status: session.Completed,
			StopReason: "max_hypotheses", Goal: "Why do cells age?", Checkpoint: 1,
			Created: "2026-01-02T00:00:00Z", Updated: "2026-01-02T00:01:00Z"},
		{SessionID: "root", Conversation: "root", Type: lineage.User, Status: session.Completed, Goal: "Why do cells age?",
			ScientistID: "ada", Hypotheses: 3, PromptTokens: 100, CompletionTokens: 20, Requests: 3, CostUSD: 0.5,
			DurationSeconds: 60, Checkpoint: 2, Created: "2026-01-01T00:00:00Z", Updated: "2026-01-01T00:02:00Z"},
	}
	if fmt.Sprintf("%+v", rows) != fmt.Sprintf("%+v", want) {
		t.Errorf("Sessions =\n  %+v\nwant (newest first)\n  %+v", rows, want)
	}
	if row, err := s.Session(tctx(t), "root"); err != nil || row.Tokens() != 120 || row.Checkpoint != 2 {
		t.Errorf("Session(root) = %+v, %v", row, err)
	}
	if _, err := s.Session(tctx(t), "nobody"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Session(nobody): err = %v, want fs.ErrNotExist", err)
	}
}

// TestConcurrentCommits: attempts of the same checkpoints racing (a retried activity whose
// first attempt still runs on a host thought dead) leave a log with no gap and no repeat.
func TestConcurrentCommits(t *testing.T) { eachStore(t, testConcurrentCommits) }

func testConcurrentCommits(t *testing.T, s *Store) {
	const attempts, checkpoints = 6, 5
	var wg sync.WaitGroup
	errs := make(chan error, attempts*checkpoints)
	for range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 1; seq <= checkpoints; seq++ {
				snap := session.Snapshot{SessionID: "race", Seq: seq, Goal: fmt.Sprint("goal ", seq)}
				if _, err := s.PutCheckpoint(tctx(t), snap, events(1, seq*10)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := s.Events(tctx(t), "race")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != checkpoints*10 {
		t.Errorf("log holds %d events, want %d", len(got), checkpoints*10)
	}
	for i, e := range got {
		if e.Seq != i+1 {
			t.Fatalf("event %d has Seq %d: a gap or a repeat", i, e.Seq)
		}
	}
	if snaps, err := s.Checkpoints(tctx(t), "race"); err != nil || len(snaps) != checkpoints {
		t.Errorf("Checkpoints = %d, %v; want %d", len(snaps), err, checkpoints)
	}
}
