package main

// The tests of `starter tree` (tree.go) and its rendering, on the fake client of graph_test.go.

import (
	"context"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/workflows"
)

// family is a small session graph:
//
//	root (completed, archived)
//	├─ root.2 continue (suspended; ran twice: it continued as new)
//	│  └─ root.2-fork-aa subagent
//	└─ root-fork-1 fork from checkpoint 3 (terminated)
func family(t *testing.T) *fakeGraph {
	cont := &lineage.Descriptor{Type: lineage.User, Conversation: "root", Seq: 2, Parent: "root", Relation: lineage.Continue}
	sub := &lineage.Descriptor{Type: lineage.Subagent, Conversation: "root", Seq: 1, Parent: "root.2", Relation: lineage.Spawn, Name: "verify h-0007"}
	fork := &lineage.Descriptor{Type: lineage.User, Conversation: "root-fork-1", Seq: 1, Parent: "root", Relation: lineage.Fork, Checkpoint: 3}
	execs := map[string]*workflowpb.WorkflowExecutionInfo{
		"root":           execution(t, "root", workflows.WorkflowType, wfCompleted, 0, nil, "completed"),
		"root.2":         execution(t, "root.2", workflows.WorkflowType, wfRunning, 10, cont, "suspended"),
		"root.2-fork-aa": execution(t, "root.2-fork-aa", workflows.SubagentWorkflow, wfRunning, 12, sub, "active"),
		"root-fork-1":    execution(t, "root-fork-1", workflows.WorkflowType, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, 5, fork, "active"),
	}
	oldRun := execution(t, "root.2", workflows.WorkflowType, enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, 1, cont, "active")
	return &fakeGraph{
		execs: execs,
		lists: map[string][]*workflowpb.WorkflowExecutionInfo{
			childrenQuery("root"):           {execs["root.2"], execs["root-fork-1"], oldRun},
			childrenQuery("root.2"):         {execs["root.2-fork-aa"]},
			childrenQuery("root.2-fork-aa"): nil,
			childrenQuery("root-fork-1"):    nil,
			archivedQuery: {
				execution(t, "archive:root", workflows.ArchiveWorkflow, wfCompleted, 20, nil, ""),
				execution(t, "archive:gone", workflows.ArchiveWorkflow, wfCompleted, 21, nil, ""),
				execution(t, "archive:other", workflows.ArchiveWorkflow, wfCompleted, 22, nil, ""),
			},
		},
	}
}

const familyTree = `root  user  completed, archived
├─ root-fork-1  user, fork from checkpoint 3  terminated
└─ root.2  user, continue  suspended
   └─ root.2-fork-aa  subagent "verify h-0007"  active  *
`

func TestBuildAndRenderTree(t *testing.T) {
	for _, from := range []string{"root", "root.2", "root.2-fork-aa"} {
		root, gone, err := buildTree(context.Background(), family(t), from)
		if err != nil {
			t.Fatalf("tree %s: %v", from, err)
		}
		if gone != "" {
			t.Errorf("tree %s: parent %q gone", from, gone)
		}
		var b strings.Builder
		if err := renderTree(&b, root, "root.2-fork-aa"); err != nil {
			t.Fatal(err)
		}
		if b.String() != familyTree {
			t.Errorf("tree from %s:\n%s\nwant\n%s", from, b.String(), familyTree)
		}
	}

	// A parent Temporal no longer keeps: the tree starts at its child.
	f := family(t)
	delete(f.execs, "root")
	root, gone, err := buildTree(context.Background(), f, "root.2")
	if err != nil || gone != "root" || root.ID != "root.2" {
		t.Errorf("tree without its root: %v, gone %q, %v", root, gone, err)
	}
	if _, _, err := buildTree(context.Background(), f, "nope"); err == nil || !strings.Contains(err.Error(), "no session nope") {
		t.Errorf("tree of a missing session: %v", err)
	}
}

func TestRenderTree(t *testing.T) {
	leaf := func(id string, kids ...*treeNode) *treeNode {
		return &treeNode{ID: id, Type: lineage.User, Relation: lineage.Fork, State: "active", Children: kids}
	}
	root := &treeNode{ID: "r", State: "completed", Children: []*treeNode{
		leaf("a", leaf("a1", leaf("a1x")), leaf("a2")),
		leaf("b", leaf("b1")),
		{ID: "c", Type: lineage.Cron, Schedule: "review-1"},
	}}
	want := `r  user  completed  *
├─ a  user, fork  active
│  ├─ a1  user, fork  active
│  │  └─ a1x  user, fork  active
│  └─ a2  user, fork  active
├─ b  user, fork  active
│  └─ b1  user, fork  active
└─ c  cron (schedule review-1)  -
`
	var b strings.Builder
	if err := renderTree(&b, root, "r"); err != nil || b.String() != want {
		t.Errorf("tree:\n%s\nwant\n%s", b.String(), want)
	}
}

func TestArchivedSessions(t *testing.T) {
	got, err := archivedSessions(context.Background(), family(t), []string{"root", "other", "root.2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got["root"] || !got["other"] {
		t.Errorf("archived %v; want root and other, the archived ones of those asked about", got)
	}
	if q := archivedAmong([]string{"a", "it's"}); q != archivedQuery+` AND WorkflowId IN ('archive:a', 'archive:it\'s')` {
		t.Errorf("query %s", q)
	}
}

func TestQuote(t *testing.T) {
	if got := quote(`it's a\b`); got != `'it\'s a\\b'` {
		t.Errorf("quote = %s", got)
	}
	if got := childrenQuery("s-1"); got != "ParentSession = 's-1' AND ExecutionStatus != 'ContinuedAsNew'" {
		t.Errorf("children query %s", got)
	}
}
