package testcheck

import (
	"fmt"
	"testing"
)

// Recorder is a testing.TB that keeps the failures a check reports with Error or Errorf
// instead of failing the test, for the tests of checks (this package's, modetest's,
// doccheck's). Anything else goes to the test it wraps.
type Recorder struct {
	testing.TB
	Failures []string
}

// NewRecorder wraps t.
func NewRecorder(t testing.TB) *Recorder { return &Recorder{TB: t} }

func (r *Recorder) Helper() {}

func (r *Recorder) Error(args ...any) { r.Failures = append(r.Failures, fmt.Sprint(args...)) }

func (r *Recorder) Errorf(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}
