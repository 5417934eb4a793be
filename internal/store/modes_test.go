//go:build unix

package store

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cosci-dev/cosci/internal/modetest"
	"github.com/cosci-dev/cosci/internal/session"
)

// TestDirModes: under the usual umask (022), everything a Dir creates is its user's alone:
// files 0600, folders 0700, from the root it makes down to the records, the event log, the
// index row, the report, and the records a branch copies (linked or not).
func TestDirModes(t *testing.T) {
	modetest.Umask(t, 0o022)
	for _, linked := range []bool{true, false} {
		s := open(t)
		if !linked {
			defer func(l func(string, string) error) { link = l }(link)
			link = func(from, to string) error { return &os.LinkError{Op: "link", Old: from, New: to, Err: syscall.EXDEV} }
		}
		ctx := tctx(t)
		graphSession(t, s.Store)
		if err := s.PutTurn(ctx, "src", Turn{ID: "t-1", Agent: "generation", Prompt: matchPrompt(1, 1, 2), Result: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutEvents(ctx, "src", []session.Event{{Seq: 99, Kind: session.EventCommand, Detail: "d"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutReport(ctx, "src", []byte("# report\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Branch(ctx, "src", 1, "dst"); err != nil {
			t.Fatal(err)
		}
		top := filepath.Dir(s.Root()) // the root's parent, which OpenDir made too
		n := 0
		err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			want := fs.FileMode(0o600)
			if d.IsDir() {
				want = 0o700 | fs.ModeDir
			}
			if got := fi.Mode() & (fs.ModePerm | fs.ModeDir); got != want {
				t.Errorf("linked %v: %s is %04o; want %04o", linked, path, got, want)
			}
			n++
			return nil
		})
		if err != nil || n < 20 {
			t.Fatalf("walked %d entries: %v", n, err)
		}
	}
}
