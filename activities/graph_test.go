package activities

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
)

// finishedSession stores session sid with hypotheses h-0001..h-0003 and two checkpoints
// (the first ranks two of them), in the given final state.
func finishedSession(t *testing.T, a *Activities, sid string, final session.State) {
	t.Helper()
	var entries []session.Entry
	for _, id := range []string{"h-0001", "h-0002", "h-0003"} {
		h := research.Hypothesis{ID: id, Title: "title " + id, Statement: "statement " + id, Origin: "generation", Goal: testGoal}
		must(t, a.Store.PutHypothesis(t.Context(), sid, h))
		must(t, a.Store.PutReview(t.Context(), sid, 0, research.Review{HypothesisID: id, Type: research.ReviewTypes[0], Verdict: "accept"}))
		entries = append(entries, session.Entry{ID: id, Title: h.Title, Elo: 1200})
	}
	must(t, a.Store.PutPlan(t.Context(), sid, research.Plan{Summary: "plan", Criteria: []string{"k"}}))
	for _, snap := range []session.Snapshot{
		{SessionID: sid, Seq: 1, State: session.Active, Hypotheses: entries[:2]},
		{SessionID: sid, Seq: 2, State: final, Hypotheses: entries},
	} {
		if _, err := a.Store.PutCheckpoint(t.Context(), snap, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// withFinishedSession returns activities on the offline model whose store holds session
// sid, completed (see finishedSession).
func withFinishedSession(t *testing.T, sid string) (*testsuite.TestActivityEnvironment, *Activities) {
	t.Helper()
	env, a := newActivities(t, &simulator.Offline{})
	finishedSession(t, a, sid, session.Completed)
	return env, a
}

func TestBranchActivity(t *testing.T) {
	env, a := withFinishedSession(t, "s-1")
	tests := []struct {
		name    string
		in      BranchInput
		wantSeq int
		hyps    int
	}{
		{"latest", BranchInput{From: "s-1", To: "s-2"}, 2, 3},
		{"an earlier checkpoint", BranchInput{From: "s-1", Checkpoint: 1, To: "s-3"}, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var snap session.Snapshot
			must(t, run(t, env, a.Branch, tt.in, &snap))
			if snap.Seq != tt.wantSeq || len(snap.Hypotheses) != tt.hyps {
				t.Errorf("Branch = checkpoint %d with %d hypotheses, want %d with %d", snap.Seq, len(snap.Hypotheses), tt.wantSeq, tt.hyps)
			}
			for _, e := range snap.Hypotheses {
				if h, err := a.Store.Hypothesis(t.Context(), tt.in.To, e.ID); err != nil || h.Title != e.Title {
					t.Errorf("Hypothesis(%s, %s) = %+v, %v", tt.in.To, e.ID, h, err)
				}
			}
			if _, err := a.Store.Plan(t.Context(), tt.in.To); err != nil {
				t.Errorf("Plan(%s): %v", tt.in.To, err)
			}
			// A retry changes nothing.
			var again session.Snapshot
			must(t, run(t, env, a.Branch, tt.in, &again))
			if again.Seq != snap.Seq {
				t.Errorf("retried Branch read checkpoint %d, first %d", again.Seq, snap.Seq)
			}
		})
	}
}

func TestBranchActivityErrors(t *testing.T) {
	env, a := withFinishedSession(t, "s-1")
	tests := []struct {
		name         string
		in           BranchInput
		typ, mention string
	}{
		{"missing checkpoint", BranchInput{From: "s-1", Checkpoint: 9, To: "s-2"}, ErrNoCheckpoint, "from 1 to 2 (2 in all)"},
		{"no session", BranchInput{From: "nobody", To: "s-2"}, ErrNoCheckpoint, "no checkpoint at all"},
		{"itself", BranchInput{From: "s-1", To: "s-1"}, ErrInvalidInput, "itself"},
		{"no destination", BranchInput{From: "s-1"}, ErrInvalidInput, "new session's id"},
		{"negative checkpoint", BranchInput{From: "s-1", Checkpoint: -2, To: "s-2"}, ErrInvalidInput, "0 for its latest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(t, env, a.Branch, tt.in, nil)
			if typ, retry := errorType(err); typ != tt.typ || retry {
				t.Errorf("error %v: type %q (retryable %v), want a non-retryable %s", err, typ, retry, tt.typ)
			}
			if err == nil || !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %v does not say %q", err, tt.mention)
			}
		})
	}
	if _, err := os.Stat(a.Store.Backend().(*store.Dir).SessionDir("s-2")); !os.IsNotExist(err) {
		t.Errorf("a refused branch created s-2: %v", err)
	}
}

