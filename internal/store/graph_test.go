package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// graphSession fills session "src" with two checkpoints and records around them:
//
//	checkpoint 1 (active):    hypotheses a, b; meta-reviews up to round 1
//	checkpoint 2 (completed): a, b, c/1 and ghost (whose text is missing); up to round 2
//
// z is stored but never ranked, so no branch may take it, nor its reviews or debates.
func graphSession(t *testing.T, s *Store) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b", "c/1", "z"} {
		must(s.PutHypothesis(tctx(t), "src", hyp(id, "title "+id)))
	}
	for _, r := range []struct {
		n       int
		id, typ string
	}{{0, "a", "initial"}, {0, "a", "full"}, {1, "a", "full"}, {1000, "a", "manual"}, {0, "b", "initial"}, {0, "c/1", "initial"}, {0, "z", "initial"}} {
		must(s.PutReview(tctx(t), "src", r.n, research.Review{HypothesisID: r.id, Type: r.typ, Verdict: "accept", Critique: r.typ + " of " + r.id}))
	}
	must(s.PutPlan(tctx(t), "src", research.Plan{Summary: "plan", Criteria: []string{"k"}}))
	for _, round := range []int{1, 2, 3} {
		must(s.PutMetaReview(tctx(t), "src", research.MetaReview{Round: round, Feedback: "f"}))
	}
	for id, d := range map[string]research.Debate{
		"debate-a-b":   {A: "a", B: "b", Winner: "a"},
		"debate-a-c/1": {A: "a", B: "c/1"},
		"debate-a-z":   {A: "a", B: "z"},
	} {
		must(s.PutDebate(tctx(t), "src", id, d))
	}
	must(s.PutTurn(tctx(t), "src", Turn{ID: "t1", Agent: "generation", Result: []byte(`{}`)}))
	must(s.PutOverview(tctx(t), "src", research.Overview{Summary: "o"}))
	if _, err := s.PutReport(tctx(t), "src", []byte("# report")); err != nil {
		t.Fatal(err)
	}
	entries := func(ids ...string) []session.Entry {
		var es []session.Entry
		for _, id := range ids {
			es = append(es, session.Entry{ID: id, Elo: 1200})
		}
		return es
	}
	for _, snap := range []session.Snapshot{
		{SessionID: "src", Seq: 1, State: session.Active, Hypotheses: entries("a", "b"), Progress: session.Progress{MetaReviews: 1}},
		{SessionID: "src", Seq: 2, State: session.Completed, Hypotheses: entries("a", "b", "c/1", "ghost"), Progress: session.Progress{MetaReviews: 2}},
	} {
		if _, err := s.PutCheckpoint(tctx(t), snap, []session.Event{{Seq: snap.Seq, Kind: session.EventCheckpoint}}); err != nil {
			t.Fatal(err)
		}
	}
}

