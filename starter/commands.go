package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// stdin is where --predictions-file - reads; tests swap it.
var stdin io.Reader = os.Stdin

// commandArgs is each command's argument synopsis, for the usage text and its -h.
var commandArgs = map[string]string{
	workflows.Suspend:       "<id> [--reason R]",
	workflows.Resume:        "<id>",
	workflows.RefineGoal:    "<id> [--goal G] [--focus F] [--token-budget N]",
	workflows.Checkpoint:    "<id>",
	workflows.Terminate:     "<id> [--reason R]",
	workflows.AddHypothesis: "<id> --title T --statement S [--rationale R] --prediction P [--prediction P2 ...]",
	workflows.Review:        "<id> --hypothesis h-0003 [--score 7.5] [--verdict accept|revise|reject] [--critique C]",
	workflows.Feedback:      "<id> [--toward T] [--away A]",
	workflows.SetBudget:     "<id> [--tokens N] [--usd D] [--max-hypotheses N]",
	workflows.AnswerTool:    "<id> --call C (--approve | --reject [--reason R] | --result TEXT | --result-file F)",
	workflows.TrustTool:     "<id> --tool server.tool",
	workflows.UntrustTool:   "<id> --tool server.tool",
}

// flagOfField names the flag that sets each payload field, for messages.
func flagOfField(name, field string) string {
	switch field {
	case "research_goal":
		return "--goal"
	case "token_budget":
		if name == workflows.SetBudget {
			return "--tokens"
		}
		return "--token-budget"
	case "testable_predictions":
		return "--prediction"
	case "hypothesis_id":
		return "--hypothesis"
	case "max_hypotheses":
		return "--max-hypotheses"
	}
	return "--" + field
}

// payloadFields lists the fields a message may start with, longest first where one is a
// prefix of another.
var payloadFields = []string{"research_goal", "reason", "goal", "focus", "token_budget", "title", "statement",
	"rationale", "testable_predictions", "hypothesis_id", "score", "verdict", "critique", "toward", "away",
	"call", "decision", "result", "max_hypotheses"}

// parseCommand reads `starter NAME <id> [flags]` into the session ID and the command's
// payload (nil when it has none). The payload is checked with session.ParseCommand, the way
// the session checks it, so a mistake is refused before anything is sent.
func parseCommand(name string, args []string) (string, map[string]any, error) {
	spec, _ := session.LookupCommand(name)
	fs := newFlagSet(name, commandArgs[name], spec.Help)
	var c commandFlags
	c.define(fs, name)
	id, err := sessionArg(fs, args)
	if err != nil {
		return "", nil, err
	}
	if err := c.readFiles(); err != nil {
		return "", nil, err
	}
	arg := c.payload()

	payload, err := json.Marshal(arg)
	if err != nil {
		return "", nil, usageErrorf("invalid %s: %v", name, err)
	}
	if _, err := session.ParseCommand(name, payload); err != nil {
		if msg := missing(name, arg); msg != "" {
			return "", nil, usageErrorf("%s", msg)
		}
		return "", nil, usageErrorf("invalid %s: %s", name, flagNamed(name, err.Error()))
	}
	if len(arg) == 0 {
		arg = nil
	}
	return id, arg, nil
}

// commandFlags are the flags of every command; each command defines its own.
type commandFlags struct {
	reason, goal, focus           string
	title, statement, rationale   string
	predictions                   stringList
	predictionsFile               string
	hypothesis, verdict, critique string
	toward, away                  string
	tokenBudget, maxHypotheses    optInt
	score, budgetUSD              optFloat
	call, result, resultFile      string
	tool                          string
	approve, reject               bool
	as                            string
}

