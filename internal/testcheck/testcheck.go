// Package testcheck holds the checks table-driven tests share: whether a case that wants
// an error got the one it wants, or a case that wants none got none. Its own tests also
// hold the whole module to the developer guide's bar of no non-test file over 500 lines
// (length_test.go) and no function outside tests over 100 (funclength_test.go).
package testcheck

import (
	"strings"
	"testing"
)

// Err checks err against want, a part of the message the case expects ("" when it
// expects no error), and reports whether the case is done with: an error was wanted (and
// checked), or one came that was not. A test goes on to check the result only when Err
// says false:
//
//	if testcheck.Err(t, err, tt.err) {
//		return
//	}
func Err(t testing.TB, err error, want string) bool {
	t.Helper()
	return check(t, err, want, strings.Contains, "saying")
}

// ErrPrefix is Err for a case that wants the error's message to begin with want.
func ErrPrefix(t testing.TB, err error, want string) bool {
	t.Helper()
	return check(t, err, want, strings.HasPrefix, "beginning")
}

func check(t testing.TB, err error, want string, matches func(s, part string) bool, how string) bool {
	t.Helper()
	switch {
	case want != "":
		if err == nil || !matches(err.Error(), want) {
			t.Errorf("error %v, want one %s %q", err, how, want)
		}
		return true
	case err != nil:
		t.Errorf("error %v, want none", err)
		return true
	}
	return false
}