func TestImportHypothesisActivity(t *testing.T) {
	env, a := withFinishedSession(t, "sub")
	in := ImportInput{From: "sub", FromID: "h-0002", To: "s-1", ToID: "h-0042", Parents: []string{"h-0007"}}
	var r, again GenerateResult
	must(t, run(t, env, a.ImportHypothesis, in, &r))
	must(t, run(t, env, a.ImportHypothesis, in, &again))
	if !reflect.DeepEqual(r, again) || r.HypothesisID != "h-0042" || r.Title != "title h-0002" {
		t.Errorf("results %+v, %+v", r, again)
	}
	h, err := a.Store.Hypothesis(t.Context(), "s-1", "h-0042")
	if err != nil || h.ID != "h-0042" || h.Statement != "statement h-0002" || len(h.Parents) != 1 || h.Parents[0] != "h-0007" {
		t.Errorf("imported %+v, %v", h, err)
	}

	taken := in
	taken.FromID = "h-0003"
	missing := in
	missing.FromID, missing.ToID = "h-9999", "h-0043"
	noID := in
	noID.ToID = ""
	for _, bad := range []ImportInput{taken, missing, noID} {
		if typ, retry := errorType(run(t, env, a.ImportHypothesis, bad, nil)); typ != ErrInvalidInput || retry {
			t.Errorf("%+v: error type %q (retryable %v), want a non-retryable %s", bad, typ, retry, ErrInvalidInput)
		}
	}
	if h, _ := a.Store.Hypothesis(t.Context(), "s-1", "h-0042"); h.Statement != "statement h-0002" {
		t.Errorf("a refused import replaced h-0042: %+v", h)
	}
}

func TestArchiveActivity(t *testing.T) {
	env, a := withFinishedSession(t, "done")
	finishedSession(t, a, "running", session.Suspended)
	for _, tt := range []struct {
		session, typ, mention string
	}{
		{"running", ErrNotFinished, "terminate it first"},
		{"nobody", ErrNoCheckpoint, "no checkpoint"},
		{"", ErrInvalidInput, "name the session"},
	} {
		err := run(t, env, a.Archive, ArchiveSessionInput{SessionID: tt.session}, nil)
		if typ, retry := errorType(err); typ != tt.typ || retry {
			t.Errorf("archive %q: error %v, type %q (retryable %v); want a non-retryable %s", tt.session, err, typ, retry, tt.typ)
		}
		if err == nil || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("archive %q: error %v does not say %q", tt.session, err, tt.mention)
		}
	}

	var path, again string
	must(t, run(t, env, a.Archive, ArchiveSessionInput{SessionID: "done", Reason: "superseded"}, &path))
	must(t, run(t, env, a.Archive, ArchiveSessionInput{SessionID: "done", Reason: "later"}, &again))
	if want := filepath.Join(a.Store.Backend().(*store.Dir).SessionDir("done"), store.ArchiveFile); path != want || again != want {
		t.Errorf("paths %q, %q; want %q", path, again, want)
	}
	rec, found, err := a.Store.Archived(t.Context(), "done")
	if err != nil || !found || rec.Reason != "superseded" || rec.Time == "" {
		t.Errorf("Archived = %+v, %v, %v; want the first record", rec, found, err)
	}
}
