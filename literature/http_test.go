package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPRefuses: the library is not served to the network without a token, and the
// error says what to set; a token too short is refused; no flag takes a secret.
func TestHTTPRefuses(t *testing.T) {
	bin := build(t)
	library := filepath.Join("..", "testdata", "library")
	for _, tt := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"--library", library, "--http", "0.0.0.0:0"}, "--http: 0.0.0.0:0 reaches beyond this machine, and no token is set: set COSCI_LITERATURE_TOKEN_FILE (or COSCI_LITERATURE_TOKEN)"},
		{"", []string{"--library", library, "--http", ":0", "--allowed-host", "literature.lab.example"}, "no token is set"},
		{"COSCI_LITERATURE_TOKEN=s3cret", []string{"--library", library, "--http", "127.0.0.1:0"}, "COSCI_LITERATURE_TOKEN: the token is 6 characters; use at least 16"},
		{"", []string{"--library", library, "--http", "127.0.0.1:0", "--token", token}, "flag provided but not defined: -token"}, // secrets come from the environment
	} {
		cmd := exec.Command(bin, append(tt.args, "--index", t.TempDir(), "--watch", "0")...)
		cmd.Env = append(os.Environ(), "COSCI_LITERATURE_TOKEN=", "COSCI_LITERATURE_TOKEN_FILE=")
		if tt.env != "" {
			cmd.Env = append(cmd.Env, tt.env)
		}
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("%s literature %v: %v, %s; want it to fail saying %q", tt.env, tt.args, err, out, tt.want)
		}
	}
}

// token is the test's bearer token.
const token = "0123456789abcdef0123"

// bearer adds the token to every request, as a worker's tools file's headers do.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTP: over streamable HTTP, with COSCI_LITERATURE_TOKEN_FILE set, the library is
// searched by a client that sends the token and by no other; a page that reached the
// server by DNS rebinding (its own host name made to resolve to 127.0.0.1) or from another
// origin is refused, and so is a body over the bound.
func TestHTTP(t *testing.T) {
	bin := build(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--library", filepath.Join("..", "testdata", "library"), "--index", t.TempDir(), "--watch", "0", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "COSCI_LITERATURE_TOKEN=", "COSCI_LITERATURE_TOKEN_FILE="+tokenFile)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	urls := make(chan string, 1)
	var log strings.Builder
	go func() { // the log, until the server says where it serves; then drained
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := regexp.MustCompile(`url=(http://\S+/mcp) .*auth="bearer token"`).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
				break
			}
		}
		close(urls)
		_, _ = io.Copy(io.Discard, stderr)
	}()
	var endpoint string
	select {
	case u, ok := <-urls:
		if !ok {
			t.Fatalf("the server ended before it served:\n%s", log.String())
		}
		endpoint = u
	case <-time.After(time.Minute):
		t.Fatal("the server did not say where it serves within a minute")
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func(rt http.RoundTripper) (*mcp.ClientSession, error) {
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: endpoint, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	}
	cs, err := connect(bearer{token})
	if err != nil {
		t.Fatalf("connect with the token: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "LRP1 uptake"}})
	if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "10.5555/cosci.tau.002") {
		t.Fatalf("search over HTTP with the token: %+v, %v", res, err)
	}
	cs.Close()
	for _, rt := range []http.RoundTripper{http.DefaultTransport, bearer{"0123456789abcdef0124"}} {
		if cs, err := connect(rt); err == nil {
			cs.Close()
			t.Errorf("a client with %T connected", rt)
		}
	}

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		name    string
		host    string
		headers map[string]string
		body    string
		want    int
	}{
		{"the token", "", map[string]string{"Authorization": "Bearer " + token}, initialize, http.StatusOK},
		{"no token", "", nil, initialize, http.StatusUnauthorized},
		{"DNS rebinding", "attacker.example:8765", map[string]string{"Authorization": "Bearer " + token, "Origin": "http://attacker.example:8765"}, initialize, http.StatusForbidden},
		{"DNS rebinding, no Origin", "attacker.example:8765", map[string]string{"Authorization": "Bearer " + token}, initialize, http.StatusForbidden},
		{"another origin", "", map[string]string{"Authorization": "Bearer " + token, "Origin": "http://attacker.example"}, initialize, http.StatusForbidden},
		{"a body over the bound", "", map[string]string{"Authorization": "Bearer " + token}, strings.Repeat(" ", maxBody+1), http.StatusRequestEntityTooLarge},
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(tc.body))
		if tc.host != "" {
			req.Host = tc.host
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range tc.headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %s %.200s; want %d", tc.name, resp.Status, b, tc.want)
		}
	}
}

// TestHTTPServerLimits: the HTTP server bounds headers and a request's reading and writing,
// and keeps an idle connection for a bounded time.
func TestHTTPServerLimits(t *testing.T) {
	s := httpServer(mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil), token, nil, nil)
	if s.MaxHeaderBytes <= 0 || s.MaxHeaderBytes > 1<<16 || s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 {
		t.Errorf("limits: headers %d, read header %s, read %s, write %s, idle %s", s.MaxHeaderBytes, s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout)
	}
}