// files lists every record of a session, by key, sorted: in a Dir the files under its
// directory (with the event log and the index row), in Postgres the rows of its records.
func files(t *testing.T, s *Store, sessionID string) []string {
	t.Helper()
	if p, ok := s.Backend().(*Postgres); ok {
		rows, err := p.pool.Query(t.Context(), `SELECT key FROM cosci_records WHERE session_id = $1 ORDER BY key COLLATE "C"`, sessionID)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	dir := s.Backend().(*Dir).SessionDir(sessionID)
	var rels []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rels = append(rels, filepath.ToSlash(rel))
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	slices.Sort(rels)
	return rels
}

// removeRecords deletes the records of a session whose keys start with prefix, as a crash
// part-way through writing them would leave it.
func removeRecords(t *testing.T, s *Store, sessionID, prefix string) {
	t.Helper()
	if p, ok := s.Backend().(*Postgres); ok {
		if _, err := p.pool.Exec(t.Context(), `DELETE FROM cosci_records WHERE session_id = $1 AND starts_with(key, $2)`, sessionID, prefix); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.RemoveAll(filepath.Join(s.Backend().(*Dir).SessionDir(sessionID), filepath.FromSlash(prefix))); err != nil {
		t.Fatal(err)
	}
}

// noDirTemps is noTemps for a Dir; other backends have no temporary files.
func noDirTemps(t *testing.T, s *Store) {
	t.Helper()
	if d, ok := s.Backend().(*Dir); ok {
		noTemps(t, d.Root())
	}
}

// branchCase is a Branch from graphSession's "src" to "dst".
type branchCase struct {
	name    string
	seq     int
	wantSeq int      // the checkpoint Branch read
	want    []string // dst's records
	hyps    []string // readable under dst's id, with the same reviews as in src
	metas   []int
	only    []string // a subagent's branch: only these hypotheses
}

func TestBranch(t *testing.T) {
	tests := []branchCase{
		{"checkpoint 1", 1, 1, []string{
			"debates/debate-a-b.json",
			"hypotheses/a.json", "hypotheses/b.json",
			"metareviews/0001.json",
			"plan.json",
			"reviews/a/full-0.json", "reviews/a/full-1.json", "reviews/a/initial-0.json", "reviews/a/manual-1000.json",
			"reviews/b/initial-0.json",
		}, []string{"a", "b"}, []int{1}, nil},
		{"latest (0)", 0, 2, []string{
			"debates/debate-a-b.json", "debates/debate-a-c%2F1.json",
			"hypotheses/a.json", "hypotheses/b.json", "hypotheses/c%2F1.json",
			"metareviews/0001.json", "metareviews/0002.json",
			"plan.json",
			"reviews/a/full-0.json", "reviews/a/full-1.json", "reviews/a/initial-0.json", "reviews/a/manual-1000.json",
			"reviews/b/initial-0.json",
			"reviews/c%2F1/initial-0.json",
		}, []string{"a", "b", "c/1"}, []int{1, 2}, nil},
		// A subagent's: its hypothesis, its reviews, the plan and the latest meta-review
		// only, however many rounds the session had.
		{"subagent on a", 0, 2, []string{
			"hypotheses/a.json",
			"metareviews/0002.json",
			"plan.json",
			"reviews/a/full-0.json", "reviews/a/full-1.json", "reviews/a/initial-0.json", "reviews/a/manual-1000.json",
		}, []string{"a"}, []int{2}, []string{"a"}},
	}
	for _, tt := range tests {
		eachStore(t, func(t *testing.T, s *Store) {
			t.Run(tt.name, func(t *testing.T) { testBranch(t, s, tt) })
		})
	}
}

func testBranch(t *testing.T, s *Store, tt branchCase) {
	graphSession(t, s)
	srcFiles := files(t, s, "src")
	snap, err := s.Branch(tctx(t), "src", tt.seq, "dst", tt.only...)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Seq != tt.wantSeq || snap.SessionID != "src" {
		t.Errorf("Branch returned checkpoint %d of %q, want %d of src", snap.Seq, snap.SessionID, tt.wantSeq)
	}
	if got := files(t, s, "dst"); !reflect.DeepEqual(got, tt.want) {
		t.Errorf("dst holds\n  %v\nwant\n  %v", got, tt.want)
	}
	for _, id := range tt.hyps {
		if h, err := s.Hypothesis(tctx(t), "dst", id); err != nil || h.ID != id || h.Title != "title "+id {
			t.Errorf("Hypothesis(dst, %q) = %+v, %v", id, h, err)
		}
		want, _ := s.Reviews(tctx(t), "src", id)
		if got, err := s.Reviews(tctx(t), "dst", id); err != nil || len(got) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("Reviews(dst, %q) = %v, %v; want src's %v", id, got, err, want)
		}
	}
	if p, err := s.Plan(tctx(t), "dst"); err != nil || p.Summary != "plan" {
		t.Errorf("Plan(dst) = %+v, %v", p, err)
	}
	for _, round := range tt.metas {
		if m, err := s.MetaReview(tctx(t), "dst", round); err != nil || m.Round != round {
			t.Errorf("MetaReview(dst, %d) = %+v, %v", round, m, err)
		}
	}
	if d, err := s.Debate(tctx(t), "dst", "debate-a-b"); tt.only == nil && (err != nil || d.Winner != "a") {
		t.Errorf("Debate(dst, debate-a-b) = %+v, %v", d, err)
	}
	// In a Dir, links, not copies (unless sealed: a sealed record is bound to its session,
	// so dst holds its own); and src is untouched.
	if d, ok := s.Backend().(*Dir); ok && s.keys == nil {
		a1, _ := os.Stat(filepath.Join(d.SessionDir("src"), "hypotheses", "a.json"))
		a2, _ := os.Stat(filepath.Join(d.SessionDir("dst"), "hypotheses", "a.json"))
		if a1 == nil || a2 == nil || !os.SameFile(a1, a2) {
			t.Error("dst's hypotheses/a.json is not a hard link to src's")
		}
	}
	if got := files(t, s, "src"); !reflect.DeepEqual(got, srcFiles) {
		t.Errorf("Branch changed src: %v, was %v", got, srcFiles)
	}
	noDirTemps(t, s)
}

// TestBranchIsIdempotent: a retried Branch (after a crash part-way, or after dst began
// writing its own records) completes what is missing and keeps what dst holds.
func TestBranchIsIdempotent(t *testing.T) { eachStore(t, testBranchIsIdempotent) }

func testBranchIsIdempotent(t *testing.T, s *Store) {
	graphSession(t, s)
	if _, err := s.Branch(tctx(t), "src", 0, "dst"); err != nil {
		t.Fatal(err)
	}
	want := files(t, s, "dst")
	// A crash lost some links; dst already wrote a debate turn of its own.
	removeRecords(t, s, "dst", "hypotheses/b.json")
	removeRecords(t, s, "dst", "reviews/a/")
	own := research.Debate{A: "a", B: "b", Winner: "b", Reasoning: "dst's own"}
	if err := s.PutDebate(tctx(t), "dst", "debate-a-b", own); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.Branch(tctx(t), "src", 0, "dst"); err != nil {
			t.Fatal(err)
		}
	}
	if got := files(t, s, "dst"); !reflect.DeepEqual(got, want) {
		t.Errorf("after retries dst holds %v, want %v", got, want)
	}
	if d, err := s.Debate(tctx(t), "dst", "debate-a-b"); err != nil || !reflect.DeepEqual(d, own) {
		t.Errorf("Debate(dst) = %+v, %v; want dst's own %+v kept", d, err, own)
	}
	if d, _ := s.Debate(tctx(t), "src", "debate-a-b"); d.Winner != "a" {
		t.Errorf("dst's debate leaked into src: %+v", d)
	}
	if rs, err := s.Reviews(tctx(t), "dst", "a"); err != nil || len(rs) != 4 {
		t.Errorf("Reviews(dst, a) after a retry = %v, %v; want 4", rs, err)
	}
}

