package main

// The tests of `starter archive` (archive.go), on the fake client of graph_test.go.

import (
	"context"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/cosci-dev/cosci/workflows"
)

func TestArchive(t *testing.T) {
	quiet(t)
	tests := []struct {
		name     string
		session  *workflowpb.WorkflowExecutionInfo
		archive  *workflowpb.WorkflowExecutionInfo
		startErr error
		path     string
		code     int    // the exit code of the refusal
		refusal  string // "" when it archives
	}{
		{name: "an ended session", session: execution(t, "s-1", workflows.WorkflowType, wfCompleted, 0, nil, "completed"), path: "/data/s-1/archive.json"},
		{name: "a running session", session: execution(t, "s-1", workflows.WorkflowType, wfRunning, 0, nil, "suspended"), code: 1,
			refusal: "session s-1 is still running: terminate it first"},
		{name: "an archived session", session: execution(t, "s-1", workflows.WorkflowType, wfCompleted, 0, nil, "completed"),
			archive:  execution(t, "archive:s-1", workflows.ArchiveWorkflow, wfCompleted, 1, nil, ""),
			startErr: serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", ""), code: 0, refusal: "session s-1 is already archived"},
		{name: "an archive that failed", session: execution(t, "s-1", workflows.WorkflowType, wfCompleted, 0, nil, "completed"),
			archive:  execution(t, "archive:s-1", workflows.ArchiveWorkflow, wfFailed, 1, nil, ""),
			startErr: serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", ""), code: 1, refusal: "failed before"},
		{name: "no session", code: 1, refusal: "no session s-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeGraph{execs: map[string]*workflowpb.WorkflowExecutionInfo{}, startErr: tt.startErr, result: tt.path}
			f.add(tt.session, tt.archive)
			in, err := parseArchive([]string{"s-1", "--reason", " done "})
			if err != nil {
				t.Fatal(err)
			}
			path, err := archive(context.Background(), f, in)
			if tt.refusal != "" {
				wantRefused(t, err, tt.refusal, tt.code)
				return
			}
			if err != nil || path != tt.path {
				t.Fatalf("archive = %q, %v", path, err)
			}
			s := f.started[0]
			if s.workflow != workflows.ArchiveWorkflow || s.opts.ID != "archive:s-1" || s.opts.TaskQueue != workflows.TaskQueue ||
				s.opts.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE || !s.opts.WorkflowExecutionErrorWhenAlreadyStarted {
				t.Errorf("started %+v", s)
			}
			if in := s.args[0].(workflows.ArchiveInput); in != (workflows.ArchiveInput{SessionID: "s-1", Reason: "done"}) {
				t.Errorf("input %+v", in)
			}
		})
	}
}
