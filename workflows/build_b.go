//go:build cosci_build_b

package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"
)

// The changed workflow of the rolling-upgrade test's build B: each round it runs notes
// that it ran on build B. The change id names the round, so a session started on the
// build before, whose earlier rounds recorded no marker, takes the change from the first
// round it runs here.
func init() {
	beforeRound = func(ctx workflow.Context, s *supervisor) {
		if workflow.GetVersion(ctx, fmt.Sprintf("build-b-round-%d", s.Rounds+1), workflow.DefaultVersion, 1) == 1 {
			s.note(BuildBNote)
		}
	}
}

// BuildBNote is the note build B's rounds leave in the session's history.
const BuildBNote = "round run by build B"
