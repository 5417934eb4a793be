// Package auth signs people in to the desk, in one of three ways a lab already has:
//
//   - OIDC: OpenID Connect's authorization code flow with PKCE, against the lab's identity
//     provider (github.com/coreos/go-oidc and golang.org/x/oauth2);
//   - Proxy: an authenticating proxy in front of the desk (oauth2-proxy's convention:
//     X-Forwarded-User, X-Forwarded-Email, X-Forwarded-Groups), believed only from the
//     proxy's own addresses, and only when each identity header comes once;
//   - Local: one person on their own laptop, the desk listening on loopback only, signed in
//     by the random token in the link the desk prints (as Jupyter's server does), so that
//     a page of another site rebound to 127.0.0.1 is nobody.
//
// In every mode a sign-in is a cookie sealed with the desk's key (cookie.go) that names the
// person and the sign-in's own id, from which its CSRF tokens are derived. The desk keeps
// no state: a restart or another replica signs nobody out. What takes a sign-in away is
// kept where every desk reads it, the session store (Revocations): signing out, and an
// admin's "sign out everywhere" for a person, each checked within RevocationTTL. Roles are
// worked out on every request from the identity's groups and the policy; OIDC groups are
// read again from the provider at least every GroupsTTL.
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

// SessionCookie holds a signed-in person, sealed (Key.Seal). Behind TLS its name carries
// the __Host- prefix (CookieName), which browsers accept only Secure, for the whole site
// and from no subdomain.
const SessionCookie = "cosci_desk"

// How long things last.
const (
	// DefaultTTL is how long a sign-in lasts.
	DefaultTTL = 12 * time.Hour
	// GroupsTTL is how long an OIDC sign-in's groups are believed before the desk reads
	// them again from the identity provider.
	GroupsTTL = 15 * time.Minute
	// RevocationTTL is how long a desk believes what it read of the sign-outs.
	RevocationTTL = 30 * time.Second
)

// ProxyHeaders are the identity headers of the proxy mode: each must come at most once.
var ProxyHeaders = []string{"X-Forwarded-User", "X-Forwarded-Email", "X-Forwarded-Groups", "X-Forwarded-Preferred-Username"}

// signedIn is what the session cookie holds.
type signedIn struct {
	ID     string   `json:"id"`
	Name   string   `json:"name,omitempty"`
	Groups []string `json:"groups,omitempty"`
	// SID is this sign-in's id: its CSRF tokens derive from it, and signing out revokes it.
	SID    string `json:"sid"`
	Issued int64  `json:"iat"` // Unix milliseconds: a sign-in right after "sign out everywhere" is after it
	// GroupsAt is when the groups were read from the identity provider (OIDC); Refresh the
	// refresh token to read them again, else Access, an access token for its userinfo.
	GroupsAt int64  `json:"gat,omitempty"`
	Refresh  string `json:"rt,omitempty"`
	Access   string `json:"at,omitempty"`
	// Desk is the listen address of the local desk that signed the person in: another desk
	// on this machine with the same key (another port, another --local-user) believes no
	// cookie of this one's.
	Desk string `json:"desk,omitempty"`
}

