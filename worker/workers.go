package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/connection"
	"github.com/cosci-dev/cosci/internal/tools"
	"github.com/cosci-dev/cosci/workflows"
)

// ensureSearchAttributes registers the search attributes sessions need that the
// namespace lacks; a failure is logged, not fatal, since they may be there already.
func ensureSearchAttributes(logger *slog.Logger, c client.Client) {
	opts, err := connection.Options(nil)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	added, err := connection.EnsureSearchAttributes(ctx, c, opts.Namespace, workflows.SearchAttributes)
	cancel()
	switch {
	case err != nil:
		logger.Warn("search attributes not checked; sessions fail if one is missing", "error", err)
	case len(added) > 0:
		logger.Info("registered missing search attributes", "namespace", opts.Namespace, "added", strings.Join(added, ","))
	}
}

// workerSet is this process's workerSet: every one with the classifier, which gives every
// activity's failure its kind (a provider's, the store's), which the workflow acts on,
// and this build's place in the Worker Deployment.
type workerSet struct {
	c          client.Client
	classify   []interceptor.WorkerInterceptor
	deployment worker.DeploymentOptions
	started    []worker.Worker // the activity workerSet started, to stop
}

// newWorker is a worker on queue with what every worker of this process has.
func (ws *workerSet) newWorker(queue string, o worker.Options) worker.Worker {
	o.Interceptors, o.DeploymentOptions = ws.classify, ws.deployment
	return worker.New(ws.c, queue, o)
}

// start starts an activity worker, stopped by stop.
func (ws *workerSet) start(what string, w worker.Worker) error {
	if err := w.Start(); err != nil {
		return fmt.Errorf("cannot start the %s: %w", what, err)
	}
	ws.started = append(ws.started, w)
	return nil
}

// stop stops the activity workerSet started, the last started first.
func (ws *workerSet) stop() {
	for _, w := range slices.Backward(ws.started) {
		w.Stop()
	}
}

// startAll starts the activity workerSet: turns, compute and one per tool server, whose
// names it gives; and gives the sessions' worker, for the caller to run.
func (ws *workerSet) startAll(cfg *config, acts *activities.Activities, servers []tools.Server) (sessions worker.Worker, names []string, err error) {
	// Workflow tasks queue behind each other when many sessions run at once, and a query on a
	// session waits for its pending task: pollers scale with the backlog the server reports
	// (BENCHMARKS.md, "Queries under load").
	sessions = ws.newWorker(workflows.TaskQueue, worker.Options{
		WorkflowTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{}),
	})
	workflows.Register(sessions)
	// An import from a data folder runs on any sessions worker; its activity on the folder's.
	sessions.RegisterWorkflowWithOptions(activities.ImportLabData, workflow.RegisterOptions{Name: activities.ImportLabDataWorkflow, VersioningBehavior: workflow.VersioningBehaviorPinned})
	sessions.RegisterActivity(acts)

	turns := ws.newWorker(workflows.TurnsQueue, worker.Options{
		MaxConcurrentActivityExecutionSize: cfg.slots,
		TaskQueueActivitiesPerSecond:       cfg.rps,
	})
	turns.RegisterActivity(acts)
	if err := ws.start("turns worker", turns); err != nil {
		return nil, nil, err
	}

	// The CPU-heavy activities, at most --compute-slots at once: a worker full of sessions
	// that fit and report together keeps cores for their workflow tasks and queries.
	compute := ws.newWorker(workflows.ComputeQueue, worker.Options{MaxConcurrentActivityExecutionSize: cfg.computeSlots})
	compute.RegisterActivity(acts)
	if err := ws.start("compute worker", compute); err != nil {
		return nil, nil, err
	}

	// One worker per tool server, on the server's own queue, so its rate holds across
	// every worker of the deployment.
	for _, srv := range servers {
		w := ws.newWorker(workflows.ToolQueue(srv.Name), worker.Options{TaskQueueActivitiesPerSecond: srv.Rate})
		w.RegisterActivityWithOptions(acts.CallTool, activity.RegisterOptions{Name: "CallTool"})
		if err := ws.start("worker of tool server "+srv.Name, w); err != nil {
			return nil, nil, err
		}
		names = append(names, srv.Name)
	}
	return sessions, names, nil
}
