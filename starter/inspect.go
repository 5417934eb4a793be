package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// query asks a session one query and decodes the answer into out.
func query(ctx context.Context, c client.Client, id, name string, out any, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, id, "", name, args...)
	if err != nil {
		return explain(err, id)
	}
	if err := v.Get(out); err != nil {
		return fmt.Errorf("session %s answered the %s query with something starter cannot read: %w", id, name, err)
	}
	return nil
}

// inspectFlags are the flags shared by the query commands.
type inspectFlags struct {
	json bool
	page workflows.Page
}

// parseInspect reads `starter NAME <id> [--json] [--offset N --limit N]`.
func parseInspect(name, summary string, paged bool, args []string) (string, inspectFlags, error) {
	var f inspectFlags
	argsUsage := "<session-id> [--json]"
	if paged {
		argsUsage = "<session-id> [--offset N] [--limit N] [--json]"
	}
	fs := newFlagSet(name, argsUsage, summary)
	fs.BoolVar(&f.json, "json", false, "print the raw answer as JSON")
	if paged {
		fs.IntVar(&f.page.Offset, "offset", 0, "skip this many items")
		fs.IntVar(&f.page.Limit, "limit", workflows.DefaultPageLimit, fmt.Sprintf("show at most this many items (at most %d)", workflows.MaxPageLimit))
	}
	id, err := sessionArg(fs, args)
	if err != nil {
		return "", f, err
	}
	switch {
	case f.page.Offset < 0:
		return "", f, usageErrorf("--offset is %d; it must not be negative", f.page.Offset)
	case paged && (f.page.Limit < 1 || f.page.Limit > workflows.MaxPageLimit):
		return "", f, usageErrorf("--limit is %d; it must be between 1 and %d", f.page.Limit, workflows.MaxPageLimit)
	}
	return id, f, nil
}

// inspector is a query command: parse, dial, query (or read the store when Temporal no
// longer keeps the session), print.
func inspector[T any](name, summary string, paged bool, render func(io.Writer, T) error) func(context.Context, []string) error {
	return func(ctx context.Context, args []string) error {
		return inspect(ctx, args, name, summary, paged, render)
	}
}

func inspect[T any](ctx context.Context, args []string, name, summary string, paged bool, render func(io.Writer, T) error) error {
	id, f, err := parseInspect(name, summary, paged, args)
	return withTemporal(err, func(c client.Client, _ string) error {
		var qargs []any
		if paged {
			qargs = []any{f.page}
		}
		var v T
		if err := query(ctx, c, id, name, &v, qargs...); isNotInTemporal(err) {
			if v, err = fromStore(ctx, id, err, storedAnswer[T](name, f.page, id)); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if h, ok := any(&v).(*workflows.HistoryView); ok {
			h.SessionID = id // whose signatures its lines check
		}
		if f.json {
			return printJSON(stdout, v)
		}
		return render(stdout, v)
	})
}

// The query commands: each asks the session one query and renders the answer.
var (
	cmdStatus   = inspector(workflows.QueryStatus, "Show a session's lifecycle state, scientist, goal and times.", false, renderStatus)
	cmdProgress = inspector(workflows.QueryProgress, "Show how far a session has come.", false, renderProgress)
	cmdState    = inspector(workflows.QueryState, "Show a session's goal, configuration, agents, usage and one page of its ranking.", true, renderState)
	cmdHistory  = inspector(workflows.QueryHistory, "Show one page of a session's own event log.", true, renderHistory)
)

// running reports whether the session's workflow is still open.
func running(ctx context.Context, c client.Client, id string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return false, explain(err, id)
	}
	return d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

// result waits for the session to end and returns what it returned.
func result(ctx context.Context, c client.Client, id string) (workflows.Result, error) {
	var r workflows.Result
	err := c.GetWorkflow(ctx, id, "").Get(ctx, &r)
	if err == nil {
		return r, nil
	}
	var ended *temporal.WorkflowExecutionError
	if errors.As(err, &ended) {
		cause := errors.Unwrap(ended)
		if cause == nil {
			cause = ended
		}
		return r, fmt.Errorf("session %s ended without a result: %v", id, cause)
	}
	return r, explain(err, id)
}

// awaitResult waits for the session to end and prints its result.
func awaitResult(ctx context.Context, c client.Client, namespace, id string) error {
	open, err := running(ctx, c, id)
	if err != nil {
		return err
	}
	if open {
		fmt.Fprintf(stderr, "waiting for session %s to end (Ctrl-C stops waiting, not the session)...\n", id)
	}
	r, err := result(ctx, c, id)
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "stopped waiting; session %s keeps running. Follow it with: starter watch %s\n", id, id)
		return nil
	}
	if err != nil {
		return err
	}
	return renderResult(stdout, r, uiLink(namespace, id))
}

