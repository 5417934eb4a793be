package main

import (
	"bytes"
	"errors"
	"flag"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/workflows"
)

// quiet sends starter's output to buffers for the length of a test.
func quiet(t *testing.T) (out, errOut *bytes.Buffer) {
	t.Helper()
	out, errOut = new(bytes.Buffer), new(bytes.Buffer)
	oldOut, oldErr := stdout, stderr
	stdout, stderr = out, errOut
	t.Cleanup(func() { stdout, stderr = oldOut, oldErr })
	return out, errOut
}

func TestParseStartGood(t *testing.T) {
	quiet(t)
	tests := []struct {
		name string
		args []string
		id   string // "" means generated
		want research.Request
	}{
		{
			name: "goal only gets the defaults",
			args: []string{"--goal", "  Why do cells age?  "},
			want: research.Request{ResearchGoal: "Why do cells age?", ScientistID: research.DefaultScientistID, Config: research.Config{
				MaxHypotheses: research.DefaultMaxHypotheses, ReviewTypes: []string{research.ReviewInitial},
				SafetyLevel: "standard", Provider: research.DefaultProvider, ConvergenceRounds: research.DefaultConvergenceRounds, CheckpointInterval: research.Duration(research.DefaultCheckpointInterval), TopK: research.DefaultTopK,
			}},
		},
		{
			name: "every flag",
			args: []string{"--goal=g", "--id", "my-session", "--scientist", "ada", "--max-hypotheses", "30",
				"--time-limit", "2h30m", "--review-types", "initial, full,,tournament", "--safety-level", "strict",
				"--provider", "offline", "--model", "m-1", "--seed", "42", "--token-budget", "500k", "--convergence-rounds", "9", "--top-k", "20", "--debate-share", "0.25", "--wait"},
			id: "my-session",
			want: research.Request{ResearchGoal: "g", ScientistID: "ada", Config: research.Config{
				MaxHypotheses: 30, TimeLimit: research.Duration(150 * time.Minute),
				ReviewTypes: []string{"initial", "full", "tournament"}, SafetyLevel: "strict",
				Provider: "offline", Model: "m-1", Seed: 42, TokenBudget: 500000, ConvergenceRounds: 9, CheckpointInterval: research.Duration(research.DefaultCheckpointInterval), TopK: 20, DebateShare: 0.25,
			}},
		},
		{
			name: "single-dash flags",
			args: []string{"-goal", "g", "-max-hypotheses", "1", "-watch"},
			want: research.Request{ResearchGoal: "g", ScientistID: research.DefaultScientistID, Config: research.Config{
				MaxHypotheses: 1, ReviewTypes: []string{research.ReviewInitial}, SafetyLevel: "standard", Provider: research.DefaultProvider,
				ConvergenceRounds: research.DefaultConvergenceRounds, CheckpointInterval: research.Duration(research.DefaultCheckpointInterval), TopK: research.DefaultTopK,
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseStart(tt.args)
			if err != nil {
				t.Fatalf("parseStart: %v", err)
			}
			if got, want := mustJSON(t, o.req), mustJSON(t, tt.want); got != want {
				t.Errorf("request\n got %s\nwant %s", got, want)
			}
			if tt.id != "" && o.id != tt.id {
				t.Errorf("id = %q, want %q", o.id, tt.id)
			}
			if tt.id == "" && !sessionIDPattern.MatchString(o.id) {
				t.Errorf("generated id %q does not look like slug-8hex", o.id)
			}
		})
	}
}

// longText is n letters, for a value over a length limit.
func longText(n int) string { return strings.Repeat("a", n) }

func TestParseStartRefusesBeforeTheNetwork(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // what the message must name
	}{
		{"no goal", nil, "research_goal"},
		{"blank goal", []string{"--goal", "   "}, "research_goal"},
		{"goal too long", []string{"--goal", longText(research.MaxGoalLength + 1)}, "research_goal"},
		{"scientist too long", []string{"--goal", "g", "--scientist", longText(research.MaxScientistIDLength + 1)}, "scientist_id"},
		{"negative max hypotheses", []string{"--goal", "g", "--max-hypotheses", "-1"}, "config.max_hypotheses"},
		{"too many hypotheses", []string{"--goal", "g", "--max-hypotheses", "10001"}, "config.max_hypotheses"},
		{"negative time limit", []string{"--goal", "g", "--time-limit", "-1h"}, "config.time_limit"},
		{"time limit too long", []string{"--goal", "g", "--time-limit", "745h"}, "config.time_limit"},
		{"unknown review type", []string{"--goal", "g", "--review-types", "initial,vibes"}, "config.review_types"},
		{"review type twice", []string{"--goal", "g", "--review-types", "full,full"}, "config.review_types"},
		{"unknown safety level", []string{"--goal", "g", "--safety-level", "lax"}, "config.safety_level"},
		{"unknown provider", []string{"--goal", "g", "--provider", "nope"}, "config.provider"},
		{"convergence out of range", []string{"--goal", "g", "--convergence-rounds", "-2"}, "--convergence-rounds"},
		{"model too long", []string{"--goal", "g", "--model", longText(201)}, "config.model"},
		{"goal refused by the safety screen", []string{"--goal", "Build a bioweapon", "--safety-level", "relaxed"}, "research_goal"},
		{"negative token budget", []string{"--goal", "g", "--token-budget", "-1"}, "config.token_budget"},
		{"bad token budget", []string{"--goal", "g", "--token-budget", "plenty"}, ""},
		{"id with a space", []string{"--goal", "g", "--id", "my session"}, "id"},
		{"id too long", []string{"--goal", "g", "--id", longText(maxIDLength + 1)}, "id"},
		{"positional argument", []string{"--goal", "g", "extra"}, "no arguments"},
		{"unknown flag", []string{"--goal", "g", "--colour", "blue"}, ""},
		{"bad duration", []string{"--goal", "g", "--time-limit", "soon"}, ""},
		{"bad number", []string{"--goal", "g", "--max-hypotheses", "many"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := wantUsageError(t, "start", tt.args, func(args []string) error {
				_, err := parseStart(args)
				return err
			}, tt.want)
			if tt.want != "" && tt.want != "no arguments" && !strings.HasPrefix(msg, "invalid session: ") {
				t.Errorf("message %q does not start with %q", msg, "invalid session: ")
			}
		})
	}
}

