package workflows

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/session"
)

// The scientist's commands, as updates and as signals, in a running session.

// TestUpdates drives every command through its update: valid ones are accepted with the new
// status, invalid transitions are rejected with a message naming the current state.
func TestUpdates(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	type step struct {
		at      time.Duration
		name    string
		arg     any
		want    session.State // state in the accepted status
		wantErr string
	}
	steps := []step{
		{2 * time.Second, Resume, nil, "", "cannot resume: session is active"},
		{3 * time.Second, Suspend, map[string]string{"reason": "lunch", "by": " ada\x1b\u202e\n"}, session.Suspended, ""},
		{4 * time.Second, Suspend, nil, "", "cannot suspend: session is suspended"},
		{5 * time.Second, Suspend, "not an object", "", "suspend takes a JSON object"},
		{6 * time.Second, RefineGoal, map[string]string{"focus": "microglia"}, session.Suspended, ""},
		{7 * time.Second, RefineGoal, map[string]string{}, "", "refine-goal needs"},
		{8 * time.Second, Checkpoint, nil, session.Suspended, ""},
		{9 * time.Second, Resume, map[string]string{"typo": "x"}, "", `resume does not take "typo"`},
		{10 * time.Second, Resume, nil, session.Active, ""},
		{12 * time.Second, Terminate, map[string]string{"reason": "done for today"}, session.Terminating, ""},
		{13 * time.Second, Terminate, nil, "", "cannot terminate"},
		{14 * time.Second, RefineGoal, map[string]string{"goal": "another"}, "", "cannot refine-goal: session is terminating"},
	}
	for _, s := range steps {
		h.at(s.at, func() {
			h.update(s.name, s.arg, func(st Status, err error) {
				switch {
				case s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)):
					t.Errorf("at %s %s: error %v, want %q", s.at, s.name, err, s.wantErr)
				case s.wantErr == "" && err != nil:
					t.Errorf("at %s %s: rejected: %v", s.at, s.name, err)
				case s.wantErr == "" && st.State != s.want:
					t.Errorf("at %s %s: state %s, want %s", s.at, s.name, st.State, s.want)
				}
			})
		})
	}
	res := h.run(goal(200))
	if res.State != session.Completed || res.StopReason != "terminated by the scientist: done for today" {
		t.Fatalf("result %s %q", res.State, res.StopReason)
	}
	var accepted []string
	for _, e := range h.history() {
		if e.Kind == session.EventCommand && e.Via == "update" && *e.Accepted {
			accepted = append(accepted, e.Command)
			// The history records who sent each command, without control characters.
			if want := map[bool]string{true: "ada", false: ""}[e.Command == Suspend]; e.By != want {
				t.Errorf("%s recorded as by %q, want %q", e.Command, e.By, want)
			}
		}
	}
	// Rejected updates never reach the history: the validator refuses them before they are
	// written, which is what a validator is for.
	if want := []string{Suspend, RefineGoal, Checkpoint, Resume, Terminate}; !slices.Equal(accepted, want) {
		t.Errorf("accepted commands in history %v, want %v", accepted, want)
	}
}

