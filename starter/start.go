package main

// `starter start`: its command line, and what continue, fork and schedule start their
// sessions with too: the configuration flags (configFlags), the search attributes a session
// starts with (sessionAttributes) and what the Web UI shows of its request (staticDetails).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// startOptions is a parsed `starter start` command line.
type startOptions struct {
	id    string
	req   research.Request
	wait  bool
	watch bool
	// estimate prints the session's cost forecast instead of starting it.
	estimate bool
	// warning, if not "", is printed before the session starts: an --id that spells
	// words of the goal in a deployment whose research is encrypted.
	warning string
}

// flagOf names the flag that sets each field research.Validate may complain about.
var flagOf = map[string]string{
	"research_goal":                 "--goal",
	"scientist_id":                  "--scientist",
	"config.max_hypotheses":         "--max-hypotheses",
	"config.time_limit":             "--time-limit",
	"config.lab_reminder":           "--lab-reminder",
	"config.review_types":           "--review-types",
	"config.safety_level":           "--safety-level",
	"config.provider":               "--provider",
	"config.model":                  "--model",
	"config.token_budget":           "--token-budget",
	"config.budget_usd":             "--budget-usd",
	"config.convergence_rounds":     "--convergence-rounds",
	"config.checkpoint_interval":    "--checkpoint-interval",
	"config.top_k":                  "--top-k",
	"config.debate_share":           "--debate-share",
	"config.tools":                  "--tools",
	"config.embedding_model":        "--embedding-model",
	"config.embedding_provider":     "--embedding-provider",
	"config.tool_calls_per_turn":    "--tool-calls-per-turn",
	"config.tool_calls_per_session": "--tool-calls-per-session",
	"config.approve_tools":          "--approve-tools",
	"config.approval_timeout":       "--approval-timeout",
}

// parseStart reads the flags of `starter start` into a validated request. It never touches
// the network, so a mistake is refused before anything is started.
func parseStart(args []string) (startOptions, error) {
	fs := newFlagSet("start", `--goal "..." [flags]`, "Start a research session. Prints the session ID on stdout and the Web UI link on stderr.")
	var (
		o  startOptions
		cf configFlags
	)
	fs.StringVar(&o.req.ResearchGoal, "goal", "", "the research goal, in plain language (required)")
	fs.StringVar(&o.id, "id", "", "session ID (default: a slug of the goal and 8 random hex digits; with the lab's keys (COSCI_KEYS_FILE), s- and 16 random hex digits, which spell nothing of the goal)")
	fs.StringVar(&o.req.ScientistID, "scientist", "", "who asks (default "+research.DefaultScientistID+")")
	cf.register(fs, false)
	fs.BoolVar(&o.wait, "wait", false, "wait for the session to end and print its result")
	fs.BoolVar(&o.watch, "watch", false, "follow the session live until it ends")
	fs.BoolVar(&o.estimate, "estimate", false, "print what the session would cost (a range, from the cost benchmark's figures and the price table) and exit, starting nothing and calling no model")

	err := parseFlags(fs, args, `: give the goal with --goal "..."`)
	if err != nil {
		return o, err
	}
	if o.req, err = cf.complete(o.req); err != nil {
		return o, err
	}
	o.id, o.warning, err = resolveID("session", o.id, o.req.ResearchGoal, func(sealed bool) string {
		if sealed {
			return newSealedID("s-")
		}
		return newSessionID(o.req.ResearchGoal)
	})
	return o, err
}

// encrypted says whether the lab's research is encrypted: keys are configured
// (COSCI_KEYS_FILE or COSCI_KEYS). Keys that are named but unusable are an error here,
// before anything is started.
func encrypted() (bool, error) {
	k, err := labKeys()
	return k != nil, err
}

// configFlags are the flags that configure a session; start, continue, fork and
// schedule create take them.
type configFlags struct {
	fs                 *flag.FlagSet // to tell the flags typed from those left out
	c                  research.Config
	timeLimit          time.Duration
	labReminder        time.Duration
	checkpointInterval time.Duration
	reviewTypes        string
	tokenBudget        optInt
	tools              string
	approveTools       string
	approvalTimeout    time.Duration
}

