package main

import (
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
)

// TestStoredTree: the lineage of a session Temporal no longer keeps, drawn from the session
// index alone, whichever session of the tree is asked for.
func TestStoredTree(t *testing.T) {
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	put := func(id string, started string, state session.State, d *lineage.Descriptor) {
		t.Helper()
		snap := session.Snapshot{SessionID: id, Seq: 1, State: state, StartedAt: started, Time: started, Lineage: d}
		if _, err := st.PutCheckpoint(t.Context(), snap, nil); err != nil {
			t.Fatal(err)
		}
	}
	put("tau-1", "2026-01-01T00:00:00Z", session.Completed, nil)
	put("tau-1.2", "2026-01-02T00:00:00Z", session.Completed, &lineage.Descriptor{Type: lineage.User, Conversation: "tau-1", Parent: "tau-1", Relation: lineage.Continue})
	put("tau-1-fork-1", "2026-01-03T00:00:00Z", session.Suspended, &lineage.Descriptor{Type: lineage.User, Conversation: "tau-1-fork-1", Parent: "tau-1", Relation: lineage.Fork})
	put("tau-1.2-fork-2", "2026-01-04T00:00:00Z", session.Completed, &lineage.Descriptor{Type: lineage.Subagent, Conversation: "tau-1", Parent: "tau-1.2", Relation: lineage.Spawn})
	put("other", "2026-01-05T00:00:00Z", session.Completed, nil)
	if err := st.Archive(t.Context(), "tau-1", store.Archived{Time: "2026-02-01T00:00:00Z"}); err != nil {
		t.Fatal(err)
	}

	for _, focus := range []string{"tau-1", "tau-1.2-fork-2"} {
		root, err := storedTree(t.Context(), st, focus)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		if err := renderTree(&out, root, focus); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[0], "tau-1 ") || !strings.Contains(lines[0], "archived") {
			t.Fatalf("tree from %s:\n%s\nwant tau-1 (archived) at the root and its three descendants", focus, got)
		}
		// Children oldest first: the continuation, its subagent under it, then the fork.
		for i, want := range []string{"tau-1.2 ", "tau-1.2-fork-2 ", "tau-1-fork-1 "} {
			if !strings.Contains(lines[i+1], want) {
				t.Errorf("line %d of the tree from %s is %q, want %s", i+2, focus, lines[i+1], want)
			}
		}
		if strings.Contains(got, "other") {
			t.Errorf("the tree from %s holds a session of another lineage:\n%s", focus, got)
		}
		marked := 0
		for _, l := range lines {
			if strings.HasSuffix(l, "*") {
				marked++
				if !strings.Contains(l, focus+" ") {
					t.Errorf("the mark is on %q, want %s", l, focus)
				}
			}
		}
		if marked != 1 {
			t.Errorf("%d lines marked in the tree from %s, want 1", marked, focus)
		}
	}
	if _, err := storedTree(t.Context(), st, "nobody"); err == nil {
		t.Error("storedTree of a session the index lacks succeeded")
	}
}
