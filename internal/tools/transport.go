package tools

// How the worker reaches a tool server: a child process over stdio, with an environment
// that holds none of its keys, or streamable HTTP, whose headers go to the server's
// origin only.

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
	for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
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
