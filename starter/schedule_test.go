package main

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/workflows"
)

func TestParseScheduleCreate(t *testing.T) {
	quiet(t)
	defaults := research.Config{MaxHypotheses: research.DefaultMaxHypotheses, ReviewTypes: []string{research.ReviewInitial},
		SafetyLevel: "standard", Provider: research.DefaultProvider, ConvergenceRounds: research.DefaultConvergenceRounds, CheckpointInterval: research.Duration(research.DefaultCheckpointInterval), TopK: research.DefaultTopK}
	tests := []struct {
		name  string
		args  []string
		id    string // "" means generated
		every time.Duration
		want  research.Request
	}{
		{
			name: "a goal only: daily, with research's defaults", args: []string{"--goal", " CRISPR off-target effects "}, every: 24 * time.Hour,
			want: research.Request{ResearchGoal: "CRISPR off-target effects", ScientistID: research.DefaultScientistID, Config: defaults,
				Lineage: &lineage.Descriptor{Type: lineage.Cron}},
		},
		{
			name: "every flag", id: "weekly-crispr", every: 168 * time.Hour,
			args: []string{"--every", "168h", "--goal", "g", "--id", "weekly-crispr", "--scientist", "ada", "--max-hypotheses", "6", "--token-budget", "100k"},
			want: research.Request{ResearchGoal: "g", ScientistID: "ada", Config: func() research.Config {
				c := defaults
				c.MaxHypotheses, c.TokenBudget = 6, 100000
				return c
			}(), Lineage: &lineage.Descriptor{Type: lineage.Cron, Schedule: "weekly-crispr"}},
		},
		{
			name: "the shortest interval", args: []string{"--goal", "g", "--every", "1m"}, every: time.Minute,
			want: research.Request{ResearchGoal: "g", ScientistID: research.DefaultScientistID, Config: defaults, Lineage: &lineage.Descriptor{Type: lineage.Cron}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseScheduleCreate(tt.args)
			if err != nil {
				t.Fatalf("parseScheduleCreate: %v", err)
			}
			if tt.id == "" && !regexp.MustCompile(`^review-[0-9a-f]{8}$`).MatchString(o.id) {
				t.Errorf("generated id %q does not look like review-8hex", o.id)
			}
			if tt.id != "" && o.id != tt.id {
				t.Errorf("id = %q, want %q", o.id, tt.id)
			}
			if tt.want.Lineage.Schedule == "" {
				tt.want.Lineage.Schedule = o.id
			}
			if o.every != tt.every {
				t.Errorf("every = %s, want %s", o.every, tt.every)
			}
			if got, want := mustJSON(t, o.req), mustJSON(t, tt.want); got != want {
				t.Errorf("request\n got %s\nwant %s", got, want)
			}
			if err := o.req.Lineage.WithDefaults("x").Validate(); err != nil {
				t.Errorf("the session would refuse its lineage: %v", err)
			}
		})
	}
}

func TestParseScheduleCreateRefuses(t *testing.T) {
	tests := []struct {
		args []string
		want string // "": the flag package explains
	}{
		{nil, "research_goal"},
		{[]string{"--goal", "g", "--every", "30s"}, "--every is 30s; at least 1m0s"},
		{[]string{"--goal", "g", "--every", "0"}, "--every is 0s"},
		{[]string{"--goal", "g", "--every", "daily"}, ""},
		{[]string{"--goal", "Build a bioweapon"}, "safety screen"},
		{[]string{"--goal", "g", "--max-hypotheses", "-1"}, "--max-hypotheses"},
		{[]string{"--goal", "g", "--provider", "nope"}, "--provider"},
		{[]string{"--goal", "g", "--id", "my review"}, "--id"},
		{[]string{"--goal", "g", "extra"}, "no arguments"},
	}
	for _, tt := range tests {
		_, errOut := quiet(t)
		_, err := parseScheduleCreate(tt.args)
		var e *exitError
		if !errors.As(err, &e) || e.code != 2 || !strings.Contains(e.msg, tt.want) {
			t.Errorf("schedule create %q = %v, want a usage error about %q", tt.args, err, tt.want)
		}
		if tt.want == "" && errOut.Len() == 0 {
			t.Errorf("schedule create %q: the flag package said nothing", tt.args)
		}
	}
}

func TestScheduleCommandLine(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1") // had a command dialled, it would exit 1
	tests := []struct {
		args []string
		code int
		out  string // on stdout for help, else on stderr
	}{
		{[]string{"schedule"}, 2, "schedule needs a subcommand"},
		{[]string{"schedule", "frobnicate"}, 2, `no subcommand "frobnicate"`},
		{[]string{"schedule", "-h"}, 0, "Usage: starter schedule"},
		{[]string{"schedule", "create", "-h"}, 0, "-every"},
		{[]string{"schedule", "create", "--every", "10s", "--goal", "g"}, 2, "--every is 10s"},
		{[]string{"schedule", "list", "extra"}, 2, "takes no arguments"},
		{[]string{"schedule", "delete"}, 2, "schedule delete needs one schedule ID"},
		{[]string{"schedule", "trigger", "a", "b"}, 2, "schedule trigger needs one schedule ID"},
		{[]string{"schedule", "trigger", "-h"}, 0, "Usage: starter schedule trigger <schedule-id>"},
	}
	for _, tt := range tests {
		out, errOut := quiet(t)
		if code := run(tt.args); code != tt.code {
			t.Errorf("starter %q exited %d, want %d", tt.args, code, tt.code)
		}
		text := errOut.String()
		if tt.code == 0 {
			text = out.String()
		}
		if !strings.Contains(text, tt.out) {
			t.Errorf("starter %q said %q, want %q", tt.args, text, tt.out)
		}
	}
}

