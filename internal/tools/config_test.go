package tools

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/testcheck"
)

func TestLoad(t *testing.T) {
	env := map[string]string{"PUBMED_TOKEN": "secret", "NCBI_KEY": "k"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		name, file, err string
	}{
		{"stdio and http", `
servers:
  - name: literature
    command: [bin/literature, --library, testdata/library]
    rate: 5
    timeout: 20s
    env: [NCBI_KEY]
  - name: pubmed
    url: https://mcp.example.org/mcp
    env: [PUBMED_TOKEN]
    headers: {Authorization: "Bearer ${PUBMED_TOKEN}"}
`, ""},
		{"json", `{"servers": [{"name": "lit", "command": ["lit"], "timeout": "1m"}]}`, ""},
		{"typo", "servers:\n  - name: lit\n    comand: [lit]\n", "field comand not found"},
		{"both", "servers:\n  - name: lit\n    command: [lit]\n    url: http://x/mcp\n", "not both"},
		{"neither", "servers:\n  - name: lit\n", "give a command"},
		{"bad name", "servers:\n  - name: Lit.Server\n    command: [lit]\n", "lower-case letters"},
		{"twice", "servers:\n  - name: lit\n    command: [a]\n  - name: lit\n    command: [b]\n", "used twice"},
		{"missing token", "servers:\n  - name: p\n    url: https://x/mcp\n    env: [NOPE]\n    headers: {X-Key: \"${NOPE}\"}\n", "env names NOPE, which is not set"},
		// A header names only what its server's entry lists, and never cosci's secrets.
		{"unlisted variable", "servers:\n  - name: p\n    url: https://x/mcp\n    headers: {Authorization: \"Bearer ${PUBMED_TOKEN}\"}\n",
			"header Authorization names ${PUBMED_TOKEN}, which the server's env does not list; list the variables its headers may name in the server's entry: env: [PUBMED_TOKEN]"},
		{"unlisted, other server's", "servers:\n  - name: lit\n    command: [lit]\n    env: [NCBI_KEY]\n  - name: p\n    url: https://x/mcp\n    headers: {X-Key: \"${NCBI_KEY}\"}\n",
			"server 2 (p): header X-Key names ${NCBI_KEY}, which the server's env does not list"},
		{"the lab's keys", "servers:\n  - name: p\n    url: https://x/mcp\n    env: [PUBMED_TOKEN]\n    headers: {Authorization: \"Bearer ${COSCI_KEYS}\"}\n",
			"header Authorization names ${COSCI_KEYS}, the lab's encryption keys, which no tool server is given"},
		{"the lab's keys listed", "servers:\n  - name: p\n    url: https://x/mcp\n    env: [COSCI_KEYS]\n    headers: {Authorization: \"Bearer ${COSCI_KEYS}\"}\n",
			"env names COSCI_KEYS, the lab's encryption keys, which no tool server is given"},
		{"the key file to a command", "servers:\n  - name: p\n    command: [a]\n    env: [COSCI_KEYS_FILE]\n", "env names COSCI_KEYS_FILE, the lab's encryption keys"},
		{"the codec token", "servers:\n  - name: p\n    url: https://x/mcp\n    env: [COSCI_CODEC_TOKEN]\n    headers: {Authorization: \"Bearer ${COSCI_CODEC_TOKEN}\"}\n", "the codec server's token"},
		// Headers over plain http only to this host.
		{"headers over http", "servers:\n  - name: p\n    url: http://mcp.example.org/mcp\n    env: [PUBMED_TOKEN]\n    headers: {Authorization: \"Bearer ${PUBMED_TOKEN}\"}\n",
			"headers would go to mcp.example.org over plain http, readable on the way; use an https:// url"},
		{"fixed header over http", "servers:\n  - name: p\n    url: http://10.0.0.7:8765/mcp\n    headers: {X-Lab: cosci}\n", "use an https:// url"},
		{"headers over http to localhost", "servers:\n  - name: p\n    url: http://localhost:8765/mcp\n    env: [PUBMED_TOKEN]\n    headers: {Authorization: \"Bearer ${PUBMED_TOKEN}\"}\n", ""},
		{"headers over http to 127.0.0.1", "servers:\n  - name: p\n    url: http://127.0.0.1:8765/mcp\n    headers: {X-Lab: cosci}\n", ""},
		{"headers over http to ::1", "servers:\n  - name: p\n    url: http://[::1]:8765/mcp\n    headers: {X-Lab: cosci}\n", ""},
		{"no headers over http", "servers:\n  - name: p\n    url: http://mcp.example.org/mcp\n", ""},
		{"bad url", "servers:\n  - name: p\n    url: ftp://x\n", "not an http(s) URL"},
		{"bad timeout", "servers:\n  - name: p\n    command: [a]\n    timeout: soon\n", "not a duration"},
		{"negative rate", "servers:\n  - name: p\n    command: [a]\n    rate: -1\n", "rate is -1"},
		{"trust", "servers:\n  - name: web\n    url: http://x/mcp\n    trust: external\n    approve: false\n    max_result_bytes: 4096\n", ""},
		{"unknown trust", "servers:\n  - name: web\n    url: http://x/mcp\n    trust: partner\n", `trust is "partner"; write lab`},
		{"negative result cap", "servers:\n  - name: p\n    command: [a]\n    max_result_bytes: -1\n", "max_result_bytes is -1"},
		{"huge result cap", "servers:\n  - name: p\n    command: [a]\n    max_result_bytes: 2000000\n", "give 1 to 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tools.yaml")
			if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := Load(path, getenv)
			if testcheck.Err(t, err, tt.err) {
				return
			}
			if tt.name == "stdio and http" && (c.Servers[0].CallTimeout() != 20*time.Second || c.Servers[0].Rate != 5 || c.Servers[1].CallTimeout() != DefaultTimeout) {
				t.Errorf("%+v", c)
			}
		})
	}
}

// TestTrust: a server is the lab's unless the file says external; an external server's
// calls wait for approval unless the file says approve: false, and a lab server's may be
// made to; a result is cut for the model at the server's limit.
func TestTrust(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name    string
		s       Server
		trust   string
		approve bool
		limit   int
	}{
		{"unsaid", Server{}, TrustLab, false, DefaultMaxResultBytes},
		{"lab", Server{Trust: TrustLab, MaxResultBytes: 1000}, TrustLab, false, 1000},
		{"external", Server{Trust: TrustExternal}, TrustExternal, true, DefaultMaxResultBytes},
		{"external, not approved", Server{Trust: TrustExternal, Approve: &no}, TrustExternal, false, DefaultMaxResultBytes},
		{"lab, approved", Server{Approve: &yes}, TrustLab, true, DefaultMaxResultBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.s.TrustOf() != tc.trust || tc.s.Approves() != tc.approve || tc.s.ResultLimit() != tc.limit {
				t.Errorf("trust %s, approve %v, limit %d; want %s, %v, %d", tc.s.TrustOf(), tc.s.Approves(), tc.s.ResultLimit(), tc.trust, tc.approve, tc.limit)
			}
		})
	}
}