// Config configures an Authenticator.
type Config struct {
	Mode string
	Key  *Key
	// Roles gives an identity its roles from its groups (the policy).
	Roles func(id string, groups []string) []access.Role
	// Secure marks cookies Secure and gives them the __Host- prefix: the desk is reached
	// over TLS.
	Secure bool
	// TTL is how long a sign-in lasts (DefaultTTL).
	TTL time.Duration
	// Proxies are the addresses the proxy mode believes headers from.
	Proxies []netip.Prefix
	// LocalUser is the local mode's one identity; LocalToken the secret of the link that
	// signs it in (a random one when empty); LocalAddr the desk's listen address, which
	// the cookie's name and its sealed content carry.
	LocalUser, LocalToken, LocalAddr string
	// OIDC is the identity provider, for the OIDC mode.
	OIDC *OIDC
	// Revocations keeps the sign-outs (the session store); nil keeps none, which only
	// tests do.
	Revocations Revocations
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Authenticator says who makes a request.
type Authenticator struct {
	c       Config
	revoked *revocationCache
}

// New checks a configuration and returns its Authenticator.
func New(c Config) (*Authenticator, error) {
	if c.Key == nil {
		return nil, errors.New("auth: no key")
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
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
		if c.LocalToken == "" {
			c.LocalToken = random(24)
		}
	default:
		return nil, errors.New(`auth: the sign-in mode must be "oidc", "proxy" or "local"`)
	}
	a := &Authenticator{c: c}
	if c.Revocations != nil {
		a.revoked = newRevocationCache(c.Revocations, RevocationTTL, c.Now)
	}
	return a, nil
}

// Mode is the sign-in mode.
func (a *Authenticator) Mode() string { return a.c.Mode }

// Key is the desk's key.
func (a *Authenticator) Key() *Key { return a.c.Key }

// Who is a request's signed-in person, their sign-in and its CSRF token.
type Who struct {
	access.Identity
	CSRF string
	// SID is the sign-in's id, Issued when it began.
	SID    string
	Issued time.Time
}

// CheckCSRF says whether a form's token is the one Identify gave this sign-in, comparing
// in constant time.
func (w Who) CheckCSRF(token string) bool {
	return token != "" && w.CSRF != "" && equal(w.CSRF, token)
}

// Reasons Identify finds nobody.
var (
	// ErrNotSignedIn: no sign-in, or one that has expired, been signed out, or whose
	// groups the identity provider no longer confirms.
	ErrNotSignedIn = errors.New("not signed in")
	// ErrRepeatedHeader: a request through the proxy repeats an identity header, which
	// only a client adding its own ahead of the proxy's does.
	ErrRepeatedHeader = errors.New("an identity header comes more than once")
)

// Identify says who makes a request, from the sealed cookie, and in the proxy mode the
// proxy's headers from a trusted address; it may write the cookie anew (a new sign-in
// through the proxy, groups read again), or clear one that no longer signs anyone in.
func (a *Authenticator) Identify(w http.ResponseWriter, r *http.Request) (Who, error) {
	s, sealed := a.open(r)
	switch a.c.Mode {
	case ModeProxy:
		id, err := a.fromProxyHeaders(r)
		if err != nil {
			return Who{}, err
		}
		if !sealed || s.ID != id.ID {
			// A person the proxy vouches for, new to this browser: a sign-in of their own.
			s = signedIn{ID: id.ID, SID: random(18), Issued: a.c.Now().UnixMilli()}
			if err := a.setSignedIn(w, s); err != nil {
				return Who{}, err
			}
		}
		s.Name, s.Groups = id.Name, id.Groups // the proxy's word, on every request
	case ModeLocal:
		// The browser of this machine that opened this desk's link, as this desk's user.
		if !loopback(r.RemoteAddr) || sealed && (s.ID != a.c.LocalUser || s.Desk != a.c.LocalAddr) {
			return Who{}, ErrNotSignedIn
		}
	}
	if !sealed && a.c.Mode != ModeProxy {
		return Who{}, ErrNotSignedIn
	}
	if a.isRevoked(r.Context(), s) {
		a.clear(w)
		return Who{}, ErrNotSignedIn
	}
	if a.c.Mode == ModeOIDC && a.c.Now().Sub(time.Unix(s.GroupsAt, 0)) >= GroupsTTL {
		fresh, err := a.c.OIDC.reread(r.Context(), s)
		if err != nil {
			a.clear(w)
			return Who{}, ErrNotSignedIn
		}
		s = fresh
		s.GroupsAt = a.c.Now().Unix()
		if err := a.setSignedIn(w, s); err != nil {
			return Who{}, err
		}
	}
	id := access.Identity{ID: s.ID, Name: s.Name, Groups: s.Groups, Roles: a.c.Roles(s.ID, s.Groups)}
	if a.c.Mode == ModeLocal {
		id.Roles = []access.Role{access.Scientist, access.Admin}
	}
	return Who{Identity: id, CSRF: a.c.Key.CSRF(s.ID, s.SID), SID: s.SID, Issued: time.UnixMilli(s.Issued)}, nil
}

// Recheck says whether who's sign-in still holds, as a request that outlives its start
// (a live stream) asks from time to time: not signed out, nor signed out everywhere since
// it began (as this desk has read the sign-outs: at once for its own, within
// RevocationTTL for another desk's). It gives who back with their roles as the policy has
// them now; ErrNotSignedIn when the sign-in has been taken away.
func (a *Authenticator) Recheck(ctx context.Context, who Who) (Who, error) {
	if who.SID == "" || a.isRevoked(ctx, signedIn{ID: who.ID, SID: who.SID, Issued: who.Issued.UnixMilli()}) {
		return Who{}, ErrNotSignedIn
	}
	if a.c.Mode != ModeLocal {
		who.Roles = a.c.Roles(who.ID, who.Groups)
	}
	return who, nil
}

// open reads the session cookie; ok is false when there is none that opens.
func (a *Authenticator) open(r *http.Request) (s signedIn, ok bool) {
	c, err := r.Cookie(a.CookieName(SessionCookie))
	if err != nil || a.c.Key.Open(SessionCookie, c.Value, a.c.Now(), &s) != nil || s.SID == "" {
		return signedIn{}, false
	}
	return s, true
}

// fromProxyHeaders is the identity the proxy's headers name, from a trusted address.
func (a *Authenticator) fromProxyHeaders(r *http.Request) (access.Identity, error) {
	for _, h := range ProxyHeaders {
		if len(r.Header.Values(h)) > 1 {
			return access.Identity{}, ErrRepeatedHeader
		}
	}
	if !a.fromProxy(r) {
		return access.Identity{}, ErrNotSignedIn
	}
	id := access.Identity{ID: strings.TrimSpace(r.Header.Get("X-Forwarded-Email"))}
	if id.ID == "" {
		id.ID = strings.TrimSpace(r.Header.Get("X-Forwarded-User"))
	}
	id.Name = strings.TrimSpace(r.Header.Get("X-Forwarded-Preferred-Username"))
	for _, g := range strings.Split(r.Header.Get("X-Forwarded-Groups"), ",") {
		if g = strings.TrimSpace(g); g != "" {
			id.Groups = append(id.Groups, g)
		}
	}
	if id.ID == "" || strings.ContainsAny(id.ID, "\r\n") {
		return access.Identity{}, ErrNotSignedIn
	}
	return id, nil
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
// "" when the mode has no sign-in page (the proxy signs in before the desk; the local mode
// by the link the desk printed).
func (a *Authenticator) SignInURL(next string) string {
	if a.c.Mode != ModeOIDC {
		return ""
	}
	return "/auth/login?next=" + urlQueryEscape(SafeNext(next))
}

// Handle adds the sign-in routes to mux: /auth/login and /auth/callback (OIDC). Signing
// out is the desk's, behind its CSRF check (SignOut).
func (a *Authenticator) Handle(mux *http.ServeMux) {
	if a.c.Mode == ModeOIDC {
		mux.HandleFunc("GET /auth/login", a.login)
		mux.HandleFunc("GET /auth/callback", a.callback)
	}
}

// SignOut ends who's sign-in: it is revoked where every desk reads it (a copied cookie
// stops working too, within RevocationTTL at other desks, at once at this one), and the
// browser is told to drop its cookie.
func (a *Authenticator) SignOut(ctx context.Context, w http.ResponseWriter, who Who) error {
	a.clear(w)
	if a.revoked == nil {
		return nil
	}
	return a.revoked.signOut(ctx, who.ID, who.SID, who.Issued.Add(a.c.TTL))
}

// SignOutEverywhere ends every sign-in of person begun before now, at every desk.
func (a *Authenticator) SignOutEverywhere(ctx context.Context, person, by string) error {
	if a.revoked == nil {
		return errors.New("auth: this desk keeps no sign-outs")
	}
	return a.revoked.signOutEverywhere(ctx, person, by)
}

func (a *Authenticator) isRevoked(ctx context.Context, s signedIn) bool {
	if a.revoked == nil {
		return false
	}
	return a.revoked.revoked(ctx, s.ID, s.SID, time.UnixMilli(s.Issued))
}

// CookieName is name as this desk sets it: with the __Host- prefix behind TLS; in the
// local mode, with the desk's listen address, since a browser sends a cookie of
// 127.0.0.1 to every port of it (another desk, or anything else listening there).
func (a *Authenticator) CookieName(name string) string {
	if a.c.Mode == ModeLocal && a.c.LocalAddr != "" {
		name += "-" + strings.NewReplacer(":", "-", "[", "", "]", "").Replace(a.c.LocalAddr)
	}
	if a.c.Secure {
		return "__Host-" + name
	}
	return name
}

// cookie is one of the desk's cookies: HttpOnly, SameSite=Lax (the identity provider's
// redirect back is a top-level GET, which Lax lets through), for the whole site (which
// the __Host- prefix requires), Secure behind TLS.
func (a *Authenticator) cookie(name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: a.CookieName(name), Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		Secure: a.c.Secure, SameSite: http.SameSiteLaxMode}
}

// clear tells the browser to drop the session cookie.
func (a *Authenticator) clear(w http.ResponseWriter) {
	http.SetCookie(w, a.cookie(SessionCookie, "", -1))
}

// setSignedIn writes the session cookie of sign-in s, lasting until the TTL after it
// began: a cookie written again (its groups read anew) ends when the first did.
func (a *Authenticator) setSignedIn(w http.ResponseWriter, s signedIn) error {
	until := time.UnixMilli(s.Issued).Add(a.c.TTL)
	v, err := a.c.Key.Seal(SessionCookie, s, until)
	if err != nil {
		return err
	}
	http.SetCookie(w, a.cookie(SessionCookie, v, max(int(until.Sub(a.c.Now())/time.Second), 1)))
	return nil
}

type ctxKey struct{}

// WithWho stores who makes a request in its context.
func WithWho(ctx context.Context, w Who) context.Context { return context.WithValue(ctx, ctxKey{}, w) }

// WhoFrom returns who WithWho stored.
func WhoFrom(ctx context.Context) (Who, bool) {
	w, ok := ctx.Value(ctxKey{}).(Who)
	return w, ok
}
