package httpguard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const token = "0123456789abcdef0123"

// TestToken: the token comes from NAME or from the file NAME_FILE names, trimmed; both,
// an empty file, a short token or one with a space are errors that say what to set.
func TestToken(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, empty, short := file("good", token+"\n"), file("empty", " \n"), file("short", "s3cret\n")
	big := file("big", strings.Repeat("a", maxTokenFile+1))
	for _, tc := range []struct {
		name      string
		env       map[string]string
		want, err string
	}{
		{"none", nil, "", ""},
		{"variable", map[string]string{"T": token}, token, ""},
		{"file", map[string]string{"T_FILE": good}, token, ""},
		{"both", map[string]string{"T": token, "T_FILE": good}, "", "both T and T_FILE are set"},
		{"missing file", map[string]string{"T_FILE": filepath.Join(dir, "missing")}, "", "T_FILE: open"},
		{"empty file", map[string]string{"T_FILE": empty}, "", "is empty; write the token into it"},
		{"big file", map[string]string{"T_FILE": big}, "", "it should hold the token alone"},
		{"short", map[string]string{"T": "s3cret"}, "", "T: the token is 6 characters; use at least 16"},
		{"short file", map[string]string{"T_FILE": short}, "", "T_FILE: the token is 6 characters"},
		{"space", map[string]string{"T": "0123456789 abcdef"}, "", "it travels in a header"},
	} {
		got, err := Token(func(k string) string { return tc.env[k] }, "T")
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %q, %v; want %q and an error saying %q", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// TestListen: on loopback a server needs no token and answers to the loopback names; on
// an address other machines reach it refuses to start without one, naming what to set;
// with one it answers to the names of --listen and --allowed-host (and loopback's, when
// it listens on every interface).
func TestListen(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		token   bool
		allowed []string
		hosts   []string
		err     string
	}{
		{"127.0.0.1:0", false, nil, []string{"127.0.0.1", "::1", "localhost"}, ""},
		{"localhost:0", false, []string{"Codec.Lab.Example."}, []string{"127.0.0.1", "::1", "codec.lab.example", "localhost"}, ""},
		{"0.0.0.0:0", false, nil, nil, "0.0.0.0:0 reaches beyond this machine"},
		{":0", false, nil, nil, "no token is set: set T_FILE"},
		{"127.0.0.1:0", false, []string{""}, nil, "an allowed host name is empty"},
		{"0.0.0.0:0", true, []string{"codec.lab.example:443"}, []string{"127.0.0.1", "::1", "codec.lab.example", "localhost"}, ""},
	} {
		l, hosts, err := Listen(tc.addr, tc.token, tc.allowed, "T_FILE")
		if err != nil {
			if tc.err == "" || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Listen(%s, token %v): %v; want %q", tc.addr, tc.token, err, tc.err)
			}
			continue
		}
		l.Close()
		if tc.err != "" || !slices.Equal(hosts, tc.hosts) {
			t.Errorf("Listen(%s, token %v): hosts %q; want %q (error %q)", tc.addr, tc.token, hosts, tc.hosts, tc.err)
		}
	}
}