// register adds the configuration flags to fs. With inherit, an unset flag keeps the
// parent session's value, and the help says so.
func (f *configFlags) register(fs *flag.FlagSet, inherit bool) {
	def := func(d string) string {
		if inherit {
			return "(default: the parent session's)"
		}
		if strings.HasPrefix(d, ":") {
			return "(default" + d + ")"
		}
		return "(default " + d + ")"
	}
	f.fs = fs
	c := &f.c
	fs.IntVar(&c.MaxHypotheses, "max-hypotheses", 0, "stop after generating this many hypotheses "+def(strconv.Itoa(research.DefaultMaxHypotheses)))
	fs.DurationVar(&f.timeLimit, "time-limit", 0, "stop after this much active time, e.g. 2h "+def(": no limit"))
	fs.DurationVar(&f.labReminder, "lab-reminder", 0, "remind the people who run cosci when an experiment has waited this long for the lab's result, and again every as long "+def(": 168h"))
	fs.DurationVar(&f.checkpointInterval, "checkpoint-interval", 0, "checkpoint at least this often while a round runs, e.g. 5m "+def(research.Duration(research.DefaultCheckpointInterval).String()))
	fs.StringVar(&f.reviewTypes, "review-types", "", "comma-separated, from "+strings.Join(research.ReviewTypes, ",")+" "+def(research.ReviewInitial))
	fs.StringVar(&c.SafetyLevel, "safety-level", "", "one of "+strings.Join(research.SafetyLevels, ", ")+" "+def("standard"))
	fs.StringVar(&c.Provider, "provider", "", "model provider, one of "+strings.Join(research.Providers, ", ")+" "+def(research.DefaultProvider))
	fs.StringVar(&c.Model, "model", "", "model name "+def(": the provider's"))
	fs.StringVar(&c.EmbeddingModel, "embedding-model", "", "embedding model the proximity agent compares hypotheses with "+def(": text-embedding-3-small on openai, voyage-3.5 on voyage; openai-compatible needs one"))
	fs.StringVar(&c.EmbeddingProvider, "embedding-provider", "", "where the proximity agent's embeddings come from, apart from --provider: one of "+strings.Join(research.EmbeddingProviders, ", ")+" "+def(": the provider's own (openai), else words"))
	fs.Var(&f.tokenBudget, "token-budget", "cap the tokens the session's model turns may use at `N`, e.g. 500000 or 500k; when spent the session suspends "+def(": no cap"))
	fs.BoolVar(&c.Batch, "batch", false, "send the calls a round makes many of at once (generation, evolution, reviews, matches) through the provider's batch API: half the price, answers within a day "+def(": off"))
	fs.Float64Var(&c.BudgetUSD, "budget-usd", 0, "cap what the session's model calls may cost at `USD` dollars, as the workers' price table estimates it; each call starts only if it fits, and the session suspends at the limit "+def(": no cap"))
	fs.IntVar(&c.ConvergenceRounds, "convergence-rounds", 0, "stop as converged once the top hypotheses stayed the same this many rounds "+
		strings.TrimSuffix(def(strconv.Itoa(research.DefaultConvergenceRounds)), ")")+"; a large value explores until --max-hypotheses)")
	fs.IntVar(&c.TopK, "top-k", 0, "the size of the top the tournament works to get right and watches for convergence "+def(strconv.Itoa(research.DefaultTopK)))
	fs.Float64Var(&c.DebateShare, "debate-share", 0, "share of the tournament's boundary matches played as multi-turn debates, 0 to 1 "+def("0: none"))
	fs.StringVar(&f.tools, "tools", "", "comma-separated tools the agents may call, server.tool or server.* (see starter tools) "+def(": none"))
	fs.IntVar(&c.ToolCallsPerTurn, "tool-calls-per-turn", 0, "tool calls one agent turn may make before it must answer "+def(strconv.Itoa(research.DefaultToolCallsPerTurn)))
	fs.IntVar(&c.ToolCallsPerSession, "tool-calls-per-session", 0, "tool calls the whole session may make "+def(strconv.Itoa(research.DefaultToolCallsPerHypothesis)+" per --max-hypotheses"))
	fs.StringVar(&f.approveTools, "approve-tools", "", "comma-separated tools whose every call waits for your answer (starter answer-tool) "+def(": none"))
	fs.DurationVar(&f.approvalTimeout, "approval-timeout", 0, "how long a call waits for your answer before it is refused "+def(research.Duration(research.DefaultApprovalTimeout).String()))
	seed := "random seed, for reproducible offline sessions"
	if inherit {
		seed += " " + def("")
	}
	fs.Int64Var(&c.Seed, "seed", 0, seed)
}

