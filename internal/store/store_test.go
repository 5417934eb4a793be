package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

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

func TestHypothesisRoundTrip(t *testing.T) { eachStore(t, testHypothesisRoundTrip) }

func testHypothesisRoundTrip(t *testing.T, s *Store) {
	ids := []string{"h1", "gen/3/7", "a b", "%2F", ".x", "ü/∑", `q"uote`}
	for _, sid := range []string{"s1", "wf/run:1"} {
		for _, id := range ids {
			want := hyp(id, "title "+id)
			if err := s.PutHypothesis(tctx(t), sid, want); err != nil {
				t.Fatalf("PutHypothesis(%q, %q): %v", sid, id, err)
			}
			got, err := s.Hypothesis(tctx(t), sid, id)
			if err != nil {
				t.Fatalf("Hypothesis(%q, %q): %v", sid, id, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Hypothesis(%q, %q) = %+v, want %+v", sid, id, got, want)
			}
		}
		// One record per id, all directly under hypotheses/: "/" never made a subdirectory.
		keys, err := s.Backend().List(tctx(t), sid, hypothesesDir+"/")
		if err != nil {
			t.Fatal(err)
		}
		if all := files(t, s, sid); len(keys) != len(ids) || len(all) != len(ids) {
			t.Errorf("session %q: %d records under hypotheses/ and %v in all, want %d", sid, len(keys), all, len(ids))
		}
	}
	noDirTemps(t, s)

	if err := s.PutHypothesis(tctx(t), "s1", research.Hypothesis{Title: "no id"}); err == nil {
		t.Error("PutHypothesis without an ID succeeded, want an error")
	}
}

func TestHypotheses(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		s.PutHypothesis(tctx(t), "s", hyp("a", "A"))
		s.PutHypothesis(tctx(t), "s", hyp("b/c", "BC"))

		got, err := s.Hypotheses(tctx(t), "s", []string{"a", "b/c", "a"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got["a"].Title != "A" || got["b/c"].Title != "BC" {
			t.Errorf("Hypotheses = %v", got)
		}

		got, err = s.Hypotheses(tctx(t), "s", []string{"a", "gone"})
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), `"gone"`) {
			t.Errorf("Hypotheses with a missing id: err = %v, want one naming it and wrapping fs.ErrNotExist", err)
		}
		if len(got) != 1 || got["a"].Title != "A" {
			t.Errorf("Hypotheses with a missing id returned %v, want the one found", got)
		}
	})
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

func TestReviewsOrder(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		put := []struct {
			n    int
			typ  string
			crit string
		}{
			{10, research.ReviewFull, "full 10"},
			{0, "scientist-note", "scientist 0"}, // unknown types sort after known ones
			{2, research.ReviewFull, "full 2"},
			{0, research.ReviewInitial, "initial 0"},
			{0, research.ReviewTournament, "tournament 0"},
			{1, "a/b", "a/b 1"},
		}
		for _, p := range put {
			r := research.Review{HypothesisID: "gen/1", Type: p.typ, Critique: p.crit, Verdict: "accept",
				Scores: research.Scores{Novelty: 7, Plausibility: 6, Testability: 8, Safety: 9}}
			if err := s.PutReview(tctx(t), "s", p.n, r); err != nil {
				t.Fatalf("PutReview(%d, %q): %v", p.n, p.typ, err)
			}
		}
		s.PutReview(tctx(t), "s", 0, research.Review{HypothesisID: "other", Type: "full", Critique: "other"})

		got, err := s.Reviews(tctx(t), "s", "gen/1")
		if err != nil {
			t.Fatal(err)
		}
		var crits []string
		for _, r := range got {
			crits = append(crits, r.Critique)
		}
		want := []string{"initial 0", "full 2", "full 10", "tournament 0", "a/b 1", "scientist 0"}
		if !reflect.DeepEqual(crits, want) {
			t.Errorf("Reviews order = %q\nwant             %q", crits, want)
		}
		if got[0].Scores.Novelty != 7 {
			t.Errorf("scores did not round-trip: %+v", got[0].Scores)
		}

		bad := []struct {
			name string
			n    int
			r    research.Review
		}{
			{"no hypothesis id", 0, research.Review{Type: "full"}},
			{"no type", 0, research.Review{HypothesisID: "h"}},
			{"negative index", -1, research.Review{HypothesisID: "h", Type: "full"}},
		}
		for _, b := range bad {
			if err := s.PutReview(tctx(t), "s", b.n, b.r); err == nil {
				t.Errorf("PutReview with %s succeeded, want an error", b.name)
			}
		}
	})
}

func TestTurnRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		want := Turn{
			ID: "gen/h-3/attempt:1", Agent: "generation", Prompt: "Propose...",
			Result:   json.RawMessage(`{"title":"x"}`),
			Usage:    research.Usage{PromptTokens: 100, CompletionTokens: 20, Requests: 1},
			Finished: "2026-01-02T03:04:05Z",
		}
		if err := s.PutTurn(tctx(t), "s", want); err != nil {
			t.Fatal(err)
		}
		got, found, err := s.Turn(tctx(t), "s", want.ID)
		if err != nil || !found {
			t.Fatalf("Turn = found %v, err %v", found, err)
		}
		// MarshalIndent re-indents the raw result; compare it as JSON.
		var a, b any
		json.Unmarshal(got.Result, &a)
		json.Unmarshal(want.Result, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("Result = %s, want %s", got.Result, want.Result)
		}
		got.Result, want.Result = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Turn = %+v, want %+v", got, want)
		}
	})
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

func TestPutReport(t *testing.T) { eachPlainStore(t, testPutReport) }

func testPutReport(t *testing.T, s *Store) {
	for _, md := range []string{"# draft\n", "# final\n"} {
		path, err := s.PutReport(tctx(t), "s/1", []byte(md))
		if err != nil {
			t.Fatal(err)
		}
		if path != s.Where("s/1", "report.md") {
			t.Errorf("PutReport path = %q, want %q", path, s.Where("s/1", "report.md"))
		}
		if d, ok := s.Backend().(*Dir); ok {
			if b, _ := os.ReadFile(path); !filepath.IsAbs(path) || path != filepath.Join(d.SessionDir("s/1"), "report.md") || string(b) != md {
				t.Errorf("report.md at %q = %q, want %q", path, b, md)
			}
		}
		if b, err := s.Report(tctx(t), "s/1"); err != nil || string(b) != md {
			t.Errorf("Report = %q, %v; want %q (the later report replaces the earlier)", b, err, md)
		}
	}
	noDirTemps(t, s)
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

func TestPlanRoundTrip(t *testing.T) { eachStore(t, testPlanRoundTrip) }

func testPlanRoundTrip(t *testing.T, s *Store) {
	if _, err := s.Plan(tctx(t), "s"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Plan before PutPlan: err = %v, want fs.ErrNotExist", err)
	}
	first := research.Plan{Preferences: []string{"p"}, Constraints: []string{"c"}, Criteria: []string{"k"}, Summary: "first"}
	second := first
	second.Summary = "second"
	for _, p := range []research.Plan{first, second} {
		if err := s.PutPlan(tctx(t), "s", p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Plan(tctx(t), "s")
	if err != nil || !reflect.DeepEqual(got, first) {
		t.Errorf("Plan = %+v, %v; want the first plan %+v (written once)", got, err, first)
	}
	if _, err := s.Backend().Get(tctx(t), "s", "plan.json"); err != nil {
		t.Errorf("plan.json: %v", err)
	}
	noDirTemps(t, s)
}

func TestDebateIsReplaced(t *testing.T) { eachStore(t, testDebateIsReplaced) }

func testDebateIsReplaced(t *testing.T, s *Store) {
	if _, err := s.Debate(tctx(t), "s", "d/1"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Debate before PutDebate: err = %v, want fs.ErrNotExist", err)
	}
	d := research.Debate{A: "h1", B: "h2"}
	for i, speaker := range []string{"A", "B", "judge"} {
		d.Turns = append(d.Turns, research.DebateTurn{Turn: i + 1, Speaker: speaker, Argument: "arg " + speaker})
		if speaker == "judge" {
			d.Winner, d.Reasoning = "h2", "B is testable"
		}
		if err := s.PutDebate(tctx(t), "s", "d/1", d); err != nil {
			t.Fatal(err)
		}
		got, err := s.Debate(tctx(t), "s", "d/1")
		if err != nil || !reflect.DeepEqual(got, d) {
			t.Fatalf("after turn %d: Debate = %+v, %v; want %+v", i+1, got, err, d)
		}
	}
	if _, err := s.Backend().Get(tctx(t), "s", "debates/d%2F1.json"); err != nil {
		t.Errorf("debate file: %v", err)
	}
	if err := s.PutDebate(tctx(t), "s", "", d); err == nil {
		t.Error("PutDebate with an empty id succeeded, want an error")
	}
	noDirTemps(t, s)
}

func TestMetaReviewRoundTrip(t *testing.T) { eachStore(t, testMetaReviewRoundTrip) }

func testMetaReviewRoundTrip(t *testing.T, s *Store) {
	for _, round := range []int{1, 2, 12} {
		m := research.MetaReview{Round: round, Critiques: []string{fmt.Sprint("critique of ", round)}, Strengths: []string{"s"}, Feedback: "f"}
		if err := s.PutMetaReview(tctx(t), "s", m); err != nil {
			t.Fatal(err)
		}
		// Written once: a second meta-review of the same round is ignored.
		if err := s.PutMetaReview(tctx(t), "s", research.MetaReview{Round: round, Feedback: "later"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, round := range []int{1, 2, 12} {
		got, err := s.MetaReview(tctx(t), "s", round)
		if err != nil || got.Round != round || got.Feedback != "f" || got.Critiques[0] != fmt.Sprint("critique of ", round) {
			t.Errorf("MetaReview(%d) = %+v, %v", round, got, err)
		}
	}
	if _, err := s.Backend().Get(tctx(t), "s", "metareviews/0012.json"); err != nil {
		t.Errorf("metareviews/0012.json: %v", err)
	}
	if _, err := s.MetaReview(tctx(t), "s", 3); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("MetaReview(absent) err = %v, want fs.ErrNotExist", err)
	}
	if err := s.PutMetaReview(tctx(t), "s", research.MetaReview{Round: -1}); err == nil {
		t.Error("PutMetaReview with a negative round succeeded, want an error")
	}
	noDirTemps(t, s)
}

func TestOverviewRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		if _, err := s.Overview(tctx(t), "s"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Overview before PutOverview: err = %v, want fs.ErrNotExist", err)
		}
		o := research.Overview{
			Summary:       "first",
			Themes:        []research.OverviewTheme{{Title: "tau", Hypotheses: []string{"h1", "h2"}, Note: "n"}},
			OpenQuestions: []string{"q"},
			Experiments:   []string{"e"},
		}
		if err := s.PutOverview(tctx(t), "s", o); err != nil {
			t.Fatal(err)
		}
		if err := s.PutOverview(tctx(t), "s", research.Overview{Summary: "second"}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Overview(tctx(t), "s")
		if err != nil || !reflect.DeepEqual(got, o) {
			t.Errorf("Overview = %+v, %v; want the first %+v", got, err, o)
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

func TestPutFile(t *testing.T) { eachStore(t, testPutFile) }

func testPutFile(t *testing.T, s *Store) {
	for _, body := range []string{`{"v":1}`, `{"v":2}`} {
		path, err := s.PutFile(tctx(t), "s/1", "report.json", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if path != s.Where("s/1", "report.json") {
			t.Errorf("PutFile path = %q", path)
		}
		if b, err := s.File(tctx(t), "s/1", "report.json"); err != nil || string(b) != body {
			t.Errorf("report.json = %q, %v; want %q (overwritten)", b, err, body)
		}
	}
	if _, err := s.PutFile(tctx(t), "s/1", "elo.svg", []byte("<svg/>")); err != nil {
		t.Errorf("PutFile(elo.svg): %v", err)
	}
	// An empty artefact (a bibliography of a session that cites nothing) is a file like any
	// other, whether its bytes are nil or empty.
	for _, empty := range [][]byte{nil, {}} {
		if _, err := s.PutFile(tctx(t), "s/1", "bibliography.bib", empty); err != nil {
			t.Errorf("PutFile(empty %#v): %v", empty, err)
		}
		if b, err := s.File(tctx(t), "s/1", "bibliography.bib"); err != nil || len(b) != 0 {
			t.Errorf("bibliography.bib = %q, %v; want empty, nil", b, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../x.json", "a/b.json", `a\b.json`, ".hidden", ".tmp-123", "plan.json", "hypotheses", "events.jsonl", "nul\x00.json", strings.Repeat("x", 300)} {
		if path, err := s.PutFile(tctx(t), "s/1", bad, []byte("x")); err == nil {
			t.Errorf("PutFile(%q) wrote %s, want an error", bad, path)
		}
	}
	if d, ok := s.Backend().(*Dir); ok {
		if _, err := os.Stat(filepath.Join(d.Root(), "x.json")); err == nil {
			t.Error("PutFile escaped the session directory")
		}
	}
	noDirTemps(t, s)
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
