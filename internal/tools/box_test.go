package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cosci-dev/cosci/internal/research"
)

type searchIn struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
}

type hit struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type searchOut struct {
	Results []hit `json:"results"`
}

// library is a small MCP server like the literature server: search, and a tool that fails.
func library() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "literature", Version: "test"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "search", Description: "search the library"}, func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
		if strings.TrimSpace(in.Query) == "" {
			return nil, searchOut{}, errors.New("give a query")
		}
		return nil, searchOut{Results: []hit{{ID: "10.5555/cosci.tau.001", Title: "Tau spreads " + in.Query}}}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "waits"}, func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
		<-ctx.Done()
		return nil, searchOut{}, ctx.Err()
	})
	return s
}

// memBox is a Box whose servers run in this process, over in-memory transports; it
// counts the connections it makes and keeps the server sessions, to end them.
type memBox struct {
	*Box
	mu       sync.Mutex
	connects map[string]int
	sessions map[string]*mcp.ServerSession
}

func newMemBox(t *testing.T, servers map[string]*mcp.Server, broken ...string) *memBox {
	t.Helper()
	var cfg Config
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range servers {
			if !yield(n) {
				return
			}
		}
		for _, n := range broken {
			if !yield(n) {
				return
			}
		}
	}) {
		cfg.Servers = append(cfg.Servers, Server{Name: name, Command: []string{"unused"}})
	}
	m := &memBox{Box: Open(cfg, func(string) string { return "" }, nil), connects: map[string]int{}, sessions: map[string]*mcp.ServerSession{}}
	m.Connect = func(s Server) (mcp.Transport, error) {
		srv, ok := servers[s.Name]
		if !ok {
			return nil, errors.New("exec: no such program")
		}
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(t.Context(), st, nil)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		m.connects[s.Name]++
		m.sessions[s.Name] = ss
		m.mu.Unlock()
		return ct, nil
	}
	t.Cleanup(m.Close)
	return m
}

func TestCatalog(t *testing.T) {
	b := newMemBox(t, map[string]*mcp.Server{"literature": library()}, "pubmed")
	cat := b.Catalog(t.Context())
	if len(cat) != 2 {
		t.Fatalf("catalog %+v", cat)
	}
	lit, pub := cat[0], cat[1]
	if lit.Server != "literature" || lit.Error != "" || len(lit.Tools) != 2 || lit.Tools[0].Name != "literature.search" {
		t.Errorf("literature: %+v", lit)
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(lit.Tools[0].InputSchema, &schema); err != nil || schema.Properties["query"] == nil {
		t.Errorf("search's input schema %s (%v)", lit.Tools[0].InputSchema, err)
	}
	// A server that cannot be reached is in the catalog with why; the others still work.
	if pub.Server != "pubmed" || !strings.Contains(pub.Error, "no such program") || len(pub.Tools) != 0 {
		t.Errorf("pubmed: %+v", pub)
	}
}

func TestSpecs(t *testing.T) {
	b := newMemBox(t, map[string]*mcp.Server{"literature": library()})
	tests := []struct {
		names []string
		want  []string
		err   string
	}{
		{names: []string{"literature.search"}, want: []string{"literature.search"}},
		{names: []string{"literature.*"}, want: []string{"literature.search", "literature.slow"}},
		{names: []string{"literature.serch"}, err: `no tool "literature.serch": server literature has literature.search, literature.slow`},
		{names: []string{"pubmed.search"}, err: `no tool server "pubmed": the workers have literature`},
		{names: []string{"search"}, err: `not a tool name`},
	}
	for _, tt := range tests {
		specs, err := b.Specs(t.Context(), tt.names)
		var got []string
		for _, s := range specs {
			got = append(got, s.Name)
		}
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%v: error %v, want one saying %q", tt.names, err, tt.err)
		case tt.err == "" && (err != nil || !slices.Equal(got, tt.want)):
			t.Errorf("%v: %v, %v; want %v", tt.names, got, err, tt.want)
		}
	}
}

