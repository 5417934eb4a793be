// Package auth signs people in to the desk, in one of three ways a lab already has:
//
//   - OIDC: OpenID Connect's authorization code flow with PKCE, against the lab's identity
//     provider (github.com/coreos/go-oidc and golang.org/x/oauth2);
//   - Proxy: an authenticating proxy in front of the desk (oauth2-proxy's convention:
//     X-Forwarded-User, X-Forwarded-Email, X-Forwarded-Groups), believed only from the
//     proxy's own addresses;
//   - Local: one person on their own laptop, the desk listening on loopback only.
//
// The desk keeps no state: who is signed in lives in a cookie sealed with the desk's key
// (cookie.go), so a restart or another replica signs nobody out. Roles are worked out on
// every request from the identity's groups and the policy, so a change of policy applies
// at once.
package auth

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
)

// Modes of sign-in.
const (
	ModeOIDC  = "oidc"
	ModeProxy = "proxy"
	ModeLocal = "local"
)

// SessionCookie holds a signed-in person, sealed (Key.Seal).
const SessionCookie = "cosci_desk"

// signedIn is what the session cookie holds.
type signedIn struct {
	ID     string   `json:"id"`
	Name   string   `json:"name,omitempty"`
	Groups []string `json:"groups,omitempty"`
	Nonce  string   `json:"nonce"` // this sign-in's, for its CSRF tokens
}