// TestHandler: a request reaches the handler only with a Host the server answers to, from
// no browser or an allowed origin, with the token and a body within bounds. A DNS-rebound
// page (its own host name resolving to 127.0.0.1) names its own host, and its origin.
func TestHandler(t *testing.T) {
	var got []byte
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusTeapot)
	})
	o := Options{Token: token, Realm: "test", Origins: []string{"http://localhost:8233"}, AllowMethods: []string{"POST", "OPTIONS"},
		AllowHeaders: []string{"Authorization"}, MaxBody: 10}
	h := Handler(next, o)
	open := Handler(next, Options{MaxBody: 10}) // no token: a loopback server's
	bearer := "Bearer " + token
	for _, tc := range []struct {
		name    string
		h       http.Handler
		method  string
		host    string
		headers map[string]string
		body    string
		length  int64 // -1: chunked
		want    int
	}{
		{"the CLI", h, "POST", "127.0.0.1:8089", map[string]string{"Authorization": bearer}, "{}", 2, http.StatusTeapot},
		{"scheme in lower case", h, "POST", "localhost", map[string]string{"Authorization": "bearer " + token}, "", 0, http.StatusTeapot},
		{"IPv6 loopback", h, "POST", "[::1]:8089", map[string]string{"Authorization": bearer}, "", 0, http.StatusTeapot},
		{"the Web UI", h, "POST", "127.0.0.1:8089", map[string]string{"Authorization": bearer, "Origin": "http://localhost:8233"}, "", 0, http.StatusTeapot},
		{"no token", h, "POST", "127.0.0.1:8089", nil, "", 0, http.StatusUnauthorized},
		{"wrong token", h, "POST", "127.0.0.1:8089", map[string]string{"Authorization": "Bearer 0123456789abcdef0124"}, "", 0, http.StatusUnauthorized},
		{"token as basic", h, "POST", "127.0.0.1:8089", map[string]string{"Authorization": "Basic " + token}, "", 0, http.StatusUnauthorized},
		{"token's prefix", h, "POST", "127.0.0.1:8089", map[string]string{"Authorization": "Bearer " + token[:16]}, "", 0, http.StatusUnauthorized},
		{"DNS rebinding", open, "POST", "attacker.example:8089", nil, "", 0, http.StatusForbidden},
		{"DNS rebinding with the token", h, "POST", "attacker.example:8089", map[string]string{"Authorization": bearer}, "", 0, http.StatusForbidden},
		{"no Host", open, "POST", "", nil, "", 0, http.StatusForbidden},
		{"foreign origin", open, "POST", "127.0.0.1:8089", map[string]string{"Origin": "http://attacker.example"}, "", 0, http.StatusForbidden},
		{"null origin", open, "POST", "127.0.0.1:8089", map[string]string{"Origin": "null"}, "", 0, http.StatusForbidden},
		{"foreign preflight", h, "OPTIONS", "127.0.0.1:8089", map[string]string{"Origin": "http://attacker.example"}, "", 0, http.StatusForbidden},
		{"preflight", h, "OPTIONS", "127.0.0.1:8089", map[string]string{"Origin": "http://localhost:8233"}, "", 0, http.StatusNoContent},
		{"no origin, no token", open, "POST", "localhost:8089", nil, "0123456789", 10, http.StatusTeapot},
		{"body over the bound", h, "POST", "127.0.0.1:8089", map[string]string{"Authorization": bearer}, "0123456789a", 11, http.StatusRequestEntityTooLarge},
		{"chunked body over the bound", open, "POST", "127.0.0.1:8089", nil, "0123456789a", -1, http.StatusRequestEntityTooLarge},
	} {
		var body io.Reader
		if tc.body != "" {
			body = strings.NewReader(tc.body)
		}
		r := httptest.NewRequest(tc.method, "/decode", body)
		r.Host = tc.host
		r.ContentLength = tc.length
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		got = nil
		w := httptest.NewRecorder()
		tc.h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: %d %s; want %d", tc.name, w.Code, strings.TrimSpace(w.Body.String()), tc.want)
		}
		origin := tc.headers["Origin"]
		if allowed := origin == "http://localhost:8233"; allowed != (w.Header().Get("Access-Control-Allow-Origin") == origin && origin != "") {
			t.Errorf("%s: Access-Control-Allow-Origin %q", tc.name, w.Header().Get("Access-Control-Allow-Origin"))
		}
		if w.Code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") != `Bearer realm="test"` {
			t.Errorf("%s: WWW-Authenticate %q", tc.name, w.Header().Get("WWW-Authenticate"))
		}
		if w.Code == http.StatusTeapot && string(got) != tc.body {
			t.Errorf("%s: the handler read %q", tc.name, got)
		}
	}
}

// TestServer: the server bounds headers and every phase of a request.
func TestServer(t *testing.T) {
	s := Server(http.NotFoundHandler())
	if s.MaxHeaderBytes != MaxHeaderBytes || s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 {
		t.Errorf("server limits: headers %d, read header %s, read %s, write %s, idle %s", s.MaxHeaderBytes, s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout)
	}
}