func cmdResult(ctx context.Context, args []string) error {
	id, err := sessionArg(newFlagSet("result", "<session-id>", "Wait for a session to end and print its result."), args)
	return withTemporal(err, func(c client.Client, namespace string) error {
		return awaitResult(ctx, c, namespace, id)
	})
}

const reportArgs = "<session-id> [--html] [--out DIR] [--store S]"

func cmdReport(ctx context.Context, args []string) error {
	fs := newFlagSet("report", reportArgs, "Print the report an ended session wrote (Markdown; --html for the page), or with --out fetch every "+
		"artefact of it (report.md, report.json, report.html, elo.svg, bibliography.bib, bibliography.json) into a folder. "+
		"It reads the workers' session store (--store or COSCI_STORE: a directory, or a postgres:// URL), so a laptop needs no worker and Temporal may have forgotten the session.")
	asHTML := fs.Bool("html", false, "print the self-contained HTML report instead of the Markdown")
	out := fs.String("out", "", "write every artefact of the report into this folder (created if missing; the files are for this user alone, 0600)")
	id, err := sessionArg(fs, args)
	if err != nil {
		return err
	}
	// The store first: it holds every finished session's report, whatever Temporal keeps.
	if st, serr := openStore(ctx); serr == nil {
		defer st.Close()
		md, rerr := st.Report(ctx, id)
		switch {
		case rerr == nil:
			return writeReport(ctx, st, id, md, *asHTML, *out)
		case !errors.Is(rerr, iofs.ErrNotExist):
			return rerr
		}
	}
	return withTemporal(nil, func(c client.Client, _ string) error {
		open, err := running(ctx, c, id)
		switch {
		case isNotInTemporal(err):
			_, err := fromStore(ctx, id, err, func(ctx context.Context, st *store.Store) ([]byte, error) { return st.Report(ctx, id) })
			return err
		case err != nil:
			return err
		case open:
			return fmt.Errorf("session is still running; the report is written when it ends (follow it with: starter watch %s)", id)
		}
		// No store here (a directory on the worker's machine): the path the session reported.
		r, err := result(ctx, c, id)
		if err != nil {
			return err
		}
		if r.ReportPath == "" {
			return fmt.Errorf("session %s ended without writing a report", id)
		}
		if _, err := os.Stat(r.ReportPath); err != nil {
			fmt.Fprintln(stdout, r.ReportPath)
			fmt.Fprintf(stderr, "the report is not readable from this machine (%v); it is in the workers' session store at the place above (set --store or COSCI_STORE to read it)\n", unwrapPathError(err))
			return nil
		}
		st, err := openStoreAt(ctx, filepath.Dir(filepath.Dir(r.ReportPath)))
		if err != nil {
			return err
		}
		defer st.Close()
		text, err := st.Report(ctx, id) // through the store: it may be sealed
		if err != nil {
			return err
		}
		return writeReport(ctx, st, id, text, *asHTML, *out)
	})
}

// chartLine is how report.md embeds the chart: a file beside it, which a terminal has not.
var chartLine = "![Elo over time](" + report.ChartFile + ")"

// writePrivate writes a file for this user alone (0600), an existing one included, before
// any of data is in it: report artefacts are the research, decrypted.
func writePrivate(path string, data []byte) error {
	// O_NOFOLLOW: a link planted in a shared --out folder must not make the report
	// overwrite the file it points to.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeReport prints a report, or fetches its artefacts into a folder.
func writeReport(ctx context.Context, st *store.Store, id string, md []byte, asHTML bool, out string) error {
	if out != "" {
		if err := os.MkdirAll(out, 0o700); err != nil { // decrypted research: this user's alone
			return err
		}
		var missing []string
		for _, name := range report.Artefacts {
			data := md
			if name != report.MarkdownFile {
				b, err := st.File(ctx, id, name)
				if errors.Is(err, iofs.ErrNotExist) {
					missing = append(missing, name)
					continue
				}
				if err != nil {
					return err
				}
				data = b
			}
			path := filepath.Join(out, name)
			if err := writePrivate(path, data); err != nil {
				return err
			}
			fmt.Fprintln(stdout, path)
		}
		if len(missing) > 0 {
			fmt.Fprintf(stderr, "session %s has no %s (it was written by an earlier version of cosci)\n", id, strings.Join(missing, ", "))
		}
		return nil
	}
	if asHTML {
		page, err := st.File(ctx, id, report.HTMLFile)
		if errors.Is(err, iofs.ErrNotExist) {
			return fmt.Errorf("session %s has no HTML report (it was written by an earlier version of cosci); print the Markdown without --html", id)
		}
		if err != nil {
			return err
		}
		_, err = stdout.Write(page)
		return err
	}
	// On a terminal the chart is not beside the report: say how to get it.
	text := strings.Replace(string(md), chartLine, fmt.Sprintf("(The chart is %s in the session's store: fetch every artefact with starter report %s --out DIR, or read starter report %s --html.)", report.ChartFile, id, id), 1)
	_, err := io.WriteString(stdout, text)
	return err
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
