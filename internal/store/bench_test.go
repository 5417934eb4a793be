package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// Benchmarks of the records a session writes most: checkpoints, hypotheses and turns.

func bigSnapshot(sid string, seq, n int) session.Snapshot {
	snap := session.Snapshot{
		SessionID: sid, Seq: seq, Time: "2026-01-01T00:00:00Z", State: session.Active,
		ScientistID: "ada", Goal: "Why do cells age?", StartedAt: "2026-01-01T00:00:00Z",
		Refinements: []session.Refinement{{Time: "2026-01-01T00:10:00Z", Focus: "mitochondria"}},
		Config:      research.Config{MaxHypotheses: n, ReviewTypes: []string{"initial"}},
		Usage:       research.Usage{PromptTokens: 1, CompletionTokens: 2, Requests: 3},
		Progress:    session.Progress{HypothesesGenerated: n, Checkpoints: seq, State: session.Active},
	}
	for i := range n {
		snap.Hypotheses = append(snap.Hypotheses, session.Entry{
			ID: fmt.Sprintf("gen/%04d", i), Title: fmt.Sprintf("Hypothesis number %d about ageing", i),
			Origin: "generation", Round: i / 10, Elo: 1200 + float64(n-i), Wins: i % 7, Losses: i % 5,
			Reviews: 2, Score: 6.5,
		})
	}
	return snap
}

// eachStoreB runs a benchmark once per backend, in one run so the two compare.
func eachStoreB(b *testing.B, bench func(b *testing.B, s *Store)) {
	b.Run("dir", func(b *testing.B) { bench(b, open(b).Store) })
	b.Run("postgres", func(b *testing.B) { bench(b, openPostgres(b)) })
}

// BenchmarkPutCheckpoint: a whole checkpoint of a 1,000-hypothesis session with the ten
// events before it.
func BenchmarkPutCheckpoint(b *testing.B) {
	eachStoreB(b, func(b *testing.B, s *Store) {
		snap := bigSnapshot("bench", 0, 1000)
		seq := 0
		for b.Loop() {
			seq++
			snap.Seq = seq
			if _, err := s.PutCheckpoint(tctx(b), snap, events(seq*10-9, seq*10)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCheckpointRead: the whole checkpoint of a 1,000-hypothesis session read back by
// a store that has not read it before (a worker that did not write it).
func BenchmarkCheckpointRead(b *testing.B) {
	eachStoreB(b, func(b *testing.B, s *Store) {
		snap := bigSnapshot("bench", 1, 1000)
		if _, err := s.PutCheckpoint(tctx(b), snap, nil); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := reopen(s).Checkpoint(tctx(b), "bench", 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkPutHypothesis(b *testing.B) {
	eachStoreB(b, func(b *testing.B, s *Store) {
		h := typicalHypothesis()
		i := 0
		for b.Loop() {
			i++
			h.ID = fmt.Sprintf("gen/%d", i)
			if err := s.PutHypothesis(tctx(b), "bench", h); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// typicalHypothesis is a hypothesis with texts of a model's usual length.
func typicalHypothesis() research.Hypothesis {
	h := hyp("", "A hypothesis of typical length")
	h.Statement = strings.Repeat("statement ", 100)
	h.Rationale = strings.Repeat("rationale ", 200)
	return h
}

// BenchmarkTurn is the store's share of one generation turn: look for an earlier
// attempt's record, store the hypothesis, read back the one that stands, store the turn.
func BenchmarkTurn(b *testing.B) {
	eachStoreB(b, func(b *testing.B, s *Store) {
		h := typicalHypothesis()
		result, _ := json.Marshal(map[string]string{"hypothesis_id": "x", "title": h.Title})
		i := 0
		for b.Loop() {
			i++
			h.ID = fmt.Sprintf("h-%04d", i)
			turnID := "generate-" + h.ID
			if _, found, err := s.Turn(tctx(b), "bench", turnID); err != nil || found {
				b.Fatal(err, found)
			}
			if err := s.PutHypothesis(tctx(b), "bench", h); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Hypothesis(tctx(b), "bench", h.ID); err != nil {
				b.Fatal(err)
			}
			if err := s.PutTurn(tctx(b), "bench", Turn{ID: turnID, Agent: "generation", Prompt: h.Statement, Result: result}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
