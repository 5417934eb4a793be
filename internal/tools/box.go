package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// Box holds a worker's connections to its tool servers. It connects to a server when it
// is first needed and again after the connection broke (a stdio server that died, an HTTP
// server that restarted), so a call made after a failure finds a new connection. It is
// safe for concurrent use.
type Box struct {
	env     func(string) string
	logger  *slog.Logger
	client  *mcp.Client
	servers []*server // in the configuration's order
	// base carries the HTTP servers' requests (http.DefaultTransport; tests trust their
	// own TLS servers through it).
	base http.RoundTripper
	// Connect makes a server's transport; tests replace it to use in-memory transports.
	Connect func(Server) (mcp.Transport, error)
}

// server is one configured server and its connection, if any.
type server struct {
	cfg     Server
	mu      sync.Mutex
	session *mcp.ClientSession
	tools   []*mcp.Tool // as last listed
}

// Open returns a Box for a configuration; it connects to nothing yet. env is the worker's
// environment (os.Getenv), for the servers' headers and the commands' variables.
func Open(c Config, env func(string) string, logger *slog.Logger) *Box {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	b := &Box{
		env:    env,
		logger: logger,
		client: mcp.NewClient(&mcp.Implementation{Name: "cosci-worker", Version: "1"}, nil),
		base:   http.DefaultTransport,
	}
	b.Connect = b.transport
	for _, s := range c.Servers {
		b.servers = append(b.servers, &server{cfg: s})
	}
	return b
}

// Servers returns the configured servers, in order.
func (b *Box) Servers() []Server {
	out := make([]Server, len(b.servers))
	for i, s := range b.servers {
		out[i] = s.cfg
	}
	return out
}

// Close ends every connection (and stops stdio servers).
func (b *Box) Close() {
	for _, s := range b.servers {
		s.mu.Lock()
		if s.session != nil {
			_ = s.session.Close()
			s.session = nil
		}
		s.mu.Unlock()
	}
}

// transport is the real transport of a server: a child process over stdio, or streamable HTTP.
func (b *Box) transport(s Server) (mcp.Transport, error) {
	if len(s.Command) > 0 {
		cmd := exec.Command(s.Command[0], s.Command[1:]...)
		cmd.Dir = s.Dir
		cmd.Env = childEnv(s.Env, b.env)
		cmd.Stderr = &logWriter{logger: b.logger.With("tool_server", s.Name)}
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
	}
	headers := http.Header{}
	for _, name := range sortedKeys(s.Headers) {
		headers.Set(name, s.header(s.Headers[name], b.env))
	}
	client, err := httpClient(s.URL, headers, b.base)
	if err != nil {
		return nil, err
	}
	return &mcp.StreamableClientTransport{
		Endpoint:             s.URL,
		HTTPClient:           client,
		MaxRetries:           -1, // Temporal's retry policy is the one retry mechanism
		DisableStandaloneSSE: true,
	}, nil
}

// httpClient is the client of a streamable HTTP server at endpoint. It sends the
// configured headers (a token, as a rule) to the endpoint's origin only: a redirect to
// another scheme, host or port is followed without them, as Go strips Authorization
// from a request to another host. A redirect from https to plain http is refused: what
// the request carries (the model's arguments) would cross the network in clear.
func httpClient(endpoint string, headers http.Header, next http.RoundTripper) (*http.Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", endpoint, err)
	}
	return &http.Client{
		Transport: &withHeaders{origin: originOf(u), headers: headers, next: next},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			if from := via[len(via)-1].URL; strings.EqualFold(from.Scheme, "https") && !strings.EqualFold(req.URL.Scheme, "https") {
				return fmt.Errorf("refused a redirect from https://%s to %s://%s: it would go on in clear; give the tool server's https address in the tools file", from.Host, req.URL.Scheme, req.URL.Host)
			}
			return nil
		},
	}, nil
}

// origin is a URL's scheme, host and port, as a browser compares them.
type origin struct{ scheme, host, port string }

func originOf(u *url.URL) origin {
	o := origin{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port()}
	if o.port == "" {
		switch o.scheme {
		case "http":
			o.port = "80"
		case "https":
			o.port = "443"
		}
	}
	return o
}

// childEnv is a stdio server's environment: enough to run a program, and what its
// configuration names; never the worker's model keys.
func childEnv(names []string, env func(string) string) []string {
	var out []string
	for _, n := range append([]string{"PATH", "HOME", "LANG", "TMPDIR", "GOCACHE", "GOPATH", "GOMODCACHE", "XDG_CACHE_HOME"}, names...) {
		if Secret(n) != "" {
			continue // Check refuses it; a configuration that was not checked does without
		}
		if v := env(n); v != "" {
			out = append(out, n+"="+v)
		}
	}
	return out
}

// withHeaders adds fixed headers to every request to one origin, and to no other: the
// http.Client follows redirects through it, and a header added on every hop would follow
// them anywhere.
type withHeaders struct {
	origin  origin
	headers http.Header
	next    http.RoundTripper
}

