package main

// The session graph: continue a conversation, fork one, show a session's family tree,
// archive a finished session, and start the heartbeat. See internal/lineage.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
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

// randomHex is n random bytes in hex.
// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
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
		temporal.NewSearchAttributeKeyKeyword(workflows.AttrSessionStatus).ValueSet(string(session.Initializing)),
		temporal.NewSearchAttributeKeyKeyword(workflows.AttrSessionType).ValueSet(string(d.Type)),
		temporal.NewSearchAttributeKeyKeyword(workflows.AttrConversation).ValueSet(d.Conversation),
		temporal.NewSearchAttributeKeyKeyword(workflows.AttrParentSession).ValueSet(d.Parent),
	}
	if d.Checkpoint > 0 {
		attrs = append(attrs, temporal.NewSearchAttributeKeyInt64(workflows.AttrSourceCheckpoint).ValueSet(int64(d.Checkpoint)))
	}
	if req.ScientistID != "" {
		attrs = append(attrs, temporal.NewSearchAttributeKeyKeyword(workflows.AttrScientistID).ValueSet(req.ScientistID))
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
		TypedSearchAttributes:                    temporal.NewSearchAttributes(attrs...),
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

// branchDetails is the Markdown the Web UI shows for a continued or forked session.
func branchDetails(r research.Request, d lineage.Descriptor) string {
	var b strings.Builder
	verb := map[lineage.Relation]string{lineage.Continue: "Continues", lineage.Fork: "Forked from"}[d.Relation]
	fmt.Fprintf(&b, "**%s** %s", or(verb, "From"), d.Parent)
	if d.Checkpoint > 0 {
		fmt.Fprintf(&b, " (checkpoint %d)", d.Checkpoint)
	}
	fmt.Fprintf(&b, "; conversation %s, session %d\n\n", d.Conversation, d.Seq)
	fmt.Fprintf(&b, "**Research goal**\n\n%s\n\n", or(r.ResearchGoal, "the parent session's"))
	fmt.Fprintf(&b, "- **Scientist:** %s\n", or(r.ScientistID, "the parent session's"))
	fmt.Fprintf(&b, "- **Configuration:** the parent session's%s\n", overridesText(r.Config))
	return b.String()
}

// overridesText lists the configuration a continue or fork sets, as flags: "" for none.
func overridesText(c research.Config) string {
	var set []string
	add := func(ok bool, flag string, v any) {
		if s, isString := v.(string); isString && s == "" {
			v = `""`
		}
		if ok {
			set = append(set, fmt.Sprintf("--%s %v", flag, v))
		}
	}
	// A zero typed is a value given (research.Config.Given): --token-budget 0 is shown.
	add(c.Given("max_hypotheses"), "max-hypotheses", c.MaxHypotheses)
	add(c.Given("time_limit"), "time-limit", c.TimeLimit)
	add(c.Given("review_types"), "review-types", strings.Join(c.ReviewTypes, ","))
	add(c.Given("safety_level"), "safety-level", c.SafetyLevel)
	add(c.Given("provider"), "provider", c.Provider)
	add(c.Given("model"), "model", c.Model)
	add(c.Given("token_budget"), "token-budget", c.TokenBudget)
	add(c.Given("budget_usd"), "budget-usd", c.BudgetUSD)
	add(c.Given("batch"), "batch", c.Batch)
	add(c.Given("convergence_rounds"), "convergence-rounds", c.ConvergenceRounds)
	add(c.Given("top_k"), "top-k", c.TopK)
	add(c.Given("debate_share"), "debate-share", c.DebateShare)
	add(c.Given("tools"), "tools", strings.Join(c.Tools, ","))
	add(c.Given("seed"), "seed", c.Seed)
	if len(set) == 0 {
		return ""
	}
	return ", with " + strings.Join(set, " ")
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

// renderTree prints a lineage tree, one session a line, marking focus with "*".
func renderTree(w io.Writer, root *treeNode, focus string) error {
	var b strings.Builder
	var draw func(n *treeNode, prefix string)
	draw = func(n *treeNode, prefix string) {
		for i, k := range n.Children {
			branch, indent := "├─ ", "│  "
			if i == len(n.Children)-1 {
				branch, indent = "└─ ", "   "
			}
			b.WriteString(prefix + branch + treeLine(k, focus) + "\n")
			draw(k, prefix+indent)
		}
	}
	b.WriteString(treeLine(root, focus) + "\n")
	draw(root, "")
	_, err := io.WriteString(w, b.String())
	return err
}

// treeLine is one session of the tree: id, what it is, its state.
func treeLine(n *treeNode, focus string) string {
	kind := or(string(n.Type), string(lineage.User))
	if n.Relation != "" && string(n.Relation) != kind {
		kind += ", " + string(n.Relation)
	}
	if n.Checkpoint > 0 {
		kind += " from checkpoint " + strconv.Itoa(n.Checkpoint)
	}
	if n.Name != "" {
		kind += fmt.Sprintf(" %q", research.Shorten(n.Name, 60))
	}
	if n.Schedule != "" {
		kind += " (schedule " + n.Schedule + ")"
	}
	state := or(n.State, "-")
	if n.Archived {
		state += ", archived"
	}
	line := n.ID + "  " + kind + "  " + state
	if n.ID == focus {
		line += "  *"
	}
	return line
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