// Config configures an Authenticator.
type Config struct {
	Mode string
	Key  *Key
	// Roles gives an identity its roles from its groups (the policy).
	Roles func(id string, groups []string) []access.Role
	// Secure marks cookies Secure: the desk is reached over TLS.
	Secure bool
	// TTL is how long a sign-in lasts (default 12 h).
	TTL time.Duration
	// Proxies are the addresses the proxy mode believes headers from.
	Proxies []netip.Prefix
	// LocalUser is the local mode's one identity.
	LocalUser string
	// OIDC is the identity provider, for the OIDC mode.
	OIDC *OIDC
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Authenticator says who makes a request.
type Authenticator struct{ c Config }

// New checks a configuration and returns its Authenticator.
func New(c Config) (*Authenticator, error) {
	if c.Key == nil {
		return nil, errors.New("auth: no key")
	}
	if c.TTL == 0 {
		c.TTL = 12 * time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Roles == nil {
		c.Roles = func(string, []string) []access.Role { return nil }
	}
	switch c.Mode {
	case ModeOIDC:
		if c.OIDC == nil {
			return nil, errors.New("auth: the oidc mode needs an identity provider (--oidc-issuer)")
		}
	case ModeProxy:
		if len(c.Proxies) == 0 {
			return nil, errors.New("auth: the proxy mode needs the proxy's addresses (--trusted-proxy)")
		}
	case ModeLocal:
		if strings.TrimSpace(c.LocalUser) == "" {
			return nil, errors.New("auth: the local mode needs a user name (--local-user)")
		}
	default:
		return nil, errors.New(`auth: the sign-in mode must be "oidc", "proxy" or "local"`)
	}
	return &Authenticator{c: c}, nil
}

// Mode is the sign-in mode.
func (a *Authenticator) Mode() string { return a.c.Mode }

// Key is the desk's key.
func (a *Authenticator) Key() *Key { return a.c.Key }

// Who is a request's signed-in person and their CSRF token; ok is false for nobody.
type Who struct {
	access.Identity
	CSRF string
}

// Identify says who makes a request: from the sealed cookie (OIDC), the proxy's headers
// from a trusted address (proxy), or the one local user (local).
func (a *Authenticator) Identify(r *http.Request) (Who, bool) {
	var s signedIn
	switch a.c.Mode {
	case ModeOIDC:
		c, err := r.Cookie(SessionCookie)
		if err != nil || a.c.Key.Open(SessionCookie, c.Value, a.c.Now(), &s) != nil {
			return Who{}, false
		}
	case ModeProxy:
		if !a.fromProxy(r) {
			return Who{}, false
		}
		s.ID = strings.TrimSpace(r.Header.Get("X-Forwarded-Email"))
		if s.ID == "" {
			s.ID = strings.TrimSpace(r.Header.Get("X-Forwarded-User"))
		}
		s.Name = strings.TrimSpace(r.Header.Get("X-Forwarded-Preferred-Username"))
		for _, g := range strings.Split(r.Header.Get("X-Forwarded-Groups"), ",") {
			if g = strings.TrimSpace(g); g != "" {
				s.Groups = append(s.Groups, g)
			}
		}
		if s.ID == "" || strings.ContainsAny(s.ID, "\r\n") {
			return Who{}, false
		}
	case ModeLocal:
		if !loopback(r.RemoteAddr) {
			return Who{}, false
		}
		s.ID = a.c.LocalUser
	}
	id := access.Identity{ID: s.ID, Name: s.Name, Groups: s.Groups, Roles: a.c.Roles(s.ID, s.Groups)}
	if a.c.Mode == ModeLocal {
		id.Roles = []access.Role{access.Scientist, access.Admin}
	}
	return Who{Identity: id, CSRF: a.c.Key.CSRF(s.ID, s.Nonce)}, true
}

// CheckCSRF says whether a form's token is the one Identify gave this person.
func (w Who) CheckCSRF(token string) bool {
	return token != "" && w.CSRF == token
}

func (a *Authenticator) fromProxy(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range a.c.Proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

func loopback(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// SignInURL is where a person who is not signed in goes to sign in, coming back to next;
// "" when the mode has no sign-in page (the proxy and local modes sign in elsewhere).
func (a *Authenticator) SignInURL(next string) string {
	if a.c.Mode != ModeOIDC {
		return ""
	}
	return "/auth/login?next=" + urlQueryEscape(safeNext(next))
}

// Handle adds the sign-in routes to mux: /auth/login and /auth/callback (OIDC), and
// POST /auth/logout, which the desk guards with its CSRF check (logout).
func (a *Authenticator) Handle(mux *http.ServeMux) {
	if a.c.Mode == ModeOIDC {
		mux.HandleFunc("GET /auth/login", a.login)
		mux.HandleFunc("GET /auth/callback", a.callback)
	}
}

// SignOut clears the session cookie.
func (a *Authenticator) SignOut(w http.ResponseWriter) {
	http.SetCookie(w, a.cookie(SessionCookie, "", "/", -1))
}

// cookie is one of the desk's cookies: HttpOnly, SameSite=Lax (the identity provider's
// redirect back is a top-level GET, which Lax lets through), Secure behind TLS.
func (a *Authenticator) cookie(name, value, path string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: path, MaxAge: maxAge, HttpOnly: true,
		Secure: a.c.Secure, SameSite: http.SameSiteLaxMode}
}

// setSignedIn writes the session cookie for s.
func (a *Authenticator) setSignedIn(w http.ResponseWriter, s signedIn) error {
	v, err := a.c.Key.Seal(SessionCookie, s, a.c.Now().Add(a.c.TTL))
	if err != nil {
		return err
	}
	http.SetCookie(w, a.cookie(SessionCookie, v, "/", int(a.c.TTL/time.Second)))
	return nil
}

// safeNext keeps a return path on this site: a path starting with one "/", never "//"
// or "/\" (which browsers take for another host).
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, `/\`) ||
		strings.ContainsAny(next, "\r\n") {
		return "/"
	}
	return next
}

type ctxKey struct{}

// WithWho stores who makes a request in its context.
func WithWho(ctx context.Context, w Who) context.Context { return context.WithValue(ctx, ctxKey{}, w) }

// WhoFrom returns who WithWho stored.
func WhoFrom(ctx context.Context) (Who, bool) {
	w, ok := ctx.Value(ctxKey{}).(Who)
	return w, ok
}
