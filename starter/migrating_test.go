package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/store"
)

// TestStoreMigratingFlag: with keys, a record not sealed to its session (here one written
// before encryption was turned on) is refused, named, with what to set; the starter reads
// it with --store-migrating or COSCI_STORE_MIGRATING=1.
func TestStoreMigratingFlag(t *testing.T) {
	loc := t.TempDir()
	st, err := store.Open(t.Context(), loc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutReport(t.Context(), "s-1", []byte("# Written before encryption\n")); err != nil {
		t.Fatal(err)
	}
	st.Close()
	line, err := keyring.New("k")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("COSCI_KEYS", line)
	t.Setenv("COSCI_KEYS_FILE", "")
	for _, tc := range []struct {
		env  string
		args []string
		ok   bool
	}{
		{ok: false},
		{args: []string{"--store-migrating"}, ok: true},
		{env: "1", ok: true},
		{env: "1", args: []string{"--store-migrating=false"}, ok: false},
	} {
		t.Setenv("COSCI_STORE_MIGRATING", tc.env)
		out, errOut := quiet(t)
		code := run(append([]string{"report", "s-1", "--store", loc}, tc.args...))
		switch {
		case tc.ok && (code != 0 || !strings.Contains(out.String(), "Written before encryption")):
			t.Errorf("env %q, %v: exit %d, %s%s; want the report", tc.env, tc.args, code, out, errOut)
		case !tc.ok && (code != 1 || !strings.Contains(errOut.String(), filepath.Join("s-1", "report.md")) || !strings.Contains(errOut.String(), "COSCI_STORE_MIGRATING=1")):
			t.Errorf("env %q, %v: exit %d, %s; want the record named and COSCI_STORE_MIGRATING=1", tc.env, tc.args, code, errOut)
		}
	}
}
