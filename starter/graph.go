package main

// The session graph: continue a conversation or fork one (how a new session is
// rendered is in graph_render.go), and the look-ups of a session the graph commands share.
// tree.go, archive.go and heartbeat.go hold the other graph commands. See internal/lineage.

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// Synopses of the graph commands, for the usage text and their -h.
const (
	continueArgs  = "<id> [--goal G] [flags]"
	forkArgs      = "<id> [--checkpoint N] [--id ID] [--goal G] [flags]"
	treeArgs      = "<id>"
	archiveArgs   = "<id> [--reason R]"
	heartbeatArgs = "[--top N]"
)

// branchOptions is a parsed `starter continue` or `starter fork` command line: the session
// it starts from and what the new session changes. Unset fields of req (goal, scientist,
// config) are taken from the parent by the workflow.
type branchOptions struct {
	parent     string
	id         string // fork only; "" means generated
	checkpoint int    // fork only; 0 means the parent's latest
	req        research.Request
	wait       bool
	watch      bool
	warning    string // a fork's --id that spells its new --goal, with the lab's keys (idSpellsGoal)
}

// parseBranch reads `starter continue|fork <session-id> [flags]`. Like parseStart it never
// touches the network: what the scientist got wrong is refused before anything runs.
func parseBranch(name string, args []string) (branchOptions, error) {
	fork := name == "fork"
	synopsis, summary := continueArgs, "Start the next session of a conversation from the latest checkpoint of a finished or suspended session "+
		"(a suspended one hands over: it ends, and the new session starts from its final checkpoint). "+
		"The new session keeps the parent's goal, scientist and configuration except what the flags change. "+
		"Prints the new session's ID."
	if fork {
		synopsis, summary = forkArgs, "Start a new conversation from any checkpoint of a session (default: its latest), running or not. "+
			"The new session keeps the parent's goal, scientist and configuration except what the flags change. "+
			"Prints the new session's ID."
	}
	fs := newFlagSet(name, synopsis, summary)
	var (
		o  branchOptions
		cf configFlags
	)
	fs.StringVar(&o.req.ResearchGoal, "goal", "", "a new research goal (default: the parent session's)")
	fs.StringVar(&o.req.ScientistID, "scientist", "", "who asks (default: the parent session's scientist)")
	cf.register(fs, true)
	if fork {
		fs.IntVar(&o.checkpoint, "checkpoint", 0, "start from the parent's checkpoint `N` (default: its latest)")
		fs.StringVar(&o.id, "id", "", "the new session's ID (default: <session-id>-fork-<8 random hex digits>)")
	}
	fs.BoolVar(&o.wait, "wait", false, "wait for the new session to end and print its result")
	fs.BoolVar(&o.watch, "watch", false, "follow the new session live until it ends")
	parent, err := sessionArg(fs, args)
	if err != nil {
		return o, err
	}
	o.parent = strings.TrimSpace(parent)
	goalSet := false
	fs.Visit(func(f *flag.Flag) { goalSet = goalSet || f.Name == "goal" })

	o.req.ResearchGoal = strings.TrimSpace(o.req.ResearchGoal)
	o.req.ScientistID = strings.TrimSpace(o.req.ScientistID)
	o.req.Config = cf.config()
	if goalSet && o.req.ResearchGoal == "" {
		return o, usageErrorf("invalid session: --goal is empty: give a goal, or leave --goal out to keep the parent session's")
	}
	if err := validateOverrides(o.req); err != nil {
		return o, invalidSession(err)
	}
	if fork {
		o.id = strings.TrimSpace(o.id)
		switch {
		case o.checkpoint < 0:
			return o, usageErrorf("invalid session: --checkpoint is %d; give a checkpoint number, or leave it out for the latest", o.checkpoint)
		case o.id == "":
			o.id = forkID(o.parent)
		default:
			if err := checkID(o.id); err != nil {
				return o, usageErrorf("invalid session: id: %s (set with --id)", err)
			}
			sealed, err := encrypted()
			if err != nil {
				return o, err
			}
			if sealed {
				o.warning = idSpellsGoal("--id", o.id, o.req.ResearchGoal)
			}
		}
		o.req.Lineage = &lineage.Descriptor{Type: lineage.User, Parent: o.parent, Relation: lineage.Fork, Checkpoint: o.checkpoint}
	}
	return o, nil
}

