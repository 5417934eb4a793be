package main

// `starter heartbeat`: the session that forks a verification subagent for each top lead of
// the latest session.

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/cosci-dev/cosci/workflows"
)

// parseHeartbeat reads `starter heartbeat [--top N]`.
func parseHeartbeat(args []string) (workflows.HeartbeatInput, error) {
	fs := newFlagSet("heartbeat", heartbeatArgs, "Start the heartbeat session: it forks a verification subagent for each of the top leads "+
		"of the most recent session and sends it the digest. Only one runs at a time. Prints its ID.")
	var in workflows.HeartbeatInput
	fs.IntVar(&in.Top, "top", 3, "how many leads get a verification subagent")
	switch err := parseFlags(fs, args, ""); {
	case err != nil:
		return in, err
	case in.Top < 1:
		return in, usageErrorf("--top is %d; it must be at least 1", in.Top)
	}
	return in, nil
}

// heartbeatStartOptions: one heartbeat at a time, and a new one once it has ended.
func heartbeatStartOptions() client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                                       workflows.HeartbeatID,
		TaskQueue:                                workflows.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            "heartbeat: verify the leads of the latest session",
	}
}

// startHeartbeat starts the heartbeat session.
func startHeartbeat(ctx context.Context, c client.Client, in workflows.HeartbeatInput) error {
	sctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	_, err := c.ExecuteWorkflow(sctx, heartbeatStartOptions(), workflows.HeartbeatWorkflow, in)
	switch {
	case alreadyStarted(err):
		return fmt.Errorf("the heartbeat session is already running: follow it with: starter tree %s", workflows.HeartbeatID)
	case err != nil:
		return fmt.Errorf("cannot start the heartbeat session: %w", explain(err, workflows.HeartbeatID))
	}
	return nil
}

func cmdHeartbeat(ctx context.Context, args []string) error {
	in, err := parseHeartbeat(args)
	return withTemporal(err, func(c client.Client, namespace string) error {
		if err := startHeartbeat(ctx, c, in); err != nil {
			return err
		}
		fmt.Fprintln(stdout, workflows.HeartbeatID)
		printUILink(namespace, workflows.HeartbeatID)
		return nil
	})
}
