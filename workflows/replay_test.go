package workflows

import (
	"log/slog"
	"path/filepath"
	"testing"

	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
)

// TestReplay replays histories recorded from real sessions on the dev server. A change to
// the workflow that would break a running session fails here: such changes go behind
// workflow.GetVersion, and these histories must keep replaying.
//
// testdata/session-steered.json: 16 hypotheses, suspended by update, a malformed resume
// signal, refine-goal and checkpoint signals while suspended, resumed, then terminated.
// Recorded with `temporal workflow show --workflow-id <id> -o json`.
func TestReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata/ (%v)", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			Register(r)
			logger := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
			if err := r.ReplayWorkflowHistoryFromJSONFile(logger, file); err != nil {
				t.Fatalf("replaying %s: %v", file, err)
			}
		})
	}
}
