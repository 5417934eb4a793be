package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// FuzzCheckpointRecord: a checkpoint record as the store reads it back, whatever happened
// to the file (truncated, garbled, edited by hand), is either read as a checkpoint or
// refused with an error that names the session's record; reading never panics or hangs.
// Checkpoint 1 is whole and sound; the fuzzed record is checkpoint 2, which may build on
// it.
func FuzzCheckpointRecord(f *testing.F) {
	whole := session.Snapshot{SessionID: "s-1", Seq: 1, Hypotheses: []session.Entry{{ID: "h-0001", Elo: 1200}},
		Rating: session.RatingFitted, Results: []tournament.Result{{A: "h-0001", B: "h-0002", AWon: true}}}
	one, err := json.Marshal(storedCheckpoint{Snapshot: whole})
	if err != nil {
		f.Fatal(err)
	}
	changes := whole
	changes.Seq, changes.Hypotheses = 2, []session.Entry{{ID: "h-0002", Elo: 1210, EloSE: 90}}
	two, err := json.Marshal(storedCheckpoint{Base: 1, Links: 1, Snapshot: changes})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range [][]byte{one, two, two[:len(two)/2], []byte(`{"changes_since": 2}`), []byte(`{"changes_since": 9}`), []byte(`{"results": ["h-1 beat"]}`), []byte("null"), {}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		// Both backends hand the store a record's bytes as they were written, and the
		// store alone decodes them: records in memory fuzz that decoding for both, at
		// thousands of inputs a second instead of the few a synced file allows.
		ctx := context.Background()
		st := New(&memory{}, "memory")
		if err := st.b.Put(ctx, "s-1", checkpointKey(1), one, false); err != nil {
			t.Fatal(err)
		}
		if err := st.b.Put(ctx, "s-1", checkpointKey(2), raw, false); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Checkpoint(ctx, "s-1", 2); err != nil && !strings.Contains(err.Error(), "s-1") {
			t.Fatalf("record %q: error %q does not name the session", raw, err)
		}
	})
}

// memory is a Backend of records in a map, enough for reading checkpoints back.
type memory struct{ records map[string][]byte }

func (m *memory) Get(_ context.Context, sessionID, key string) ([]byte, error) {
	b, ok := m.records[sessionID+"/"+key]
	if !ok {
		return nil, fmt.Errorf("store: %s: %w", m.Where(sessionID, key), fs.ErrNotExist)
	}
	return b, nil
}

func (m *memory) Put(_ context.Context, sessionID, key string, data []byte, once bool) error {
	if m.records == nil {
		m.records = map[string][]byte{}
	}
	if _, ok := m.records[sessionID+"/"+key]; !ok || !once {
		m.records[sessionID+"/"+key] = data
	}
	return nil
}

func (m *memory) List(_ context.Context, sessionID, dir string) ([]string, error) {
	var keys []string
	for k := range m.records {
		if rest, ok := strings.CutPrefix(k, sessionID+"/"+dir); ok && !strings.Contains(rest, "/") {
			keys = append(keys, dir+rest)
		}
	}
	slices.Sort(keys)
	return keys, nil
}
func (m *memory) Copy(context.Context, string, string, []string) error { return nil }
func (m *memory) Commit(context.Context, Commit) error                 { return nil }
func (m *memory) Events(context.Context, string) ([]session.Event, error) {
	return nil, nil
}
func (m *memory) Sessions(context.Context) ([]Summary, error) { return nil, nil }
func (m *memory) Where(sessionID, key string) string          { return sessionID + "/" + key }
func (m *memory) Close()                                      {}

// FuzzEventLog: a session's event log as a Dir reads it back (events.jsonl, and its last
// line, which an append reads for the sequence number) is read whatever was done to the
// file, or refused with a *DamagedError naming the session and the line; never a panic.
func FuzzEventLog(f *testing.F) {
	var log []byte
	for i := 1; i <= 3; i++ {
		b, err := json.Marshal(session.Event{Seq: i, Kind: session.EventNote, Detail: fmt.Sprint("note ", i)})
		if err != nil {
			f.Fatal(err)
		}
		log = append(append(log, b...), '\n')
	}
	for _, s := range [][]byte{log, log[:len(log)-9], append([]byte("\n\n"), log...), []byte("null\n"), []byte(`{"seq": "1"}`), {}} {
		f.Add(s)
	}
	d, err := OpenDir(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(d.SessionDir("s-1"), eventsFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		var damaged *DamagedError
		if _, err := d.Events(context.Background(), "s-1"); err != nil && (!errors.As(err, &damaged) || !strings.Contains(err.Error(), "s-1")) {
			t.Fatalf("log %q: error %v (%T) is not a *DamagedError naming the session", raw, err, err)
		}
		if _, err := lastSeq(path, raw); err != nil && (!errors.As(err, &damaged) || !strings.Contains(err.Error(), "s-1")) {
			t.Fatalf("log %q: the last line's error %v (%T) is not a *DamagedError naming the session", raw, err, err)
		}
	})
}

