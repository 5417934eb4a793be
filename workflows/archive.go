package workflows

// Archiving a finished session: a workflow of its own, so Temporal allows it once.

import (
	"go.temporal.io/sdk/workflow"
)

// ArchiveSession marks a finished session archived in the session store. Its workflow id
// is ArchiveID(session), so Temporal refuses a second archive of the same session.
func ArchiveSession(ctx workflow.Context, in ArchiveInput) (string, error) {
	var path string
	actx := workflow.WithActivityOptions(ctx, storeOptions("archive "+in.SessionID))
	err := workflow.ExecuteActivity(actx, a.Archive, in).Get(ctx, &path)
	return path, err
}
