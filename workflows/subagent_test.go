package workflows

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
)

// subagentEvents splits a session's log into its forks and the results merged back.
func subagentEvents(events []session.Event) (forks, results []session.Event) {
	for _, e := range events {
		if e.Kind != session.EventSubagent {
			continue
		}
		if e.At > 0 {
			results = append(results, e)
		} else {
			forks = append(forks, e)
		}
	}
	return forks, results
}

// TestSubagentsMergeOnceAtTheirForkPoint: the meta-review asks for delegations (the
// offline simulator: a verification every second round, an evolution line every third);
// each becomes a child workflow named {parent}-fork-{8 hex}, and each merges exactly one
// result into the parent's log, pointing at the event that forked it. An evolution line
// that beat its origin brings its hypothesis into the tournament.
func TestSubagentsMergeOnceAtTheirForkPoint(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	h.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "tau-1"})
	res := h.run(goal(40))
	events, err := h.store.Events(t.Context(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	forks, results := subagentEvents(events)
	if len(forks) < 2 {
		t.Fatalf("%d subagents forked; want several (events: %d)", len(forks), len(events))
	}
	name := regexp.MustCompile(`^tau-1-fork-[0-9a-f]{8}$`)
	tasks := map[string]bool{}
	for _, f := range forks {
		if !name.MatchString(f.Session) {
			t.Errorf("subagent id %q; want {parent}-fork-{8 hex}", f.Session)
		}
		tasks[strings.Fields(strings.SplitN(f.Detail, " to ", 2)[1])[0]] = true
		var merged []session.Event
		for _, r := range results {
			if r.Session == f.Session {
				merged = append(merged, r)
			}
		}
		if len(merged) != 1 || merged[0].At != f.Seq {
			t.Errorf("subagent %s (forked at event %d): %d results merged (%+v); want exactly one at its fork point", f.Session, f.Seq, len(merged), merged)
		}
	}
	if !tasks[research.DelegateVerify] || !tasks[research.DelegateEvolve] {
		t.Errorf("tasks delegated: %v; want both verify and evolve", tasks)
	}
	// The subagents wrote in sessions of their own, from a copy of the parent's context.
	for _, f := range forks {
		if _, err := h.store.Hypothesis(t.Context(), f.Session, f.Hypothesis); err != nil {
			t.Errorf("subagent %s has no copy of %s: %v", f.Session, f.Hypothesis, err)
		}
	}
	// A winning evolution line joins the tournament, unless the session already has its
	// max_hypotheses when the line's hypothesis would join: then it stays in the
	// subagent's session, and the parent says so.
	state := query[StateView](h, QueryState, Page{Limit: MaxPageLimit})
	imported := slices.ContainsFunc(state.Hypotheses, func(e session.Entry) bool { return e.Origin == "subagent" && len(e.Parents) == 1 })
	stayed := slices.ContainsFunc(events, func(e session.Event) bool { return strings.Contains(e.Detail, "this session has its 40 hypotheses") })
	// "the end of the line beat it", not "none beat it".
	lineWon := slices.ContainsFunc(results, func(e session.Event) bool { return strings.Contains(e.Detail, "the end of the line beat it") })
	if lineWon != (imported || stayed) {
		t.Errorf("an evolution line won: %v; a subagent's hypothesis joined the tournament: %v; one stayed in its subagent's session: %v", lineWon, imported, stayed)
	}
}

// TestFailedSubagentDoesNotFailTheParent: a subagent that fails is recorded, once, and
// the session finishes as usual.
func TestFailedSubagentDoesNotFailTheParent(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	h.env.OnWorkflow(SubagentWorkflow, mock.Anything, mock.Anything).Return(SubagentResult{}, errors.New("the subagent's provider is down"))
	res := h.run(goal(30))
	if res.State != session.Completed {
		t.Fatalf("parent ended %s", res.State)
	}
	events, err := h.store.Events(t.Context(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	forks, results := subagentEvents(events)
	if len(forks) == 0 || len(results) != len(forks) {
		t.Fatalf("%d forks, %d results", len(forks), len(results))
	}
	for _, r := range results {
		if !strings.Contains(r.Detail, "ended without a result: the subagent's provider is down") {
			t.Errorf("result %q", r.Detail)
		}
	}
}

// TestContinueAndFork: a session that continues a finished one starts from its final
// checkpoint, in the same conversation, with the ranking, the pairs that met and the
// plan, and goes on numbering hypotheses; a fork starts from any checkpoint.
func TestContinueAndFork(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	parent := newHarnessOn(t, st, time.Second, nil)
	parent.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "tau"})
	parent.at(3*time.Second, func() {
		talk(parent, Ask, AskRequest{Text: "Please focus on microglia.", By: "ada"}, func(_ AskAnswer, err error) {
			if err != nil {
				t.Errorf("ask tau: %v", err)
			}
		})
	})
	first := parent.run(goal(12))
	final, err := st.LatestCheckpoint(t.Context(), "tau")
	if err != nil {
		t.Fatal(err)
	}

	cont := newHarnessOn(t, st, time.Second, nil)
	cont.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "tau.2"})
	// tau has finished: the hand-over signal cannot reach it, so tau.2 takes its latest checkpoint.
	cont.env.OnSignalExternalWorkflow(mock.Anything, "tau", "", HandOver, mock.Anything).Return(errors.New("workflow execution already completed"))
	// The continued session's conversation goes on from the parent's: its answer reads it.
	cont.at(3*time.Second, func() {
		talk(cont, Ask, AskRequest{Text: "What did I ask for before?", By: "ada"}, func(ans AskAnswer, err error) {
			if err != nil || ans.Question.ID != "m-0001" {
				t.Errorf("ask tau.2: %+v, %v", ans.Question, err)
			}
			if v := query[ConversationView](cont, QueryConversation, Page{}); v.Earlier != "tau" {
				t.Errorf("tau.2's conversation continues %q; want tau", v.Earlier)
			}
		})
	})
	next := cont.run(research.Request{
		Config:  research.Config{MaxHypotheses: 8},
		Lineage: &lineage.Descriptor{Conversation: "tau", Seq: 2, Parent: "tau", Relation: lineage.Continue},
	})
	if next.Hypotheses < first.Hypotheses+8 {
		t.Errorf("continued session has %d hypotheses; want the parent's %d and 8 more", next.Hypotheses, first.Hypotheses)
	}
	snap, err := st.LatestCheckpoint(t.Context(), "tau.2")
	if err != nil {
		t.Fatal(err)
	}
	if turn, ok, err := st.Turn(t.Context(), "tau.2", "converse-m-0001"); err != nil || !ok || !strings.Contains(turn.Prompt, "Please focus on microglia.") {
		t.Errorf("tau.2's answer was not written with tau's conversation in its prompt (%v, %v)", ok, err)
	}
	if snap.Lineage == nil || snap.Lineage.Conversation != "tau" || snap.Lineage.Checkpoint != final.Seq || snap.Goal != final.Goal {
		t.Errorf("continued lineage %+v, goal %q; want conversation tau from checkpoint %d", snap.Lineage, snap.Goal, final.Seq)
	}
	if len(snap.Results) <= len(final.Results) || !slices.Equal(snap.Results[:len(final.Results)], final.Results) || snap.Plan != final.Plan {
		t.Errorf("continued with %d results (parent %d), plan %q; want the parent's results and more", len(snap.Results), len(final.Results), snap.Plan)
	}
	checkFitted(t, snap) // the continued session's ratings are fitted to the parent's results too
	for _, e := range final.Hypotheses {
		if _, err := st.Hypothesis(t.Context(), "tau.2", e.ID); err != nil {
			t.Errorf("tau.2 cannot read the parent's %s: %v", e.ID, err)
		}
	}
	if snap.NextID <= final.NextID {
		t.Errorf("ids restarted: next id %d after the parent's %d", snap.NextID, final.NextID)
	}

	fork := newHarnessOn(t, st, time.Second, nil)
	fork.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "tau-fork-00000001"})
	forked := fork.run(research.Request{
		ResearchGoal: "Find druggable mechanisms that slow tau propagation in astrocytes",
		Config:       research.Config{MaxHypotheses: 4},
		Lineage:      &lineage.Descriptor{Parent: "tau", Relation: lineage.Fork, Checkpoint: 1},
	})
	first1, err := st.Checkpoint(t.Context(), "tau", 1)
	if err != nil {
		t.Fatal(err)
	}
	fsnap, err := st.LatestCheckpoint(t.Context(), "tau-fork-00000001")
	if err != nil {
		t.Fatal(err)
	}
	if fsnap.Lineage.Conversation != "tau-fork-00000001" || fsnap.Lineage.Checkpoint != 1 {
		t.Errorf("fork lineage %+v; want a conversation of its own from checkpoint 1", fsnap.Lineage)
	}
	if forked.Hypotheses < len(first1.Hypotheses)+4 || len(fsnap.Refinements) == 0 || !strings.Contains(fsnap.Goal, "astrocytes") {
		t.Errorf("fork: %d hypotheses from checkpoint 1's %d; goal %q, refinements %v", forked.Hypotheses, len(first1.Hypotheses), fsnap.Goal, fsnap.Refinements)
	}
}