func TestScheduleCreateOptions(t *testing.T) {
	quiet(t)
	o, err := parseScheduleCreate([]string{"--goal", "CRISPR off-target effects", "--every", "36h", "--id", "crispr", "--scientist", "ada"})
	if err != nil {
		t.Fatal(err)
	}
	opts := scheduleCreateOptions(o)
	if opts.ID != "crispr" || opts.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_SKIP {
		t.Errorf("ID %q, overlap %v", opts.ID, opts.Overlap)
	}
	if len(opts.Spec.Intervals) != 1 || opts.Spec.Intervals[0].Every != 36*time.Hour || len(opts.Spec.Calendars)+len(opts.Spec.CronExpressions) > 0 {
		t.Errorf("spec %+v", opts.Spec)
	}
	a, ok := opts.Action.(*client.ScheduleWorkflowAction)
	if !ok {
		t.Fatalf("action %T", opts.Action)
	}
	if a.ID != "crispr" || a.Workflow != workflows.WorkflowType || a.TaskQueue != workflows.TaskQueue || len(a.Args) != 1 {
		t.Errorf("action %+v", a)
	}
	req := a.Args[0].(research.Request)
	if req.ResearchGoal != "CRISPR off-target effects" || *req.Lineage != (lineage.Descriptor{Type: lineage.Cron, Schedule: "crispr"}) {
		t.Errorf("request %+v, lineage %+v", req, req.Lineage)
	}
	if err := req.Validate(); err != nil {
		t.Errorf("each run would be refused: %v", err)
	}
	if !strings.HasPrefix(a.StaticSummary, "review: CRISPR") || !strings.Contains(opts.Note, "every 36h") {
		t.Errorf("summary %q, note %q", a.StaticSummary, opts.Note)
	}
}

func TestScheduleRows(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 5, 1, h, 0, 0, 0, time.UTC) }
	rows := []scheduleRow{
		scheduleRowOf(&client.ScheduleListEntry{
			ID:   "crispr",
			Spec: &client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 24 * time.Hour}}},
			RecentActions: []client.ScheduleActionResult{
				{ActualTime: at(1), StartWorkflowResult: &client.ScheduleWorkflowExecution{WorkflowID: "crispr-2026-05-01T01:00:00Z"}},
				{ActualTime: at(3), StartWorkflowResult: &client.ScheduleWorkflowExecution{WorkflowID: "crispr-2026-05-01T03:00:00Z"}},
				{ActualTime: at(2), StartWorkflowResult: &client.ScheduleWorkflowExecution{WorkflowID: "crispr-2026-05-01T02:00:00Z"}},
			},
			NextActionTimes: []time.Time{at(4), at(5)},
		}),
		scheduleRowOf(&client.ScheduleListEntry{ID: "fresh", Paused: true, Spec: &client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 90 * time.Minute}}}}),
		scheduleRowOf(&client.ScheduleListEntry{ID: "bare"}),
	}
	var b strings.Builder
	if err := renderSchedules(&b, rows); err != nil {
		t.Fatal(err)
	}
	want := `SCHEDULE  EVERY  NEXT RUN              LAST RUN              LAST SESSION
crispr    24h    2026-05-01 04:00:00Z  2026-05-01 03:00:00Z  crispr-2026-05-01T03:00:00Z
fresh     1h30m  paused                -                     -
bare      -      -                     -                     -
`
	if b.String() != want {
		t.Errorf("schedules:\n%s\nwant\n%s", b.String(), want)
	}
}

// fakeSchedules is a schedule client that remembers what it was asked.
type fakeSchedules struct {
	client.ScheduleClient
	created   []client.ScheduleOptions
	createErr error
	next      time.Time
}

func (f *fakeSchedules) Create(_ context.Context, o client.ScheduleOptions) (client.ScheduleHandle, error) {
	f.created = append(f.created, o)
	if f.createErr != nil {
		return nil, f.createErr
	}
	return fakeHandle{next: f.next}, nil
}

type fakeHandle struct {
	client.ScheduleHandle
	next time.Time
}

func (h fakeHandle) Describe(context.Context) (*client.ScheduleDescription, error) {
	return &client.ScheduleDescription{Info: client.ScheduleInfo{NextActionTimes: []time.Time{h.next}}}, nil
}

func TestCreateSchedule(t *testing.T) {
	out, errOut := quiet(t)
	o, err := parseScheduleCreate([]string{"--goal", "g", "--id", "crispr"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSchedules{next: time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)}
	if err := createSchedule(context.Background(), f, o); err != nil {
		t.Fatal(err)
	}
	if out.String() != "crispr\n" || !strings.Contains(errOut.String(), "a review every 24h; the first starts 2026-05-02 00:00:00Z (start one now with: starter schedule trigger crispr)") {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}
	if len(f.created) != 1 || f.created[0].ID != "crispr" {
		t.Errorf("created %+v", f.created)
	}
	for _, exists := range []error{temporal.ErrScheduleAlreadyRunning, serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", "")} {
		f.createErr = exists
		if err := createSchedule(context.Background(), f, o); err == nil || !strings.Contains(err.Error(), "schedule crispr already exists") {
			t.Errorf("create over %v: %v", exists, err)
		}
	}
}

func TestScheduleError(t *testing.T) {
	if got := scheduleError(serviceerror.NewNotFound("schedule not found"), "crispr", "delete").Error(); got != "no schedule crispr: list them with: starter schedule list" {
		t.Errorf("not found: %q", got)
	}
	if got := scheduleError(errors.New("boom"), "crispr", "trigger").Error(); got != "cannot trigger schedule crispr: boom" {
		t.Errorf("other: %q", got)
	}
}
