package workflows

// The tools a session may call, checked against what the workers offer: the starter asks
// for the workers' catalog before it starts a session (ToolCatalog, CheckTools), and the
// session asks again at its start (checkTools), where it also learns which servers want
// every call approved.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/research"
)

// checkTools refuses a session whose tools the workers do not offer, at its start rather
// than at a failed turn an hour later: it asks a worker for its catalog.
func (s *supervisor) checkTools(ctx workflow.Context) error {
	if len(s.req.Config.Tools) == 0 {
		return nil
	}
	var cat activities.Catalog
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             "check the session's tools against the workers' catalog",
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	if err := workflow.ExecuteActivity(actx, a.ToolCatalog).Get(ctx, &cat); err != nil {
		return fmt.Errorf("config.tools: the workers' tool catalog could not be read: %s", errorText(err))
	}
	if err := CheckTools(s.req.Config, cat); err != nil {
		return err
	}
	if since(ctx, versionToolTrust) {
		s.ApproveServers = approving(s.req.Config, cat)
		for _, srv := range s.ApproveServers {
			s.note(fmt.Sprintf("every call to the %s server waits for the scientist's approval (the workers' tools file asks for it)", srv))
		}
	}
	return nil
}

// CheckTools says whether a catalog offers every tool a configuration names; the starter
// runs it before it starts a session, the session again at its start.
func CheckTools(c research.Config, cat activities.Catalog) error {
	offered := map[string]bool{}
	servers := map[string]string{} // server -> why it has no tools ("" if it has)
	var names []string
	for _, srv := range cat.Servers {
		servers[srv.Server] = srv.Error
		for _, t := range srv.Tools {
			offered[t.Name] = true
			names = append(names, t.Name)
		}
	}
	for _, name := range c.Tools {
		server, tool, err := research.SplitTool(name)
		if err != nil {
			return &research.FieldError{Field: "config.tools", Problem: err.Error()}
		}
		why, ok := servers[server]
		switch {
		case !ok && len(cat.Servers) == 0:
			return &research.FieldError{Field: "config.tools", Problem: fmt.Sprintf("%q: the workers have no tool servers; start them with --tools FILE", name)}
		case !ok:
			return &research.FieldError{Field: "config.tools", Problem: fmt.Sprintf("%q: the workers have no tool server %q; they offer %s", name, server, strings.Join(names, ", "))}
		case why != "":
			return &research.FieldError{Field: "config.tools", Problem: fmt.Sprintf("%q: tool server %q does not answer: %s", name, server, why)}
		case tool != "*" && !offered[name]:
			return &research.FieldError{Field: "config.tools", Problem: fmt.Sprintf("%q is not a tool the workers offer; they offer %s", name, strings.Join(names, ", "))}
		}
	}
	return nil
}

// ToolCatalog is a short workflow that asks a worker for its tool catalog: `starter
// tools`, and `starter start --tools`, which checks the names before it starts a session.
func ToolCatalog(ctx workflow.Context) (activities.Catalog, error) {
	var cat activities.Catalog
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             "list the workers' tools",
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	err := workflow.ExecuteActivity(actx, a.ToolCatalog).Get(ctx, &cat)
	return cat, err
}

// approving is the servers among the session's tools whose every call waits for the
// scientist, as the catalog says (the tools file: an external server, unless it says
// approve: false), in the catalog's order.
func approving(c research.Config, cat activities.Catalog) []string {
	var out []string
	for _, srv := range cat.Servers {
		if srv.Approve && slices.ContainsFunc(c.Tools, func(name string) bool { return strings.HasPrefix(name, srv.Server+".") }) {
			out = append(out, srv.Server)
		}
	}
	return out
}
