package workflows

import "go.temporal.io/sdk/workflow"

// Registration of the workflows on a worker.

// Versioning says how each workflow type moves between worker builds when the workers run
// as a Worker Deployment (the worker's --deployment and --build-id). A research session
// runs for days, so it moves to the current build at its next workflow task (AutoUpgrade):
// what changes inside it is written behind workflow.GetVersion, and the recorded
// histories keep replaying (replay_test.go). The other workflows last minutes and finish
// on the build that started them (Pinned), which a build being retired waits for.
// Temporal 1.29 cannot move a pinned run to a new build at continue-as-new, which is why
// no workflow that continues as new is pinned.
var Versioning = map[string]workflow.VersioningBehavior{
	WorkflowType:     workflow.VersioningBehaviorAutoUpgrade,
	"Subagent":       workflow.VersioningBehaviorPinned,
	"Heartbeat":      workflow.VersioningBehaviorPinned,
	"ArchiveSession": workflow.VersioningBehaviorPinned,
	"ToolCatalog":    workflow.VersioningBehaviorPinned,
	// A conversation with an ended session lasts minutes.
	EndedConversationWorkflow: workflow.VersioningBehaviorPinned,
}

// Register registers every workflow of a cosci worker, each with its versioning behaviour
// (Versioning), which a worker outside a deployment ignores.
func Register(r interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
}) {
	for name, fn := range map[string]any{
		WorkflowType: ResearchSession, "Subagent": Subagent, "Heartbeat": Heartbeat,
		"ArchiveSession": ArchiveSession, "ToolCatalog": ToolCatalog, EndedConversationWorkflow: EndedConversation,
	} {
		r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name, VersioningBehavior: Versioning[name]})
	}
}

// since says whether this run takes the path of change, the id of a change written behind
// workflow.GetVersion: a run that passed this point before the change keeps the old path
// (its history says so), every other takes the new one.
func since(ctx workflow.Context, change string) bool {
	return workflow.GetVersion(ctx, change, workflow.DefaultVersion, 1) >= 1
}

// beforeRound is what a build changes at the start of each round: nothing in cosci's own
// builds. The rolling-upgrade test (e2e/upgrade_test.go) builds a "build B" with the build
// tag cosci_build_b, whose workflow differs here, as a real change would: behind
// workflow.GetVersion, so that sessions started on the build before it move to it.
var beforeRound func(ctx workflow.Context, s *supervisor)
