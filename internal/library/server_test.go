package library

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect runs the literature server over the fixture library and connects a client to
// it, in memory or over streamable HTTP.
func connect(t *testing.T, overHTTP bool) *mcp.ClientSession {
	t.Helper()
	srv := Server(open(t, fixture(t), t.TempDir()))
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	var transport mcp.Transport
	if overHTTP {
		ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		t.Cleanup(ts.Close)
		transport = &mcp.StreamableClientTransport{Endpoint: ts.URL}
	} else {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		transport = ct
	}
	cs, err := client.Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its text, and whether it is a tool error.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n"), res.IsError
}

// TestServerTools: both tools, in memory and over HTTP: the contract the worker and the
// simulator rely on, and a clear tool error for every malformed call.
func TestServerTools(t *testing.T) {
	for _, overHTTP := range []bool{false, true} {
		name := map[bool]string{false: "in memory", true: "streamable HTTP"}[overHTTP]
		t.Run(name, func(t *testing.T) {
			cs := connect(t, overHTTP)
			var names []string
			for tool, err := range cs.Tools(context.Background(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tool.Name)
			}
			if strings.Join(names, ",") != "fetch,search" {
				t.Errorf("tools %v", names)
			}

			text, isErr := call(t, cs, "search", map[string]any{"query": "microglia exosomes", "limit": 3})
			var out SearchOutput
			if isErr || json.Unmarshal([]byte(text), &out) != nil || out.Query != "microglia exosomes" || out.Total < 1 || len(out.Results) == 0 || len(out.Results) > 3 {
				t.Fatalf("search: %s (error %v)", text, isErr)
			}
			top := out.Results[0]
			if top.ID != "10.5555/cosci.tau.001" || top.DOI != top.ID || top.Title == "" || top.Year != 2021 || len(top.Authors) != 3 || top.Snippet == "" || top.Score <= 0 {
				t.Errorf("top result %+v", top)
			}

			text, isErr = call(t, cs, "fetch", map[string]any{"id": "https://doi.org/10.5555/COSCI.TAU.001"})
			var r Reference
			if isErr || json.Unmarshal([]byte(text), &r) != nil || r.ID != top.ID || !strings.Contains(r.Abstract, top.Snippet) || r.Key != "ito2021microglia" {
				t.Errorf("fetch: %s (error %v)", text, isErr)
			}

			for _, tt := range []struct {
				tool string
				args map[string]any
				want string
			}{
				{"search", map[string]any{"query": ""}, "the query is empty"},
				{"search", map[string]any{}, "query"},
				{"search", map[string]any{"query": "tau", "limit": 500}, "limit 500 is out of range: give 1 to 50"},
				{"search", map[string]any{"query": "tau", "limit": "ten"}, "limit"},
				{"fetch", map[string]any{"id": "10.5555/nope"}, `no reference with id "10.5555/nope" in the library; use an id from a search result`},
				{"fetch", map[string]any{"id": " "}, "the id is empty"},
			} {
				text, isErr := call(t, cs, tt.tool, tt.args)
				if !isErr || !strings.Contains(text, tt.want) {
					t.Errorf("%s %v: %q (error %v), want a tool error saying %q", tt.tool, tt.args, text, isErr, tt.want)
				}
			}
			// The server still answers after every bad call.
			if _, isErr := call(t, cs, "search", map[string]any{"query": "LRP1"}); isErr {
				t.Error("the server stopped answering")
			}
		})
	}
}