// define defines command name's flags on fs.
func (c *commandFlags) define(fs *flag.FlagSet, name string) {
	fs.StringVar(&c.as, "as", defaultIdentity(), "who sends the command, for the session's history (default $USER)")
	switch name {
	case workflows.Suspend, workflows.Terminate:
		fs.StringVar(&c.reason, "reason", "", "why, for the session's history")
	case workflows.RefineGoal:
		fs.StringVar(&c.goal, "goal", "", "the new research goal")
		fs.StringVar(&c.focus, "focus", "", "what to concentrate on from now on")
		fs.Var(&c.tokenBudget, "token-budget", "the new token budget: `N` tokens, e.g. 500000 or 500k (0: no cap)")
	case workflows.AddHypothesis:
		fs.StringVar(&c.title, "title", "", "a short title (required)")
		fs.StringVar(&c.statement, "statement", "", "the hypothesis itself (required)")
		fs.StringVar(&c.rationale, "rationale", "", "why it may be true")
		fs.Var(&c.predictions, "prediction", "a testable prediction `P`; repeat the flag for several (at least one)")
		fs.StringVar(&c.predictionsFile, "predictions-file", "", "read testable predictions from this `file`, one per line (- for stdin)")
	case workflows.Review:
		fs.StringVar(&c.hypothesis, "hypothesis", "", "the hypothesis you reviewed, e.g. h-0003 (required)")
		fs.Var(&c.score, "score", "your overall score from 0 to 10, e.g. `7.5`")
		fs.StringVar(&c.verdict, "verdict", "", "one of "+strings.Join(research.Verdicts, ", "))
		fs.StringVar(&c.critique, "critique", "", "what is wrong or missing")
	case workflows.Feedback:
		fs.StringVar(&c.toward, "toward", "", "a direction the agents should explore more")
		fs.StringVar(&c.away, "away", "", "a direction the agents should leave")
	case workflows.SetBudget:
		fs.Var(&c.tokenBudget, "tokens", "the token budget: `N` tokens, e.g. 500000 or 500k (0: no cap)")
		fs.Var(&c.budgetUSD, "usd", "the dollar budget: `USD` dollars, e.g. 5 or 0.50 (0: no cap)")
		fs.Var(&c.maxHypotheses, "max-hypotheses", "stop once the agents have made `N` hypotheses")
	case workflows.AnswerTool:
		fs.StringVar(&c.call, "call", "", "the waiting call, e.g. call-1 (see starter status; required)")
		fs.BoolVar(&c.approve, "approve", false, "let the call be made")
		fs.BoolVar(&c.reject, "reject", false, "refuse the call; the model goes on without it")
		fs.StringVar(&c.reason, "reason", "", "why you refuse it, for the model and the history")
		fs.StringVar(&c.result, "result", "", "give the call's result yourself, in place of the tool's")
		fs.StringVar(&c.resultFile, "result-file", "", "read the result from this `file` (- for stdin)")
	case workflows.TrustTool, workflows.UntrustTool:
		fs.StringVar(&c.tool, "tool", "", "the tool, e.g. literature.fetch (required)")
	}
}

// readFiles reads the files the flags name into the result and the predictions, and
// refuses flags that contradict each other.
func (c *commandFlags) readFiles() error {
	if c.resultFile != "" {
		b, err := readAll(c.resultFile)
		if err != nil {
			return usageErrorf("--result-file: %v", err)
		}
		c.result = string(b)
	}
	if c.approve && c.reject {
		return usageErrorf("give --approve or --reject, not both")
	}
	if c.predictionsFile != "" {
		lines, err := readLines(c.predictionsFile)
		if err != nil {
			return usageErrorf("--predictions-file: %v", err)
		}
		c.predictions = append(c.predictions, lines...)
	}

	return nil
}

