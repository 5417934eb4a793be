package workflows

import "go.temporal.io/sdk/workflow"

// versionCompute: the tournament's fits and the report run on ComputeQueue, bounded per
// worker, rather than beside the workflow tasks on TaskQueue. Sessions that started
// before keep TaskQueue.
const versionCompute = "compute-queue"

// computeOptions are storeOptions for an activity that uses the worker's CPU for long.
func (s *supervisor) computeOptions(summary string) workflow.ActivityOptions {
	o := storeOptions(summary)
	if s.compute {
		o.TaskQueue = ComputeQueue
	}
	return o
}