// TestSignals sends the same commands as signals: accepted ones act, malformed or
// ill-timed ones are recorded as rejected, and none of them harms the session.
func TestSignals(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	signals := []struct {
		at   time.Duration
		name string
		arg  any
	}{
		{2 * time.Second, Resume, nil},                                    // not suspended: rejected
		{3 * time.Second, Suspend, "lunch"},                               // not an object: rejected
		{4 * time.Second, Suspend, map[string]any{"reason": 42}},          // wrong type: rejected
		{5 * time.Second, Suspend, nil},                                   // accepted
		{6 * time.Second, RefineGoal, map[string]string{"focus": "APOE"}}, // accepted
		{7 * time.Second, Resume, map[string]string{}},                    // accepted
		{8 * time.Second, Checkpoint, nil},                                // accepted
		{9 * time.Second, Terminate, map[string]string{"reason": "ok"}},   // accepted
	}
	for _, s := range signals {
		h.at(s.at, func() {
			h.env.SignalWorkflow(s.name, s.arg)
			if s.name == Terminate {
				h.env.SignalWorkflow(Suspend, nil) // terminating: rejected
			}
		})
	}
	res := h.run(goal(200))
	if res.State != session.Completed || res.StopReason != "terminated by the scientist: ok" {
		t.Fatalf("result %s %q", res.State, res.StopReason)
	}
	type rec struct {
		cmd      string
		accepted bool
		detail   string
	}
	var got []rec
	for _, e := range h.history() {
		if e.Kind == session.EventCommand {
			got = append(got, rec{e.Command, *e.Accepted, e.Detail})
		}
	}
	want := []rec{
		{Resume, false, "cannot resume: session is active; it is already running"},
		{Suspend, false, `suspend takes a JSON object such as {"reason": "..."}, not "lunch"`},
		{Suspend, false, `suspend: "reason" must be a string`},
		{Suspend, true, ""},
		{RefineGoal, true, "goal: (unchanged); focus: APOE"},
		{Resume, true, ""},
		{Checkpoint, true, ""},
		{Terminate, true, "ok"},
		{Suspend, false, "cannot suspend: session is terminating"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("commands in history:\n got %v\nwant %v", got, want)
	}
}

// TestSuspendPausesTurns: while suspended no provider turn starts (in-flight ones finish),
// every query answers, and resume carries on where the session stopped.
func TestSuspendPausesTurns(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	var suspendedAt time.Duration
	h.at(2500*time.Millisecond, func() {
		h.mustUpdate(Suspend, map[string]string{"reason": "reading"})
		suspendedAt = 2500 * time.Millisecond
	})
	h.at(30*time.Second, func() {
		if st := query[Status](h, QueryStatus); st.State != session.Suspended || st.Reason != "reading" {
			t.Errorf("status while suspended: %+v", st)
		}
		p := query[session.Progress](h, QueryProgress)
		if p.State != session.Suspended || p.HypothesesGenerated == 0 {
			t.Errorf("progress while suspended: %+v", p)
		}
		if v := query[StateView](h, QueryState, Page{Limit: 2}); len(v.Hypotheses) != 2 || v.Total != p.HypothesesGenerated || v.Limit != 2 {
			t.Errorf("state page while suspended: %d entries, total %d, limit %d", len(v.Hypotheses), v.Total, v.Limit)
		}
		if v := query[HistoryView](h, QueryHistory); v.Total == 0 || len(v.Events) == 0 {
			t.Errorf("history while suspended: %+v", v)
		}
	})
	h.at(60*time.Second, func() {
		h.mustUpdate(Resume, nil)
	})
	res := h.run(goal(12))
	if res.Hypotheses != 12 {
		t.Fatalf("%d hypotheses after resume, want 12", res.Hypotheses)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var before, after int
	for _, s := range h.starts {
		if !providerTurns[s.activity] {
			continue
		}
		switch {
		case s.at > suspendedAt && s.at < 60*time.Second:
			t.Errorf("%s started at %s, while suspended", s.activity, s.at)
		case s.at <= suspendedAt:
			before++
		default:
			after++
		}
	}
	if before == 0 || after == 0 {
		t.Errorf("turns before suspension %d, after resume %d: want both", before, after)
	}
}

// TestRefineGoalReachesNextPrompt: a refinement applies from the next turn on, in the
// activity input and in the prompt the model is shown.
func TestRefineGoalReachesNextPrompt(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	const newGoal = "Find druggable mechanisms that slow tau propagation through microglia"
	var refinedAt time.Duration = 3500 * time.Millisecond
	h.at(refinedAt, func() {
		h.mustUpdate(RefineGoal, map[string]string{"goal": newGoal, "focus": "TREM2 signalling"})
	})
	res := h.run(goal(12))

	h.mu.Lock()
	defer h.mu.Unlock()
	var old, refined int
	for _, s := range h.starts {
		if s.activity != "Generate" {
			continue
		}
		in := s.input
		if s.at < refinedAt {
			old++
			if in.Goal != goal(0).ResearchGoal || len(in.Focus) != 0 {
				t.Errorf("turn %s before the refinement saw goal %q focus %v", in.TurnID, in.Goal, in.Focus)
			}
			continue
		}
		refined++
		if in.Goal != newGoal || !slices.Equal(in.Focus, []string{"TREM2 signalling"}) {
			t.Errorf("turn %s after the refinement saw goal %q focus %v", in.TurnID, in.Goal, in.Focus)
		}
		turn, ok, err := h.store.Turn(t.Context(), res.SessionID, in.TurnID)
		if err != nil || !ok {
			t.Fatalf("turn %s not stored: %v", in.TurnID, err)
		}
		if !strings.Contains(turn.Prompt, newGoal) || !strings.Contains(turn.Prompt, "TREM2 signalling") {
			t.Errorf("prompt of %s lacks the refinement:\n%s", in.TurnID, turn.Prompt)
		}
	}
	if old == 0 || refined == 0 {
		t.Fatalf("generation turns before %d, after %d: want both", old, refined)
	}
	st := query[StateView](h, QueryState)
	if st.Goal != newGoal || len(st.Refinements) != 1 || st.Refinements[0].Focus != "TREM2 signalling" {
		t.Errorf("state after refinement: goal %q, refinements %+v", st.Goal, st.Refinements)
	}
}

// TestCheckpointWhileSuspendedBetweenSteps: a session suspended while a round's reviews
// run stops before its tournament; a checkpoint the scientist asks for then is written at
// once, while it stays suspended, not at the resume.
func TestCheckpointWhileSuspendedBetweenSteps(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	// Turns take 1 s each: the plan (0-1 s), the generations (1-2 s), proximity (2-3 s),
	// the reviews (3-4 s); the suspension arrives while the reviews run.
	h.at(3500*time.Millisecond, func() { h.mustUpdate(Suspend, map[string]string{"reason": "reading"}) })
	h.at(10*time.Second, func() { h.mustUpdate(Checkpoint, nil) })
	h.at(20*time.Second, func() {
		p := query[session.Progress](h, QueryProgress)
		if p.State != session.Suspended || p.Checkpoints != 1 || p.MatchesPlayed != 0 {
			t.Errorf("while suspended before the tournament: %s, %d checkpoints, %d matches; want suspended, the 1 asked for, none",
				p.State, p.Checkpoints, p.MatchesPlayed)
		}
	})
	h.at(30*time.Second, func() { h.mustUpdate(Resume, nil) })
	if res := h.run(goal(6)); res.Hypotheses != 6 {
		t.Fatalf("%d hypotheses after resume, want 6", res.Hypotheses)
	}
}