// validateOverrides checks what a continue or fork sets on top of the parent's request.
// The config is checked with research's defaults in the unset fields; a new goal is screened
// at the safety level given, or, when none is, at the level every session refuses (the
// session screens it again at the parent's level).
func validateOverrides(r research.Request) error {
	if r.ResearchGoal != "" {
		if err := research.ValidateGoal(r.ResearchGoal); err != nil {
			return err
		}
	}
	if n := len([]rune(r.ScientistID)); n > research.MaxScientistIDLength {
		return &research.FieldError{Field: "scientist_id", Problem: fmt.Sprintf("is %d characters; at most %d", n, research.MaxScientistIDLength)}
	}
	if err := (research.Request{Config: r.Config}).WithDefaults().Config.Validate(); err != nil {
		return err
	}
	if r.ResearchGoal != "" {
		return research.ScreenGoal(r.ResearchGoal, or(r.Config.SafetyLevel, "relaxed"))
	}
	return nil
}

// forkID names a scientist's fork of a session the way every fork is named
// (lineage.ForkID), keyed by a random string: a scientist may fork the same checkpoint twice.
func forkID(parent string) string { return lineage.ForkID(parent, rand.Text()) }

// continueRequest is the request that continues the session parent, whose lineage is d:
// the next session of d's conversation, with the id every client computes alike.
func continueRequest(o branchOptions, parent string, d lineage.Descriptor) (string, research.Request) {
	d = d.WithDefaults(parent)
	req := o.req
	req.Lineage = &lineage.Descriptor{Type: lineage.User, Conversation: d.Conversation, Seq: d.Seq + 1, Parent: parent, Relation: lineage.Continue}
	return lineage.NextID(d.Conversation, d.Seq), req
}

// branchStartOptions are the options a continued or forked session starts with. The
// lineage goes in the memo and the search attributes from the first moment, so that
// `starter tree` finds the session even before its first workflow task.
func branchStartOptions(id string, req research.Request, reuse enumspb.WorkflowIdReusePolicy) client.StartWorkflowOptions {
	d := req.Lineage.WithDefaults(id)
	attrs := []temporal.SearchAttributeUpdate{
		temporal.NewSearchAttributeKeyKeyword(workflows.AttrSessionType).ValueSet(string(d.Type)),
		temporal.NewSearchAttributeKeyKeyword(workflows.AttrConversation).ValueSet(d.Conversation),
		temporal.NewSearchAttributeKeyKeyword(workflows.AttrParentSession).ValueSet(d.Parent),
	}
	if d.Checkpoint > 0 {
		attrs = append(attrs, temporal.NewSearchAttributeKeyInt64(workflows.AttrSourceCheckpoint).ValueSet(int64(d.Checkpoint)))
	}
	summary := fmt.Sprintf("%s of %s", d.Relation, d.Parent)
	if d.Checkpoint > 0 {
		summary += fmt.Sprintf(" from checkpoint %d", d.Checkpoint)
	}
	if req.ResearchGoal != "" {
		summary += ": " + req.ResearchGoal
	}
	return client.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                workflows.TaskQueue,
		WorkflowIDReusePolicy:                    reuse,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            research.Shorten(summary, 90),
		StaticDetails:                            branchDetails(req, d),
		Memo:                                     branchMemo(req, d),
		TypedSearchAttributes:                    sessionAttributes(req, attrs...),
	}
}

// branchMemo is a branch's lineage, and its goal when it has one of its own.
func branchMemo(req research.Request, d lineage.Descriptor) map[string]any {
	m := map[string]any{workflows.MemoLineage: d}
	if req.ResearchGoal != "" {
		m[workflows.MemoGoal] = req.ResearchGoal
	}
	return m
}

// describe reads a workflow's latest run. Its error is Temporal's, for the caller to explain.
func describe(ctx context.Context, c client.Client, id string) (*workflowpb.WorkflowExecutionInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return nil, err
	}
	return d.GetWorkflowExecutionInfo(), nil
}

// describeSession describes a session that must exist and be a research session.
func describeSession(ctx context.Context, c client.Client, id string) (*workflowpb.WorkflowExecutionInfo, error) {
	info, err := describe(ctx, c, id)
	if err != nil {
		return nil, explain(err, id)
	}
	switch t := info.GetType().GetName(); t {
	case workflows.WorkflowType, workflows.SubagentWorkflow:
		return info, nil
	default:
		return nil, fmt.Errorf("%s is not a research session (it is a %s workflow): list sessions with: starter list", id, t)
	}
}

func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

func alreadyStarted(err error) bool {
	var exists *serviceerror.WorkflowExecutionAlreadyStarted
	return errors.As(err, &exists)
}

// isArchived reports whether the session was archived: its archive workflow completed.
func isArchived(ctx context.Context, c client.Client, id string) (bool, error) {
	info, err := describe(ctx, c, workflows.ArchiveID(id))
	switch {
	case isNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("cannot tell whether session %s is archived: %w", id, explain(err, workflows.ArchiveID(id)))
	}
	return info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil
}

