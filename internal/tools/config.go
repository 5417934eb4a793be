// Package tools connects a worker to the MCP tool servers its configuration names, through
// the official MCP Go SDK: it starts stdio servers as child processes or reaches streamable
// HTTP ones, lists their tools, and calls them. Every worker host reads the same
// configuration, so any of them can make any session's tool calls.
//
// A tool is named by its server's name and the server's own name of it, joined by a dot:
// "literature.search".
package tools

import (
	"bytes"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// DefaultTimeout is how long one call may take when a server's configuration sets none.
const DefaultTimeout = 30 * time.Second

// Config is the tool servers a worker connects to, read from a YAML or JSON file:
//
//	servers:
//	  - name: literature
//	    command: [bin/literature, --library, /data/zotero]
//	    rate: 10        # calls per second, across every worker
//	    timeout: 30s    # one call
//	  - name: pubmed
//	    url: https://mcp.example.org/mcp
//	    env: [PUBMED_TOKEN]  # the variables its headers may name
//	    headers: {Authorization: "Bearer ${PUBMED_TOKEN}"}
//	    trust: external # its calls wait for the scientist's approval
//	    max_result_bytes: 16384
type Config struct {
	Servers []Server `json:"servers" yaml:"servers"`
}

// Server is one tool server: a command speaking MCP over stdio, or a streamable HTTP
// endpoint.
type Server struct {
	Name string `json:"name" yaml:"name"`
	// Command is the program and its arguments, for a stdio server. It runs in Dir (the
	// worker's directory if empty) with an environment of PATH, HOME, LANG and TMPDIR and
	// the variables Env names, no more: the worker's model keys stay with the worker.
	Command []string `json:"command,omitempty" yaml:"command,omitempty"`
	Dir     string   `json:"dir,omitempty" yaml:"dir,omitempty"`
	// Env names the variables of the worker's environment the server is given: a stdio
	// server's environment, or what a url server's headers may name as ${NAME}. A
	// variable it does not list is not the server's, and cosci's own secrets (Secret)
	// are never any server's.
	Env []string `json:"env,omitempty" yaml:"env,omitempty"`
	// URL is a streamable HTTP endpoint. Its Headers' values may name variables of Env as
	// ${NAME}, so that tokens stay out of the file. Headers go to the URL's origin only
	// (its scheme, host and port), never to where it redirects; over plain http only to
	// this host (localhost, 127.0.0.1, ::1).
	URL     string            `json:"url,omitempty" yaml:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
	// Rate is how many calls per second the server takes, across every worker and session
	// (0: no limit). Temporal enforces it: each server's calls have a task queue of their
	// own, whose activities-per-second limit holds for all its workers.
	Rate float64 `json:"rate,omitempty" yaml:"rate,omitempty"`
	// Timeout bounds one call (DefaultTimeout if 0); a call that takes longer is retried,
	// then handed to the model as a tool error.
	Timeout research.Duration `json:"timeout,omitempty" yaml:"timeout,omitempty"`
	// Trust is who answers for the server: TrustLab (the default) for one the lab runs
	// over its own data, like cosci's literature server; TrustExternal for one that
	// reaches outside the lab (the web, a public API), to which a call sends what the
	// model wrote. Whatever the trust, the model reads every result as data.
	Trust string `json:"trust,omitempty" yaml:"trust,omitempty"`
	// Approve says whether every call of the server's tools waits for the scientist's
	// approval, in every session; unset, an external server's calls do and a lab
	// server's do not. A session's approve_tools adds calls to approve, never removes
	// one.
	Approve *bool `json:"approve,omitempty" yaml:"approve,omitempty"`
	// MaxResultBytes is how much of one result the model reads (DefaultMaxResultBytes if
	// 0); the rest is cut, and the model told so. The audit trail keeps the whole result.
	MaxResultBytes int `json:"max_result_bytes,omitempty" yaml:"max_result_bytes,omitempty"`
}

// The trust a server is given (Server.Trust).
const (
	TrustLab      = "lab"
	TrustExternal = "external"
)

// DefaultMaxResultBytes is how much of a result the model reads when the server sets no
// max_result_bytes; MaxResultBytes is the most a server may set.
const (
	DefaultMaxResultBytes = prompt.DefaultMaxResultBytes
	MaxResultBytes        = 1 << 20
)

// TrustOf is the server's trust, TrustLab when the file says none.
func (s Server) TrustOf() string {
	if s.Trust == "" {
		return TrustLab
	}
	return s.Trust
}

// Approves says whether every call of the server waits for the scientist.
func (s Server) Approves() bool {
	if s.Approve != nil {
		return *s.Approve
	}
	return s.TrustOf() == TrustExternal
}

// ResultLimit is how much of one result the model reads.
func (s Server) ResultLimit() int {
	if s.MaxResultBytes > 0 {
		return s.MaxResultBytes
	}
	return DefaultMaxResultBytes
}

// CallTimeout is how long one call to the server may take.
func (s Server) CallTimeout() time.Duration {
	if s.Timeout > 0 {
		return time.Duration(s.Timeout)
	}
	return DefaultTimeout
}

// Load reads a configuration file (YAML, of which JSON is a part) and checks it against
// the worker's environment, so that a mistake stops the worker at start rather than a
// session an hour later.
func Load(path string, env func(string) string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("tools: %w", err)
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true) // a misspelt field is a mistake, not a default
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("tools: %s: %v", path, err)
	}
	if err := c.Check(env); err != nil {
		return Config{}, fmt.Errorf("tools: %s: %w", path, err)
	}
	return c, nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Secret says why a variable of the worker's environment is cosci's own secret, which no
// tool server is given whatever its entry lists ("" for any other variable): the lab's
// keys open every sealed session, the codec server's token reads them, the webhook's URL
// holds its secret path, the store's URL and password reach every session's records, and
// the namespace's API key or client certificate steer every session.
func Secret(name string) string {
	switch {
	case strings.HasPrefix(name, "COSCI_KEYS"):
		return "the lab's encryption keys"
	case strings.HasPrefix(name, "COSCI_CODEC_TOKEN"):
		return "the codec server's token"
	case name == "COSCI_NOTIFY_URL":
		return "the webhook's URL, with its secret path"
	case name == "COSCI_STORE", name == "PGPASSWORD":
		return "the session store's address and password"
	case name == "TEMPORAL_API_KEY", strings.HasPrefix(name, "TEMPORAL_TLS_"):
		return "the worker's credentials for the Temporal namespace, which steer every session"
	}
	return ""
}

// Check refuses a configuration the worker could not use, naming the server and what to fix.
func (c Config) Check(env func(string) string) error {
	seen := map[string]bool{}
	for i, s := range c.Servers {
		what := fmt.Sprintf("server %d (%s)", i+1, s.Name)
		if err := research.CheckServerName(s.Name); err != nil {
			return fmt.Errorf("%s: %v", what, err)
		}
		if seen[s.Name] {
			return fmt.Errorf("%s: the name is used twice; give each server its own", what)
		}
		seen[s.Name] = true
		switch {
		case len(s.Command) > 0 && s.URL != "":
			return fmt.Errorf("%s: give a command (stdio) or a url (streamable HTTP), not both", what)
		case len(s.Command) == 0 && s.URL == "":
			return fmt.Errorf("%s: give a command (a stdio server) or a url (a streamable HTTP server)", what)
		case len(s.Command) > 0 && strings.TrimSpace(s.Command[0]) == "":
			return fmt.Errorf("%s: the command's program is empty", what)
		case s.Rate < 0:
			return fmt.Errorf("%s: rate is %v; give calls per second, or 0 for no limit", what, s.Rate)
		case s.Timeout < 0:
			return fmt.Errorf("%s: timeout is %s; it must be positive", what, s.Timeout)
		case s.Trust != "" && s.Trust != TrustLab && s.Trust != TrustExternal:
			return fmt.Errorf("%s: trust is %q; write lab (a server the lab runs over its own data) or external (one that reaches outside the lab)", what, s.Trust)
		case s.MaxResultBytes < 0 || s.MaxResultBytes > MaxResultBytes:
			return fmt.Errorf("%s: max_result_bytes is %d; give 1 to %d bytes (0: the default, %d)", what, s.MaxResultBytes, MaxResultBytes, DefaultMaxResultBytes)
		}
		if s.URL != "" {
			u, err := url.Parse(s.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%s: url %q is not an http(s) URL", what, s.URL)
			}
			// A header is a token, as a rule: over plain http it crosses the network
			// in clear, for anyone on the path to read.
			if len(s.Headers) > 0 && u.Scheme == "http" && !loopback(u.Hostname()) {
				return fmt.Errorf("%s: headers would go to %s over plain http, readable on the way; use an https:// url (plain http is for a server on this host: localhost, 127.0.0.1, ::1)", what, u.Host)
			}
		}
		if len(s.Headers) > 0 && s.URL == "" {
			return fmt.Errorf("%s: headers are for a url server; a command server gets environment variables through env", what)
		}
		for _, v := range s.Env {
			if why := Secret(v); why != "" {
				return fmt.Errorf("%s: env names %s, %s, which no tool server is given; give the server a token of its own, in a variable of its own", what, v, why)
			}
			if env(v) == "" {
				return fmt.Errorf("%s: env names %s, which is not set in the worker's environment", what, v)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
			for _, m := range envRef.FindAllStringSubmatch(s.Headers[name], -1) {
				switch v := m[1]; {
				case Secret(v) != "":
					return fmt.Errorf("%s: header %s names ${%s}, %s, which no tool server is given; give the server a token of its own, in a variable of its own", what, name, v, Secret(v))
				case !slices.Contains(s.Env, v):
					return fmt.Errorf("%s: header %s names ${%s}, which the server's env does not list; list the variables its headers may name in the server's entry: env: [%s]", what, name, v, v)
				}
			}
		}
	}
	return nil
}

// header is a header's value with the ${NAME}s it names filled in from env, of the
// variables the server's entry lists (none of cosci's secrets): Check refuses any other,
// and a configuration that was not checked gets them empty.
func (s Server) header(value string, env func(string) string) string {
	return envRef.ReplaceAllStringFunc(value, func(ref string) string {
		name := ref[2 : len(ref)-1]
		if !slices.Contains(s.Env, name) || Secret(name) != "" {
			return ""
		}
		return env(name)
	})
}

// loopback says whether a URL's host is this host: localhost or a loopback address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
