package experiment

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// State is where an experiment is while the session waits for the lab.
type State string

const (
	Planned   State = "planned"   // the plan is proposed, not yet confirmed by the scientist
	Confirmed State = "confirmed" // the plan is fixed in the history: pre-registered
	Waiting   State = "waiting"   // waiting for the lab's result
	Received  State = "received"  // the result's data arrived; the registered analysis is due
	Analysed  State = "analysed"  // the registered analysis ran; the standing is known
	Withdrawn State = "withdrawn" // the experiment was called off, with a reason
)

// States lists every state, in an experiment's order.
var States = []State{Planned, Confirmed, Waiting, Received, Analysed, Withdrawn}

// transitions is the one table of allowed moves. Withdrawing a result (a failed assay)
// takes a received or analysed experiment back to waiting: its plan was fixed before any
// data, so it stays pre-registered for the lab's next result. A second result while one
// stands is refused, so that a result is never replaced silently: the scientist withdraws
// it, with its reason, first.
var transitions = map[State][]State{
	Planned:   {Confirmed, Withdrawn},
	Confirmed: {Waiting, Withdrawn},
	Waiting:   {Received, Withdrawn},
	Received:  {Analysed, Waiting, Withdrawn},
	Analysed:  {Waiting, Withdrawn},
	Withdrawn: {},
}

// CanMove reports whether the table allows from -> to.
func CanMove(from, to State) bool { return slices.Contains(transitions[from], to) }

// TransitionError is a refused move; its message names the experiment's state and, where
// there is one, what to do instead.
type TransitionError struct {
	Command    string
	Experiment string
	State      State
	Hint       string
}