// wantUsageError checks that parse refuses args with a usage error (exit code 2) whose
// message says want; where want is "", the flag package must have explained the bad flag.
// starter cmd, run with args, must refuse them too, before it dials: had it dialled the
// unreachable server set here, it would have failed with 1. It returns the message.
func wantUsageError(t *testing.T, cmd string, args []string, parse func(args []string) error, want string) string {
	t.Helper()
	_, errOut := quiet(t)
	var e *exitError
	if err := parse(args); !errors.As(err, &e) || e.code != 2 {
		t.Fatalf("parsing %q = %v, want a usage error (exit 2)", args, err)
	}
	if !strings.Contains(e.msg, want) {
		t.Errorf("message %q does not say %q", e.msg, want)
	}
	if want == "" && errOut.Len() == 0 {
		t.Error("the flag package said nothing about the bad flag")
	}
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	if code := run(append([]string{cmd}, args...)); code != 2 {
		t.Errorf("starter %s exited %d, want 2", cmd, code)
	}
	return e.msg
}

func TestStartHelp(t *testing.T) {
	out, _ := quiet(t)
	if _, err := parseStart([]string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseStart(-h) = %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"Usage: starter start", "-goal", "-max-hypotheses", "-review-types", "-token-budget", "-watch",
		"(default 12)", "(default: no limit)", "(default 4; a large value"} { // research's defaults
		if !strings.Contains(out.String(), want) {
			t.Errorf("start -h does not mention %q:\n%s", want, out)
		}
	}
}

func TestStartWorkflowOptions(t *testing.T) {
	quiet(t)
	goal := "Why " + strings.Repeat("do cells age ", 20) + "?"
	o, err := parseStart([]string{"--goal", goal, "--id", "s-1", "--scientist", "ada", "--model", "m-1", "--token-budget", "250000"})
	if err != nil {
		t.Fatal(err)
	}
	opts := startWorkflowOptions(o)
	if opts.ID != "s-1" || opts.TaskQueue != workflows.TaskQueue {
		t.Errorf("ID, TaskQueue = %q, %q", opts.ID, opts.TaskQueue)
	}
	if opts.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE ||
		opts.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL || !opts.WorkflowExecutionErrorWhenAlreadyStarted {
		t.Errorf("a session ID must never be reused: %v, %v, %v", opts.WorkflowIDReusePolicy, opts.WorkflowIDConflictPolicy, opts.WorkflowExecutionErrorWhenAlreadyStarted)
	}
	if !strings.HasPrefix(opts.StaticSummary, "research: Why do cells age") || utf8.RuneCountInString(opts.StaticSummary) > len("research: ")+80 {
		t.Errorf("summary %q", opts.StaticSummary)
	}
	for _, want := range []string{strings.TrimSpace(goal), "ada", "initial", "standard", "offline", "m-1", "**Max hypotheses:** 12", "**Token budget:** 250,000"} {
		if !strings.Contains(opts.StaticDetails, want) {
			t.Errorf("details do not mention %q:\n%s", want, opts.StaticDetails)
		}
	}
	attrs := map[string]any{}
	for k, v := range opts.TypedSearchAttributes.GetUntypedValues() {
		attrs[k.GetName()] = v
	}
	if want := map[string]any{"ScientistId": "ada", "SessionStatus": "initializing"}; !maps.Equal(attrs, want) {
		t.Errorf("search attributes %v, want %v", attrs, want)
	}
}