func TestCall(t *testing.T) {
	b := newMemBox(t, map[string]*mcp.Server{"literature": library()})
	ctx := t.Context()

	out, err := b.Call(ctx, "literature.search", json.RawMessage(`{"query": "microglia"}`))
	if err != nil || out.IsError || !strings.Contains(out.Content, `"id":"10.5555/cosci.tau.001"`) || !strings.Contains(string(out.Structured), "Tau spreads microglia") {
		t.Fatalf("search: %+v, %v", out, err)
	}
	// The tool's own error is a result for the model to read, not a failure.
	out, err = b.Call(ctx, "literature.search", json.RawMessage(`{"query": " "}`))
	if err != nil || !out.IsError || !strings.Contains(out.Content, "give a query") {
		t.Errorf("blank query: %+v, %v", out, err)
	}
	// So are arguments that are not an object, and arguments the tool's schema refuses.
	out, err = b.Call(ctx, "literature.search", json.RawMessage(`"microglia"`))
	if err != nil || !out.IsError || !strings.Contains(out.Content, "not a JSON object") {
		t.Errorf("a string for arguments: %+v, %v", out, err)
	}
	out, err = b.Call(ctx, "literature.search", json.RawMessage(`{"query": 7}`))
	if err != nil || !out.IsError {
		t.Errorf("a number for the query: %+v, %v", out, err)
	}
	// A tool the server does not have is an UnknownError: no retry finds it.
	var unknown *UnknownError
	if _, err := b.Call(ctx, "literature.serch", nil); !errors.As(err, &unknown) {
		t.Errorf("unknown tool: %v", err)
	}
	// A call that takes longer than the server's timeout fails, for the caller to retry.
	b.servers[0].cfg.Timeout = research.Duration(50 * time.Millisecond)
	if _, err := b.Call(ctx, "literature.slow", json.RawMessage(`{"query": "x"}`)); err == nil || errors.As(err, &unknown) || !strings.Contains(err.Error(), "did not answer within 50ms") {
		t.Errorf("slow tool: %v", err)
	}
}

// A server that dies is connected to again by the next call.
func TestReconnect(t *testing.T) {
	b := newMemBox(t, map[string]*mcp.Server{"literature": library()})
	ctx := t.Context()
	if _, err := b.Call(ctx, "literature.search", json.RawMessage(`{"query": "a"}`)); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	_ = b.sessions["literature"].Close() // the server goes away
	b.mu.Unlock()
	if _, err := b.Call(ctx, "literature.search", json.RawMessage(`{"query": "b"}`)); err == nil {
		t.Fatal("a call to a server that went away succeeded")
	}
	out, err := b.Call(ctx, "literature.search", json.RawMessage(`{"query": "c"}`))
	if err != nil || out.IsError {
		t.Fatalf("the call after: %+v, %v", out, err)
	}
	if b.connects["literature"] != 2 {
		t.Errorf("%d connections, want 2", b.connects["literature"])
	}
}

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
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
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

	// The catalog carries each server's trust and approval, and its tools their limit and
	// a description cut to a size the catalog can hold.
	web := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "test"}, nil)
	mcp.AddTool(web, &mcp.Tool{Name: "get", Description: strings.Repeat("d", 10_000)}, func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
		return nil, searchOut{}, nil
	})
	b := newMemBox(t, map[string]*mcp.Server{"literature": library(), "web": web})
	b.servers[1].cfg.Trust, b.servers[1].cfg.MaxResultBytes = TrustExternal, 2048
	cat := b.Catalog(t.Context())
	lit, w := cat[0], cat[1]
	if lit.Trust != TrustLab || lit.Approve || lit.Tools[0].MaxResultBytes != DefaultMaxResultBytes {
		t.Errorf("literature: trust %q, approve %v, limit %d", lit.Trust, lit.Approve, lit.Tools[0].MaxResultBytes)
	}
	if w.Server != "web" || w.Trust != TrustExternal || !w.Approve || len(w.Tools) != 1 || w.Tools[0].MaxResultBytes != 2048 || len(w.Tools[0].Description) != 4000 {
		t.Errorf("web: %+v", w)
	}
}

// A stdio server runs with a small environment: never the worker's model keys.
func TestChildEnv(t *testing.T) {
	env := map[string]string{"PATH": "/bin", "HOME": "/root", "OPENAI_API_KEY": "sk-secret", "NCBI_KEY": "k"}
	got := childEnv([]string{"NCBI_KEY"}, func(k string) string { return env[k] })
	if !slices.Contains(got, "PATH=/bin") || !slices.Contains(got, "NCBI_KEY=k") {
		t.Errorf("%v lacks PATH or NCBI_KEY", got)
	}
	for _, kv := range got {
		if strings.Contains(kv, "sk-secret") {
			t.Errorf("the worker's key reached the tool server: %v", got)
		}
	}
	// A listed variable is filled in; an unlisted one, or cosci's keys, never are.
	env["PUBMED_TOKEN"], env["COSCI_KEYS"] = "t0k", "lab-keys"
	s := Server{Env: []string{"PUBMED_TOKEN", "COSCI_KEYS"}}
	if h := s.header("Bearer ${PUBMED_TOKEN} ${NCBI_KEY} ${COSCI_KEYS}", func(k string) string { return env[k] }); h != "Bearer t0k  " {
		t.Errorf("header %q", h)
	}
	if got := childEnv(s.Env, func(k string) string { return env[k] }); slices.Contains(got, "COSCI_KEYS=lab-keys") {
		t.Errorf("the lab's keys reached the tool server: %v", got)
	}
}
