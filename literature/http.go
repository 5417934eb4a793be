package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cosci-dev/cosci/internal/httpguard"
)

// maxBody bounds an MCP request: a tool call of search or fetch is a few hundred bytes.
const maxBody = 1 << 20

// httpListener is where the literature server listens over HTTP, and what it allows there.
type httpListener struct {
	l              net.Listener
	token          string
	hosts, origins []string
}

// listenHTTP listens on addr (nil for "": the server speaks stdio) with the token of
// COSCI_LITERATURE_TOKEN_FILE or COSCI_LITERATURE_TOKEN; on an address other machines
// reach, it refuses to without one. The server answers to the host of addr, the loopback
// names on loopback, and hosts.
func listenHTTP(addr string, hosts, origins []string) (*httpListener, error) {
	if addr == "" {
		return nil, nil
	}
	token, err := httpguard.Token(os.Getenv, "COSCI_LITERATURE_TOKEN")
	if err != nil {
		return nil, err
	}
	l, names, err := httpguard.Listen(addr, token != "", hosts, "COSCI_LITERATURE_TOKEN_FILE (or COSCI_LITERATURE_TOKEN)")
	if err != nil {
		return nil, fmt.Errorf("--http: %w", err)
	}
	return &httpListener{l: l, token: token, hosts: names, origins: origins}, nil
}

// logAttrs are what the start-up log says of it: never the token, only whether there is one.
func (w *httpListener) logAttrs() []any {
	auth := "none (loopback only)"
	if w.token != "" {
		auth = "bearer token"
	}
	return []any{"url", "http://" + w.l.Addr().String() + "/mcp", "hosts", w.hosts, "origins", w.origins, "auth", auth}
}

// server serves s at /mcp.
func (w *httpListener) server(s *mcp.Server) *http.Server {
	return httpServer(s, w.token, w.hosts, w.origins)
}

// httpServer serves server at /mcp over streamable HTTP behind httpguard: the Host and
// Origin checks, the bearer token (if any), bounded bodies and headers, and timeouts.
func httpServer(server *mcp.Server, token string, hosts, origins []string) *http.Server {
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		// httpguard checks the Host of every request against the names the lab allows;
		// the SDK's own check, for loopback only, would refuse a proxy's host name.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        maxBody,
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", httpguard.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// A client's standalone event stream (GET) stays open for as long as its
			// session: the server's read and write timeouts are for requests, not for it.
			// (A worker opens none.)
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Time{})
			_ = rc.SetWriteDeadline(time.Time{})
		}
		mcpHandler.ServeHTTP(w, r)
	}), httpguard.Options{
		Token:         token,
		Realm:         "cosci literature",
		Hosts:         hosts,
		Origins:       origins,
		AllowMethods:  []string{"GET", "POST", "DELETE", "OPTIONS"},
		AllowHeaders:  []string{"Content-Type", "Authorization", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-ID"},
		ExposeHeaders: []string{"Mcp-Session-Id"},
		MaxBody:       maxBody,
	}))
	return httpguard.Server(mux)
}

// repeated is a repeatable flag.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, strings.TrimRight(v, "/")); return nil }
