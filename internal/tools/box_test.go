package tools_test

// The Box's tests, over servers that run in the test (toolstest.Box).

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/tools"
	"github.com/cosci-dev/cosci/internal/tools/toolstest"
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

func TestCatalog(t *testing.T) {
	b := toolstest.NewBox(t, map[string]*mcp.Server{"literature": library()}, "pubmed")
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
	if pub.Server != "pubmed" || !strings.Contains(pub.Error, "executable file not found") || len(pub.Tools) != 0 {
		t.Errorf("pubmed: %+v", pub)
	}
}

func TestSpecs(t *testing.T) {
	b := toolstest.NewBox(t, map[string]*mcp.Server{"literature": library()})
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
	b := toolstest.NewBox(t, map[string]*mcp.Server{"literature": library()})
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
	var unknown *tools.UnknownError
	if _, err := b.Call(ctx, "literature.serch", nil); !errors.As(err, &unknown) {
		t.Errorf("unknown tool: %v", err)
	}
	// A call that takes longer than the server's timeout fails, for the caller to retry.
	b = toolstest.NewBoxOf(t, tools.Config{Servers: []tools.Server{{Name: "literature", Timeout: research.Duration(50 * time.Millisecond)}}},
		map[string]*mcp.Server{"literature": library()})
	if _, err := b.Call(ctx, "literature.slow", json.RawMessage(`{"query": "x"}`)); err == nil || errors.As(err, &unknown) || !strings.Contains(err.Error(), "did not answer within 50ms") {
		t.Errorf("slow tool: %v", err)
	}
}

// A server that dies is connected to again by the next call.
func TestReconnect(t *testing.T) {
	b := toolstest.NewBox(t, map[string]*mcp.Server{"literature": library()})
	ctx := t.Context()
	if _, err := b.Call(ctx, "literature.search", json.RawMessage(`{"query": "a"}`)); err != nil {
		t.Fatal(err)
	}
	b.Kill("literature") // the server goes away
	if _, err := b.Call(ctx, "literature.search", json.RawMessage(`{"query": "b"}`)); err == nil {
		t.Fatal("a call to a server that went away succeeded")
	}
	out, err := b.Call(ctx, "literature.search", json.RawMessage(`{"query": "c"}`))
	if err != nil || out.IsError {
		t.Fatalf("the call after: %+v, %v", out, err)
	}
	if n := b.Connects("literature"); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// TestCatalogTrust: the catalog carries each server's trust and approval, and its tools
// their limit and a description cut to a size the catalog can hold.
func TestCatalogTrust(t *testing.T) {
	web := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "test"}, nil)
	mcp.AddTool(web, &mcp.Tool{Name: "get", Description: strings.Repeat("d", 10_000)}, func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
		return nil, searchOut{}, nil
	})
	b := toolstest.NewBoxOf(t, tools.Config{Servers: []tools.Server{{Name: "literature"}, {Name: "web", Trust: tools.TrustExternal, MaxResultBytes: 2048}}},
		map[string]*mcp.Server{"literature": library(), "web": web})
	cat := b.Catalog(t.Context())
	lit, w := cat[0], cat[1]
	if lit.Trust != tools.TrustLab || lit.Approve || lit.Tools[0].MaxResultBytes != tools.DefaultMaxResultBytes {
		t.Errorf("literature: trust %q, approve %v, limit %d", lit.Trust, lit.Approve, lit.Tools[0].MaxResultBytes)
	}
	if w.Server != "web" || w.Trust != tools.TrustExternal || !w.Approve || len(w.Tools) != 1 || w.Tools[0].MaxResultBytes != 2048 || len(w.Tools[0].Description) != 4000 {
		t.Errorf("web: %+v", w)
	}
}

// TestHTTPServerGetsItsHeaders: through the SDK's streamable client, every request to the
// server's own origin carries its headers, so a server that requires its token still
// answers the worker's calls.
func TestHTTPServerGetsItsHeaders(t *testing.T) {
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return library() }, nil)
	var unauthorized sync.Map
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0k" {
			unauthorized.Store(r.Method+" "+r.URL.Path, true)
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	defer server.Close()
	cfg := tools.Config{Servers: []tools.Server{{Name: "literature", URL: server.URL + "/mcp", Env: []string{"PUBMED_TOKEN"},
		Headers: map[string]string{"Authorization": "Bearer ${PUBMED_TOKEN}"}}}}
	env := func(k string) string { return map[string]string{"PUBMED_TOKEN": "t0k"}[k] }
	if err := cfg.Check(env); err != nil {
		t.Fatal(err)
	}
	b := tools.Open(cfg, env, nil)
	defer b.Close()
	out, err := b.Call(t.Context(), "literature.search", []byte(`{"query": "microglia"}`))
	if err != nil || out.IsError || !strings.Contains(out.Content, "Tau spreads microglia") {
		t.Fatalf("search over http: %+v, %v", out, err)
	}
	unauthorized.Range(func(k, _ any) bool {
		t.Errorf("%s reached the server without its token", k)
		return true
	})
}
