package store

import (
	"encoding/json"
	"errors"
	"io/fs"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// TestToolRecords: the audit trail is content-addressed (the same result is one record),
// and a record changed since it was written is damaged, not evidence.
func TestToolRecords(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		rec := ToolRecord{Tool: "literature.search", Arguments: json.RawMessage(`{"query": "tau"}`), Content: `{"results":[]}`}
		d1, err := s.PutToolRecord(tctx(t), "s-1", rec)
		if err != nil {
			t.Fatal(err)
		}
		d2, err := s.PutToolRecord(tctx(t), "s-1", rec)
		if err != nil || d2 != d1 || len(d1) != 64 {
			t.Fatalf("digests %s, %s (%v)", d1, d2, err)
		}
		got, err := s.ToolRecord(tctx(t), "s-1", d1)
		if err != nil || got.Content != rec.Content || got.Tool != rec.Tool {
			t.Fatalf("read back %+v, %v", got, err)
		}
		if _, err := s.ToolRecord(tctx(t), "s-1", "not-a-digest"); err == nil {
			t.Error("a malformed digest was read")
		}
		missing := "0000000000000000000000000000000000000000000000000000000000000000"
		if _, err := s.ToolRecord(tctx(t), "s-1", missing); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a missing record: %v", err)
		}
		// Edited outside the store: its digest no longer matches.
		forged, _ := json.Marshal(ToolRecord{Tool: rec.Tool, Arguments: rec.Arguments, Content: `{"results":["forged"]}`})
		if err := s.b.Put(tctx(t), "s-1", toolsDir+"/"+d1+".json", forged, false); err != nil {
			t.Fatal(err)
		}
		var damaged *DamagedError
		if _, err := s.ToolRecord(tctx(t), "s-1", d1); !errors.As(err, &damaged) {
			t.Errorf("a forged record: %v", err)
		}
	})
}

// TestCitedSourcesTravel: a session that continues or forks another, a subagent, and a
// parent that imports a subagent's hypothesis all find the audit records its references
// cite, so its citation checks and its report read the same evidence.
func TestCitedSourcesTravel(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := tctx(t)
		src, err := s.PutToolRecord(ctx, "src", ToolRecord{Tool: "literature.fetch", Arguments: json.RawMessage(`{"id":"k1"}`), Content: `{"id":"k1"}`})
		if err != nil {
			t.Fatal(err)
		}
		other, err := s.PutToolRecord(ctx, "src", ToolRecord{Tool: "literature.search", Arguments: json.RawMessage(`{"query":"x"}`), Content: `{}`})
		if err != nil {
			t.Fatal(err)
		}
		h := hyp("h-0001", "grounded")
		h.References = []research.Reference{{ID: "k1", Source: src}, {ID: "made-up"}}
		if err := s.PutHypothesis(ctx, "src", h); err != nil {
			t.Fatal(err)
		}
		if err := s.PutHypothesis(ctx, "src", hyp("h-0002", "plain")); err != nil {
			t.Fatal(err)
		}
		snap := session.Snapshot{SessionID: "src", Seq: 1, Hypotheses: []session.Entry{{ID: "h-0001"}, {ID: "h-0002"}}}
		if _, err := s.PutCheckpoint(ctx, snap, nil); err != nil {
			t.Fatal(err)
		}
		has := func(session, digest string) bool {
			_, err := s.ToolRecord(ctx, session, digest)
			return err == nil
		}
		if _, err := s.Branch(ctx, "src", 1, "whole"); err != nil {
			t.Fatal(err)
		}
		if !has("whole", src) || !has("whole", other) {
			t.Error("a continued session lacks the audit trail")
		}
		if _, err := s.Branch(ctx, "src", 1, "sub", "h-0001"); err != nil {
			t.Fatal(err)
		}
		if !has("sub", src) || has("sub", other) {
			t.Errorf("a subagent's branch: the cited record %v, another %v; want only the cited one", has("sub", src), has("sub", other))
		}
		if _, err := s.ImportHypothesis(ctx, "src", "h-0001", "parent", "h-0042", nil); err != nil {
			t.Fatal(err)
		}
		if !has("parent", src) {
			t.Error("an imported hypothesis' source stayed behind")
		}
	})
}
