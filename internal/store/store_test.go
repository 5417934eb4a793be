package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

func hyp(id, title string) research.Hypothesis {
	q := 0.73
	return research.Hypothesis{
		ID: id, Title: title, Statement: "S of " + id, Rationale: "R",
		Predictions: []string{"p1", "p2"}, Origin: "generation", Strategy: "literature",
		Goal: "g", Latent: &q,
	}
}

// noTemps fails if a temporary file was left anywhere under dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(d.Name(), tempPrefix) {
			t.Errorf("temporary file left behind: %s", path)
		}
		return nil
	})
}

func TestOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	s, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("Open did not create %s: %v", dir, err)
	}
	if !filepath.IsAbs(s.Location()) {
		t.Errorf("Location() = %q, want an absolute path", s.Location())
	}
	if _, err := Open(t.Context(), ""); err == nil {
		t.Error(`Open("") succeeded, want an error`)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(t.Context(), file); err == nil {
		t.Error("Open(a regular file) succeeded, want an error")
	}
}

func TestEscape(t *testing.T) {
	for id, want := range map[string]string{
		"h-0001_x":   "h-0001_x",
		"gen/3/7":    "gen%2F3%2F7",
		"gen%2F3":    "gen%252F3", // '%' is escaped too, so the mapping stays one-to-one
		"a b:c*?":    "a%20b%3Ac%2A%3F",
		".hidden":    "%2Ehidden",
		"v1.2":       "v1.2",
		"...":        "%2E..",
		`back\slash`: "back%5Cslash",
		"ü":          "%C3%BC",
	} {
		if got, err := escape("test id", id); err != nil || got != want {
			t.Errorf("escape(%q) = %q, %v; want %q", id, got, err, want)
		}
	}
	for _, id := range []string{
		"", ".", "..",
		strings.Repeat("/", 100), // 300 bytes escaped: too long for a file name
	} {
		if got, err := escape("test id", id); err == nil || got != "" {
			t.Errorf("escape(%q) = %q, %v; want an error", id, got, err)
		}
	}
}

