// Package session holds a research session's lifecycle: its states and the one table of
// transitions between them, the commands a scientist sends, the session's own event log and
// the snapshot a checkpoint writes. It has no Temporal import.
package session

import (
	"fmt"
	"slices"
)

// State is where a session is in its life.
type State string

const (
	Initializing  State = "initializing"
	Active        State = "active"
	Suspended     State = "suspended"
	Checkpointing State = "checkpointing"
	Terminating   State = "terminating"
	Completed     State = "completed"
	Failed        State = "failed"
)

// States lists every state, in lifecycle order.
var States = []State{Initializing, Active, Suspended, Checkpointing, Terminating, Completed, Failed}

// transitions is the one table of allowed moves. Everything that changes a session's state
// goes through Lifecycle, which consults it.
var transitions = map[State][]State{
	Initializing:  {Active, Terminating, Failed},
	Active:        {Suspended, Checkpointing, Terminating, Completed, Failed},
	Suspended:     {Active, Checkpointing, Terminating, Failed},
	Checkpointing: {Active, Suspended, Terminating, Failed},
	Terminating:   {Checkpointing, Completed, Failed},
	Completed:     {},
	Failed:        {},
}

// CanMove reports whether the table allows from -> to.
func CanMove(from, to State) bool { return slices.Contains(transitions[from], to) }

// Terminal reports whether nothing can follow s.
func (s State) Terminal() bool { return len(transitions[s]) == 0 }

// TransitionError is a refused command or move; its message names the current state. For
// a scientist's command that is the state that governs the session: during a checkpoint,
// the state it returns to.
type TransitionError struct {
	Command string
	State   State
	Hint    string
}

func (e *TransitionError) Error() string {
	msg := fmt.Sprintf("cannot %s: session is %s", e.Command, e.State)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Lifecycle is a session's state plus the one thing checkpointing needs to remember: the
// state to return to when the checkpoint is written. A scientist's suspend or resume that
// arrives during a checkpoint changes that return state instead of being refused.
type Lifecycle struct {
	State State `json:"state"`
	// After is the state a checkpoint returns to; set only while Checkpointing.
	After State `json:"after,omitempty"`
}

// New starts a lifecycle in Initializing.
func New() Lifecycle { return Lifecycle{State: Initializing} }

// Effective is the state that governs work: while a checkpoint is written it is the state
// the session returns to afterwards.
func (l Lifecycle) Effective() State {
	if l.State == Checkpointing {
		return l.After
	}
	return l.State
}

// move applies one transition from the table.
func (l *Lifecycle) move(command string, to State) error {
	if !CanMove(l.State, to) {
		return &TransitionError{Command: command, State: l.State}
	}
	l.State = to
	return nil
}

// Start moves an initializing session to active.
func (l *Lifecycle) Start() error { return l.move("start", Active) }

// Suspend pauses an active session (or one whose checkpoint returns to active).
func (l *Lifecycle) Suspend() error {
	return l.flip("suspend", Active, Suspended, "it is already suspended")
}

// Resume continues a suspended session.
func (l *Lifecycle) Resume() error {
	return l.flip("resume", Suspended, Active, "it is already running")
}

// flip moves a session that is in from (in effect) to to. During a checkpoint the move
// waits for the checkpoint's end (After); a session already in to is told so.
func (l *Lifecycle) flip(command string, from, to State, already string) error {
	switch l.Effective() {
	case from:
		if l.State == Checkpointing {
			l.After = to
			return nil
		}
		return l.move(command, to)
	case to:
		return &TransitionError{command, to, already}
	}
	return &TransitionError{Command: command, State: l.Effective()}
}

// Terminate asks a session to end gracefully: it finishes in-flight work, writes a final
// checkpoint and report, then completes.
func (l *Lifecycle) Terminate() error {
	if l.Effective() == Terminating {
		return &TransitionError{"terminate", Terminating, "it is already ending"}
	}
	if l.State == Checkpointing {
		l.After = Terminating
		return nil
	}
	return l.move("terminate", Terminating)
}

// CanSteer reports whether a command that changes the research (refine-goal, checkpoint)
// is accepted now.
func (l Lifecycle) CanSteer(command string) error {
	switch l.Effective() {
	case Active, Suspended:
		return nil
	}
	return &TransitionError{Command: command, State: l.Effective()}
}

// BeginCheckpoint enters Checkpointing, remembering where to return.
func (l *Lifecycle) BeginCheckpoint() error {
	from := l.State
	if err := l.move("checkpoint", Checkpointing); err != nil {
		return err
	}
	l.After = from
	return nil
}

// EndCheckpoint returns to the state the session should be in now.
func (l *Lifecycle) EndCheckpoint() error {
	if l.State != Checkpointing {
		return &TransitionError{Command: "finish a checkpoint", State: l.State}
	}
	to := l.After
	l.After = ""
	return l.move("finish a checkpoint", to)
}

// Complete ends the session successfully.
func (l *Lifecycle) Complete() error { return l.move("complete", Completed) }

// Fail ends the session with an error.
func (l *Lifecycle) Fail() error { return l.move("fail", Failed) }
