package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/cosci-dev/cosci/codec"
	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

func TestRunUsage(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		inStdout bool
	}{
		{nil, 2, false},
		{[]string{"-h"}, 0, true},
		{[]string{"help"}, 0, true},
		{[]string{"frobnicate"}, 2, false},
	}
	for _, tt := range tests {
		out, errOut := quiet(t)
		if code := run(tt.args); code != tt.code {
			t.Errorf("run(%q) = %d, want %d", tt.args, code, tt.code)
		}
		text := errOut.String()
		if tt.inStdout {
			text = out.String()
		}
		for _, c := range commands {
			if !strings.Contains(text, "  "+c.name+" ") {
				t.Errorf("run(%q): usage does not list %q:\n%s", tt.args, c.name, text)
			}
		}
	}
	// Every command of the brief is there, and every workflow command has one.
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	for _, want := range append([]string{"start", "status", "progress", "state", "history", "watch", "report", "result", "list"}, workflows.Commands...) {
		if !slices.Contains(names, want) {
			t.Errorf("no command %q", want)
		}
	}
}

func TestEveryCommandRefusesAMissingSessionID(t *testing.T) {
	for _, c := range commands {
		if c.name == "start" || c.name == "list" || c.name == "schedule" || c.name == "heartbeat" || c.name == "tools" || c.name == "keygen" || c.name == "codec-server" {
			continue // they take no session ID
		}
		_, errOut := quiet(t)
		if code := run([]string{c.name}); code != 2 {
			t.Errorf("starter %s without an ID exited %d, want 2", c.name, code)
		}
		if !strings.Contains(errOut.String(), "needs one session ID") {
			t.Errorf("starter %s: %q", c.name, errOut)
		}
		out, _ := quiet(t)
		if code := run([]string{c.name, "-h"}); code != 0 || !strings.Contains(out.String(), "Usage: starter "+c.name) {
			t.Errorf("starter %s -h exited %d and printed %q", c.name, code, out)
		}
	}
}