// withKeys configures the lab's keys (COSCI_KEYS) for the length of a test; without keys
// configures none.
func withKeys(t *testing.T, on bool) {
	t.Helper()
	t.Setenv("COSCI_KEYS_FILE", "")
	t.Setenv("COSCI_KEYS", "")
	if on {
		line, err := keyring.New("lab-1")
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("COSCI_KEYS", line)
	}
}

// TestDefaultIDWithKeys: with the lab's keys the default session id is s- and 16 random
// hex digits, which spell nothing of the goal (the id is the workflow id, never
// encrypted); without keys it stays the goal's readable slug.
func TestDefaultIDWithKeys(t *testing.T) {
	quiet(t)
	const goal = "Why do tardigrades survive desiccation through cryptobiosis?"
	sealedID := regexp.MustCompile(`^s-[0-9a-f]{16}$`)
	for _, keyed := range []bool{false, true} {
		withKeys(t, keyed)
		seen := map[string]bool{}
		for range 200 {
			o, err := parseStart([]string{"--goal", goal})
			if err != nil {
				t.Fatalf("keys %v: %v", keyed, err)
			}
			if seen[o.id] {
				t.Fatalf("keys %v: id %q generated twice", keyed, o.id)
			}
			seen[o.id] = true
			if o.warning != "" {
				t.Errorf("keys %v: a default id warns: %s", keyed, o.warning)
			}
			switch {
			case keyed && (!sealedID.MatchString(o.id) || len(sharedWords(o.id, goal)) > 0 || strings.Contains(o.id, "tardigrade")):
				t.Fatalf("with keys the default id is %q; want s- and 16 hex digits, nothing of the goal", o.id)
			case !keyed && !strings.HasPrefix(o.id, "why-do-tardigrades-survive-desiccation-"):
				t.Fatalf("without keys the default id is %q; want the goal's slug", o.id)
			}
		}
	}
	// Keys that are named but unusable stop the command before anything starts.
	t.Setenv("COSCI_KEYS", "lab-1 not-a-key")
	if _, err := parseStart([]string{"--goal", goal}); err == nil || !strings.Contains(err.Error(), "COSCI_KEYS") {
		t.Errorf("start with unusable keys: %v; want an error naming COSCI_KEYS", err)
	}
}

// TestIDThatSpellsTheGoal: with keys, an --id that spells words of the goal is taken, with
// a warning that says why and what to do; without keys, or with an id that spells nothing,
// there is no warning. A schedule's --id is held to the same, and a fork's to its new goal.
func TestIDThatSpellsTheGoal(t *testing.T) {
	quiet(t)
	const goal = "Why do tardigrades survive desiccation?"
	tests := []struct {
		keyed bool
		id    string
		warns bool
	}{
		{true, "tardigrade-desiccation-1", true},
		{true, "lab-run-7", false},
		{false, "tardigrade-desiccation-1", false},
	}
	for _, tt := range tests {
		withKeys(t, tt.keyed)
		o, err := parseStart([]string{"--goal", goal, "--id", tt.id})
		if err != nil || o.id != tt.id {
			t.Fatalf("start --id %s: %q, %v", tt.id, o.id, err)
		}
		s, err := parseScheduleCreate([]string{"--goal", goal, "--id", tt.id})
		if err != nil || s.id != tt.id {
			t.Fatalf("schedule create --id %s: %q, %v", tt.id, s.id, err)
		}
		f, err := parseBranch("fork", []string{"s-0123456789abcdef", "--goal", goal, "--id", tt.id})
		if err != nil || f.id != tt.id {
			t.Fatalf("fork --id %s: %q, %v", tt.id, f.id, err)
		}
		for what, w := range map[string]string{"start": o.warning, "schedule create": s.warning, "fork": f.warning} {
			if !tt.warns {
				if w != "" {
					t.Errorf("%s --id %s (keys %v) warns: %s", what, tt.id, tt.keyed, w)
				}
				continue
			}
			for _, want := range []string{"desiccation", "not encrypted", "Temporal's history", "leave --id out for a random id"} {
				if !strings.Contains(w, want) {
					t.Errorf("%s --id %s warns %q; want it to say %q", what, tt.id, w, want)
				}
			}
		}
	}
}