// payload is the command's payload from its flags: the texts trimmed, those left empty
// and the numbers not given left out.
func (c *commandFlags) payload() map[string]any {
	arg := map[string]any{}
	for k, v := range map[string]string{"reason": c.reason, "goal": c.goal, "focus": c.focus, "title": c.title,
		"statement": c.statement, "rationale": c.rationale, "hypothesis_id": c.hypothesis, "verdict": c.verdict,
		"critique": c.critique, "toward": c.toward, "away": c.away, "call": c.call, "result": c.result, "decision": decision(c.approve, c.reject),
		"tool": c.tool} {
		if v = strings.TrimSpace(v); v != "" {
			arg[k] = v
		}
	}
	var kept []string
	for _, p := range c.predictions {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	if len(kept) > 0 {
		arg["testable_predictions"] = kept
	}
	if by := session.CleanBy(c.as); by != "" {
		arg["by"] = by
	}
	if c.tokenBudget.set {
		arg["token_budget"] = c.tokenBudget.v
	}
	if c.score.set {
		arg["score"] = c.score.v
	}
	if c.maxHypotheses.set {
		arg["max_hypotheses"] = c.maxHypotheses.v
	}
	if c.budgetUSD.set {
		arg["budget_usd"] = c.budgetUSD.v
	}

	return arg
}

// defaultIdentity is who sends a command when --as does not say: the user the starter
// runs as (session.LocalName, as the desk's local mode names its user). It is recorded, not
// authenticated: anyone with access to the namespace may name anyone.
func defaultIdentity() string {
	return session.CleanBy(session.LocalName(os.Getenv))
}

// missing says, in terms of flags, what a command line lacks; "" when it lacks nothing.
func missing(name string, arg map[string]any) string {
	has := func(k string) bool { _, ok := arg[k]; return ok }
	switch name {
	case workflows.RefineGoal:
		if !has("goal") && !has("focus") && !has("token_budget") {
			return `refine-goal needs --goal "...", --focus "...", --token-budget N, or several`
		}
	case workflows.SetBudget:
		if !has("token_budget") && !has("budget_usd") && !has("max_hypotheses") {
			return "set-budget needs --tokens N (e.g. 500000 or 500k), --usd D (e.g. 5), --max-hypotheses N, or several; 0 means no cap"
		}
	case workflows.AddHypothesis:
		switch {
		case !has("title"):
			return `add-hypothesis needs --title "...": a short title`
		case !has("statement"):
			return `add-hypothesis needs --statement "...": the hypothesis itself`
		case !has("testable_predictions"):
			return `add-hypothesis needs at least one --prediction "..." (repeat it for several, or use --predictions-file FILE, one per line)`
		}
	case workflows.Review:
		switch {
		case !has("hypothesis_id"):
			return "review needs --hypothesis ID: which hypothesis you reviewed (see them with: starter state <id>)"
		case !has("score") && !has("verdict") && !has("critique"):
			return `review needs --score N (0 to 10), --verdict ` + strings.Join(research.Verdicts, "|") + `, --critique "...", or several`
		}
	case workflows.Feedback:
		if !has("toward") && !has("away") {
			return `feedback needs --toward "...", --away "...", or both`
		}
	}
	return ""
}

// flagNamed rewrites the session's message about a payload field in terms of the flag that
// sets it: "review: score is 11; ..." becomes "--score is 11; ...".
func flagNamed(name, msg string) string {
	msg = strings.TrimPrefix(msg, name+": ")
	for _, f := range payloadFields {
		if rest, ok := strings.CutPrefix(msg, f+": "); ok {
			return flagOfField(name, f) + " " + rest
		}
		if rest, ok := strings.CutPrefix(msg, f+" "); ok {
			return flagOfField(name, f) + " " + rest
		}
	}
	return msg
}

// readLines reads a file's non-blank lines ("-": stdin).
func readLines(path string) ([]string, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, unwrapPathError(err)
		}
		defer f.Close()
		r = f
	}
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, sc.Err()
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, "; ") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// optInt is an integer flag that knows whether it was given, so that 0 can be sent. It
// reads token counts as people write them: 500000, 500_000, 500,000, 500k, 2M.
type optInt struct {
	v   int
	set bool
}

func (o *optInt) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.Itoa(o.v)
}

func (o *optInt) Set(s string) error {
	n, err := parseTokens(s)
	if err != nil {
		return err
	}
	o.v, o.set = n, true
	return nil
}

// parseTokens reads a whole number of tokens, with an optional k (thousand) or M (million).
func parseTokens(s string) (int, error) {
	t := strings.NewReplacer("_", "", ",", "").Replace(strings.TrimSpace(s))
	mult := 1
	switch {
	case strings.HasSuffix(t, "k"), strings.HasSuffix(t, "K"):
		mult, t = 1000, t[:len(t)-1]
	case strings.HasSuffix(t, "m"), strings.HasSuffix(t, "M"):
		mult, t = 1000000, t[:len(t)-1]
	}
	n, err := strconv.Atoi(t)
	if err != nil || n > math.MaxInt/mult || n < math.MinInt/mult {
		return 0, errors.New("not a whole number of tokens (e.g. 500000, 500k or 2M)")
	}
	return n * mult, nil
}