func TestSessionDir(t *testing.T) {
	s := open(t)
	tests := []struct {
		id, want string
	}{
		{"research-42", filepath.Join(s.Root(), "research-42")},
		{"a/../b", filepath.Join(s.Root(), "a%2F..%2Fb")},
		{"", ""},
		{".", ""},
		{"..", ""},
	}
	for _, tt := range tests {
		if got := s.SessionDir(tt.id); got != tt.want {
			t.Errorf("SessionDir(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
	// The methods say why an id is refused.
	for _, id := range []string{"", ".", ".."} {
		if err := s.PutHypothesis(tctx(t), id, hyp("h1", "t")); err == nil {
			t.Errorf("PutHypothesis(session %q) succeeded, want an error", id)
		}
		if _, err := s.PutCheckpoint(tctx(t), session.Snapshot{SessionID: id, Seq: 1}, nil); err == nil {
			t.Errorf("PutCheckpoint(session %q) succeeded, want an error", id)
		}
		if _, err := s.PutReport(tctx(t), id, nil); err == nil {
			t.Errorf("PutReport(session %q) succeeded, want an error", id)
		}
	}
}

// TestWritesRefuseUnnamedSessions: every record's write refuses a session id that names
// no session directory ("", ".", ".."), whether its key escapes the id or put does, and
// writes nothing anywhere: a directory store has no directory for such an id, so a record
// written under "" would land in the process's working directory.
func TestWritesRefuseUnnamedSessions(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	s := open(t)
	writes := []struct {
		name  string
		write func(id string) error
	}{
		{"PutHypothesis", func(id string) error { return s.PutHypothesis(tctx(t), id, hyp("h1", "t")) }},
		{"PutReview", func(id string) error {
			return s.PutReview(tctx(t), id, 1, research.Review{HypothesisID: "h1", Type: "initial", Verdict: "accept"})
		}},
		{"PutDebate", func(id string) error { return s.PutDebate(tctx(t), id, "d1", research.Debate{}) }},
		{"PutTurn", func(id string) error { return s.PutTurn(tctx(t), id, Turn{ID: "t1", Agent: "generation"}) }},
		{"PutPlan", func(id string) error { return s.PutPlan(tctx(t), id, research.Plan{Summary: "p"}) }},
		{"PutOverview", func(id string) error { return s.PutOverview(tctx(t), id, research.Overview{}) }},
		{"PutMetaReview", func(id string) error { return s.PutMetaReview(tctx(t), id, research.MetaReview{Round: 1}) }},
		{"Check", func(id string) error { return s.Check(tctx(t), id, time.Unix(0, 0)) }},
	}
	for _, w := range writes {
		for _, id := range []string{"", ".", ".."} {
			if err := w.write(id); err == nil {
				t.Errorf("%s(session %q) succeeded, want an error", w.name, id)
			}
		}
	}
	for _, dir := range []string{cwd, filepath.Dir(s.Root())} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				t.Errorf("a refused write left %s", path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestNotFound(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		s.PutHypothesis(tctx(t), "s", hyp("h1", "t"))
		tests := []struct {
			name string
			err  error
		}{
			{"Hypothesis in an unknown session", func() error { _, err := s.Hypothesis(tctx(t), "nobody", "h1"); return err }()},
			{"Hypothesis with an unknown id", func() error { _, err := s.Hypothesis(tctx(t), "s", "h2"); return err }()},
			{"Checkpoint", func() error { _, err := s.Checkpoint(tctx(t), "s", 1); return err }()},
			{"LatestCheckpoint", func() error { _, err := s.LatestCheckpoint(tctx(t), "s"); return err }()},
		}
		for _, tt := range tests {
			if !errors.Is(tt.err, fs.ErrNotExist) {
				t.Errorf("%s: err = %v, want one wrapping fs.ErrNotExist", tt.name, tt.err)
			}
		}

		// Absent turns, reviews and events are not errors: callers expect them.
		if _, found, err := s.Turn(tctx(t), "s", "t1"); found || err != nil {
			t.Errorf("Turn(absent) = found %v, err %v; want false, nil", found, err)
		}
		if rs, err := s.Reviews(tctx(t), "s", "h1"); len(rs) != 0 || err != nil {
			t.Errorf("Reviews(none) = %v, %v; want empty, nil", rs, err)
		}
		if evs, err := s.Events(tctx(t), "s"); len(evs) != 0 || err != nil {
			t.Errorf("Events(none) = %v, %v; want empty, nil", evs, err)
		}
	})
}

func TestWrittenOnce(t *testing.T) { eachStore(t, testWrittenOnce) }

func testWrittenOnce(t *testing.T, s *Store) {
	tests := []struct {
		name        string
		first, then func() error
		check       func() (string, error) // returns the title-like field that shows which write won
	}{
		{
			"hypothesis",
			func() error { return s.PutHypothesis(tctx(t), "s", hyp("h1", "first")) },
			func() error { return s.PutHypothesis(tctx(t), "s", hyp("h1", "second")) },
			func() (string, error) { h, err := s.Hypothesis(tctx(t), "s", "h1"); return h.Title, err },
		},
		{
			"review",
			func() error {
				return s.PutReview(tctx(t), "s", 0, research.Review{HypothesisID: "h1", Type: "full", Critique: "first"})
			},
			func() error {
				return s.PutReview(tctx(t), "s", 0, research.Review{HypothesisID: "h1", Type: "full", Critique: "second"})
			},
			func() (string, error) {
				rs, err := s.Reviews(tctx(t), "s", "h1")
				if len(rs) != 1 {
					return fmt.Sprint(len(rs), " reviews"), err
				}
				return rs[0].Critique, err
			},
		},
		{
			"turn",
			func() error {
				return s.PutTurn(tctx(t), "s", Turn{ID: "t/1", Prompt: "first", Result: json.RawMessage(`{}`)})
			},
			func() error {
				return s.PutTurn(tctx(t), "s", Turn{ID: "t/1", Prompt: "second", Result: json.RawMessage(`{}`)})
			},
			func() (string, error) { tr, _, err := s.Turn(tctx(t), "s", "t/1"); return tr.Prompt, err },
		},
		{
			"checkpoint",
			func() error {
				_, err := s.PutCheckpoint(tctx(t), session.Snapshot{SessionID: "s", Seq: 3, Goal: "first"}, nil)
				return err
			},
			func() error {
				_, err := s.PutCheckpoint(tctx(t), session.Snapshot{SessionID: "s", Seq: 3, Goal: "second"}, nil)
				return err
			},
			func() (string, error) { snap, err := s.Checkpoint(tctx(t), "s", 3); return snap.Goal, err },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.first(); err != nil {
				t.Fatal(err)
			}
			if err := tt.then(); err != nil {
				t.Fatalf("second put: %v, want nil", err)
			}
			got, err := tt.check()
			if err != nil {
				t.Fatal(err)
			}
			if got != "first" {
				t.Errorf("after two puts the record says %q, want %q", got, "first")
			}
		})
	}
	noDirTemps(t, s)
}

func TestConcurrentPutHypothesis(t *testing.T) { eachStore(t, testConcurrentPutHypothesis) }

func testConcurrentPutHypothesis(t *testing.T, s *Store) {
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Different content per writer, long enough that a torn file would show.
			h := hyp("h/1", fmt.Sprintf("writer %d", i))
			h.Rationale = strings.Repeat(fmt.Sprint(i), 64<<10)
			errs[i] = s.PutHypothesis(tctx(t), "s", h)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if keys := files(t, s, "s"); len(keys) != 1 {
		t.Fatalf("session holds %v, want exactly one record", keys)
	}
	h, err := s.Hypothesis(tctx(t), "s", "h/1")
	if err != nil {
		t.Fatal(err)
	}
	var i int
	if _, err := fmt.Sscanf(h.Title, "writer %d", &i); err != nil {
		t.Fatalf("title %q is from no writer", h.Title)
	}
	if h.Rationale != strings.Repeat(fmt.Sprint(i), 64<<10) {
		t.Errorf("the stored hypothesis mixes writers: title from writer %d, rationale from another", i)
	}
}

func TestDamagedRecord(t *testing.T) { eachPlainStore(t, testDamagedRecord) }

// testDamagedRecord: a record truncated or garbled outside the store, or one that is
// missing (a deleted file, a deleted row), is reported by a store that never read it before
// with an error naming the session and the record: a *DamagedError, or one wrapping
// fs.ErrNotExist. Nothing is read as if it were sound.
func testDamagedRecord(t *testing.T, s *Store) {
	ctx := tctx(t)
	const sid = "s-damaged"
	if err := s.PutHypothesis(ctx, sid, hyp("h1", "t")); err != nil {
		t.Fatal(err)
	}
	sound, err := s.Backend().Get(ctx, sid, "hypotheses/h1.json")
	if err != nil {
		t.Fatal(err)
	}
	one := bigSnapshot(sid, 1, 3)
	if _, err := s.PutCheckpoint(ctx, one, nil); err != nil {
		t.Fatal(err)
	}
	two := bigSnapshot(sid, 2, 1)
	two.Hypotheses[0].ID = "gen/new"
	if _, err := s.PutCheckpointOver(ctx, 1, two, nil); err != nil {
		t.Fatal(err)
	}
	whole, err := s.Backend().Get(ctx, sid, checkpointKey(1))
	if err != nil {
		t.Fatal(err)
	}
	readH1 := func(s *Store) error { _, err := s.Hypothesis(ctx, sid, "h1"); return err }
	readTwo := func(s *Store) error { _, err := s.Checkpoint(ctx, sid, 2); return err }
	for _, tc := range []struct {
		name    string
		key     string
		data    []byte // nil: remove the record
		read    func(*Store) error
		missing bool
	}{
		{"hypothesis truncated", "hypotheses/h1.json", sound[:len(sound)/2], readH1, false},
		{"hypothesis garbled", "hypotheses/h1.json", []byte("{not json"), readH1, false},
		{"hypothesis missing", "hypotheses/h1.json", nil, readH1, true},
		{"checkpoint truncated", checkpointKey(1), whole[:len(whole)-20], func(s *Store) error { _, err := s.Checkpoint(ctx, sid, 1); return err }, false},
		{"the checkpoint a later one builds on garbled", checkpointKey(1), append([]byte("]"), whole...), readTwo, false},
		{"the checkpoint a later one builds on missing", checkpointKey(1), nil, readTwo, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.data == nil {
				removeRecords(t, s, sid, tc.key)
			} else if err := s.Backend().Put(ctx, sid, tc.key, tc.data, false); err != nil {
				t.Fatal(err)
			}
			err := tc.read(reopen(s)) // a store that remembers nothing
			var damaged *DamagedError
			switch {
			case err == nil:
				t.Fatalf("read %s back without an error", tc.key)
			case tc.missing && !errors.Is(err, fs.ErrNotExist):
				t.Errorf("error %v does not say the record is missing", err)
			case !tc.missing && !errors.As(err, &damaged):
				t.Errorf("error %v (%T) is not a *DamagedError", err, err)
			case !strings.Contains(err.Error(), sid) || !strings.Contains(err.Error(), s.Where(sid, tc.key)):
				t.Errorf("error %q does not name session %s and record %s", err, sid, s.Where(sid, tc.key))
			}
			// Repaired, the record reads again.
			restore := sound
			if tc.key != "hypotheses/h1.json" {
				restore = whole
			}
			if err := s.Backend().Put(ctx, sid, tc.key, restore, false); err != nil {
				t.Fatal(err)
			}
			if err := tc.read(reopen(s)); err != nil {
				t.Errorf("after the repair: %v", err)
			}
		})
	}
}
