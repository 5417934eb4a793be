package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/api/serviceerror"

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
		if c.name == "start" || c.name == "list" {
			continue
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
	tests := []struct {
		name    string
		args    []string
		want    map[string]string
		refused bool   // a usage error is expected...
		usage   string // ...whose message contains this
	}{
		{name: "suspend", args: []string{"s-1"}},
		{name: "suspend", args: []string{"s-1", "--reason", "lunch"}, want: map[string]string{"reason": "lunch"}},
		{name: "terminate", args: []string{"--reason", " enough ", "s-1"}, want: map[string]string{"reason": "enough"}},
		{name: "resume", args: []string{"s-1"}},
		{name: "checkpoint", args: []string{"s-1"}},
		{name: "refine-goal", args: []string{"s-1", "--focus", "persisters"}, want: map[string]string{"focus": "persisters"}},
		{name: "refine-goal", args: []string{"s-1", "--goal", "g2", "--focus", "f"}, want: map[string]string{"goal": "g2", "focus": "f"}},
		{name: "refine-goal", args: []string{"s-1"}, refused: true, usage: "needs --goal"},
		{name: "suspend", args: []string{"s-1", "--reason", strings.Repeat("x", 501)}, refused: true, usage: "reason is longer"},
		{name: "refine-goal", args: []string{"s-1", "--focus", strings.Repeat("x", 1001)}, refused: true, usage: "focus is"},
		{name: "resume", args: []string{"s-1", "--reason", "x"}, refused: true}, // the flag package explains
	}
	for _, tt := range tests {
		quiet(t)
		id, arg, err := parseCommand(tt.name, tt.args)
		var e *exitError
		switch {
		case tt.refused:
			if !errors.As(err, &e) || e.code != 2 || !strings.Contains(e.msg, tt.usage) {
				t.Errorf("%s %q: %v, want a usage error about %q", tt.name, tt.args, err, tt.usage)
			}
		case err != nil:
			t.Errorf("%s %q: %v", tt.name, tt.args, err)
		case id != "s-1" || fmt.Sprint(arg) != fmt.Sprint(tt.want) || (tt.want == nil) != (arg == nil):
			t.Errorf("%s %q = %q, %v; want s-1, %v", tt.name, tt.args, id, arg, tt.want)
		}
	}
}

func TestCommandOutcome(t *testing.T) {
	s := workflows.Status{SessionID: "s-1", State: "suspended"}
	if got := commandOutcome(workflows.Suspend, s); got != "session s-1 is now suspended (resume it with: starter resume s-1)" {
		t.Errorf("suspend: %q", got)
	}
	s.State = "active"
	if got := commandOutcome(workflows.Resume, s); got != "session s-1 is now active" {
		t.Errorf("resume: %q", got)
	}
}

func TestParseList(t *testing.T) {
	quiet(t)
	q, limit, err := parseList(nil)
	if err != nil || q != "WorkflowType='ResearchSession'" || limit != 20 {
		t.Errorf("list = %q, %d, %v", q, limit, err)
	}
	q, limit, err = parseList([]string{"--status", "suspended", "--limit", "5"})
	if err != nil || q != "WorkflowType='ResearchSession' AND SessionStatus='suspended'" || limit != 5 {
		t.Errorf("list --status suspended = %q, %d, %v", q, limit, err)
	}
	for _, args := range [][]string{{"--status", "asleep"}, {"--status", "x' OR '1'='1"}, {"--limit", "0"}, {"extra"}} {
		var e *exitError
		if _, _, err := parseList(args); !errors.As(err, &e) || e.code != 2 {
			t.Errorf("list %q: %v, want a usage error", args, err)
		}
	}
}

func TestExplain(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{serviceerror.NewNotFound("workflow not found for ID: s-1"), "no session s-1: list them with: starter list"},
		{fmt.Errorf("wrapped: %w", serviceerror.NewNotFound("sql: no rows")), "no session s-1: list them with: starter list"},
		{serviceerror.NewNotFound("workflow execution already completed"), "session s-1 has ended and takes no more commands"},
		{context.DeadlineExceeded, "session s-1 has no worker answering: start one with: make worker (or go run ./worker)"},
		{serviceerror.NewDeadlineExceeded("no poller seen for task queue recently, worker may be down"), "has no worker answering"},
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
