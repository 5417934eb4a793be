package main

// Schedules: a recurring review of a field. Each run is a cron session, started by a
// Temporal Schedule.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/workflows"
)

const (
	scheduleArgs       = "create|list|delete|trigger ..."
	scheduleCreateArgs = `--every 24h --goal "..." [--id NAME] [config flags]`
	// minEvery keeps a schedule from flooding the workers with sessions.
	minEvery     = time.Minute
	defaultEvery = 24 * time.Hour
)

const scheduleUsage = `Usage: starter schedule <subcommand> [arguments]

A schedule reviews a field again and again: every --every it starts a research session (a
cron session) on the same goal. A review still running when the next is due skips it.

Subcommands:
  create ` + scheduleCreateArgs + `
                            create a schedule and print its ID
  list                      list the schedules: every, next run, last run and session
  delete <schedule-id>      delete a schedule (the sessions it started stay)
  trigger <schedule-id>     start a review now

Run 'starter schedule <subcommand> -h' for its flags.
`

// scheduleOptions is a parsed `starter schedule create` command line.
type scheduleOptions struct {
	id      string
	every   time.Duration
	req     research.Request
	warning string // an --id that spells the goal in an encrypted deployment (idSpellsGoal)
}

// parseScheduleCreate reads `starter schedule create`. Like start it checks everything
// before the network: a schedule with a bad goal would fail at every run.
func parseScheduleCreate(args []string) (scheduleOptions, error) {
	fs := newFlagSet("schedule create", scheduleCreateArgs, "Create a schedule that starts a research session on the goal every --every. "+
		"Each session's ID is the schedule's ID and the time it was due. Prints the schedule's ID.")
	var (
		o  scheduleOptions
		cf configFlags
	)
	fs.StringVar(&o.req.ResearchGoal, "goal", "", "the research goal each review investigates (required)")
	fs.DurationVar(&o.every, "every", defaultEvery, "how often a review starts, e.g. 24h or 168h (at least "+minEvery.String()+")")
	fs.StringVar(&o.id, "id", "", "the schedule's ID (default: review- and 8 random hex digits)")
	fs.StringVar(&o.req.ScientistID, "scientist", "", "who asks (default "+research.DefaultScientistID+")")
	cf.register(fs, false)
	err := parseFlags(fs, args, `: give the goal with --goal "..."`)
	if err != nil {
		return o, err
	}
	if o.every < minEvery {
		return o, usageErrorf("invalid schedule: --every is %s; at least %s (e.g. 24h)", o.every, minEvery)
	}
	if o.req, err = cf.complete(o.req); err != nil {
		return o, err
	}
	o.id, o.warning, err = resolveID("schedule", o.id, o.req.ResearchGoal, func(bool) string { return "review-" + randomHex(4) })
	if err != nil {
		return o, err
	}
	o.req.Lineage = &lineage.Descriptor{Type: lineage.Cron, Schedule: o.id}
	return o, nil
}

// scheduleCreateOptions is the Temporal Schedule for o.
func scheduleCreateOptions(o scheduleOptions) client.ScheduleOptions {
	return client.ScheduleOptions{
		ID:   o.id,
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: o.every}}},
		Action: &client.ScheduleWorkflowAction{
			ID:            o.id, // Temporal appends the time each run was due
			Workflow:      workflows.WorkflowType,
			Args:          []any{o.req},
			TaskQueue:     workflows.TaskQueue,
			StaticSummary: "review: " + research.Shorten(o.req.ResearchGoal, 80),
			StaticDetails: staticDetails(o.req),
			Memo:          map[string]any{workflows.MemoGoal: o.req.ResearchGoal},
			TypedSearchAttributes: sessionAttributes(o.req,
				temporal.NewSearchAttributeKeyKeyword(workflows.AttrSessionType).ValueSet(string(lineage.Cron))),
		},
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, // a review still running skips the next
		Note:    "cosci: review every " + research.ShortDuration(o.every),
	}
}

// scheduleIDArg parses `starter schedule NAME <schedule-id>`.
func scheduleIDArg(name, summary string, args []string) (string, error) {
	fs := newFlagSet("schedule "+name, "<schedule-id>", summary)
	rest, err := parse(fs, args)
	if err != nil {
		return "", err
	}
	if len(rest) != 1 || strings.TrimSpace(rest[0]) == "" {
		return "", usageErrorf("schedule %s needs one schedule ID: starter schedule %s <schedule-id> (find them with: starter schedule list)", name, name)
	}
	return strings.TrimSpace(rest[0]), nil
}

func cmdSchedule(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageErrorf("schedule needs a subcommand: create, list, delete or trigger (see: starter schedule -h)")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, scheduleUsage)
		return flag.ErrHelp
	case "create":
		o, err := parseScheduleCreate(args)
		if err != nil {
			return err
		}
		return withSchedules(func(sc client.ScheduleClient) error { return createSchedule(ctx, sc, o) })
	case "list":
		fs := newFlagSet("schedule list", "", "List the schedules that start research sessions: how often, the next run, the last run and the session it started.")
		if err := parseFlags(fs, args, ""); err != nil {
			return err
		}
		return withSchedules(func(sc client.ScheduleClient) error { return listSchedules(ctx, sc) })
	case "delete":
		return onSchedule(ctx, "delete", "Delete a schedule: no more reviews start. The sessions it started stay.", args,
			func(ctx context.Context, h client.ScheduleHandle) error { return h.Delete(ctx) },
			"deleted schedule %s; the sessions it started stay (see them with: starter list)")
	case "trigger":
		return onSchedule(ctx, "trigger", "Start a review now, unless the last one is still running.", args,
			func(ctx context.Context, h client.ScheduleHandle) error {
				return h.Trigger(ctx, client.ScheduleTriggerOptions{})
			},
			"schedule %s triggered: a review session starts now, unless the last one is still running (see them with: starter list)")
	}
	return usageErrorf("schedule has no subcommand %q: use create, list, delete or trigger (see: starter schedule -h)", sub)
}

