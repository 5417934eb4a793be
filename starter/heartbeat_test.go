package main

// The tests of `starter heartbeat` (heartbeat.go), on the fake client of graph_test.go.

import (
	"context"
	"errors"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/cosci-dev/cosci/workflows"
)

func TestHeartbeat(t *testing.T) {
	quiet(t)
	in, err := parseHeartbeat(nil)
	if err != nil || in.Top != 3 {
		t.Errorf("heartbeat = %+v, %v; want the top 3", in, err)
	}
	if in, err = parseHeartbeat([]string{"--top", "5"}); err != nil || in.Top != 5 {
		t.Errorf("heartbeat --top 5 = %+v, %v", in, err)
	}
	for _, args := range [][]string{{"--top", "0"}, {"--top", "-1"}, {"s-1"}, {"--top", "x"}} {
		var e *exitError
		if _, err := parseHeartbeat(args); !errors.As(err, &e) || e.code != 2 {
			t.Errorf("heartbeat %q: %v, want a usage error", args, err)
		}
	}

	f := &fakeGraph{}
	if err := startHeartbeat(context.Background(), f, workflows.HeartbeatInput{Top: 4}); err != nil {
		t.Fatal(err)
	}
	s := f.started[0]
	if s.workflow != workflows.HeartbeatWorkflow || s.opts.ID != workflows.HeartbeatID || s.opts.TaskQueue != workflows.TaskQueue ||
		s.opts.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE ||
		s.opts.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL || !s.opts.WorkflowExecutionErrorWhenAlreadyStarted ||
		s.args[0] != (workflows.HeartbeatInput{Top: 4}) {
		t.Errorf("started %+v", s)
	}
	f.startErr = serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", "")
	if err := startHeartbeat(context.Background(), f, workflows.HeartbeatInput{Top: 3}); err == nil || !strings.Contains(err.Error(), "the heartbeat session is already running") {
		t.Errorf("a second heartbeat: %v", err)
	}
}
