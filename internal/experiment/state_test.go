package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/session"
)

// TestTable walks every (from, to) pair: exactly the moves in the table are allowed.
func TestTable(t *testing.T) {
	allowed := map[[2]State]bool{}
	for _, m := range [][2]State{
		{Planned, Confirmed}, {Planned, Withdrawn},
		{Confirmed, Waiting}, {Confirmed, Withdrawn},
		{Waiting, Received}, {Waiting, Withdrawn},
		{Received, Analysed}, {Received, Waiting}, {Received, Withdrawn},
		{Analysed, Waiting}, {Analysed, Withdrawn},
	} {
		allowed[m] = true
	}
	for _, from := range States {
		for _, to := range States {
			if got, want := CanMove(from, to), allowed[[2]State{from, to}]; got != want {
				t.Errorf("CanMove(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
}

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func TestSteps(t *testing.T) {
	type step struct {
		name string
		do   func(*Experiment) error
	}
	data := func(d string, ev int64) step {
		return step{"receive " + d, func(e *Experiment) error { return e.Receive(Arrival{Data: d, Arrived: Mark{Event: ev}}) }}
	}
	var (
		confirm = step{"confirm", func(e *Experiment) error { return e.Confirm(Mark{Event: 5, Time: t0}) }}
		unfixed = step{"confirm unrecorded", func(e *Experiment) error { return e.Confirm(Mark{}) }}
		wait    = step{"wait", func(e *Experiment) error { return e.Wait(t0) }}
		receive = data("sha256:a", 9)
		again   = data("sha256:b", 12)
		same    = data("sha256:a", 14)
		analyse = step{"analyse", func(e *Experiment) error {
			return e.Analyse(Outcome{Effect: 1, Low: 0.5, High: 1.5}, Verdict{session.Supported, "ok"})
		}}
		retract  = step{"withdraw result", func(e *Experiment) error { return e.WithdrawResult("failed assay", t0.Add(time.Hour)) }}
		noReason = step{"withdraw result without reason", func(e *Experiment) error { return e.WithdrawResult(" ", t0) }}
		withdraw = step{"withdraw", func(e *Experiment) error { return e.Withdraw("the lab closed") }}
	)
	for _, c := range []struct {
		name      string
		steps     []step
		wantErr   string // from the last step; "" means it succeeds
		wantState State
	}{
		{"confirm", []step{confirm}, "", Confirmed},
		{"confirm needs its event", []step{unfixed}, "without the history event", Planned},
		{"wait", []step{confirm, wait}, "", Waiting},
		{"wait before confirming refused", []step{wait}, "cannot wait for the lab: experiment e-1 is planned", Planned},
		{"result before confirmation refused", []step{receive}, "cannot take a result: experiment e-1 is planned; confirm its plan first", Planned},
		{"result before waiting refused", []step{confirm, receive}, "cannot take a result: experiment e-1 is confirmed", Confirmed},
		{"result", []step{confirm, wait, receive}, "", Received},
		{"analysed", []step{confirm, wait, receive, analyse}, "", Analysed},
		{"analyse without a result refused", []step{confirm, wait, analyse}, "cannot record an analysis: experiment e-1 is waiting", Waiting},
		{"second result refused", []step{confirm, wait, receive, analyse, again}, "cannot take a second result: experiment e-1 is analysed; a result (sha256:a) stands: withdraw it with a reason first", Analysed},
		{"second result before analysis refused", []step{confirm, wait, receive, again}, "cannot take a second result", Received},
		{"withdrawn result: waits again", []step{confirm, wait, receive, analyse, retract}, "", Waiting},
		{"then a new result", []step{confirm, wait, receive, analyse, retract, again}, "", Received},
		{"the withdrawn data refused", []step{confirm, wait, receive, analyse, retract, same}, "result with this data was withdrawn (failed assay)", Waiting},
		{"withdraw a result needs a reason", []step{confirm, wait, receive, noReason}, "without a reason", Received},
		{"withdraw a result that is not there", []step{confirm, wait, retract}, "cannot withdraw a result: experiment e-1 is waiting; it has none", Waiting},
		{"withdraw the experiment", []step{confirm, wait, withdraw}, "", Withdrawn},
		{"withdraw twice refused", []step{withdraw, withdraw}, "cannot withdraw: experiment e-1 is withdrawn; it is already withdrawn", Withdrawn},
		{"result after withdrawal refused", []step{confirm, wait, withdraw, receive}, "cannot take a result: experiment e-1 is withdrawn", Withdrawn},
	} {
		e := New("e-1", "h-0007", samplePlan().Digest())
		var err error
		for i, s := range c.steps {
			err = s.do(&e)
			if i < len(c.steps)-1 && err != nil {
				t.Fatalf("%s: step %s: %v", c.name, s.name, err)
			}
		}
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v; want %q", c.name, err, c.wantErr)
		}
		if e.State != c.wantState {
			t.Errorf("%s: state %s; want %s", c.name, e.State, c.wantState)
		}
	}
}

// TestWithdrawKeepsTheRecord: a withdrawn result keeps its data, outcome and reason,
// counts for nothing, and the wait starts again from the withdrawal.
func TestWithdrawKeepsTheRecord(t *testing.T) {
	e := New("e-1", "h-0007", "sha256:p")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.Confirm(Mark{Event: 5}))
	must(e.Wait(t0))
	must(e.Receive(Arrival{Data: "sha256:a", Arrived: Mark{Event: 9}}))
	must(e.Analyse(Outcome{Effect: -1, Low: -2, High: -0.5}, Verdict{session.Refuted, "wrong side"}))
	if s := Standings(Results([]Experiment{e}))["h-0007"]; s != session.Refuted {
		t.Fatalf("standing %q before withdrawal", s)
	}
	must(e.WithdrawResult("failed assay", t0.Add(48*time.Hour)))
	rs := Results([]Experiment{e})
	if len(rs) != 1 || rs[0].Withdrawal != "failed assay" || rs[0].Data != "sha256:a" || rs[0].Outcome.Effect != -1 {
		t.Errorf("the withdrawn record: %+v", rs)
	}
	if s := Standings(rs)["h-0007"]; s != session.Untested {
		t.Errorf("standing %q after withdrawal; want none", s)
	}
	if !e.WaitingSince.Equal(t0.Add(48 * time.Hour)) {
		t.Errorf("waiting since %v; want the withdrawal's time", e.WaitingSince)
	}
}

func TestReminders(t *testing.T) {
	week := 7 * 24 * time.Hour
	e := New("e-1", "h-0007", "sha256:p")
	if _, ok := e.ReminderDue(week); ok {
		t.Error("a reminder due for a planned experiment")
	}
	_ = e.Confirm(Mark{Event: 3})
	_ = e.Wait(t0)
	for _, c := range []struct {
		now  time.Time
		sent bool
	}{
		{t0.Add(week - time.Second), false},
		{t0.Add(week), true},
		{t0.Add(week + time.Hour), false}, // the first sent; the next a week on
		{t0.Add(2*week - time.Second), false},
		{t0.Add(3 * week), true},
	} {
		if got := e.Remind(c.now, week); got != c.sent {
			t.Errorf("Remind at %v = %v; want %v", c.now.Sub(t0), got, c.sent)
		}
	}
	if due, _ := e.ReminderDue(week); !due.Equal(t0.Add(3 * week)) {
		t.Errorf("next due %v", due.Sub(t0))
	}
	if _, ok := e.ReminderDue(0); ok {
		t.Error("a reminder due with reminders off")
	}

	other := New("e-2", "h-0008", "sha256:q")
	_ = other.Confirm(Mark{Event: 4})
	_ = other.Wait(t0.Add(10 * 24 * time.Hour))
	w := WaitingForLab([]Experiment{e, other, New("e-3", "h-1", "sha256:r")}, t0.Add(18*24*time.Hour), week) // e-1 next due at 21 days, e-2 at 17
	if w.Experiments != 2 || !w.Since.Equal(t0) || w.Overdue != 1 {
		t.Errorf("WaitingForLab = %+v", w)
	}
	if got, want := w.Why(), "waiting for the lab: 2 experiments, since 2 Nov 2026, 1 overdue"; got != want {
		t.Errorf("Why = %q; want %q", got, want)
	}
	if (LabWait{}).Why() != "" {
		t.Error("nothing waits, yet Why says something")
	}
}
