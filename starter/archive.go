package main

// `starter archive`: a finished session leaves `starter list` and keeps its records.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/workflows"
)

// archiveWait bounds how long starter waits for an archive to be written.
const archiveWait = time.Minute

// parseArchive reads `starter archive <session-id> [--reason R]`.
func parseArchive(args []string) (workflows.ArchiveInput, error) {
	fs := newFlagSet("archive", archiveArgs, "Archive a finished session: it leaves `starter list` (see it with --archived) "+
		"but stays readable with status, report and tree. A session is archived once; this cannot be undone.")
	var in workflows.ArchiveInput
	fs.StringVar(&in.Reason, "reason", "", "why, for the archive record")
	id, err := sessionArg(fs, args)
	if err != nil {
		return in, err
	}
	in.SessionID, in.Reason = strings.TrimSpace(id), strings.TrimSpace(in.Reason)
	if n := len([]rune(in.Reason)); n > 500 {
		return in, usageErrorf("--reason is %d characters; at most 500", n)
	}
	return in, nil
}

// archiveStartOptions: a session is archived at most once.
func archiveStartOptions(id string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                                       workflows.ArchiveID(id),
		TaskQueue:                                workflows.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            "archive " + id,
	}
}

// archive archives an ended session and returns the path of the archive record ("" when
// it was archived before).
func archive(ctx context.Context, c client.Client, in workflows.ArchiveInput) (string, error) {
	id := in.SessionID
	info, err := describeSession(ctx, c, id)
	if err != nil {
		return "", err
	}
	if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return "", fmt.Errorf("session %s is still running: terminate it first (starter terminate %s)", id, id)
	}
	sctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	run, err := c.ExecuteWorkflow(sctx, archiveStartOptions(id), workflows.ArchiveWorkflow, in)
	cancel()
	if alreadyStarted(err) {
		a, derr := describe(ctx, c, workflows.ArchiveID(id))
		switch {
		case derr != nil || a.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
			return "", &exitError{0, fmt.Sprintf("session %s is already archived", id)}
		case a.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			return "", &exitError{0, fmt.Sprintf("session %s is being archived already (%s is running)", id, workflows.ArchiveID(id))}
		}
		return "", fmt.Errorf("archiving session %s failed before (%s ended %s) and a session is archived only once: see it in the web UI",
			id, workflows.ArchiveID(id), sessionStatus("", a.GetStatus()))
	}
	if err != nil {
		return "", fmt.Errorf("cannot archive session %s: %w", id, explain(err, id))
	}
	wctx, cancel := context.WithTimeout(ctx, archiveWait)
	defer cancel()
	var path string
	if err := run.Get(wctx, &path); err != nil {
		if ctx.Err() == nil && errors.Is(wctx.Err(), context.DeadlineExceeded) {
			return "", fmt.Errorf("the archive of session %s has not finished after %s; it finishes once a worker takes it: %s", id, archiveWait, startWorkerHint())
		}
		var failed *temporal.WorkflowExecutionError
		if errors.As(err, &failed) {
			return "", fmt.Errorf("cannot archive session %s: %v", id, errors.Unwrap(failed))
		}
		return "", fmt.Errorf("cannot archive session %s: %w", id, explain(err, workflows.ArchiveID(id)))
	}
	return path, nil
}

func cmdArchive(ctx context.Context, args []string) error {
	in, err := parseArchive(args)
	return withTemporal(err, func(c client.Client, _ string) error {
		path, err := archive(ctx, c, in)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "archived %s (it stays readable: starter status/report/tree still work)\n", in.SessionID)
		if path != "" {
			fmt.Fprintln(stderr, "archive record:", path)
		}
		return nil
	})
}
