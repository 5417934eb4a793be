// Package httpguard closes the doors of cosci's own HTTP listeners (the codec server, the
// literature server's HTTP mode): a bearer token read from the environment or a file and
// compared in constant time; no start on an address other machines reach without one;
// the Host header checked against the names the server answers to and the Origin against
// the browser origins allowed, which together defeat DNS rebinding (a page on another
// site whose name is made to resolve to 127.0.0.1); bounded bodies and headers; and read,
// write and idle timeouts.
package httpguard

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MinTokenLen is the shortest bearer token accepted: a token is guessed over the network,
// so it must be long and random (`openssl rand -hex 32` gives 64 characters).
const MinTokenLen = 16

// maxTokenFile bounds what a token file may hold.
const maxTokenFile = 4 << 10

// Token reads a bearer token from the environment: the variable name holds the token
// itself, or name+"_FILE" names a file that holds it (its surrounding white space, such
// as the final newline, is not part of it). Neither set is no token (""); both set, an
// empty or unreadable file, or a token too short or unfit for a header is an error that
// says what to set.
func Token(getenv func(string) string, name string) (string, error) {
	fileVar := name + "_FILE"
	token, file := getenv(name), getenv(fileVar)
	switch {
	case token != "" && file != "":
		return "", fmt.Errorf("both %s and %s are set: keep one (the file keeps the token out of the process environment)", name, fileVar)
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return "", fmt.Errorf("%s: %w", fileVar, err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
		if err != nil {
			return "", fmt.Errorf("%s: %w", fileVar, err)
		}
		if len(b) > maxTokenFile {
			return "", fmt.Errorf("%s: %s is over %d bytes; it should hold the token alone", fileVar, file, maxTokenFile)
		}
		token = strings.TrimSpace(string(b))
		if token == "" {
			return "", fmt.Errorf("%s: %s is empty; write the token into it, e.g. openssl rand -hex 32 > %s", fileVar, file, file)
		}
		name = fileVar
	case token == "":
		return "", nil
	}
	if n := len(token); n < MinTokenLen {
		return "", fmt.Errorf("%s: the token is %d characters; use at least %d random ones, e.g. from openssl rand -hex 32", name, n, MinTokenLen)
	}
	for _, c := range []byte(token) {
		if c <= ' ' || c >= 0x7f {
			return "", fmt.Errorf("%s: the token holds a space, a control character or a non-ASCII byte; it travels in a header: use letters, digits and punctuation, e.g. from openssl rand -hex 32", name)
		}
	}
	return token, nil
}

// LoopbackHosts are the names a loopback listener answers to.
var LoopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// Listen listens on addr (host:port) and works out the host names the server answers to:
// the host of addr itself, the loopback names when it listens on loopback (or on every
// interface, which includes loopback), and the names of allowed (the names clients use
// behind a proxy or on the lab's network). Bound to anything but loopback, it refuses to
// serve without a token, saying to set tokenVars.
func Listen(addr string, haveToken bool, allowed []string, tokenVars string) (net.Listener, []string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	bound, _ := l.Addr().(*net.TCPAddr)
	loopback := bound != nil && bound.IP.IsLoopback()
	if !loopback && !haveToken {
		l.Close()
		return nil, nil, fmt.Errorf("%s reaches beyond this machine, and no token is set: set %s to a long random token (e.g. openssl rand -hex 32) that every client must send, or listen on 127.0.0.1", addr, tokenVars)
	}
	var hosts []string
	if h, _, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(h); h != "" && (ip == nil || !ip.IsUnspecified()) {
			hosts = append(hosts, h)
		}
	}
	if loopback || (bound != nil && bound.IP.IsUnspecified()) {
		hosts = append(hosts, LoopbackHosts...)
	}
	for _, h := range allowed {
		if h = hostname(h); h == "" {
			l.Close()
			return nil, nil, errors.New("an allowed host name is empty: give the name clients reach the server by, e.g. --allowed-host codec.lab.example")
		}
		hosts = append(hosts, h)
	}
	for i, h := range hosts {
		hosts[i] = hostname(h)
	}
	slices.Sort(hosts)
	return l, slices.Compact(hosts), nil
}

