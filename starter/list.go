package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// listOptions is a parsed `starter list` command line.
type listOptions struct {
	query     string // the visibility query
	limit     int
	archived  bool   // show archived sessions too
	status    string // only sessions in this state
	scientist string // only this scientist's sessions
}

// listArgs is the synopsis of `starter list`.
const listArgs = "[--status S] [--scientist S] [--limit N] [--archived]"

// parseList reads `starter list` flags into a visibility query.
func parseList(args []string) (listOptions, error) {
	fs := newFlagSet("list", listArgs, "List research sessions, newest first, with the goal each started with. Archived sessions are left out unless --archived.")
	var states []string
	for _, s := range session.States {
		states = append(states, string(s))
	}
	var o listOptions
	status := fs.String("status", "", "only sessions in this state: "+strings.Join(states, ", "))
	fs.IntVar(&o.limit, "limit", 20, "show at most this many sessions")
	fs.BoolVar(&o.archived, "archived", false, "show archived sessions too")
	fs.StringVar(&o.scientist, "scientist", "", "only this scientist's sessions (the --scientist they started with)")
	switch err := parseFlags(fs, args, ""); {
	case err != nil:
		return o, err
	case o.limit < 1:
		return o, usageErrorf("--limit is %d; it must be at least 1", o.limit)
	case *status != "" && !slices.Contains(states, *status):
		return o, usageErrorf("--status %q is not a session state; use one of %s", *status, strings.Join(states, ", "))
	}
	// A session that continued as new has a closed run per continuation; its latest run
	// stands for it.
	o.query = fmt.Sprintf("WorkflowType='%s' AND ExecutionStatus!='ContinuedAsNew'", workflows.WorkflowType)
	o.status = *status
	if *status != "" {
		o.query += fmt.Sprintf(" AND %s='%s'", workflows.AttrSessionStatus, *status)
	}
	if o.scientist != "" {
		o.query += fmt.Sprintf(" AND %s=%s", workflows.AttrScientistID, quote(o.scientist))
	}
	return o, nil
}

func cmdList(ctx context.Context, args []string) error {
	o, err := parseList(args)
	return withTemporal(err, func(c client.Client, _ string) error {

		var rows []listRow
		var token []byte
		hidden := 0
		for len(rows) < o.limit {
			lctx, cancel := context.WithTimeout(ctx, rpcTimeout)
			resp, err := c.ListWorkflow(lctx, &workflowservice.ListWorkflowExecutionsRequest{
				PageSize:      int32(min(o.limit-len(rows), 1000)),
				NextPageToken: token,
				Query:         o.query,
			})
			cancel()
			if err != nil {
				return fmt.Errorf("cannot list sessions: %w", explain(err, ""))
			}
			// Which of this page's sessions are archived: a query about them only.
			var ids []string
			for _, e := range resp.GetExecutions() {
				ids = append(ids, e.GetExecution().GetWorkflowId())
			}
			archived, err := archivedSessions(ctx, c, ids)
			if err != nil {
				return err
			}
			for _, e := range resp.GetExecutions() {
				r := rowOf(e)
				if archived[r.ID] {
					if !o.archived {
						hidden++
						continue
					}
					r.Status += ", archived"
				}
				rows = append(rows, r)
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				break
			}
		}
		// Sessions Temporal no longer keeps (its retention deleted them) are still in the
		// session index, when this machine reaches the workers' store.
		if len(rows) < o.limit {
			known := make(map[string]bool, len(rows))
			for _, r := range rows {
				known[r.ID] = true
			}
			if stored, h, err := storedRows(ctx, known, o); err == nil {
				rows, hidden = append(rows, stored...), hidden+h
			}
		}
		if len(rows) == 0 {
			if hidden > 0 {
				fmt.Fprintf(stdout, "no sessions found but %d archived ones (show them with: starter list --archived)\n", hidden)
				return nil
			}
			fmt.Fprintln(stdout, `no sessions found; start one with: starter start --goal "..."`)
			return nil
		}
		return renderList(stdout, rows[:min(len(rows), o.limit)])
	})
}

// rowOf reads one execution's search attributes into a list row.
func rowOf(e *workflowpb.WorkflowExecutionInfo) listRow {
	fields := e.GetSearchAttributes().GetIndexedFields()
	r := listRow{ID: e.GetExecution().GetWorkflowId()}
	if t := e.GetStartTime(); t != nil {
		r.Started = t.AsTime()
	}
	var status string
	decode(fields[workflows.AttrSessionStatus], &status)
	decode(fields[workflows.AttrScientistID], &r.Scientist)
	var count int64
	if decode(fields[workflows.AttrHypothesisCount], &count) {
		r.Hypotheses = &count
	}
	var elo float64
	if decode(fields[workflows.AttrTopElo], &elo) {
		r.TopElo = &elo
	}
	var cost float64
	if decode(fields[workflows.AttrCostUSD], &cost) {
		r.CostUSD = &cost
	}
	r.Status = sessionStatus(status, e.GetStatus())
	if p := e.GetMemo().GetFields()[workflows.MemoGoal]; p != nil {
		_ = memoConverter().FromPayload(p, &r.Goal) // "" when it cannot be read (encrypted, no key)
	}
	return r
}

// sessionStatus prefers the session's own state while its workflow runs or completed;
// otherwise the workflow's end (terminated, timed out, ...) is what matters.
func sessionStatus(attr string, s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		if attr != "" {
			return attr
		}
	}
	name := strings.ToLower(strings.TrimPrefix(enumspb.WorkflowExecutionStatus_name[int32(s)], "WORKFLOW_EXECUTION_STATUS_"))
	return strings.ReplaceAll(name, "_", "-")
}

// decode reads one search attribute; it reports whether there was one.
func decode(p *commonpb.Payload, out any) bool {
	return p != nil && converter.GetDefaultDataConverter().FromPayload(p, out) == nil
}
