//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/store"
)

// TestReportOutIsPrivate: under the usual umask (022), `report --out` writes the decrypted
// artefacts for this user alone: a folder it makes is 0700, every file 0600, a file an
// earlier fetch left readable by others included.
func TestReportOutIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	loc := t.TempDir()
	st, err := store.Open(t.Context(), loc)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, a := range report.Artefacts {
		if a != report.MarkdownFile {
			if _, err := st.PutFile(t.Context(), "s-1", a, []byte("the "+a)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := st.PutReport(t.Context(), "s-1", []byte("# Report\n")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "fetched")
	if code := run([]string{"report", "s-1", "--store", loc, "--out", dir}); code != 0 {
		t.Fatalf("--out exited %d", code)
	}
	if err := os.Chmod(filepath.Join(dir, report.MarkdownFile), 0o644); err != nil {
		t.Fatal(err)
	}
	quiet(t)
	if code := run([]string{"report", "s-1", "--store", loc, "--out", dir}); code != 0 {
		t.Fatalf("--out again exited %d", code)
	}
	wantMode(t, dir, 0o700)
	for _, a := range report.Artefacts {
		wantMode(t, filepath.Join(dir, a), 0o600)
	}
}

func wantMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	if fi, err := os.Stat(path); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != want {
		t.Errorf("%s is %04o; want %04o", path, fi.Mode().Perm(), want)
	}
}