func TestParseInterleavedFlags(t *testing.T) {
	quiet(t)
	for _, args := range [][]string{
		{"s-1", "--offset", "10", "--limit", "5", "--json"},
		{"--offset=10", "s-1", "--limit", "5", "--json"},
		{"--json", "--offset", "10", "--limit=5", "--", "s-1"},
	} {
		id, f, err := parseInspect("state", "", true, args)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if id != "s-1" || !f.json || f.page != (workflows.Page{Offset: 10, Limit: 5}) {
			t.Errorf("%q: id %q, flags %+v", args, id, f)
		}
	}
	for _, args := range [][]string{
		{"s-1", "s-2"},
		{"s-1", "--limit", "0"},
		{"s-1", "--limit", fmt.Sprint(workflows.MaxPageLimit + 1)},
		{"s-1", "--offset", "-1"},
		{"s-1", "--page", "2"},
	} {
		var e *exitError
		if _, _, err := parseInspect("history", "", true, args); !errors.As(err, &e) || e.code != 2 {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	if _, f, err := parseInspect("state", "", true, []string{"s-1"}); err != nil || f.page.Limit != workflows.DefaultPageLimit {
		t.Errorf("default page: %+v, %v", f.page, err)
	}
}

func TestParseCommand(t *testing.T) {
	predictions := filepath.Join(t.TempDir(), "predictions.txt")
	if err := os.WriteFile(predictions, []byte("  p2\n\n p3 \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		want    string // the payload, as JSON ("" for none)
		refused bool   // a usage error is expected...
		usage   string // ...whose message contains this
	}{
		{name: "suspend", args: []string{"s-1"}},
		{name: "suspend", args: []string{"s-1", "--reason", "lunch"}, want: `{"reason":"lunch"}`},
		{name: "terminate", args: []string{"--reason", " enough ", "s-1"}, want: `{"reason":"enough"}`},
		{name: "resume", args: []string{"s-1"}},
		{name: "checkpoint", args: []string{"s-1"}},
		{name: "refine-goal", args: []string{"s-1", "--focus", "persisters"}, want: `{"focus":"persisters"}`},
		{name: "refine-goal", args: []string{"s-1", "--goal", "g2", "--focus", "f"}, want: `{"focus":"f","goal":"g2"}`},
		{name: "refine-goal", args: []string{"s-1", "--token-budget", "500k"}, want: `{"token_budget":500000}`},
		{name: "refine-goal", args: []string{"s-1", "--token-budget", "0"}, want: `{"token_budget":0}`},
		{name: "refine-goal", args: []string{"s-1"}, refused: true, usage: "needs --goal"},
		{name: "refine-goal", args: []string{"s-1", "--token-budget", "-5"}, refused: true, usage: "--token-budget is -5"},
		{name: "refine-goal", args: []string{"s-1", "--token-budget", "lots"}, refused: true}, // the flag package explains
		{name: "refine-goal", args: []string{"s-1", "--goal", strings.Repeat("x", 4001)}, refused: true, usage: "--goal is 4001 characters"},
		{name: "suspend", args: []string{"s-1", "--reason", strings.Repeat("x", 501)}, refused: true, usage: "reason is longer"},
		{name: "refine-goal", args: []string{"s-1", "--focus", strings.Repeat("x", 1001)}, refused: true, usage: "focus is"},
		{name: "resume", args: []string{"s-1", "--reason", "x"}, refused: true}, // the flag package explains

		// add-hypothesis
		{name: "add-hypothesis", args: []string{"s-1", "--title", " T ", "--statement", "S", "--rationale", "R", "--prediction", "p1", "--prediction", " p2 "},
			want: `{"rationale":"R","statement":"S","testable_predictions":["p1","p2"],"title":"T"}`},
		{name: "add-hypothesis", args: []string{"--prediction", "p1", "s-1", "--title", "T", "--statement", "S", "--predictions-file", predictions},
			want: `{"statement":"S","testable_predictions":["p1","p2","p3"],"title":"T"}`},
		{name: "add-hypothesis", args: []string{"s-1", "--statement", "S", "--prediction", "p"}, refused: true, usage: "needs --title"},
		{name: "add-hypothesis", args: []string{"s-1", "--title", "T", "--prediction", "p"}, refused: true, usage: "needs --statement"},
		{name: "add-hypothesis", args: []string{"s-1", "--title", "T", "--statement", "S"}, refused: true, usage: "--prediction"},
		{name: "add-hypothesis", args: []string{"s-1", "--title", "T", "--statement", "S", "--prediction", "  "}, refused: true, usage: "--prediction"},
		{name: "add-hypothesis", args: []string{"s-1", "--title", strings.Repeat("t", 201), "--statement", "S", "--prediction", "p"}, refused: true, usage: "--title is longer"},
		{name: "add-hypothesis", args: []string{"s-1", "--title", "T", "--statement", strings.Repeat("s", 4001), "--prediction", "p"}, refused: true, usage: "--statement is longer"},
		{name: "add-hypothesis", args: []string{"s-1", "--title", "T", "--statement", "S", "--rationale", strings.Repeat("r", 4001), "--prediction", "p"}, refused: true, usage: "--rationale is longer"},
		{name: "add-hypothesis", args: append([]string{"s-1", "--title", "T", "--statement", "S"}, strings.Split(strings.Repeat("--prediction p ", 21), " ")[:42]...), refused: true, usage: "at most 20 testable predictions"},
		{name: "add-hypothesis", args: []string{"s-1", "--title", "T", "--statement", "S", "--predictions-file", predictions + ".missing"}, refused: true, usage: "--predictions-file"},

		// review
		{name: "review", args: []string{"s-1", "--hypothesis", "h-0003", "--score", "7.5", "--verdict", "accept", "--critique", "solid"},
			want: `{"critique":"solid","hypothesis_id":"h-0003","score":7.5,"verdict":"accept"}`},
		{name: "review", args: []string{"s-1", "--hypothesis", "h-0003", "--score", "0"}, want: `{"hypothesis_id":"h-0003","score":0}`},
		{name: "review", args: []string{"s-1", "--hypothesis", "h-0003", "--verdict", "revise"}, want: `{"hypothesis_id":"h-0003","verdict":"revise"}`},
		{name: "review", args: []string{"s-1", "--score", "7"}, refused: true, usage: "needs --hypothesis"},
		{name: "review", args: []string{"s-1", "--hypothesis", "h-0003"}, refused: true, usage: "needs --score"},
		{name: "review", args: []string{"s-1", "--hypothesis", "h-0003", "--score", "11"}, refused: true, usage: "--score is 11"},
		{name: "review", args: []string{"s-1", "--hypothesis", "h-0003", "--score", "-1"}, refused: true, usage: "--score is -1"},
		{name: "review", args: []string{"s-1", "--hypothesis", "h-0003", "--score", "NaN"}, refused: true}, // the flag package explains
		{name: "review", args: []string{"s-1", "--hypothesis", "h-0003", "--verdict", "maybe"}, refused: true, usage: `--verdict "maybe" is not one of accept, revise, reject`},
		{name: "review", args: []string{"s-1", "--hypothesis", "h-0003", "--critique", strings.Repeat("c", 4001)}, refused: true, usage: "--critique is longer"},

		// feedback
		{name: "feedback", args: []string{"s-1", "--toward", "metabolism", "--away", "genetics"}, want: `{"away":"genetics","toward":"metabolism"}`},
		{name: "feedback", args: []string{"s-1", "--away", "genetics"}, want: `{"away":"genetics"}`},
		{name: "feedback", args: []string{"s-1"}, refused: true, usage: "needs --toward"},
		{name: "feedback", args: []string{"s-1", "--toward", " "}, refused: true, usage: "needs --toward"},
		{name: "feedback", args: []string{"s-1", "--toward", strings.Repeat("x", 4001)}, refused: true, usage: "--toward is longer"},
		{name: "feedback", args: []string{"s-1", "--away", strings.Repeat("x", 4001)}, refused: true, usage: "--away is longer"},

		// set-budget
		{name: "set-budget", args: []string{"s-1", "--tokens", "1_000_000"}, want: `{"token_budget":1000000}`},
		{name: "set-budget", args: []string{"s-1", "--tokens", "2M"}, want: `{"token_budget":2000000}`},
		{name: "set-budget", args: []string{"s-1", "--tokens", "0"}, want: `{"token_budget":0}`},
		{name: "set-budget", args: []string{"s-1"}, refused: true, usage: "needs --tokens"},
		{name: "set-budget", args: []string{"s-1", "--tokens", "-1"}, refused: true, usage: "--tokens is -1"},
		{name: "set-budget", args: []string{"s-1", "--tokens", "1.5"}, refused: true}, // the flag package explains
	}
	t.Setenv("USER", "ada") // who sends a command unless --as says otherwise
	for _, tt := range tests {
		_, errOut := quiet(t)
		id, arg, err := parseCommand(tt.name, tt.args)
		if err == nil {
			if arg["by"] != "ada" {
				t.Errorf("%s %q: by = %v, want the user the starter runs as", tt.name, tt.args, arg["by"])
			}
			if delete(arg, "by"); len(arg) == 0 {
				arg = nil
			}
		}
		var e *exitError
		switch {
		case tt.refused:
			if !errors.As(err, &e) || e.code != 2 || !strings.Contains(e.msg, tt.usage) {
				t.Errorf("%s %q: %v, want a usage error about %q", tt.name, tt.args, err, tt.usage)
			}
			if tt.usage == "" && errOut.Len() == 0 {
				t.Errorf("%s %q: the flag package said nothing", tt.name, tt.args)
			}
		case err != nil:
			t.Errorf("%s %q: %v", tt.name, tt.args, err)
		case id != "s-1":
			t.Errorf("%s %q: id %q", tt.name, tt.args, id)
		case tt.want == "" && arg != nil:
			t.Errorf("%s %q = %v; want no payload", tt.name, tt.args, arg)
		case tt.want != "":
			got, _ := json.Marshal(arg)
			if string(got) != tt.want {
				t.Errorf("%s %q = %s; want %s", tt.name, tt.args, got, tt.want)
			}
			// What is sent is exactly what the session accepts.
			if _, err := session.ParseCommand(tt.name, got); err != nil {
				t.Errorf("%s %q: the session would refuse %s: %v", tt.name, tt.args, got, err)
			}
		}
	}
}

func TestPredictionsFromStdin(t *testing.T) {
	quiet(t)
	old := stdin
	stdin = strings.NewReader("first\n\nsecond\n")
	t.Cleanup(func() { stdin = old })
	_, arg, err := parseCommand("add-hypothesis", []string{"s-1", "--title", "T", "--statement", "S", "--predictions-file", "-"})
	if err != nil || fmt.Sprint(arg["testable_predictions"]) != "[first second]" {
		t.Errorf("predictions from stdin: %v, %v", arg, err)
	}
}

func TestNewCommandsExitTwoBeforeTheNetwork(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	for _, args := range [][]string{
		{"add-hypothesis", "s-1", "--title", "T"},
		{"review", "s-1", "--hypothesis", "h-0001", "--verdict", "maybe"},
		{"feedback", "s-1"},
		{"set-budget", "s-1", "--tokens", "-3"},
		{"refine-goal", "s-1", "--token-budget", "-3"},
		{"start", "--goal", "g", "--token-budget", "-3"},
	} {
		_, errOut := quiet(t)
		if code := run(args); code != 2 || errOut.Len() == 0 {
			t.Errorf("starter %q exited %d (%q); want 2 with a message", args, code, errOut)
		}
	}
	// -h documents the new flags.
	for cmd, flags := range map[string][]string{
		"add-hypothesis": {"-title", "-statement", "-rationale", "-prediction", "-predictions-file"},
		"review":         {"-hypothesis", "-score", "-verdict", "-critique"},
		"feedback":       {"-toward", "-away"},
		"set-budget":     {"-tokens"},
		"refine-goal":    {"-token-budget"},
	} {
		wantHelp(t, cmd, flags...)
	}
}

// wantHelp checks that starter cmd -h exits 0 and mentions each of want.
func wantHelp(t *testing.T, cmd string, want ...string) {
	t.Helper()
	out, _ := quiet(t)
	if code := run([]string{cmd, "-h"}); code != 0 {
		t.Errorf("starter %s -h exited %d", cmd, code)
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("starter %s -h does not mention %s:\n%s", cmd, w, out)
		}
	}
}

func TestCommandOutcome(t *testing.T) {
	s := workflows.Status{SessionID: "s-1", State: "suspended"}
	if got := commandOutcome(workflows.Suspend, nil, s); got != "session s-1 is now suspended (resume it with: starter resume s-1)" {
		t.Errorf("suspend: %q", got)
	}
	if got := commandOutcome(workflows.SetBudget, map[string]any{"token_budget": 1000000}, s); got != "session s-1 is now suspended; token budget 1,000,000 (resume it with: starter resume s-1)" {
		t.Errorf("set-budget: %q", got)
	}
	s.State = "active"
	if got := commandOutcome(workflows.Resume, nil, s); got != "session s-1 is now active" {
		t.Errorf("resume: %q", got)
	}
	for _, tt := range []struct {
		arg  map[string]any
		want string
	}{
		{map[string]any{"call": "call-3", "decision": "approve"}, "session s-1 (active): call-3 approved: the tool is called now, and the turn that asked goes on"},
		{map[string]any{"call": "call-4", "decision": "reject", "reason": "paywalled"}, "session s-1 (active): call-4 rejected: the model is told why, and the turn that asked goes on"},
		{map[string]any{"call": "call-5", "result": "my notes"}, "session s-1 (active): call-5 answered with your result, and the turn that asked goes on"},
	} {
		if got := commandOutcome(workflows.AnswerTool, tt.arg, s); got != tt.want {
			t.Errorf("answer-tool %v: %q, want %q", tt.arg, got, tt.want)
		}
	}
	if got := commandOutcome(workflows.SetBudget, map[string]any{"token_budget": 0}, s); got != "session s-1 is now active; no token budget (no cap)" {
		t.Errorf("set-budget 0: %q", got)
	}
	if got := commandOutcome(workflows.AddHypothesis, map[string]any{"title": "Persisters"}, s); !strings.Contains(got, `session s-1 is now active; your hypothesis "Persisters" enters the tournament`) {
		t.Errorf("add-hypothesis: %q", got)
	}
	if got := commandOutcome(workflows.Review, map[string]any{"hypothesis_id": "h-0003"}, s); !strings.Contains(got, "your review of h-0003 is recorded") {
		t.Errorf("review: %q", got)
	}
	if got := commandOutcome(workflows.Feedback, map[string]any{"toward": "x"}, s); !strings.Contains(got, "your feedback steers the agents") {
		t.Errorf("feedback: %q", got)
	}
	s.Goal = "g"
	if got := commandOutcome(workflows.RefineGoal, map[string]any{"token_budget": 500000}, s); got != "session s-1 is now active; goal: g; token budget 500,000" {
		t.Errorf("refine-goal: %q", got)
	}
}

func TestParseList(t *testing.T) {
	quiet(t)
	o, err := parseList(nil)
	if err != nil || o.query != "WorkflowType='ResearchSession' AND ExecutionStatus!='ContinuedAsNew'" || o.limit != 20 || o.archived {
		t.Errorf("list = %+v, %v", o, err)
	}
	o, err = parseList([]string{"--status", "suspended", "--limit", "5", "--archived"})
	if err != nil || o.query != "WorkflowType='ResearchSession' AND ExecutionStatus!='ContinuedAsNew' AND SessionStatus='suspended'" || o.limit != 5 || !o.archived {
		t.Errorf("list --status suspended --archived = %+v, %v", o, err)
	}
	o, err = parseList([]string{"--scientist", "ada'; x"})
	if err != nil || o.query != `WorkflowType='ResearchSession' AND ExecutionStatus!='ContinuedAsNew' AND ScientistId='ada\'; x'` || o.scientist != "ada'; x" {
		t.Errorf("list --scientist = %+v, %v; want the name quoted into the query", o, err)
	}
	for _, args := range [][]string{{"--status", "asleep"}, {"--status", "x' OR '1'='1"}, {"--limit", "0"}, {"extra"}} {
		var e *exitError
		if _, err := parseList(args); !errors.As(err, &e) || e.code != 2 {
			t.Errorf("list %q: %v, want a usage error", args, err)
		}
	}
}

// TestRowOfGoal: a list row shows the goal from the session's memo, decoded with the lab's
// keys; an encrypted goal without them shows as unknown, not as ciphertext.
func TestRowOfGoal(t *testing.T) {
	const goal = "Find why some bacteria tolerate antibiotics"
	line, _ := keyring.New("k")
	t.Setenv("COSCI_KEYS", line)
	k, err := labKeys()
	if err != nil {
		t.Fatal(err)
	}
	p, err := codec.DataConverter(k).ToPayload(goal)
	if err != nil {
		t.Fatal(err)
	}
	e := execution(t, "s-1", workflows.WorkflowType, wfRunning, 0, nil, "active")
	e.Memo = &commonpb.Memo{Fields: map[string]*commonpb.Payload{workflows.MemoGoal: p}}
	if r := rowOf(e); r.Goal != goal || r.Status != "active" {
		t.Errorf("row %+v; want the goal %q", r, goal)
	}
	t.Setenv("COSCI_KEYS", "")
	if r := rowOf(e); r.Goal != "" {
		t.Errorf("without the key the row shows goal %q", r.Goal)
	}
}

// onServer has the starter talk to a Temporal server at address, with no profile of the
// developer's in the way.
func onServer(t *testing.T, address string) {
	t.Setenv("TEMPORAL_ADDRESS", address)
	t.Setenv("TEMPORAL_PROFILE", "")
	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(t.TempDir(), "none.toml"))
}

// TestHintsFitTheServer: on the local dev server the hints name make targets and the
// links the dev server's Web UI; on any other server they say what to check there, and
// there is no link unless COSCI_UI_URL gives the UI's address.
func TestHintsFitTheServer(t *testing.T) {
	onServer(t, "temporal.lab.example:7233")
	t.Setenv("COSCI_UI_URL", "")
	for _, err := range []error{context.DeadlineExceeded, serviceerror.NewInvalidArgument("search attribute SessionStatus is not defined")} {
		if got := explain(err, "s-1").Error(); strings.Contains(got, "make ") {
			t.Errorf("on a lab's server, explain(%v) = %q: a dev-setup hint", err, got)
		}
	}
	if got := explain(context.DeadlineExceeded, "s-1").Error(); !strings.Contains(got, "task-queue describe --task-queue cosci") {
		t.Errorf("on a lab's server: %q; want what to check", got)
	}
	if link := uiLink("default", "s-1"); link != "" {
		t.Errorf("on a lab's server without COSCI_UI_URL the link is %q; want none", link)
	}
	t.Setenv("COSCI_UI_URL", "https://temporal.lab.example/ui/")
	if link := uiLink("lab", "s 1"); link != "https://temporal.lab.example/ui/namespaces/lab/workflows/s%201" {
		t.Errorf("link %q", link)
	}
	onServer(t, "127.0.0.1:7233")
	t.Setenv("COSCI_UI_URL", "")
	if link := uiLink("default", "s-1"); link != "http://localhost:8233/namespaces/default/workflows/s-1" {
		t.Errorf("on the dev server the link is %q", link)
	}
}

func TestExplain(t *testing.T) {
	onServer(t, "localhost:7233")
	tests := []struct {
		err  error
		want string
	}{
		{serviceerror.NewNotFound("workflow not found for ID: s-1"), "no session s-1: list them with: starter list"},
		{fmt.Errorf("wrapped: %w", serviceerror.NewNotFound("sql: no rows")), "no session s-1: list them with: starter list"},
		{serviceerror.NewNotFound("workflow execution already completed"), "session s-1 has ended and takes no more commands"},
		{context.DeadlineExceeded, "session s-1 did not answer in time: no worker is taking its tasks, or the workers are too busy; start one with: make worker (or go run ./worker)"},
		{serviceerror.NewDeadlineExceeded("no poller seen for task queue recently, worker may be down"), "did not answer in time"},
		{serviceerror.NewQueryFailed("unknown queryType foo"), "session s-1 could not answer: unknown queryType foo"},
		{serviceerror.NewInvalidArgument("search attribute SessionStatus is not defined"), "restart it with: make server"},
		{errors.New("something else"), "something else"},
	}
	for _, tt := range tests {
		if got := explain(tt.err, "s-1").Error(); !strings.Contains(got, tt.want) {
			t.Errorf("explain(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
	if explain(nil, "s-1") != nil {
		t.Error("explain(nil) is not nil")
	}
}

func TestUILink(t *testing.T) {
	t.Setenv("COSCI_UI_URL", "")
	if got := uiLink("default", "s-1"); got != "http://localhost:8233/namespaces/default/workflows/s-1" {
		t.Errorf("uiLink = %q", got)
	}
	t.Setenv("COSCI_UI_URL", "https://temporal.example/")
	if got := uiLink("lab ns", "a/b"); got != "https://temporal.example/namespaces/lab%20ns/workflows/a%2Fb" {
		t.Errorf("uiLink = %q", got)
	}
}

// TestEveryCommandIsASubcommand: each command of session.Commands is a starter subcommand
// with a synopsis of its flags and the table's summary.
func TestEveryCommandIsASubcommand(t *testing.T) {
	for _, c := range session.Commands {
		i := slices.IndexFunc(commands, func(sc command) bool { return sc.name == c.Name })
		if i < 0 {
			t.Errorf("%s is not a starter subcommand", c.Name)
			continue
		}
		if sc := commands[i]; sc.args == "" || sc.summary != c.Summary {
			t.Errorf("subcommand %s: args %q, summary %q; want a synopsis and %q", c.Name, sc.args, sc.summary, c.Summary)
		}
	}
}

// TestKeygen: keygen prints a key line the key file takes as it is; a bad id is a usage
// error; codec-server without keys says where they come from.
func TestKeygen(t *testing.T) {
	out, _ := quiet(t)
	if code := run([]string{"keygen", "--id", "lab-2026"}); code != 0 {
		t.Fatalf("keygen exited %d", code)
	}
	k, err := keyring.Parse("keygen's output", out.String())
	if err != nil || k.Current() != "lab-2026" {
		t.Errorf("keygen printed %q: %v", out, err)
	}
	_, errOut := quiet(t)
	if code := run([]string{"keygen", "--id", "a b"}); code != 2 || !strings.Contains(errOut.String(), "--id") {
		t.Errorf("keygen with a bad id exited %d: %q", code, errOut)
	}
	t.Setenv("COSCI_KEYS_FILE", "")
	t.Setenv("COSCI_KEYS", "")
	_, errOut = quiet(t)
	if code := run([]string{"codec-server", "--listen", "127.0.0.1:0"}); code != 1 || !strings.Contains(errOut.String(), "COSCI_KEYS_FILE") {
		t.Errorf("codec-server without keys exited %d: %q", code, errOut)
	}
	t.Setenv("COSCI_KEYS_FILE", filepath.Join(t.TempDir(), "missing"))
	_, errOut = quiet(t)
	if code := run([]string{"status", "some-session"}); code != 1 || !strings.Contains(errOut.String(), "COSCI_KEYS_FILE") {
		t.Errorf("a missing key file: exited %d, %q; want the error before anything is sent", code, errOut)
	}
}