func (e *TransitionError) Error() string {
	msg := fmt.Sprintf("cannot %s: experiment %s is %s", e.Command, e.Experiment, e.State)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Experiment is one experiment as the session keeps it: plain data, so the workflow can
// carry it across continue-as-new.
type Experiment struct {
	ID         string `json:"id"`
	Hypothesis string `json:"hypothesis"`
	State      State  `json:"state"`
	Plan       string `json:"plan"` // Plan.Digest
	// Confirmed is the history event that fixed the plan; WaitingSince when the session
	// began waiting for the lab, and Reminded how many reminders it has sent since.
	Confirmed    Mark      `json:"confirmed,omitzero"`
	WaitingSince time.Time `json:"waiting_since,omitzero"`
	Reminded     int       `json:"reminded,omitempty"`
	// Result is the standing result, if any; Withdrawn the results withdrawn, with why.
	Result    *Result  `json:"result,omitempty"`
	Withdrawn []Result `json:"withdrawn,omitempty"`
	// Reason is why the experiment was withdrawn, in Withdrawn state.
	Reason string `json:"reason,omitempty"`
}

// New is an experiment whose plan was proposed.
func New(id, hypothesis, plan string) Experiment {
	return Experiment{ID: id, Hypothesis: hypothesis, State: Planned, Plan: plan}
}

func (e *Experiment) move(command string, to State, hint string) error {
	if !CanMove(e.State, to) {
		return &TransitionError{command, e.ID, e.State, hint}
	}
	e.State = to
	return nil
}

// Confirm fixes the plan: at is the history event that recorded it.
func (e *Experiment) Confirm(at Mark) error {
	if at.Event <= 0 {
		return errors.New("cannot confirm a plan without the history event that records it")
	}
	if err := e.move("confirm the plan", Confirmed, ""); err != nil {
		return err
	}
	e.Confirmed = at
	return nil
}

// Wait starts waiting for the lab at since.
func (e *Experiment) Wait(since time.Time) error {
	if err := e.move("wait for the lab", Waiting, ""); err != nil {
		return err
	}
	e.WaitingSince, e.Reminded = since, 0
	return nil
}

// Receive takes a result's data. It is refused before the plan is confirmed (a result
// would come before its pre-registration), while another result stands, and for data
// withdrawn before.
func (e *Experiment) Receive(data Arrival) error {
	switch {
	case e.State == Planned:
		return &TransitionError{"take a result", e.ID, e.State, "confirm its plan first, so that it is registered before any data"}
	case e.Result != nil:
		return &TransitionError{"take a second result", e.ID, e.State, fmt.Sprintf("a result (%s) stands: withdraw it with a reason first", clip(e.Result.Data))}
	case data.Data == "" || data.Arrived.Event <= 0:
		return errors.New("cannot take a result without its data's digest and the history event that records it")
	}
	for _, w := range e.Withdrawn {
		if w.Data == data.Data {
			return fmt.Errorf("cannot take a result: experiment %s's result with this data was withdrawn (%s)", e.ID, w.Withdrawal)
		}
	}
	if err := e.move("take a result", Received, ""); err != nil {
		return err
	}
	e.Result = &Result{Experiment: e.ID, Hypothesis: e.Hypothesis, Data: data.Data, Arrived: data.Arrived}
	return nil
}

// Analyse records the registered analysis' outcome and verdict.
func (e *Experiment) Analyse(o Outcome, v Verdict) error {
	if err := e.move("record an analysis", Analysed, ""); err != nil {
		return err
	}
	e.Result.Outcome, e.Result.Standing, e.Result.Why = o, v.Standing, v.Why
	return nil
}

// WithdrawResult withdraws the standing result for reason (a failed assay, a mislabelled
// plate): it counts for nothing from then on, and the experiment waits again from at.
func (e *Experiment) WithdrawResult(reason string, at time.Time) error {
	if strings.TrimSpace(reason) == "" {
		return errors.New("cannot withdraw a result without a reason: say why (a failed assay, ...)")
	}
	if e.Result == nil {
		return &TransitionError{"withdraw a result", e.ID, e.State, "it has none"}
	}
	if err := e.move("withdraw a result", Waiting, ""); err != nil {
		return err
	}
	r := *e.Result
	r.Withdrawal = reason
	e.Withdrawn = append(e.Withdrawn, r)
	e.Result, e.WaitingSince, e.Reminded = nil, at, 0
	return nil
}

// Withdraw calls the experiment off for reason; a standing result is withdrawn with it.
func (e *Experiment) Withdraw(reason string) error {
	if strings.TrimSpace(reason) == "" {
		return errors.New("cannot withdraw an experiment without a reason")
	}
	if err := e.move("withdraw", Withdrawn, "it is already withdrawn"); err != nil {
		return err
	}
	if e.Result != nil {
		r := *e.Result
		r.Withdrawal = reason
		e.Withdrawn = append(e.Withdrawn, r)
		e.Result = nil
	}
	e.Reason = reason
	return nil
}

// ReminderDue says when the next reminder about a waiting experiment falls due: every
// after since it began waiting (0: never), the first at WaitingSince + after.
func (e Experiment) ReminderDue(after time.Duration) (time.Time, bool) {
	if e.State != Waiting || after <= 0 {
		return time.Time{}, false
	}
	return e.WaitingSince.Add(time.Duration(e.Reminded+1) * after), true
}

// Remind counts a reminder sent at now, if one was due; it reports whether one was.
func (e *Experiment) Remind(now time.Time, after time.Duration) bool {
	due, ok := e.ReminderDue(after)
	if !ok || now.Before(due) {
		return false
	}
	e.Reminded++
	return true
}

// LabWait is what a session waits for the lab for, for the needs memo, the desk and
// `starter status`.
type LabWait struct {
	Experiments int       `json:"experiments"`
	Since       time.Time `json:"since"`   // the longest wait's start
	Overdue     int       `json:"overdue"` // those whose reminder is due
}

// WaitingForLab sums up the waiting experiments at now, with reminders every after.
func WaitingForLab(exps []Experiment, now time.Time, after time.Duration) LabWait {
	var w LabWait
	for _, e := range exps {
		if e.State != Waiting {
			continue
		}
		w.Experiments++
		if w.Since.IsZero() || e.WaitingSince.Before(w.Since) {
			w.Since = e.WaitingSince
		}
		if due, ok := e.ReminderDue(after); ok && !now.Before(due) {
			w.Overdue++
		}
	}
	return w
}

// Why says it in a few words, "" when nothing waits.
func (w LabWait) Why() string {
	if w.Experiments == 0 {
		return ""
	}
	s := fmt.Sprintf("waiting for the lab: %d experiment", w.Experiments)
	if w.Experiments > 1 {
		s += "s"
	}
	s += ", since " + w.Since.UTC().Format("2 Jan 2006")
	if w.Overdue > 0 {
		s += fmt.Sprintf(", %d overdue", w.Overdue)
	}
	return s
}
