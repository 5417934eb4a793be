package tools

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain runs this test binary as a stdio tool server's stand-in when
// COSCI_TOOLS_TEST_HELPER says so (TestStderrIsReadInBoundedLines).
func TestMain(m *testing.M) {
	if os.Getenv("COSCI_TOOLS_TEST_HELPER") == "stderr" {
		// 10 MB without a newline, then a line with a terminal's escape sequences.
		chunk := []byte(strings.Repeat("a", 1<<16))
		for n := 0; n < 10<<20; n += len(chunk) {
			if _, err := os.Stderr.Write(chunk); err != nil {
				os.Exit(2)
			}
		}
		fmt.Fprint(os.Stderr, "\nafter \x1b[31mred\x1b[0m\r\x07 done\u202e\n")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// received is what a test HTTP server was sent.
type received struct {
	mu    sync.Mutex
	calls []http.Header
}

func (r *received) handler(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.calls = append(r.calls, req.Header.Clone())
	r.mu.Unlock()
	fmt.Fprint(w, "ok")
}

func (r *received) all() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// httpBox is a Box with one url server whose headers carry a token, and the http.Client
// its transport uses.
func httpBox(t *testing.T, endpoint string, base http.RoundTripper) *http.Client {
	t.Helper()
	cfg := Config{Servers: []Server{{Name: "pubmed", URL: endpoint, Env: []string{"PUBMED_TOKEN"},
		Headers: map[string]string{"Authorization": "Bearer ${PUBMED_TOKEN}", "X-Lab-Key": "${PUBMED_TOKEN}"}}}}
	env := func(k string) string { return map[string]string{"PUBMED_TOKEN": "t0k"}[k] }
	if err := cfg.Check(env); err != nil {
		t.Fatal(err)
	}
	b := Open(cfg, env, nil)
	if base != nil {
		b.base = base
	}
	tr, err := b.transport(cfg.Servers[0])
	if err != nil {
		t.Fatal(err)
	}
	return tr.(*mcp.StreamableClientTransport).HTTPClient
}

// TestHeadersStayWithTheirOrigin: a tool server's headers go to its own origin, and to no
// server it redirects to: not another host, not another port of its host.
func TestHeadersStayWithTheirOrigin(t *testing.T) {
	var other received
	elsewhere := httptest.NewServer(http.HandlerFunc(other.handler))
	defer elsewhere.Close()
	eu, _ := url.Parse(elsewhere.URL)

	var own received
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", own.handler)
	server := httptest.NewServer(mux)
	defer server.Close()
	redirect := map[string]string{
		"/to-another-host": "http://localhost:" + eu.Port() + "/mcp",
		"/to-another-port": "http://127.0.0.1:" + eu.Port() + "/mcp",
		"/to-itself":       server.URL + "/mcp",
	}
	for from, to := range redirect {
		mux.Handle(from, http.RedirectHandler(to, http.StatusTemporaryRedirect))
	}
	client := httpBox(t, server.URL+"/mcp", nil)

	for _, tc := range []struct {
		from   string
		whom   *received
		tokens bool
	}{
		{"/to-another-host", &other, false},
		{"/to-another-port", &other, false},
		{"/to-itself", &own, true},
	} {
		t.Run(tc.from, func(t *testing.T) {
			before := len(tc.whom.all())
			resp, err := client.Post(server.URL+tc.from, "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			calls := tc.whom.all()
			if len(calls) != before+1 {
				t.Fatalf("%d requests reached the redirect's target, want 1", len(calls)-before)
			}
			h := calls[len(calls)-1]
			got := h.Get("Authorization") != "" || h.Get("X-Lab-Key") != ""
			if got != tc.tokens {
				t.Errorf("redirected %s: Authorization %q, X-Lab-Key %q; want the token sent: %v", tc.from, h.Get("Authorization"), h.Get("X-Lab-Key"), tc.tokens)
			}
			if tc.tokens && h.Get("Authorization") != "Bearer t0k" {
				t.Errorf("Authorization %q at the server's own origin", h.Get("Authorization"))
			}
		})
	}
}

// TestRedirectFromHTTPSToHTTP: an https tool server that redirects to plain http is not
// followed, and the plain http server hears nothing.
func TestRedirectFromHTTPSToHTTP(t *testing.T) {
	var plain received
	insecure := httptest.NewServer(http.HandlerFunc(plain.handler))
	defer insecure.Close()
	secure := httptest.NewTLSServer(http.RedirectHandler(insecure.URL+"/mcp", http.StatusTemporaryRedirect))
	defer secure.Close()

	client := httpBox(t, secure.URL+"/mcp", secure.Client().Transport)
	resp, err := client.Post(secure.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err == nil {
		resp.Body.Close()
		t.Fatal("a redirect from https to http was followed")
	}
	if !strings.Contains(err.Error(), "refused a redirect from https://") || !strings.Contains(err.Error(), "give the tool server's https address") {
		t.Errorf("error %v; want one saying the redirect from https was refused", err)
	}
	if n := len(plain.all()); n != 0 {
		t.Errorf("%d requests reached the plain http server (Authorization %q)", n, plain.all()[0].Get("Authorization"))
	}
}

// logged keeps the records a logger is given.
type logged struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logged) Enabled(context.Context, slog.Level) bool { return true }
func (l *logged) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}
func (l *logged) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logged) WithGroup(string) slog.Handler      { return l }

// TestStderrIsReadInBoundedLines: a stdio server that writes 10 MB to stderr without a
// newline costs the worker one bounded line, logged cut and saying so; control characters
// never reach the log.
func TestStderrIsReadInBoundedLines(t *testing.T) {
	var log logged
	cfg := Config{Servers: []Server{{Name: "noisy", Command: []string{os.Args[0]}, Env: []string{"COSCI_TOOLS_TEST_HELPER"}}}}
	b := Open(cfg, func(k string) string {
		return map[string]string{"COSCI_TOOLS_TEST_HELPER": "stderr", "PATH": os.Getenv("PATH")}[k]
	}, slog.New(&log))
	tr, err := b.transport(cfg.Servers[0])
	if err != nil {
		t.Fatal(err)
	}
	cmd := tr.(*mcp.CommandTransport).Command
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	w := cmd.Stderr.(*logWriter)
	if cap(w.buf) > 2*MaxLogLine {
		t.Errorf("the stderr reader holds %d bytes, want at most %d", cap(w.buf), 2*MaxLogLine)
	}
	var lines []string
	var cut []bool
	for _, r := range log.records {
		lines = append(lines, r.Message)
		c := false
		r.Attrs(func(a slog.Attr) bool {
			c = c || a.Key == "cut"
			return true
		})
		cut = append(cut, c)
	}
	if len(lines) != 2 {
		var lens []int
		for _, l := range lines {
			lens = append(lens, len(l))
		}
		t.Fatalf("%d lines logged (of %v bytes), want 2", len(lines), lens)
	}
	if len(lines[0]) != MaxLogLine || strings.Trim(lines[0], "a") != "" || !cut[0] {
		t.Errorf("the long line logged as %d bytes (cut noted: %v), want its first %d, noted as cut", len(lines[0]), cut[0], MaxLogLine)
	}
	if lines[1] != "after [31mred[0m done" || cut[1] {
		t.Errorf("the line after logged as %q (cut: %v), want it whole without control characters", lines[1], cut[1])
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