// TestHandOver: a suspended session that a new one continues ends like a terminate and
// tells its successor the final checkpoint; the successor waits for it.
func TestHandOver(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	h.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "tau"})
	told := -1
	h.env.OnSignalExternalWorkflow(mock.Anything, "tau.2", "", HandedOver, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error { told = arg.(HandedOverNotice).Checkpoint; return nil })
	h.at(5*time.Second, func() { h.env.SignalWorkflow(Suspend, nil) })
	h.at(time.Minute, func() { h.env.SignalWorkflow(HandOver, HandOverRequest{Successor: "tau.2"}) })
	res := h.run(goal(100))
	if res.ContinuedAs != "tau.2" || res.StopReason != "terminated by the scientist: continued as tau.2" {
		t.Errorf("result %+v", res)
	}
	final, err := h.store.LatestCheckpoint(t.Context(), "tau")
	if err != nil {
		t.Fatal(err)
	}
	if told != final.Seq {
		t.Errorf("told the successor checkpoint %d; the final one is %d", told, final.Seq)
	}

	// The successor's side.
	succ := newHarnessOn(t, h.store, time.Second, nil)
	succ.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "tau.2"})
	succ.env.OnSignalExternalWorkflow(mock.Anything, "tau", "", HandOver, mock.Anything).Return(nil)
	succ.at(time.Minute, func() { succ.env.SignalWorkflow(HandedOver, HandedOverNotice{Session: "tau", Checkpoint: 1}) })
	next := succ.run(research.Request{Config: research.Config{MaxHypotheses: 4},
		Lineage: &lineage.Descriptor{Conversation: "tau", Seq: 2, Parent: "tau", Relation: lineage.Continue}})
	snap, err := h.store.LatestCheckpoint(t.Context(), next.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Lineage.Checkpoint != 1 {
		t.Errorf("successor started from checkpoint %d; want the one handed over, 1", snap.Lineage.Checkpoint)
	}
}

