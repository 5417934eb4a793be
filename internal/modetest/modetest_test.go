//go:build unix

package modetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cosci-dev/cosci/internal/testcheck"
)

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
		r := testcheck.NewRecorder(t)
		if Want(r, tt.path, tt.want); (len(r.Failures) > 0) != tt.failed {
			t.Errorf("Want(%s, %04o): failures %q; want failed %v", tt.path, tt.want, r.Failures, tt.failed)
		}
	}
}