// optFloat is a number flag that knows whether it was given.
type optFloat struct {
	v   float64
	set bool
}

func (o *optFloat) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.FormatFloat(o.v, 'g', -1, 64)
}

func (o *optFloat) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return errors.New("not a number")
	}
	o.v, o.set = f, true
	return nil
}

// cmdUpdate sends a scientist's command as an update and prints the session's new status.
func cmdUpdate(name string) func(context.Context, []string) error {
	return func(ctx context.Context, args []string) error {
		id, arg, err := parseCommand(name, args)
		return withTemporal(err, func(c client.Client, _ string) error {
			s, err := update(ctx, c, id, name, arg)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, commandOutcome(name, arg, s))
			return nil
		})
	}
}

// update sends one command and waits for the session's answer.
func update(ctx context.Context, c client.Client, id, name string, arg map[string]any) (workflows.Status, error) {
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
func commandOutcome(name string, arg map[string]any, s workflows.Status) string {
	msg := fmt.Sprintf("session %s is now %s", s.SessionID, stateOf(s))
	budget := func() string {
		var parts []string
		if v, ok := arg["token_budget"]; ok {
			if n, _ := v.(int); n == 0 {
				parts = append(parts, "no token budget (no cap)")
			} else {
				parts = append(parts, "token budget "+research.Thousands(n))
			}
		}
		if v, ok := arg["budget_usd"]; ok {
			if d, _ := v.(float64); d == 0 {
				parts = append(parts, "no dollar budget (no cap)")
			} else {
				parts = append(parts, "dollar budget $"+research.Dollars(d))
			}
		}
		return strings.Join(parts, ", ")
	}
	switch name {
	case workflows.Checkpoint:
		msg += "; a checkpoint will be written shortly"
	case workflows.RefineGoal:
		msg += "; goal: " + research.Shorten(s.Goal, 120)
		if _, ok := arg["token_budget"]; ok {
			msg += "; " + budget()
		}
	case workflows.Terminate:
		msg += fmt.Sprintf("; it finishes in-flight work, checkpoints and writes its report (see it with: starter result %s)", s.SessionID)
	case workflows.Suspend:
		msg += fmt.Sprintf(" (resume it with: starter resume %s)", s.SessionID)
	case workflows.AddHypothesis:
		title := fmt.Sprintf("%q", research.Shorten(fmt.Sprint(arg["title"]), 60))
		if added, ok := strings.CutPrefix(s.Detail, "added as "); ok {
			id, _, _ := strings.Cut(added, ";")
			title += " (" + id + ")"
		}
		msg += fmt.Sprintf("; your hypothesis %s enters the tournament: it is reviewed, then plays matches (follow it with: starter state %s)",
			title, s.SessionID)
	case workflows.Review:
		msg += fmt.Sprintf("; your review of %s is recorded and counts in its score", arg["hypothesis_id"])
	case workflows.Feedback:
		msg += "; your feedback steers the agents from the next round"
	case workflows.SetBudget:
		msg += "; " + budget()
	case workflows.AnswerTool:
		// The session's state does not change; the call's does.
		done := map[string]string{"approve": "approved: the tool is called now",
			"reject": "rejected: the model is told why", "result": "answered with your result"}[fmt.Sprint(arg["decision"])]
		if done == "" && arg["result"] != nil {
			done = "answered with your result"
		}
		msg = fmt.Sprintf("session %s (%s): %s %s, and the turn that asked goes on", s.SessionID, stateOf(s), arg["call"], done)
	}
	if s.State == session.Suspended && (name == workflows.SetBudget || name == workflows.RefineGoal) {
		msg += fmt.Sprintf(" (resume it with: starter resume %s)", s.SessionID)
	}
	return msg
}

// decision is answer-tool's decision from its flags ("" when a result is given instead).
func decision(approve, reject bool) string {
	switch {
	case approve:
		return "approve"
	case reject:
		return "reject"
	}
	return ""
}

// readAll reads a file, or stdin for "-".
func readAll(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}
