package main

// `starter tree`: a session's lineage, walked up to its root through Temporal's visibility
// and down through every session started from it (rendered by renderTree).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// treeNode is one session in `starter tree`.
type treeNode struct {
	ID         string
	Type       lineage.Type
	Relation   lineage.Relation
	Checkpoint int
	Name       string // a subagent's
	Schedule   string // a cron session's
	State      string
	Archived   bool
	Started    time.Time
	Parent     string
	Children   []*treeNode
}

// nodeOf reads one execution into a tree node (without its children).
func nodeOf(info *workflowpb.WorkflowExecutionInfo) *treeNode {
	d := lineageOf(info)
	var status string
	decode(info.GetSearchAttributes().GetIndexedFields()[workflows.AttrSessionStatus], &status)
	n := &treeNode{
		ID:         info.GetExecution().GetWorkflowId(),
		Type:       d.Type,
		Relation:   d.Relation,
		Checkpoint: d.Checkpoint,
		Name:       d.Name,
		Schedule:   d.Schedule,
		State:      sessionStatus(status, info.GetStatus()),
		Parent:     d.Parent,
	}
	if t := info.GetStartTime(); t != nil {
		n.Started = t.AsTime()
	}
	return n
}

// maxTreeDepth bounds the walk to the root, against a corrupt memo that loops.
const maxTreeDepth = 1000

// buildTree finds the root of id's lineage and every descendant of it. gone names the
// parent of the root when that parent no longer exists (Temporal's retention removed it).
func buildTree(ctx context.Context, c client.Client, id string) (root *treeNode, gone string, err error) {
	info, err := describe(ctx, c, id)
	if err != nil {
		return nil, "", explain(err, id)
	}
	root = nodeOf(info)
	seen := map[string]bool{root.ID: true}
	for root.Parent != "" && !seen[root.Parent] && len(seen) < maxTreeDepth {
		info, err := describe(ctx, c, root.Parent)
		if isNotFound(err) {
			gone = root.Parent
			break
		}
		if err != nil {
			return nil, "", explain(err, root.Parent)
		}
		root = nodeOf(info)
		seen[root.ID] = true
	}

	seen = map[string]bool{root.ID: true}
	var grow func(n *treeNode) error
	grow = func(n *treeNode) error {
		kids, err := children(ctx, c, n.ID)
		if err != nil {
			return err
		}
		for _, k := range kids {
			if seen[k.ID] {
				continue
			}
			seen[k.ID] = true
			n.Children = append(n.Children, k)
			if err := grow(k); err != nil {
				return err
			}
		}
		return nil
	}
	if err := grow(root); err != nil {
		return nil, "", err
	}

	var ids []string
	var collect func(n *treeNode)
	collect = func(n *treeNode) {
		ids = append(ids, n.ID)
		for _, k := range n.Children {
			collect(k)
		}
	}
	collect(root)
	archived, err := archivedSessions(ctx, c, ids)
	if err != nil {
		return nil, "", err
	}
	var mark func(n *treeNode)
	mark = func(n *treeNode) {
		n.Archived = archived[n.ID]
		for _, k := range n.Children {
			mark(k)
		}
	}
	mark(root)
	return root, gone, nil
}

// quote makes s a string literal of a visibility query.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// childrenQuery finds the sessions whose parent is id, one row per session (a session that
// continued as new has a closed run per continuation).
func childrenQuery(id string) string {
	return fmt.Sprintf("%s = %s AND ExecutionStatus != 'ContinuedAsNew'", workflows.AttrParentSession, quote(id))
}

// archivedQuery finds every archive that completed.
var archivedQuery = fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Completed'", workflows.ArchiveWorkflow)

// children lists the sessions started from id, oldest first.
func children(ctx context.Context, c client.Client, id string) ([]*treeNode, error) {
	byID := map[string]*treeNode{}
	err := listAll(ctx, c, childrenQuery(id), func(info *workflowpb.WorkflowExecutionInfo) {
		n := nodeOf(info)
		if old, ok := byID[n.ID]; !ok || n.Started.After(old.Started) {
			byID[n.ID] = n
		}
	})
	if err != nil {
		return nil, fmt.Errorf("cannot list the sessions started from %s: %w", id, explain(err, id))
	}
	return sortedNodes(byID), nil
}

// sortedNodes orders sessions by start time, then ID.
func sortedNodes(byID map[string]*treeNode) []*treeNode {
	var out []*treeNode
	for _, n := range byID {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b *treeNode) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// archivedSessions is the set of sessions that were archived.
func archivedSessions(ctx context.Context, c client.Client, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for batch := range slices.Chunk(ids, 100) {
		err := listAll(ctx, c, archivedAmong(batch), func(info *workflowpb.WorkflowExecutionInfo) {
			if id, ok := strings.CutPrefix(info.GetExecution().GetWorkflowId(), workflows.ArchiveID("")); ok {
				out[id] = true
			}
		})
		if err != nil {
			return nil, fmt.Errorf("cannot list the archived sessions: %w", explain(err, ""))
		}
	}
	return out, nil
}

// archivedAmong finds the completed archives of the given sessions: a query that asks
// for those sessions only, however many sessions a lab has archived.
func archivedAmong(ids []string) string {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = quote(workflows.ArchiveID(id))
	}
	return fmt.Sprintf("%s AND WorkflowId IN (%s)", archivedQuery, strings.Join(quoted, ", "))
}

// listAll pages through every execution a visibility query matches.
func listAll(ctx context.Context, c client.Client, q string, each func(*workflowpb.WorkflowExecutionInfo)) error {
	var token []byte
	for {
		lctx, cancel := context.WithTimeout(ctx, rpcTimeout)
		resp, err := c.ListWorkflow(lctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 1000, NextPageToken: token, Query: q})
		cancel()
		if err != nil {
			return err
		}
		for _, e := range resp.GetExecutions() {
			each(e)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return nil
		}
	}
}

func cmdTree(ctx context.Context, args []string) error {
	id, err := sessionArg(newFlagSet("tree", treeArgs, "Show a session's lineage: its root, and every session continued, forked or spawned from it, "+
		"with how each started and its state. The session asked for is marked with *."), args)
	return withTemporal(err, func(c client.Client, _ string) error {
		root, gone, err := buildTree(ctx, c, id)
		if isNotInTemporal(err) {
			// Temporal's retention may have deleted the session; the session index keeps its lineage.
			root, err = fromStore(ctx, id, err, func(ctx context.Context, st *store.Store) (*treeNode, error) { return storedTree(ctx, st, id) })
		}
		if err != nil {
			return err
		}
		if gone != "" {
			fmt.Fprintf(stderr, "%s started from %s, which Temporal no longer keeps; the tree starts at %s\n", root.ID, gone, root.ID)
		}
		return renderTree(stdout, root, id)
	})
}