// TestBranchCopiesWithoutLinks: where links fail (another file system), Branch copies.
func TestBranchCopiesWithoutLinks(t *testing.T) {
	s := open(t)
	graphSession(t, s.Store)
	defer func(l func(string, string) error) { link = l }(link)
	link = func(from, to string) error {
		return &os.LinkError{Op: "link", Old: from, New: to, Err: syscall.EXDEV}
	}
	if _, err := s.Branch(tctx(t), "src", 1, "dst"); err != nil {
		t.Fatal(err)
	}
	if got := files(t, s.Store, "dst"); len(got) != 10 {
		t.Errorf("dst holds %d files, want 10: %v", len(got), got)
	}
	a1, _ := os.Stat(filepath.Join(s.SessionDir("src"), "hypotheses", "a.json"))
	a2, _ := os.Stat(filepath.Join(s.SessionDir("dst"), "hypotheses", "a.json"))
	if a1 == nil || a2 == nil || os.SameFile(a1, a2) {
		t.Error("dst's hypotheses/a.json should be a copy, not a link")
	}
	if h, err := s.Hypothesis(tctx(t), "dst", "a"); err != nil || !reflect.DeepEqual(h, hyp("a", "title a")) {
		t.Errorf("copied Hypothesis(dst, a) = %+v, %v", h, err)
	}
	noTemps(t, s.Root())
}

func TestBranchRefusals(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		graphSession(t, s)
		tests := []struct {
			name     string
			src      string
			seq      int
			dst      string
			notExist bool
			mention  []string
		}{
			{"missing checkpoint", "src", 7, "dst", true, []string{`"src"`, "checkpoint 7"}},
			{"session without checkpoints", "nobody", 0, "dst", true, []string{`"nobody"`, "checkpoint 0"}},
			{"negative checkpoint", "src", -1, "dst", false, []string{"-1"}},
			{"itself", "src", 0, "src", false, []string{"itself"}},
			{"empty destination", "src", 0, "", false, []string{"empty"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := s.Branch(tctx(t), tt.src, tt.seq, tt.dst)
				if err == nil {
					t.Fatal("Branch succeeded, want an error")
				}
				if errors.Is(err, fs.ErrNotExist) != tt.notExist {
					t.Errorf("errors.Is(%v, fs.ErrNotExist) = %v, want %v", err, !tt.notExist, tt.notExist)
				}
				for _, m := range tt.mention {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("error %q does not mention %s", err, m)
					}
				}
			})
		}
		if got := files(t, s, "dst"); len(got) != 0 {
			t.Errorf("a refused Branch wrote %v", got)
		}
	})
}