func (t *withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	if originOf(r.URL) != t.origin {
		return t.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, vs := range t.headers {
		r.Header[k] = vs
	}
	return t.next.RoundTrip(r)
}

// MaxLogLine is the most of one line of a stdio server's stderr the worker logs.
const MaxLogLine = 4096

// logWriter sends a stdio server's stderr to the worker's log, a line at a time. It holds
// at most MaxLogLine bytes: a longer line is logged cut, saying so, and the rest of it
// dropped, so a server that writes megabytes without a newline costs the worker no more.
// Control characters are dropped from what it logs: the log is read on terminals.
type logWriter struct {
	logger *slog.Logger
	mu     sync.Mutex
	buf    []byte
	cut    bool // the line being read was logged cut: the rest of it is dropped
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !w.cut {
			if room := MaxLogLine - len(w.buf); len(part) > room {
				w.buf = append(w.buf, part[:room]...)
				w.log(true)
				w.cut = true
			} else {
				w.buf = append(w.buf, part...)
			}
		}
		if i < 0 {
			break
		}
		if !w.cut {
			w.log(false)
		}
		w.buf, w.cut = w.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// log logs the line held, if it has anything to show, and empties the buffer.
func (w *logWriter) log(cut bool) {
	line := strings.TrimSpace(printable(string(w.buf)))
	w.buf = w.buf[:0]
	switch {
	case line == "":
	case cut:
		w.logger.Info(line, "cut", fmt.Sprintf("the line goes on past %d bytes; the rest of it is dropped", MaxLogLine))
	default:
		w.logger.Info(line)
	}
}

// printable is s without control and format characters (a terminal's escape sequences,
// carriage returns, bidirectional overrides), a tab as a space and bytes that are not
// UTF-8 as U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// find returns the configured server of that name.
func (b *Box) find(name string) (*server, error) {
	for _, s := range b.servers {
		if s.cfg.Name == name {
			return s, nil
		}
	}
	var names []string
	for _, s := range b.servers {
		names = append(names, s.cfg.Name)
	}
	if len(names) == 0 {
		return nil, &UnknownError{What: fmt.Sprintf("tool server %q: this worker has no tool servers (start it with --tools FILE)", name)}
	}
	return nil, &UnknownError{What: fmt.Sprintf("tool server %q: the workers have %s", name, strings.Join(names, ", "))}
}

// UnknownError is a tool or server the workers do not have. No retry finds it.
type UnknownError struct{ What string }

func (e *UnknownError) Error() string { return "no " + e.What }

// connected returns the server's session, connecting (and listing its tools) if there is
// none. The caller holds s.mu.
func (b *Box) connected(ctx context.Context, s *server) (*mcp.ClientSession, error) {
	if s.session != nil {
		return s.session, nil
	}
	t, err := b.Connect(s.cfg)
	if err != nil {
		return nil, fmt.Errorf("tool server %s: %w", s.cfg.Name, err)
	}
	cs, err := b.client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("tool server %s: cannot connect: %w", s.cfg.Name, err)
	}
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			_ = cs.Close()
			return nil, fmt.Errorf("tool server %s: cannot list its tools: %w", s.cfg.Name, err)
		}
		tools = append(tools, tool)
	}
	s.session, s.tools = cs, tools
	b.logger.Info("connected to a tool server", "tool_server", s.cfg.Name, "tools", len(tools))
	return cs, nil
}

// drop forgets a broken connection, so the next use connects again. The caller holds s.mu.
func (s *server) drop(cs *mcp.ClientSession) {
	if s.session == cs && cs != nil {
		_ = cs.Close()
		s.session = nil
	}
}

// ServerTools is one server's tools as the catalog lists them.
type ServerTools struct {
	Server  string              `json:"server"`
	Rate    float64             `json:"rate,omitempty"`
	Timeout research.Duration   `json:"timeout"`
	Tools   []research.ToolSpec `json:"tools"`
	// Trust is the server's (TrustLab or TrustExternal), and Approve whether each of its
	// calls waits for the scientist in every session (Server.Approves): the session reads
	// it at its start.
	Trust   string `json:"trust,omitempty"`
	Approve bool   `json:"approve,omitempty"`
	// Error says why the server's tools could not be listed ("" when they were).
	Error string `json:"error,omitempty"`
}

// Catalog lists every server's tools. A server that cannot be reached is in the catalog
// with its error, not a failure of the whole: the others' tools are still there.
func (b *Box) Catalog(ctx context.Context) []ServerTools {
	out := make([]ServerTools, len(b.servers))
	var wg sync.WaitGroup
	for i, s := range b.servers {
		out[i] = ServerTools{Server: s.cfg.Name, Rate: s.cfg.Rate, Timeout: research.Duration(s.cfg.CallTimeout()), Tools: []research.ToolSpec{},
			Trust: s.cfg.TrustOf(), Approve: s.cfg.Approves()}
		wg.Go(func() {
			specs, err := b.list(ctx, s)
			if err != nil {
				out[i].Error = err.Error()
				return
			}
			out[i].Tools = specs
		})
	}
	wg.Wait()
	return out
}

