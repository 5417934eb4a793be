//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/modetest"
	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/store"
)

// TestReportOutIsPrivate: under the usual umask (022), `report --out` writes the decrypted
// artefacts for this user alone: a folder it makes is 0700, every file 0600, a file an
// earlier fetch left readable by others included.
func TestReportOutIsPrivate(t *testing.T) {
	modetest.Umask(t, 0o022)
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
	modetest.Want(t, dir, 0o700)
	for _, a := range report.Artefacts {
		modetest.Want(t, filepath.Join(dir, a), 0o600)
	}
}

// TestKeyFileOpenToOthers: a key file other users may read stops every command that needs
// the keys, the codec server and a command that would dial Temporal alike, with the chmod
// that fixes it; COSCI_KEYS_FILE_LAX=1 lets the command go on.
func TestKeyFileOpenToOthers(t *testing.T) {
	line, err := keyring.New("k")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "keys.txt")
	if err := os.WriteFile(file, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COSCI_KEYS_FILE", file)
	t.Setenv("COSCI_KEYS", "")
	t.Setenv("COSCI_KEYS_FILE_LAX", "")
	for _, args := range [][]string{{"codec-server", "--listen", "127.0.0.1:0"}, {"status", "some-session"}} {
		_, errOut := quiet(t)
		if code := run(args); code != 1 || !strings.Contains(errOut.String(), "chmod 600 "+file) {
			t.Errorf("%v with a key file of mode 0644: exit %d, %q; want it refused, saying chmod 600 %s", args, code, errOut, file)
		}
	}
	// With COSCI_KEYS_FILE_LAX=1 (and another file: the starter reads a file once), the
	// command goes on, with the warning, until it would dial Temporal.
	lax := filepath.Join(t.TempDir(), "lax-keys.txt")
	if err := os.WriteFile(lax, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(lax, 0o640); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "temporal.toml")
	if err := os.WriteFile(config, []byte("this is [not toml\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEMPORAL_CONFIG_FILE", config)
	t.Setenv("TEMPORAL_PROFILE", "")
	t.Setenv("COSCI_KEYS_FILE", lax)
	t.Setenv("COSCI_KEYS_FILE_LAX", "1")
	_, errOut := quiet(t)
	if code := run([]string{"status", "some-session"}); code != 1 || !strings.Contains(errOut.String(), "warning: COSCI_KEYS_FILE") || !strings.Contains(errOut.String(), docsNotDialled) {
		t.Errorf("with COSCI_KEYS_FILE_LAX=1: exit %d, %q; want a warning, then the command going on to dial", code, errOut)
	}
}