// onSchedule runs `starter schedule <sub> <id>` (summary is its -h): act on the schedule,
// then print done, whose %s is the schedule's ID.
func onSchedule(ctx context.Context, sub, summary string, args []string, act func(context.Context, client.ScheduleHandle) error, done string) error {
	id, err := scheduleIDArg(sub, summary, args)
	if err != nil {
		return err
	}
	return withSchedules(func(sc client.ScheduleClient) error {
		sctx, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		if err := act(sctx, sc.GetHandle(sctx, id)); err != nil {
			return scheduleError(err, id, sub)
		}
		fmt.Fprintf(stdout, done+"\n", id)
		return nil
	})
}

// withSchedules dials Temporal and runs f with its schedule client.
func withSchedules(f func(client.ScheduleClient) error) error {
	return withTemporal(nil, func(c client.Client, _ string) error { return f(c.ScheduleClient()) })
}

// scheduleError explains what went wrong with an existing schedule.
func scheduleError(err error, id, what string) error {
	if isNotFound(err) {
		return fmt.Errorf("no schedule %s: list them with: starter schedule list", id)
	}
	return fmt.Errorf("cannot %s schedule %s: %w", what, id, explain(err, id))
}

// createSchedule creates the schedule and says when its first review runs.
func createSchedule(ctx context.Context, sc client.ScheduleClient, o scheduleOptions) error {
	if o.warning != "" {
		fmt.Fprintln(stderr, "warning:", o.warning)
	}
	sctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	h, err := sc.Create(sctx, scheduleCreateOptions(o))
	switch {
	case errors.Is(err, temporal.ErrScheduleAlreadyRunning) || alreadyStarted(err):
		return fmt.Errorf("schedule %s already exists: pick another --id, or delete it first with: starter schedule delete %s", o.id, o.id)
	case err != nil:
		return fmt.Errorf("cannot create schedule %s: %w", o.id, explain(err, o.id))
	}
	fmt.Fprintln(stdout, o.id)
	next := "at the next multiple of " + research.ShortDuration(o.every)
	if d, err := h.Describe(sctx); err == nil && len(d.Info.NextActionTimes) > 0 {
		next = d.Info.NextActionTimes[0].UTC().Format("2006-01-02 15:04:05Z")
	}
	fmt.Fprintf(stderr, "a review every %s; the first starts %s (start one now with: starter schedule trigger %s)\n", research.ShortDuration(o.every), next, o.id)
	return nil
}

// listSchedules prints the schedules that start research sessions.
func listSchedules(ctx context.Context, sc client.ScheduleClient) error {
	lctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	it, err := sc.List(lctx, client.ScheduleListOptions{PageSize: 1000})
	if err != nil {
		return fmt.Errorf("cannot list schedules: %w", explain(err, ""))
	}
	var rows []scheduleRow
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return fmt.Errorf("cannot list schedules: %w", explain(err, ""))
		}
		if e.WorkflowType.Name != "" && e.WorkflowType.Name != workflows.WorkflowType {
			continue // not a cosci review
		}
		rows = append(rows, scheduleRowOf(e))
	}
	if len(rows) == 0 {
		fmt.Fprintln(stdout, `no schedules; create one with: starter schedule create --every 24h --goal "..."`)
		return nil
	}
	return renderSchedules(stdout, rows)
}

// scheduleRow is one schedule in `starter schedule list`.
type scheduleRow struct {
	ID          string
	Every       string
	Paused      bool
	Next        time.Time
	LastRun     time.Time
	LastSession string
}

// scheduleRowOf reads a schedule list entry into a row.
func scheduleRowOf(e *client.ScheduleListEntry) scheduleRow {
	r := scheduleRow{ID: e.ID, Paused: e.Paused}
	if s := e.Spec; s != nil {
		var every []string
		for _, iv := range s.Intervals {
			every = append(every, research.ShortDuration(iv.Every))
		}
		every = append(every, s.CronExpressions...)
		if len(s.Calendars) > 0 {
			every = append(every, "calendar")
		}
		r.Every = strings.Join(every, ", ")
	}
	if len(e.NextActionTimes) > 0 {
		r.Next = e.NextActionTimes[0]
	}
	for _, a := range e.RecentActions {
		if !a.ActualTime.Before(r.LastRun) {
			r.LastRun = a.ActualTime
			r.LastSession = ""
			if a.StartWorkflowResult != nil {
				r.LastSession = a.StartWorkflowResult.WorkflowID
			}
		}
	}
	return r
}

func renderSchedules(w io.Writer, rows []scheduleRow) error {
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	}
	t := newTable(w)
	fmt.Fprintln(t, "SCHEDULE\tEVERY\tNEXT RUN\tLAST RUN\tLAST SESSION")
	for _, r := range rows {
		next := stamp(r.Next)
		if r.Paused {
			next = "paused"
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", r.ID, or(r.Every, "-"), next, stamp(r.LastRun), or(r.LastSession, "-"))
	}
	return t.Flush()
}
