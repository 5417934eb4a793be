package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/doccheck"
)

// TestRefusesToStart: the configurations the desk refuses before serving anything.
func TestRefusesToStart(t *testing.T) {
	key := strings.Repeat("ab", 32)
	tests := []struct {
		name string
		args []string
		env  map[string]string
		err  string
	}{
		{"local on every address", []string{"--auth", "local", "--listen", "0.0.0.0:8090"}, nil, "not a loopback address"},
		{"local on a LAN address", []string{"--auth", "local", "--listen", "192.168.1.5:8090"}, nil, "not a loopback address"},
		{"oidc without a key", []string{"--auth", "oidc", "--oidc-issuer", "https://idp", "--oidc-client-id", "desk"}, nil, "COSCI_DESK_KEY_FILE"},
		{"proxy without a key", []string{"--auth", "proxy", "--trusted-proxy", "10.0.0.1"}, nil, "COSCI_DESK_KEY_FILE"},
		{"oidc without an issuer", []string{"--auth", "oidc"}, map[string]string{"COSCI_DESK_KEY": key}, "--oidc-issuer"},
		{"proxy without its address", []string{"--auth", "proxy"}, map[string]string{"COSCI_DESK_KEY": key}, "--trusted-proxy"},
		{"proxy with a bad address", []string{"--auth", "proxy", "--trusted-proxy", "the-proxy"}, map[string]string{"COSCI_DESK_KEY": key}, "not an address"},
		{"an unknown mode", []string{"--auth", "guest"}, map[string]string{"COSCI_DESK_KEY": key}, `"oidc", "proxy" or "local"`},
		{"a bad key", []string{"--auth", "proxy", "--trusted-proxy", "10.0.0.1"}, map[string]string{"COSCI_DESK_KEY": "abc"}, "32 bytes"},
		{"a missing policy", []string{"--policy", "/nonexistent.yaml"}, nil, "--policy"},
		{"a proxy range that is anyone", []string{"--auth", "proxy", "--trusted-proxy", "0.0.0.0/0"}, map[string]string{"COSCI_DESK_KEY": key}, "--trusted-proxy-wide"},
		{"a proxy range wider than /24", []string{"--auth", "proxy", "--trusted-proxy", "10.0.0.0/16"}, map[string]string{"COSCI_DESK_KEY": key}, "wider than /24"},
		{"an IPv6 range wider than /64", []string{"--auth", "proxy", "--trusted-proxy", "fd00::/48"}, map[string]string{"COSCI_DESK_KEY": key}, "wider than /64"},
		{"an upload cap of nothing", []string{"--max-upload-mb", "0"}, nil, "--max-upload-mb 0"},
		{"a short local token", []string{"--auth", "local"}, map[string]string{"COSCI_DESK_TOKEN": "short"}, "COSCI_DESK_TOKEN"},
	}
	for _, tt := range tests {
		getenv := func(k string) string { return tt.env[k] }
		o, err := parseOptions(tt.args, getenv)
		if err == nil {
			_, err = authenticator(context.Background(), o, getenv, nil)
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.err)
		}
	}
	for _, args := range [][]string{
		{"--auth", "proxy", "--trusted-proxy", "10.0.0.0/24"},
		{"--auth", "proxy", "--trusted-proxy", "fd00::/64"},
		{"--auth", "proxy", "--trusted-proxy", "10.0.0.0/16", "--trusted-proxy-wide"},
	} {
		getenv := func(k string) string { return map[string]string{"COSCI_DESK_KEY": key}[k] }
		o, _ := parseOptions(args, getenv)
		if _, err := authenticator(context.Background(), o, getenv, nil); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	// A token file others may read is refused, with the chmod that fixes it; the same
	// file private is the token.
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("desk-token-0123456789abcdef\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tokenEnv := func(k string) string { return map[string]string{"COSCI_DESK_TOKEN_FILE": file}[k] }
	o, _ := parseOptions(nil, tokenEnv)
	if _, err := authenticator(context.Background(), o, tokenEnv, nil); err == nil || !strings.Contains(err.Error(), "chmod 600 "+file) {
		t.Errorf("a token file others may read: %v; want refused with the chmod", err)
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if a, err := authenticator(context.Background(), o, tokenEnv, nil); err != nil || !strings.HasSuffix(a.SignInLink("http://127.0.0.1:8090"), "=desk-token-0123456789abcdef") {
		t.Errorf("a private token file: %v", err)
	}
	for _, addr := range []string{"127.0.0.1:8090", "[::1]:8090", "localhost:8090"} {
		o, _ := parseOptions([]string{"--listen", addr, "--local-user", "me"}, func(string) string { return "" })
		if _, err := authenticator(context.Background(), o, func(string) string { return "" }, nil); err != nil {
			t.Errorf("local on %s: %v", addr, err)
		}
	}
}

// TestDemoLogsArePrivate: the demo writes the desk's sign-in link, token included, to its
// log: the script makes every file it writes its user's alone before it writes one.
func TestDemoLogsArePrivate(t *testing.T) {
	b, err := os.ReadFile("../scripts/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	umask, log := strings.Index(script, "\numask 077\n"), strings.Index(script, ">.data/")
	if umask < 0 || log < 0 || umask > log {
		t.Errorf("scripts/demo.sh writes a log (at %d) before umask 077 (at %d)", log, umask)
	}
}

// TestDocsNameEveryDeskFlag: every flag of the desk appears in docs/desk.md (or another
// doc), as the other programs' do.
func TestDocsNameEveryDeskFlag(t *testing.T) {
	docs := doccheck.All(doccheck.Files(t, ".."))
	var o options
	n := 0
	flags(&o, func(string) string { return "" }).VisitAll(func(f *flag.Flag) {
		n++
		if !doccheck.Mentions(docs, "--"+f.Name) {
			t.Errorf("no doc mentions the desk's flag --%s: document it in docs/desk.md", f.Name)
		}
	})
	if n < 10 {
		t.Fatalf("found %d flags", n)
	}
	for _, env := range []string{"COSCI_DESK_KEY_FILE", "COSCI_DESK_CLIENT_SECRET_FILE", "COSCI_KEYS_FILE", "COSCI_STORE"} {
		if !doccheck.Mentions(docs, env) {
			t.Errorf("no doc mentions %s", env)
		}
	}
}