// hostname is a Host header's or a name's host, as compared: without its port or the
// brackets of an IPv6 address, in lower case, without a final dot.
func hostname(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// Options are what a guarded handler allows.
type Options struct {
	// Token, if set, is the bearer token every request but a CORS preflight must carry
	// (Authorization: Bearer <token>).
	Token string
	// Realm names the server in the WWW-Authenticate header of a refusal.
	Realm string
	// Hosts are the host names (no port) the Host header may name; none is the loopback
	// names. A request for any other host is refused: it is how a DNS-rebound page reaches
	// a loopback server.
	Hosts []string
	// Origins are the browser origins (scheme://host:port) whose pages may call; a request
	// from any other origin is refused. Requests without an Origin header (the CLI, a
	// worker, scripts) are not browsers' and pass. CORS answers the origins allowed.
	Origins []string
	// CORS is what a preflight from an allowed origin is told.
	AllowMethods, AllowHeaders, ExposeHeaders []string
	// MaxBody bounds a request's body, in bytes; a longer one is refused with 413.
	MaxBody int64
}

// Handler guards next: the Host, then the Origin (with CORS for allowed origins and their
// preflights answered), then the token, then the body's size, which it reads whole before
// next runs so that an oversized body is a 413 whatever next would make of it.
func Handler(next http.Handler, o Options) http.Handler {
	hosts := o.Hosts
	if len(hosts) == 0 {
		hosts = LoopbackHosts
	}
	var want [sha256.Size]byte
	if o.Token != "" {
		want = sha256.Sum256([]byte(o.Token))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(w, r, hosts, "--allowed-host") {
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			if !slices.Contains(o.Origins, strings.TrimRight(origin, "/")) {
				http.Error(w, "pages of this origin may not call this server; its operator allows an origin with --origin (codec-server) or --allowed-origin (literature)", http.StatusForbidden)
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", strings.Join(o.AllowMethods, ", "))
			h.Set("Access-Control-Allow-Headers", strings.Join(o.AllowHeaders, ", "))
			if len(o.ExposeHeaders) > 0 {
				h.Set("Access-Control-Expose-Headers", strings.Join(o.ExposeHeaders, ", "))
			}
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions {
				w.WriteHeader(http.StatusNoContent) // a preflight: browsers send it without the token
				return
			}
		}
		if o.Token != "" {
			scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			have := sha256.Sum256([]byte(strings.TrimSpace(got)))
			// Hashing first makes the comparison's time independent of the token's length too.
			if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(have[:], want[:]) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="`+o.Realm+`"`)
				http.Error(w, "a bearer token is required: send Authorization: Bearer <token>", http.StatusUnauthorized)
				return
			}
		}
		if o.MaxBody > 0 && r.Body != nil && r.Body != http.NoBody {
			if r.ContentLength > o.MaxBody {
				tooLarge(w, o.MaxBody)
				return
			}
			b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, o.MaxBody))
			if err != nil {
				if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
					tooLarge(w, o.MaxBody)
					return
				}
				http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed says whether the request's Host names one of hosts, and answers 403 if not.
func hostAllowed(w http.ResponseWriter, r *http.Request, hosts []string, flag string) bool {
	if slices.Contains(hosts, hostname(r.Host)) {
		return true
	}
	http.Error(w, "this server does not answer to the host the request names (its Host header); if clients reach it by that name, its operator adds it with "+flag, http.StatusForbidden)
	return false
}

// Pages guards a server of web pages (the desk) against DNS rebinding: a request whose
// Host names none of hosts is refused, and so is one whose Origin is neither the page's
// own (the scheme and the Host it asked for) nor one of origins (scheme://host:port, the
// server's public address behind a proxy). A page of another site whose name now
// resolves to 127.0.0.1 sends its own name as Host, and its own origin: both are refused,
// so it reads nothing, and the CSRF token of a page it never got does not help it. flag
// names the setting that adds a host, for the refusal's message.
func Pages(next http.Handler, hosts, origins []string, flag string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(w, r, hosts, flag) {
			return
		}
		if o := strings.TrimRight(r.Header.Get("Origin"), "/"); o != "" && o != "http://"+r.Host && o != "https://"+r.Host && !slices.Contains(origins, o) {
			http.Error(w, "pages of another origin may not call this server (its Origin header)", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func tooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Connection", "close")
	http.Error(w, "the request's body is over "+strconv.FormatInt(limit, 10)+" bytes", http.StatusRequestEntityTooLarge)
}

// The limits of Server.
const (
	MaxHeaderBytes    = 32 << 10
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = time.Minute
	WriteTimeout      = 2 * time.Minute
	IdleTimeout       = 2 * time.Minute
)

// Server is an http.Server for h with bounded headers and timeouts for reading a
// request, writing its answer and keeping an idle connection, so that a slow or stalled
// client holds no connection for long.
func Server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		MaxHeaderBytes:    MaxHeaderBytes,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
	}
}
