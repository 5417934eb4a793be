package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

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

// capRunes is s cut to at most n characters.
func capRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