// lineageOf reads a session's place in the graph from its memo, or, for a session started
// before the memo was written, from its search attributes. Defaults are applied: a session
// that says nothing is a user session, first of its own conversation.
func lineageOf(info *workflowpb.WorkflowExecutionInfo) lineage.Descriptor {
	id := info.GetExecution().GetWorkflowId()
	var d lineage.Descriptor
	if p := info.GetMemo().GetFields()[workflows.MemoLineage]; p != nil && memoConverter().FromPayload(p, &d) == nil {
		return d.WithDefaults(id)
	}
	d = lineage.Descriptor{}
	fields := info.GetSearchAttributes().GetIndexedFields()
	var typ string
	if decode(fields[workflows.AttrSessionType], &typ) {
		d.Type = lineage.Type(typ)
	}
	switch info.GetType().GetName() {
	case workflows.HeartbeatWorkflow:
		d.Type = lineage.Heartbeat
	case workflows.SubagentWorkflow:
		d.Type, d.Relation = lineage.Subagent, lineage.Spawn
	}
	decode(fields[workflows.AttrConversation], &d.Conversation)
	decode(fields[workflows.AttrParentSession], &d.Parent)
	var cp int64
	if decode(fields[workflows.AttrSourceCheckpoint], &cp) {
		d.Checkpoint = int(cp)
	}
	return d.WithDefaults(id)
}

// suspended reports whether a session's status allows a continue: it is suspended, or is
// writing the checkpoint it suspends after.
func suspended(s workflows.Status) bool {
	return s.State == session.Suspended || s.State == session.Checkpointing && s.After == session.Suspended
}

// startBranch starts a continued or forked session and prints its ID like start does.
func startBranch(ctx context.Context, c client.Client, opts client.StartWorkflowOptions, req research.Request) error {
	sctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	_, err := c.ExecuteWorkflow(sctx, opts, workflows.WorkflowType, req)
	return err
}

// continueSession checks that parent may be continued and starts its successor; it
// returns the successor's ID.
func continueSession(ctx context.Context, c client.Client, o branchOptions) (string, error) {
	info, err := describeSession(ctx, c, o.parent)
	if err != nil {
		return "", err
	}
	if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		var s workflows.Status
		if err := query(ctx, c, o.parent, workflows.QueryStatus, &s); err != nil {
			return "", err
		}
		if !suspended(s) {
			return "", fmt.Errorf("session %s is active: suspend it first (starter suspend %s) or fork it (starter fork %s)", o.parent, o.parent, o.parent)
		}
	} else {
		archived, err := isArchived(ctx, c, o.parent)
		if err != nil {
			return "", err
		}
		if archived {
			return "", fmt.Errorf("session %s is archived; fork it instead (starter fork %s)", o.parent, o.parent)
		}
	}
	id, req := continueRequest(o, o.parent, lineageOf(info))
	opts := branchStartOptions(id, req, enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY)
	if err := startBranch(ctx, c, opts, req); err != nil {
		if alreadyStarted(err) {
			return "", fmt.Errorf("session %s was already continued as %s: continue that one, or fork %s (starter fork %s)", o.parent, id, o.parent, o.parent)
		}
		return "", fmt.Errorf("cannot continue session %s: %w", o.parent, explain(err, id))
	}
	if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		fmt.Fprintf(stderr, "session %s hands over: it ends, and %s starts from its final checkpoint\n", o.parent, id)
	}
	return id, nil
}

// forkSession starts a fork of o.parent; it returns the fork's ID.
func forkSession(ctx context.Context, c client.Client, o branchOptions) (string, error) {
	if _, err := describeSession(ctx, c, o.parent); err != nil {
		return "", err
	}
	opts := branchStartOptions(o.id, o.req, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
	if err := startBranch(ctx, c, opts, o.req); err != nil {
		if alreadyStarted(err) {
			return "", fmt.Errorf("session %s already exists: pick another --id, or look at it with: starter status %s", o.id, o.id)
		}
		return "", fmt.Errorf("cannot fork session %s: %w", o.parent, explain(err, o.id))
	}
	return o.id, nil
}

// cmdBranch runs `starter continue` or `starter fork`.
func cmdBranch(name string) func(context.Context, []string) error {
	return func(ctx context.Context, args []string) error {
		o, err := parseBranch(name, args)
		return withTemporal(err, func(c client.Client, namespace string) error {
			start := continueSession
			if name == "fork" {
				start = forkSession
			}
			if o.warning != "" {
				fmt.Fprintln(stderr, "warning:", o.warning)
			}
			id, err := start(ctx, c, o)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, id)
			printUILink(namespace, id)
			switch {
			case o.watch:
				return watch(ctx, c, namespace, id)
			case o.wait:
				return awaitResult(ctx, c, namespace, id)
			}
			return nil
		})
	}
}