// complete finishes a request from the command line: the config from the flags, the
// defaults, and the same validation the workflow makes, so a bad goal is refused here.
func (f *configFlags) complete(req research.Request) (research.Request, error) {
	req.Config = f.config()
	req = req.WithDefaults()
	if err := req.Validate(); err != nil {
		return req, invalidSession(err)
	}
	return req, nil
}

// config is the configuration the flags set: the flags left out stay zero and not given.
func (f *configFlags) config() research.Config {
	c := f.c
	c.TimeLimit = research.Duration(f.timeLimit)
	c.LabReminder = research.Duration(f.labReminder)
	c.CheckpointInterval = research.Duration(f.checkpointInterval)
	c.ReviewTypes = splitList(f.reviewTypes)
	c.TokenBudget = f.tokenBudget.v
	c.Tools = splitList(f.tools)
	c.ApproveTools = splitList(f.approveTools)
	c.ApprovalTimeout = research.Duration(f.approvalTimeout)
	// A flag typed is a value given, even as 0 or "": over a parent session's
	// configuration --token-budget 0 lifts its cap, --time-limit 0 its time limit.
	f.fs.Visit(func(fl *flag.Flag) {
		if field, ok := configField(fl.Name); ok {
			_ = c.Give(field) // a field of research.Config: Give cannot refuse it
		}
	})
	return c
}

// configField is the research.Config field a configuration flag sets: --token-budget
// sets token_budget.
func configField(flagName string) (string, bool) {
	field := strings.ReplaceAll(flagName, "-", "_")
	return field, slices.Contains(research.ConfigFields(), field)
}

// invalidSession is the usage error for a request research refuses, naming the flag to fix.
func invalidSession(err error) error {
	var fe *research.FieldError
	if errors.As(err, &fe) && flagOf[fe.Field] != "" {
		return usageErrorf("invalid session: %s (set with %s)", err, flagOf[fe.Field])
	}
	return usageErrorf("invalid session: %s", err)
}

// splitList reads "a, b,,c" as [a b c].
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// startWorkflowOptions are the options a session starts with: a fresh ID only, and what the
// Web UI shows from the first moment.
func startWorkflowOptions(o startOptions) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                                       o.id,
		TaskQueue:                                workflows.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            "research: " + research.Shorten(o.req.ResearchGoal, 80),
		StaticDetails:                            staticDetails(o.req),
		Memo:                                     map[string]any{workflows.MemoGoal: o.req.ResearchGoal},
		TypedSearchAttributes:                    sessionAttributes(o.req),
	}
}

// sessionAttributes are the search attributes a session starts with, so that `starter
// list`, `starter tree` and the Web UI see it from its first moment: initializing, the
// scientist who asks (when the request names one) and more.
func sessionAttributes(req research.Request, more ...temporal.SearchAttributeUpdate) temporal.SearchAttributes {
	attrs := append([]temporal.SearchAttributeUpdate{
		temporal.NewSearchAttributeKeyKeyword(workflows.AttrSessionStatus).ValueSet(string(session.Initializing)),
	}, more...)
	if req.ScientistID != "" {
		attrs = append(attrs, temporal.NewSearchAttributeKeyKeyword(workflows.AttrScientistID).ValueSet(req.ScientistID))
	}
	return temporal.NewSearchAttributes(attrs...)
}