func TestImportHypothesis(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		src := hyp("h-0003", "evolved")
		src.Parents = []string{"h-0001"}
		if err := s.PutHypothesis(tctx(t), "sub", src); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name        string
			dstID       string
			parents     []string
			wantParents []string
		}{
			{"new parents", "h-0010", []string{"h-0002", "h-0007"}, []string{"h-0002", "h-0007"}},
			{"nil keeps the subagent's", "h-0011", nil, []string{"h-0001"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.ImportHypothesis(tctx(t), "sub", "h-0003", "parent", tt.dstID, tt.parents)
				if err != nil {
					t.Fatal(err)
				}
				want := src
				want.ID, want.Parents = tt.dstID, tt.wantParents
				if !reflect.DeepEqual(got, want) {
					t.Errorf("ImportHypothesis = %+v, want %+v", got, want)
				}
				if stored, err := s.Hypothesis(tctx(t), "parent", tt.dstID); err != nil || !reflect.DeepEqual(stored, want) {
					t.Errorf("Hypothesis(parent, %s) = %+v, %v; want %+v", tt.dstID, stored, err, want)
				}
			})
		}
		// Write-once: a second import under the same id keeps the first.
		other := hyp("h-0004", "another")
		s.PutHypothesis(tctx(t), "sub", other)
		got, err := s.ImportHypothesis(tctx(t), "sub", "h-0004", "parent", "h-0010", nil)
		if err != nil || got.Title != "evolved" || got.ID != "h-0010" {
			t.Errorf("second import = %+v, %v; want the first (evolved) kept", got, err)
		}
		if _, err := s.ImportHypothesis(tctx(t), "sub", "h-9999", "parent", "h-0012", nil); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("import of a missing hypothesis: err = %v, want fs.ErrNotExist", err)
		}
		if _, err := s.Hypothesis(tctx(t), "sub", "h-0010"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("import wrote into the source session: %v", err)
		}
	})
}

func TestArchive(t *testing.T) { eachStore(t, testArchive) }

func testArchive(t *testing.T, s *Store) {
	checkpoint := func(sid string, states ...session.State) {
		for i, st := range states {
			if _, err := s.PutCheckpoint(tctx(t), session.Snapshot{SessionID: sid, Seq: i + 1, State: st}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	checkpoint("running", session.Active, session.Suspended)
	checkpoint("done", session.Active, session.Completed)
	record := Archived{Time: "2026-03-01T10:00:00Z", Reason: "superseded"}

	tests := []struct {
		name        string
		session     string
		a           Archived
		notExist    bool
		notFinished bool
		mention     string
	}{
		{"no checkpoint", "nobody", record, true, false, "no checkpoint"},
		{"still running", "running", record, false, true, "terminate it first"},
		{"no time", "done", Archived{Reason: "x"}, false, false, "no time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := files(t, s, tt.session)
			err := s.Archive(tctx(t), tt.session, tt.a)
			if err == nil {
				t.Fatal("Archive succeeded, want a refusal")
			}
			var nf *NotFinishedError
			if errors.Is(err, fs.ErrNotExist) != tt.notExist || errors.As(err, &nf) != tt.notFinished {
				t.Errorf("err = %v (%T): not-exist %v, not-finished %v; want %v, %v",
					err, err, errors.Is(err, fs.ErrNotExist), nf != nil, tt.notExist, tt.notFinished)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not say %q", err, tt.mention)
			}
			if _, found, _ := s.Archived(tctx(t), tt.session); found {
				t.Error("a refused session is archived")
			}
			if after := files(t, s, tt.session); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused Archive wrote files: %v, was %v", after, before)
			}
		})
	}

	if _, found, err := s.Archived(tctx(t), "done"); found || err != nil {
		t.Fatalf("Archived before Archive = %v, %v; want false, nil", found, err)
	}
	before := files(t, s, "done")
	if err := s.Archive(tctx(t), "done", record); err != nil {
		t.Fatal(err)
	}
	if err := s.Archive(tctx(t), "done", Archived{Time: "2026-04-01T00:00:00Z", Reason: "again"}); err != nil {
		t.Errorf("second Archive: %v, want nil", err)
	}
	got, found, err := s.Archived(tctx(t), "done")
	if err != nil || !found || got != record {
		t.Errorf("Archived = %+v, %v, %v; want the first record %+v", got, found, err, record)
	}
	// A soft delete: one new file, everything else still there and readable.
	want := append(slices.Clone(before), ArchiveFile)
	slices.Sort(want)
	if after := files(t, s, "done"); !reflect.DeepEqual(after, want) {
		t.Errorf("Archive left %v, want %v", after, want)
	}
	if _, err := s.LatestCheckpoint(tctx(t), "done"); err != nil {
		t.Errorf("an archived session's checkpoint is unreadable: %v", err)
	}
	// The index shows it archived, and later checkpoints of an archived session (there are
	// none in practice) could not take that back.
	if row, err := s.Session(tctx(t), "done"); err != nil || row.Archived == "" || row.Status != session.Completed {
		t.Errorf("index row of an archived session = %+v, %v; want archived and completed", row, err)
	}
	noDirTemps(t, s)
}
