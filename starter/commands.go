package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// commandSummaries describe the scientist's commands for their -h.
var commandSummaries = map[string]string{
	workflows.Suspend:    "Pause a session: no new work starts until it is resumed.",
	workflows.Resume:     "Continue a suspended session.",
	workflows.RefineGoal: "Change a session's goal, add a focus, or both; the session checkpoints the change.",
	workflows.Checkpoint: "Write a snapshot of the session now.",
	workflows.Terminate:  "End a session gracefully: it finishes in-flight work, writes a final checkpoint and report, then completes.",
}

// parseCommand reads `starter NAME <id> [flags]` into the session ID and the command's
// arguments (nil when it has none). The arguments are checked the way the session checks
// them, so a mistake is refused before anything is sent.
func parseCommand(name string, args []string) (string, map[string]string, error) {
	fs := newFlagSet(name, "<session-id>", commandSummaries[name])
	var reason, goal, focus string
	switch name {
	case workflows.Suspend, workflows.Terminate:
		fs.StringVar(&reason, "reason", "", "why, for the session's history")
	case workflows.RefineGoal:
		fs.StringVar(&goal, "goal", "", "the new research goal")
		fs.StringVar(&focus, "focus", "", "what to concentrate on from now on")
	}
	id, err := sessionArg(fs, args)
	if err != nil {
		return "", nil, err
	}
	arg := map[string]string{}
	for k, v := range map[string]string{"reason": reason, "goal": goal, "focus": focus} {
		if v = strings.TrimSpace(v); v != "" {
			arg[k] = v
		}
	}
	payload, err := json.Marshal(arg)
	if err != nil {
		return "", nil, err
	}
	if _, err := session.ParseCommand(name, payload); err != nil {
		if name == workflows.RefineGoal && len(arg) == 0 {
			return "", nil, usageErrorf("refine-goal needs --goal \"...\", --focus \"...\", or both")
		}
		return "", nil, usageErrorf("invalid %s: %v", name, err)
	}
	if len(arg) == 0 {
		arg = nil
	}
	return id, arg, nil
}

// cmdUpdate sends a scientist's command as an update and prints the session's new status.
func cmdUpdate(name string) func(context.Context, []string) error {
	return func(ctx context.Context, args []string) error {
		id, arg, err := parseCommand(name, args)
		if err != nil {
			return err
		}
		c, _, err := dial()
		if err != nil {
			return err
		}
		defer c.Close()
		s, err := update(ctx, c, id, name, arg)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, commandOutcome(name, s))
		return nil
	}
}

// update sends one command and waits for the session's answer.
func update(ctx context.Context, c client.Client, id, name string, arg map[string]string) (workflows.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, updateTimeout)
	defer cancel()
	opts := client.UpdateWorkflowOptions{
		WorkflowID:   id,
		UpdateName:   name,
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
	if arg != nil {
		opts.Args = []any{arg}
	}
	var s workflows.Status
	h, err := c.UpdateWorkflow(ctx, opts)
	if err == nil {
		err = h.Get(ctx, &s)
	}
	var rejected *temporal.ApplicationError
	switch {
	case errors.As(err, &rejected):
		return s, &exitError{1, "rejected: " + rejected.Message()}
	case err != nil && workerDown(err):
		return s, fmt.Errorf("%w; the %s may still apply when one starts", explain(err, id), name)
	}
	return s, explain(err, id)
}

// commandOutcome says what an accepted command did.
func commandOutcome(name string, s workflows.Status) string {
	msg := fmt.Sprintf("session %s is now %s", s.SessionID, stateOf(s))
	switch name {
	case workflows.Checkpoint:
		msg += "; a checkpoint will be written shortly"
	case workflows.RefineGoal:
		msg += "; goal: " + shorten(s.Goal, 120)
	case workflows.Terminate:
		msg += fmt.Sprintf("; it finishes in-flight work, checkpoints and writes its report (see it with: starter result %s)", s.SessionID)
	case workflows.Suspend:
		msg += fmt.Sprintf(" (resume it with: starter resume %s)", s.SessionID)
	}
	return msg
}