// FuzzTurn: a turn record and a piece of its prompt as the store reads them back,
// whatever happened to either (truncated, garbled, edited by hand, another record put in
// its place), give the turn with its prompt as written, or a *DamagedError naming the
// session and the turn record; never a turn not found (the record is there), a panic or a
// hang. The fuzzer writes the turn record and the piece of the prompt's first paragraph.
func FuzzTurn(f *testing.F) {
	ctx := context.Background()
	prompt := matchPrompt(1, 1, 2)
	parts, pieces := splitPrompt(prompt)
	rec, err := json.Marshal(storedTurn{Turn: Turn{ID: "t1", Agent: "ranking", Result: json.RawMessage(`{}`)}, Parts: parts})
	if err != nil {
		f.Fatal(err)
	}
	first := parts[0].Piece
	piece := encodePiece(pieces[first])
	old, err := encode("", Turn{ID: "t1", Prompt: prompt})
	if err != nil {
		f.Fatal(err)
	}
	for _, r := range [][]byte{rec, pack(rec), pack(rec)[:len(pack(rec))/2], old, []byte(`{"prompt_parts": [{"piece": "00000000000000000000000000000000"}]}`), []byte(`{"prompt": "p", "prompt_parts": []}`), []byte("null"), {}} {
		for _, p := range [][]byte{piece, []byte(pieces[first]), piece[:len(piece)-1], pack(nil), {}} {
			f.Add(r, p)
		}
	}
	f.Fuzz(func(t *testing.T, record, piece []byte) {
		st := New(&memory{}, "memory")
		for d, text := range pieces {
			if err := st.b.Put(ctx, "s-1", pieceKey(d), encodePiece(text), false); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.b.Put(ctx, "s-1", pieceKey(first), piece, false); err != nil {
			t.Fatal(err)
		}
		if err := st.b.Put(ctx, "s-1", "turns/t1.json", record, false); err != nil {
			t.Fatal(err)
		}
		got, found, err := st.Turn(ctx, "s-1", "t1")
		var damaged *DamagedError
		switch {
		case err != nil && (!errors.As(err, &damaged) || damaged.SessionID != "s-1" || damaged.Record != st.Where("s-1", "turns/t1.json")):
			t.Fatalf("record %q, piece %q: error %v (%T) is not a *DamagedError naming the session and the turn record", record, piece, err, err)
		case err == nil && !found:
			t.Fatalf("record %q, piece %q: the turn reads as not found", record, piece)
		case err == nil && bytes.Equal(record, rec) && got.Prompt != prompt:
			// The sound record reads its pieces: the first one, whatever was put in its place,
			// reads as written or not at all.
			t.Fatalf("piece %q: the prompt reads back as %q", piece, got.Prompt)
		}
	})
}

// FuzzPrompt: any prompt a turn is stored with reads back byte for byte.
func FuzzPrompt(f *testing.F) {
	for _, p := range []string{"", "\n\n", matchPrompt(1, 1, 2), "\xff\n\n" + strings.Repeat("x", minPiece), zstdMagic + "\n\n\n"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, prompt string) {
		st := New(&memory{}, "memory")
		if err := st.PutTurn(context.Background(), "s-1", Turn{ID: "t1", Prompt: prompt}); err != nil {
			t.Fatal(err)
		}
		got, found, err := st.Turn(context.Background(), "s-1", "t1")
		if err != nil || !found || got.Prompt != prompt {
			t.Fatalf("prompt %q reads back as %q (found %v, %v)", prompt, got.Prompt, found, err)
		}
	})
}

// FuzzRecord: every other record of a session as the store reads it back (a hypothesis, a
// review, a turn, the plan, a debate, a meta-review, the overview), whatever was done to it,
// is read or refused with a *DamagedError naming the session and the record; never a
// panic. The fuzzer picks the kind of record with its first argument.
func FuzzRecord(f *testing.F) {
	ctx := context.Background()
	kinds := []struct {
		key  string
		read func(s *Store) error
		good any
	}{
		{"hypotheses/h1.json", func(s *Store) error { _, err := s.Hypothesis(ctx, "s-1", "h1"); return err },
			research.Hypothesis{ID: "h1", Title: "t", Statement: "s", Predictions: []string{"p"}}},
		{"reviews/h1/initial-0.json", func(s *Store) error { _, err := s.Reviews(ctx, "s-1", "h1"); return err },
			research.Review{HypothesisID: "h1", Type: "initial", Critique: "c", Verdict: "accept"}},
		{"turns/t1.json", func(s *Store) error { _, _, err := s.Turn(ctx, "s-1", "t1"); return err },
			Turn{ID: "t1", Agent: "generation", Result: json.RawMessage(`{"hypothesis_id": "h1"}`)}},
		{"plan.json", func(s *Store) error { _, err := s.Plan(ctx, "s-1"); return err },
			research.Plan{Summary: "s", Criteria: []string{"novelty"}}},
		{"debates/d1.json", func(s *Store) error { _, err := s.Debate(ctx, "s-1", "d1"); return err },
			research.Debate{A: "h1", B: "h2", Winner: "h1"}},
		{metaReviewKey(1), func(s *Store) error { _, err := s.MetaReview(ctx, "s-1", 1); return err },
			research.MetaReview{Round: 1}},
		{"overview.json", func(s *Store) error { _, err := s.Overview(ctx, "s-1"); return err },
			research.Overview{}},
	}
	for i, k := range kinds {
		good, err := json.Marshal(k.good)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), good)
		f.Add(uint8(i), good[:len(good)/2])
		f.Add(uint8(i), []byte("null"))
		// Any record may be compressed (turns and checkpoints are).
		f.Add(uint8(i), pack(good))
		f.Add(uint8(i), pack(good)[:len(pack(good))-3])
	}
	f.Fuzz(func(t *testing.T, kind uint8, raw []byte) {
		k := kinds[int(kind)%len(kinds)]
		st := New(&memory{}, "memory")
		if err := st.b.Put(ctx, "s-1", k.key, raw, false); err != nil {
			t.Fatal(err)
		}
		var damaged *DamagedError
		if err := k.read(st); err != nil && (!errors.As(err, &damaged) || damaged.SessionID != "s-1" || !strings.Contains(damaged.Record, k.key)) {
			t.Fatalf("%s %q: error %v (%T) is not a *DamagedError naming the session and the record", k.key, raw, err, err)
		}
	})
}
