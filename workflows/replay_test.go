package workflows

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplay replays histories recorded from real sessions on the dev server. A change to
// the workflow that would break a running session fails here: such changes go behind
// workflow.GetVersion, and these histories must keep replaying.
//
// testdata/session-steered.json: 16 hypotheses, suspended by update, a malformed resume
// signal, refine-goal and checkpoint signals while suspended, resumed, then terminated.
// testdata/session-before-reshape.json: 14 hypotheses with the code just before workflows/
// was split by concern (commit c6a41aa): a scientist's hypothesis, feedback, suspend and
// resume by update, subagents; the reshape must not change what the workflow does.
// testdata/session-ledger.json and session-ledger-closing.json: the two runs of a
// 30-hypothesis session of the tournament-ledger version (the Tournament activity, ranking
// read back by pages): feedback, a scientist's hypothesis, suspend, refine-goal and resume
// by update, six subagents; its last run passed 1,000 events, so it closed in a run of its
// own, which continued as new from the first.
// testdata/session-fitted.json and session-fitted-closing.json: the same steering on the
// bradley-terry version (ratings fitted to every result, matches chosen at the top's
// boundary, top_k 5, debate_share 0.25), 30 hypotheses over two runs.
// testdata/session-store-faults.json: 24 hypotheses through both store faults of the
// store-faults version: the session's directories made immutable (chattr +i) until it
// suspended for an unusable store and resumed by itself once they were writable again,
// then a hypothesis record truncated until it suspended naming the record, repaired and
// resumed by hand.
// testdata/session-grounded.json: 10 hypotheses of the grounded version
// (scripts/record-grounded.sh): the literature server over testdata/library, tools
// literature.search and literature.fetch with every fetch waiting for approval; 29 tool
// calls, 21 answers by update (one approved, one rejected, one answered with the
// scientist's own result, the rest approved).
// testdata/session-tooltrust.json: 6 hypotheses of the tool-trust version
// (scripts/record-tooltrust.sh): the literature server marked trust: external in the tools
// file, so every call waits for the scientist and shows its whole arguments; 15 answers by
// update (one approved, one rejected, one answered with the scientist's own result, the
// rest approved).
// testdata/session-conversation.json: 16 hypotheses of the conversation version
// (scripts/record-conversation.sh): five asks by update (a question, "focus on microglia"
// confirmed, then confirmed again and refused, "pause" confirmed while running, a question
// while suspended, "resume" confirmed), the agents' later prompts carrying the remarks,
// then terminated.
// testdata/session-conversetools.json: 6 hypotheses of the converse-tools version
// (scripts/record-conversetools.sh): a grounded session whose fetches wait for approval,
// asked "What does the literature say about microglia?" (a search, then a fetch that is not
// made since it would wait, then the answer citing the search's hits) and a question about
// the session (one step, no call), then its waiting calls answered until it ended.
// testdata/session-needs.json: 8 hypotheses of the needs-memo, serial-checkpoints and
// trust-tool versions (scripts/record-needs.sh): a grounded session whose fetches wait, its
// needs memo upserted as calls wait and are answered; literature.fetch trusted, then
// untrusted; a refinement asked for and confirmed; its waiting calls answered until it
// ended. It fails to replay when the needs memo is taken away.
// testdata/session-packed.json and session-packed-closing.json: 12 hypotheses of the
// closing-run-sooner and packed-ranking versions (scripts/record-packed.sh), a feedback
// signal: its research run passed 100 events, so it closed in a run of its own, which
// read the ranking back in one packed page.
// Recorded with `temporal workflow show --workflow-id <id> [--run-id <run>] -o json`.
func TestReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata/ (%v)", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			history, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r := worker.NewWorkflowReplayer()
			Register(r)
			logger := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
			// The session's id names its subagents, so replay under the recorded id.
			id := history.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowId()
			opts := worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: id, RunID: "replay"}}
			if err := r.ReplayWorkflowHistoryWithOptions(logger, history, opts); err != nil {
				t.Fatalf("replaying %s: %v", file, err)
			}
		})
	}
}
