//go:build unix

// Package modetest holds what the tests of private files share: the usual umask for the
// length of a test, and a check of one file's permission bits. What cosci writes of a
// user's research (the store, the library's index, a fetched report) is that user's alone
// even where the umask would let others read it.
package modetest

import (
	"io/fs"
	"os"
	"syscall"
	"testing"
)

// Umask sets the process's umask to mask until the test ends. Tests that use it must not
// run in parallel: the umask is the process's.
func Umask(t testing.TB, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// Want checks that path's permission bits are want.
func Want(t testing.TB, path string, want fs.FileMode) {
	t.Helper()
	if fi, err := os.Stat(path); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != want {
		t.Errorf("%s is %04o; want %04o", path, fi.Mode().Perm(), want)
	}
}
