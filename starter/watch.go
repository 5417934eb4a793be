package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

const (
	pollEvery    = 500 * time.Millisecond
	pollTimeout  = 3 * time.Second
	lineInterval = time.Second // at most one line a second when stdout is not a terminal
)

func cmdWatch(ctx context.Context, args []string) error {
	id, err := sessionArg(newFlagSet("watch", "<session-id>", "Follow a session live until it ends, then print its result. Ctrl-C stops watching; the session keeps running."), args)
	return withTemporal(err, func(c client.Client, namespace string) error {
		return watch(ctx, c, namespace, id)
	})
}

// watch follows a session until it ends: it polls the progress query and shows it, while
// a goroutine waits for the workflow's result.
func watch(ctx context.Context, c client.Client, namespace, id string) error {
	type outcome struct {
		r   workflows.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := result(ctx, c, id)
		done <- outcome{r, err}
	}()

	d := newDisplay(stdout, id)
	w := &watcher{c: c, id: id, d: d}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if err := w.poll(ctx); err != nil {
			d.finish("", -1)
			return err
		}
		select {
		case <-ctx.Done():
			d.finish("", -1)
			fmt.Fprintf(stderr, "stopped watching; session %s keeps running. Watch again with: starter watch %s\n", id, id)
			return nil
		case o := <-done:
			if ctx.Err() != nil {
				continue // interrupted while waiting: reported above
			}
			if o.err != nil {
				d.finish("", -1)
				return o.err
			}
			_ = w.poll(ctx) // the final counts, which say what counted against max_hypotheses
			d.finish(string(o.r.State)+" · "+research.Shorten(o.r.StopReason, 50), o.r.Hypotheses)
			fmt.Fprintln(stdout)
			return renderResult(stdout, o.r, uiLink(namespace, id))
		case <-tick.C:
		}
	}
}

// watcher polls one session for a display.
type watcher struct {
	c      client.Client
	id     string
	d      display
	polls  int
	agents []workflows.AgentStat // from the last state query that answered
}

// agentsEvery is how often (in polls) watch asks the state query for the agents' turns:
// one hypothesis per page keeps it cheap.
const agentsEvery = 2

// poll asks for the session's progress once (and, every agentsEvery polls, its agents'
// turns) and shows it, or shows why there is none. Only a session that does not exist
// stops the watch.
func (w *watcher) poll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	var p session.Progress
	v, err := w.c.QueryWorkflow(ctx, w.id, "", workflows.QueryProgress)
	if err == nil {
		err = v.Get(&p)
	}
	var notFound *serviceerror.NotFound
	switch {
	case err == nil:
		if w.polls%agentsEvery == 0 {
			w.refreshAgents(ctx)
		}
		w.polls++
		w.d.show(p, w.agents)
	case errors.As(err, &notFound):
		return explain(err, w.id)
	case ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		// interrupted: watch says so
	case workerDown(err):
		w.d.note("no answer in time: " + startWorkerHint())
	default:
		w.d.note("cannot read progress: " + research.Shorten(explain(err, w.id).Error(), 60))
	}
	return nil
}

// refreshAgents reads the agents' turns from the state query; on any failure the last
// counts stay.
func (w *watcher) refreshAgents(ctx context.Context) {
	var sv workflows.StateView
	v, err := w.c.QueryWorkflow(ctx, w.id, "", workflows.QueryState, workflows.Page{Limit: 1})
	if err == nil && v.Get(&sv) == nil && len(sv.Agents) > 0 {
		w.agents = sv.Agents
	}
}

// display shows a watched session's progress.
type display interface {
	show(p session.Progress, agents []workflows.AgentStat)
	note(msg string)
	// finish shows the final state (when desc is not empty) and n hypotheses (when n >= 0).
	finish(desc string, n int)
}

