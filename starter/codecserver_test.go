package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/keyring"
)

// TestCodecServerRefuses: codec-server will not serve the lab's keys on an address other
// machines reach without a token, and says what to set; a token too short, or given both
// ways, is refused before anything listens.
func TestCodecServerRefuses(t *testing.T) {
	line, err := keyring.New("k")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("COSCI_KEYS_FILE", "")
	t.Setenv("COSCI_KEYS", line)
	short := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(short, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		token, file string
		args        []string
		want        string
	}{
		{"every interface, no token", "", "", []string{"--listen", "0.0.0.0:0"}, "0.0.0.0:0 reaches beyond this machine, and no token is set: set COSCI_CODEC_TOKEN_FILE (or COSCI_CODEC_TOKEN)"},
		{"no host, no token", "", "", []string{"--listen", ":0", "--allowed-host", "codec.lab.example"}, "no token is set"},
		{"a short token", "s3cret", "", []string{"--listen", "127.0.0.1:0"}, "COSCI_CODEC_TOKEN: the token is 6 characters; use at least 16"},
		{"a short token file", "", short, []string{"--listen", "127.0.0.1:0"}, "COSCI_CODEC_TOKEN_FILE: the token is 6 characters"},
		{"both", "0123456789abcdef0123", short, []string{"--listen", "127.0.0.1:0"}, "both COSCI_CODEC_TOKEN and COSCI_CODEC_TOKEN_FILE are set"},
	} {
		t.Setenv("COSCI_CODEC_TOKEN", tc.token)
		t.Setenv("COSCI_CODEC_TOKEN_FILE", tc.file)
		_, errOut := quiet(t)
		if code := run(append([]string{"codec-server"}, tc.args...)); code != 1 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%s: codec-server %v exited %d: %q; want 1 and %q", tc.name, tc.args, code, errOut, tc.want)
		}
	}
}