// TestCheckpointsAtAnInterval: besides one per round and one on request, a session whose
// rounds are long is checkpointed at its interval while the round runs; every checkpoint
// is a snapshot of its own in the store.
func TestCheckpointsAtAnInterval(t *testing.T) {
	const turn, interval = 20 * time.Second, time.Minute
	h := newHarness(t, turn, nil)
	req := goal(16)
	req.Config.CheckpointInterval = research.Duration(interval)
	res := h.run(req)
	events, err := h.store.Events(t.Context(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var times []time.Time
	byInterval := 0
	for _, e := range events {
		if e.Kind != session.EventCheckpoint || !strings.Contains(e.Detail, "written to") {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, e.Time)
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, at)
		if strings.Contains(e.Detail, "(interval)") {
			byInterval++
		}
	}
	if byInterval == 0 {
		t.Fatalf("no checkpoint at the interval among %d", len(times))
	}
	start, err := time.Parse(time.RFC3339Nano, events[0].Time)
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range times {
		prev := start
		if i > 0 {
			prev = times[i-1]
		}
		// A checkpoint waits for the turns in flight: at most one turn late.
		if gap := at.Sub(prev); gap > interval+turn {
			t.Errorf("checkpoint %d came %s after the previous one; the interval is %s", i+1, gap, interval)
		}
	}
	snaps, err := h.store.Checkpoints(t.Context(), res.SessionID)
	if err != nil || len(snaps) != len(times) {
		t.Errorf("%d checkpoints in the store, %d recorded in its log (%v)", len(snaps), len(times), err)
	}
	// The stored log ends where the session did.
	if last := events[len(events)-1]; last.Kind != session.EventTransition || last.To != string(session.Completed) {
		t.Errorf("the stored log ends with %+v; want the completion", last)
	}
}

// TestMessageFromAnotherSession: a message is recorded in the history and steers the next
// prompts; a long one is cut to its bound without splitting a character; a malformed one
// is recorded as rejected.
func TestMessageFromAnotherSession(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	long := strings.Repeat("€", 700) // 2,100 bytes: the cut falls inside a character
	h.at(5*time.Second, func() {
		h.env.SignalWorkflow(Message, SessionMessage{From: "review-1", Type: lineage.Cron, Text: long})
		h.env.SignalWorkflow(Message, "not an object")
	})
	h.run(goal(8))
	var got []session.Event
	rejected := false
	for _, e := range h.history() {
		if e.Kind == session.EventMessage {
			got = append(got, e)
		}
		if e.Kind == session.EventCommand && e.Command == Message && e.Accepted != nil && !*e.Accepted {
			rejected = true
		}
	}
	if len(got) != 1 || got[0].Session != "review-1" {
		t.Fatalf("messages recorded: %+v", got)
	}
	if d := got[0].Detail; !utf8.ValidString(d) || !strings.HasSuffix(d, "…") || len(d) > maxMessage+len("…") {
		t.Errorf("the long message was kept as %d bytes, valid UTF-8 %v", len(d), utf8.ValidString(d))
	}
	if !rejected {
		t.Error("the malformed message was not recorded as rejected")
	}
}