// newDisplay draws a progress bar on a terminal, and plain lines anywhere else.
func newDisplay(w io.Writer, id string) display {
	raw := w
	if t, ok := w.(*terminal); ok {
		raw = t.w // the bar redraws itself with carriage returns; what it describes is escaped (printable)
	}
	if f, ok := raw.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return &barDisplay{w: raw, id: id}
		}
	}
	return &lineDisplay{w: w, id: id, now: time.Now}
}

// barDisplay is a progress bar of hypotheses generated against the maximum, with the rest
// in its description.
type barDisplay struct {
	w    io.Writer
	id   string
	bar  *progressbar.ProgressBar
	said string           // the last note printed before there was a bar
	last session.Progress // the last progress shown
}

func (d *barDisplay) show(p session.Progress, agents []workflows.AgentStat) {
	if d.bar == nil {
		d.bar = progressbar.NewOptions(max(p.MaxHypotheses, 1),
			progressbar.OptionSetWriter(d.w),
			progressbar.OptionSetDescription("hypotheses"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(24),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionShowDescriptionAtLineEnd(),
		)
	}
	if p.MaxHypotheses > 0 && p.MaxHypotheses != d.bar.GetMax() {
		d.bar.ChangeMax(p.MaxHypotheses)
	}
	// The bar fills with the hypotheses that count against max_hypotheses; the description
	// names the others (session.Progress.HypothesesText).
	d.last = p
	desc := progressDescription(d.id, p, agents)
	counted, added, inherited := p.Counts()
	if added+inherited > 0 {
		desc = p.HypothesesText() + " · " + desc
	}
	_ = d.bar.Set(counted)
	d.bar.Describe(printable(desc))
}

func (d *barDisplay) note(msg string) {
	if d.bar == nil {
		if msg != d.said {
			fmt.Fprintln(stderr, msg)
			d.said = msg
		}
		return
	}
	d.bar.Describe(printable(msg))
}

func (d *barDisplay) finish(desc string, n int) {
	if d.bar == nil {
		return
	}
	if n >= 0 {
		p := d.last
		p.HypothesesGenerated = n
		counted, _, _ := p.Counts()
		_ = d.bar.Set(counted)
	}
	if desc != "" {
		d.bar.Describe(printable(desc))
	}
	_ = d.bar.Exit()
	fmt.Fprintln(d.w)
}

// lineDisplay prints a line when something changes, at most once every lineInterval, for
// logs and pipes where a redrawn bar would be noise.
type lineDisplay struct {
	w   io.Writer
	id  string
	now func() time.Time

	shown   string    // what the last printed line said, elapsed time aside
	shownAt time.Time // when it was printed
	last    session.Progress
	seen    bool
}

func (d *lineDisplay) show(p session.Progress, agents []workflows.AgentStat) {
	d.last, d.seen = p, true
	d.emit(progressLine(d.id, session.Progress{
		HypothesesGenerated: p.HypothesesGenerated, MaxHypotheses: p.MaxHypotheses, Counted: p.Counted, Added: p.Added, Inherited: p.Inherited,
		ReviewsCompleted: p.ReviewsCompleted, MatchesPlayed: p.MatchesPlayed, State: p.State,
	}, agents), progressLine(d.id, p, agents), false)
}

func (d *lineDisplay) note(msg string) { d.emit(msg, msg, false) }

func (d *lineDisplay) finish(desc string, n int) {
	if desc == "" || !d.seen {
		return
	}
	p := d.last
	if n >= 0 {
		p.HypothesesGenerated = n
	}
	line := fmt.Sprintf("hypotheses %s · %s", p.HypothesesText(), desc)
	d.emit(line, line, true)
}

// emit prints line unless key is what was printed last, or a line was printed less than
// lineInterval ago (the next poll tries again).
func (d *lineDisplay) emit(key, line string, force bool) {
	now := d.now()
	if key == d.shown || !force && !d.shownAt.IsZero() && now.Sub(d.shownAt) < lineInterval {
		return
	}
	fmt.Fprintln(d.w, line)
	d.shown, d.shownAt = key, now
}