// staticDetails is the Markdown the Web UI shows for the session: the goal in full and
// how it was configured.
func staticDetails(r research.Request) string {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "**Research goal**\n\n%s\n\n", r.ResearchGoal)
	fmt.Fprintf(&b, "- **Scientist:** %s\n", r.ScientistID)
	fmt.Fprintf(&b, "- **Max hypotheses:** %d\n", c.MaxHypotheses)
	fmt.Fprintf(&b, "- **Time limit:** %s\n", timeLimitText(c.TimeLimit))
	fmt.Fprintf(&b, "- **Review types:** %s\n", strings.Join(c.ReviewTypes, ", "))
	fmt.Fprintf(&b, "- **Safety level:** %s\n", c.SafetyLevel)
	fmt.Fprintf(&b, "- **Provider:** %s", c.Provider)
	if c.Model != "" {
		fmt.Fprintf(&b, " (model %s)", c.Model)
	}
	fmt.Fprintf(&b, "\n- **Token budget:** %s\n", tokenBudgetText(c.TokenBudget))
	if len(c.Tools) > 0 {
		fmt.Fprintf(&b, "- **Tools:** %s (%d calls a turn, %d a session)\n", strings.Join(c.Tools, ", "), c.ToolTurnBudget(), c.ToolSessionBudget())
		if len(c.ApproveTools) > 0 {
			fmt.Fprintf(&b, "- **Tools that wait for approval:** %s\n", strings.Join(c.ApproveTools, ", "))
		}
	}
	fmt.Fprintf(&b, "- **Seed:** %d\n", c.Seed)
	return b.String()
}

func tokenBudgetText(n int) string {
	if n == 0 {
		return "none"
	}
	return research.Thousands(n)
}

func cmdStart(ctx context.Context, args []string) error {
	o, err := parseStart(args)
	if err == nil && o.estimate {
		return printEstimate(stdout, o.req)
	}
	return withTemporal(err, func(c client.Client, namespace string) error {
		if len(o.req.Config.Tools) > 0 {
			// A tool the workers do not offer is refused before anything starts.
			cat, err := catalog(ctx, c)
			if err != nil {
				return err
			}
			if err := workflows.CheckTools(o.req.Config, cat); err != nil {
				return invalidSession(err)
			}
		}
		if o.warning != "" {
			fmt.Fprintln(stderr, "warning:", o.warning)
		}
		sctx, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		if _, err := c.ExecuteWorkflow(sctx, startWorkflowOptions(o), workflows.WorkflowType, o.req); err != nil {
			var exists *serviceerror.WorkflowExecutionAlreadyStarted
			if errors.As(err, &exists) {
				return fmt.Errorf("session %s already exists: pick another --id, or look at it with: starter status %s", o.id, o.id)
			}
			return fmt.Errorf("cannot start session %s: %w", o.id, explain(err, o.id))
		}
		fmt.Fprintln(stdout, o.id)
		printUILink(namespace, o.id)
		if w := priceWarning(o.req.Config); w != "" {
			fmt.Fprintln(stderr, "warning:", w)
		}
		switch {
		case o.watch:
			return watch(ctx, c, namespace, o.id)
		case o.wait:
			return awaitResult(ctx, c, namespace, o.id)
		}
		return nil
	})
}

// priceWarning warns of a model cosci's built-in price table lacks: its cost reads as
// unknown unless the workers were given a price for it (worker --prices), and a dollar
// budget cannot be kept on it. "" when the model is priced or free (the offline one).
func priceWarning(c research.Config) string {
	p := strings.ToLower(strings.TrimSpace(c.Provider))
	if p == "" || p == research.DefaultProvider {
		return ""
	}
	model := strings.TrimSpace(c.Model)
	switch {
	case model == "" && p == "openai":
		model = provider.OpenAIDefaultModel
	case model == "" && p == "anthropic":
		model = provider.AnthropicDefaultModel
	}
	if provider.DefaultPrices().Has(model) {
		return ""
	}
	w := fmt.Sprintf("model %s has no built-in price (prices read %s): its cost reads as unknown unless the workers have a price for it (worker --prices FILE)", model, provider.PricesAsOf)
	if c.BudgetUSD > 0 {
		w += "; without one, --budget-usd suspends the session at its first model call"
	}
	return w
}
