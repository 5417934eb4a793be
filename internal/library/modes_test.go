//go:build unix

package library

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cosci-dev/cosci/internal/modetest"
)

// TestIndexIsPrivate: under the usual umask (022), the index, which holds the library's
// texts, is its user's alone: its folder 0700 (one an earlier version left 0755 included),
// every folder in it 0700, its state file 0600.
func TestIndexIsPrivate(t *testing.T) {
	modetest.Umask(t, 0o022)
	made := filepath.Join(t.TempDir(), "cache", "index")
	earlier := t.TempDir()
	if err := os.Chmod(earlier, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, index := range []string{made, earlier} {
		l := open(t, fixture(t), index)
		modetest.Want(t, index, 0o700)
		modetest.Want(t, l.statePath(), 0o600)
		err := filepath.WalkDir(index, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			modetest.Want(t, path, 0o700)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
