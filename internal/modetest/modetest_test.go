//go:build unix

package modetest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that keeps what a check reports instead of failing the test.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Error(args ...any)                 { r.failed = append(r.failed, fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) { r.failed = append(r.failed, fmt.Sprintf(format, args...)) }

// TestUmaskAndWant: under Umask(0o022) a file made 0666 is 0644 and a folder made 0777 is
// 0755; Want passes the mode a path has and fails another one, or a path not there.
func TestUmaskAndWant(t *testing.T) {
	Umask(t, 0o022)
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path   string
		want   os.FileMode
		failed bool
	}{
		{dir, 0o755, false},
		{file, 0o644, false},
		{file, 0o600, true},
		{filepath.Join(dir, "missing"), 0o600, true},
	} {
		r := &recorder{TB: t}
		if Want(r, tt.path, tt.want); (len(r.failed) > 0) != tt.failed {
			t.Errorf("Want(%s, %04o): failures %q; want failed %v", tt.path, tt.want, r.failed, tt.failed)
		}
	}
}
