package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/tools"
	"github.com/cosci-dev/cosci/workflows"
)

// catalogTimeout is how long starter waits for a worker to list its tools.
const catalogTimeout = 30 * time.Second

// catalog asks a worker for the tools it offers, through a short ToolCatalog workflow.
func catalog(ctx context.Context, c client.Client) (activities.Catalog, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	ctx, cancel := context.WithTimeout(ctx, catalogTimeout)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       "tool-catalog-" + hex.EncodeToString(b[:]),
		TaskQueue:                workflows.TaskQueue,
		StaticSummary:            "list the workers' tools",
		WorkflowExecutionTimeout: catalogTimeout,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, workflows.ToolCatalogWorkflow)
	if err != nil {
		return activities.Catalog{}, fmt.Errorf("cannot ask the workers for their tools: %w", explain(err, ""))
	}
	var cat activities.Catalog
	if err := run.Get(ctx, &cat); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return cat, fmt.Errorf("no worker listed its tools within %s: %s", catalogTimeout, startWorkerHint())
		}
		return cat, fmt.Errorf("the workers could not list their tools: %w", err)
	}
	return cat, nil
}

const toolsArgs = "[--json]"

// cmdTools lists the tools the workers offer, by server: what a session may name in --tools.
func cmdTools(ctx context.Context, args []string) error {
	fs := newFlagSet("tools", toolsArgs, "List the tools the workers offer, by server: the names a session's --tools takes (server.tool, or server.* for all of a server's).")
	asJSON := fs.Bool("json", false, "print the catalog as JSON")
	err := parseFlags(fs, args, "")
	return withTemporal(err, func(c client.Client, _ string) error {
		cat, err := catalog(ctx, c)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, cat)
		}
		if len(cat.Servers) == 0 {
			fmt.Fprintln(stdout, "The workers have no tool servers. Start them with --tools FILE (see the README, Grounding).")
			return nil
		}
		w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		for _, s := range cat.Servers {
			limits := fmt.Sprintf("timeout %s", s.Timeout)
			if s.Rate > 0 {
				limits = fmt.Sprintf("at most %g calls/s across the workers, %s", s.Rate, limits)
			}
			if s.Trust == tools.TrustExternal {
				limits += ", external"
			}
			if s.Approve {
				limits += ", every call waits for approval"
			}
			fmt.Fprintf(w, "%s\t(%s)\n", s.Server, limits)
			if s.Error != "" {
				fmt.Fprintf(w, "  does not answer:\t%s\n", printable(s.Error))
				continue
			}
			for _, t := range s.Tools {
				// The server's own words: escaped, a line of them.
				desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
				fmt.Fprintf(w, "  %s\t%s\n", printable(t.Name), printable(research.Shorten(desc, 120)))
			}
		}
		return w.Flush()
	})
}