// list returns a server's tools as specs, connecting if needed.
func (b *Box) list(ctx context.Context, s *server) ([]research.ToolSpec, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := b.connected(ctx, s); err != nil {
		return nil, err
	}
	specs := make([]research.ToolSpec, 0, len(s.tools))
	for _, t := range s.tools {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		// The server's description is data the model reads, cut to
		// prompt.MaxToolDescription where it is shown; cut here too, a server's
		// description cannot swell the catalog every session reads.
		specs = append(specs, research.ToolSpec{Name: s.cfg.Name + "." + t.Name, Description: capRunes(t.Description, 4*prompt.MaxToolDescription),
			InputSchema: schema, MaxResultBytes: s.cfg.ResultLimit()})
	}
	return specs, nil
}

// Specs returns the specs of the named tools ("server.tool", or "server.*" for all of a
// server's), in the order named. A name the workers do not have is an *UnknownError.
func (b *Box) Specs(ctx context.Context, names []string) ([]research.ToolSpec, error) {
	var out []research.ToolSpec
	for _, name := range names {
		srv, tool, err := research.SplitTool(name)
		if err != nil {
			return nil, err
		}
		s, err := b.find(srv)
		if err != nil {
			return nil, err
		}
		specs, err := b.list(ctx, s)
		if err != nil {
			return nil, err
		}
		if tool == "*" {
			out = append(out, specs...)
			continue
		}
		i := slices.IndexFunc(specs, func(sp research.ToolSpec) bool { return sp.Name == name })
		if i < 0 {
			var have []string
			for _, sp := range specs {
				have = append(have, sp.Name)
			}
			return nil, &UnknownError{What: fmt.Sprintf("tool %q: server %s has %s", name, srv, strings.Join(have, ", "))}
		}
		out = append(out, specs[i])
	}
	return out, nil
}

// Outcome is what a tool call gave back.
type Outcome struct {
	Content    string          // the text the model reads
	Structured json.RawMessage // the structured result, if any
	IsError    bool            // the tool reported an error (a result, not a failure)
}

// Call calls a tool ("server.tool") with arguments (a JSON object). A tool's own error
// (a bad argument, nothing found) is an Outcome with IsError, for the model to read; an
// error return is a failure to reach the tool (retried by the caller's policy), or an
// *UnknownError for a tool the server does not have.
func (b *Box) Call(ctx context.Context, name string, args json.RawMessage) (Outcome, error) {
	srv, tool, err := research.SplitTool(name)
	if err != nil || tool == "*" {
		return Outcome{}, &UnknownError{What: fmt.Sprintf("tool %q: name one tool, server.tool", name)}
	}
	s, err := b.find(srv)
	if err != nil {
		return Outcome{}, err
	}
	// The server's own timeout bounds each call, whatever the caller allows.
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	var arguments map[string]any
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &arguments); err != nil {
			return Outcome{Content: "the arguments are not a JSON object (" + err.Error() + "); call the tool again with a JSON object that matches its input schema", IsError: true}, nil
		}
	}
	s.mu.Lock()
	cs, err := b.connected(ctx, s)
	if err == nil && !slices.ContainsFunc(s.tools, func(t *mcp.Tool) bool { return t.Name == tool }) {
		err = &UnknownError{What: fmt.Sprintf("tool %q on server %s", tool, srv)}
	}
	s.mu.Unlock()
	if err != nil {
		return Outcome{}, err
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: arguments})
	var refused *jsonrpc.Error
	switch {
	case err == nil:
		return outcome(res), nil
	case errors.As(err, &refused) && !errors.Is(err, mcp.ErrConnectionClosed):
		// The server answered, refusing the request (bad arguments, say): the model reads
		// why, as it would a tool's own error. Asking again the same way would not help.
		return Outcome{Content: fmt.Sprintf("the %s server refused the call: %s", srv, refused.Message), IsError: true}, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Outcome{}, fmt.Errorf("tool %s did not answer within %s: %w", name, s.cfg.CallTimeout(), err)
	case ctx.Err() == nil:
		// The connection is gone (a server that died, a network that failed): the next
		// call connects again.
		s.mu.Lock()
		s.drop(cs)
		s.mu.Unlock()
	}
	return Outcome{}, fmt.Errorf("tool %s: %w", name, err)
}

// outcome turns an MCP result into what the model reads: its text parts, and a note for
// each part that is not text.
func outcome(res *mcp.CallToolResult) Outcome {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[an image, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[a resource: %s %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[a resource: %s]", c.Resource.URI))
			}
		}
	}
	o := Outcome{Content: strings.Join(parts, "\n"), IsError: res.IsError}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			o.Structured = b
		}
	}
	if o.Content == "" && len(o.Structured) > 0 {
		o.Content = string(o.Structured)
	}
	return o
}

// capRunes is s cut to at most n characters.
func capRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
