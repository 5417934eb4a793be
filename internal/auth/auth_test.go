package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/auth/idptest"
)

var policy = access.Policy{Admins: []string{"root@lab"}, Scientists: []string{"ada@lab"}}

// desk is a tiny desk: the sign-in routes and one page that says who you are.
func desk(t *testing.T, a *Authenticator) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	a.Handle(mux)
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		if a.TokenSignIn(w, r) {
			return
		}
		who, err := a.Identify(w, r)
		if err != nil {
			if u := a.SignInURL(r.URL.RequestURI()); u != "" {
				http.Redirect(w, r, u, http.StatusFound)
				return
			}
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		roles := []string{}
		for _, r := range who.Roles {
			roles = append(roles, string(r))
		}
		w.Write([]byte(who.ID + " " + strings.Join(roles, ",") + " " + r.URL.Path))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func oidcDesk(t *testing.T, idp *idptest.Provider, secure bool, options ...func(*Config)) (*httptest.Server, *Authenticator) {
	t.Helper()
	var a *Authenticator
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	o, err := NewOIDC(context.Background(), OIDCConfig{Issuer: idp.URL, ClientID: idp.ClientID, ClientSecret: idp.ClientSecret,
		RedirectURL: srv.URL + "/auth/callback"})
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Mode: ModeOIDC, Key: RandomKey(), OIDC: o, Secure: secure, Roles: policy.Roles}
	for _, opt := range options {
		opt(&c)
	}
	a, err = New(c)
	if err != nil {
		t.Fatal(err)
	}
	inner := desk(t, a)
	inner.Close()
	mux.Handle("/", inner.Config.Handler)
	return srv, a
}

func browser(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

func TestOIDCSignIn(t *testing.T) {
	idp := idptest.Start(idptest.User{Subject: "u1", Email: "ada@lab", Name: "Ada"},
		idptest.User{Subject: "u2", Email: "root@lab"}, idptest.User{Subject: "u3", Email: "eve@lab", Groups: []string{"x"}},
		// Two who claim root's address: one the provider says it has not verified, one
		// whose tokens say nothing of it. Neither is root.
		idptest.User{Subject: "u4", Email: "root@lab", Verified: idptest.EmailUnverified},
		idptest.User{Subject: "root@lab", Email: "root@lab", Verified: idptest.EmailVerifiedOmitted})
	defer idp.Close()
	srv, _ := oidcDesk(t, idp, false)
	for _, tt := range []struct{ user, subject, want string }{
		{"ada@lab", "u1", "ada@lab scientist /sessions"},
		{"root@lab", "u2", "root@lab admin /sessions"},
		{"eve@lab", "u3", "eve@lab  /sessions"}, // signed in, but no role: the desk refuses her its pages
		{"root@lab", "u4", SubjectID(idp.URL, "u4") + "  /sessions"},
		// A subject equal to someone's address is not that someone either.
		{"root@lab", "root@lab", SubjectID(idp.URL, "root@lab") + "  /sessions"},
	} {
		idp.Auto = tt.subject
		code, body := get(t, browser(t), srv.URL+"/sessions")
		if code != 200 || body != tt.want {
			t.Errorf("signed in as %s (%s): %d %q, want %q (back where she started)", tt.user, tt.subject, code, body, tt.want)
		}
	}
}

// clock is a test's time, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// noFollow is a client that shows redirects instead of following them.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// cookieNamed is the response's Set-Cookie of that name, or nil.
func cookieNamed(resp *http.Response, name string) *http.Cookie {
	for _, ck := range resp.Cookies() {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

func TestOIDCCookie(t *testing.T) {
	idp := idptest.Start(idptest.User{Subject: "u1", Email: "ada@lab"})
	defer idp.Close()
	idp.Auto = "ada@lab"
	for _, secure := range []bool{false, true} {
		srv, a := oidcDesk(t, idp, secure)
		session, flowName := SessionCookie, flowCookie
		if secure {
			session, flowName = "__Host-"+SessionCookie, "__Host-"+flowCookie
		}
		// Follow the flow by hand, to look at the cookies.
		resp, _ := noFollow.Get(srv.URL + "/auth/login?next=/x")
		flowC := cookieNamed(resp, flowName)
		if flowC == nil || flowC.Path != "/" || flowC.Secure != secure || !flowC.HttpOnly {
			t.Fatalf("secure=%v: flow cookie %+v; want %s, path /, HttpOnly, Secure=%v", secure, flowC, flowName, secure)
		}
		resp, _ = noFollow.Get(resp.Header.Get("Location")) // the provider
		cb, _ := http.NewRequest("GET", resp.Header.Get("Location"), nil)
		cb.AddCookie(flowC)
		resp, err := noFollow.Do(cb)
		if err != nil {
			t.Fatal(err)
		}
		ck := cookieNamed(resp, session)
		if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure != secure || ck.Path != "/" || ck.Domain != "" {
			t.Fatalf("secure=%v: session cookie %+v; want %s, HttpOnly, SameSite=Lax, Secure=%v, the whole site, no domain", secure, ck, session, secure)
		}
		if strings.Contains(ck.Value, "ada") {
			t.Error("the cookie shows who is signed in: it is not encrypted")
		}
		// The callback ends the flow: the browser is told to drop its cookie, so the same
		// state and verifier never sign in twice.
		if gone := cookieNamed(resp, flowName); gone == nil || gone.MaxAge >= 0 {
			t.Errorf("secure=%v: the callback leaves the flow cookie (%+v); want it cleared", secure, gone)
		}
		if resp.Header.Get("Location") != "/x" {
			t.Errorf("back to %q, want /x", resp.Header.Get("Location"))
		}
		r := httptest.NewRequest("GET", "/", nil)
		r.AddCookie(ck)
		if who, err := a.Identify(httptest.NewRecorder(), r); err != nil || who.ID != "ada@lab" {
			t.Errorf("secure=%v: the cookie identifies %q (%v)", secure, who.ID, err)
		}
		// The same callback again: the code is spent, and the flow cookie is gone.
		again, _ := noFollow.Do(cb)
		if again.StatusCode == http.StatusFound {
			t.Error("a replayed callback signed in again")
		}
	}
}

func TestOIDCRefusals(t *testing.T) {
	idp := idptest.Start(idptest.User{Subject: "u1", Email: "ada@lab"})
	defer idp.Close()
	idp.Auto = "ada@lab"
	srv, a := oidcDesk(t, idp, false)

	// A callback with no sign-in in flight (a forged link) is refused.
	if code, _ := get(t, noFollow, srv.URL+"/auth/callback?code=x&state=y"); code != http.StatusBadRequest {
		t.Errorf("callback without a flow: %d, want 400", code)
	}
	// A state that is not the flow's is refused.
	resp, _ := noFollow.Get(srv.URL + "/auth/login")
	flowC := resp.Cookies()[0]
	resp, _ = noFollow.Get(resp.Header.Get("Location"))
	u, _ := url.Parse(resp.Header.Get("Location"))
	q := u.Query()
	q.Set("state", "someone-else's")
	u.RawQuery = q.Encode()
	req, _ := http.NewRequest("GET", u.String(), nil)
	req.AddCookie(flowC)
	if resp, _ := noFollow.Do(req); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("callback with a wrong state: %d, want 400", resp.StatusCode)
	}
	// An ID token whose nonce is not the one this sign-in asked for is refused.
	idp.WrongNonce = true
	if code, body := get(t, browser(t), srv.URL+"/sessions"); code != http.StatusForbidden || !strings.Contains(body, "nonce") {
		t.Errorf("an ID token with another nonce: %d %q, want 403 naming the nonce", code, body)
	}
	idp.WrongNonce = false
	// Cookies that do not open: forged, from another key, expired.
	s := signedIn{ID: "ada@lab", SID: "n", GroupsAt: time.Now().Unix()}
	good, _ := a.c.Key.Seal(SessionCookie, s, time.Now().Add(time.Hour))
	other, _ := RandomKey().Seal(SessionCookie, s, time.Now().Add(time.Hour))
	old, _ := a.c.Key.Seal(SessionCookie, s, time.Now().Add(-time.Second))
	moved, _ := a.c.Key.Seal(flowCookie, s, time.Now().Add(time.Hour))
	for name, v := range map[string]string{"good": good, "other key": other, "expired": old, "another cookie's": moved,
		"tampered": good[:len(good)-2] + "AA", "garbage": "not a cookie"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.AddCookie(&http.Cookie{Name: SessionCookie, Value: v})
		_, err := a.Identify(httptest.NewRecorder(), r)
		if (err == nil) != (name == "good") {
			t.Errorf("%s cookie: identified = %v", name, err == nil)
		}
	}
}

// signedInCookie signs in through the provider and returns the desk's session cookie.
func signedInCookie(t *testing.T, srv *httptest.Server) *http.Cookie {
	t.Helper()
	c := browser(t)
	if code, body := get(t, c, srv.URL+"/sessions"); code != 200 {
		t.Fatalf("sign-in: %d %s", code, body)
	}
	u, _ := url.Parse(srv.URL)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == SessionCookie {
			return ck
		}
	}
	t.Fatal("no session cookie after signing in")
	return nil
}

// identify is who a request with the cookie is, and the cookie the desk wrote back, if any.
func identify(a *Authenticator, ck *http.Cookie) (Who, *http.Cookie, error) {
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(ck)
	w := httptest.NewRecorder()
	who, err := a.Identify(w, r)
	return who, cookieNamed(w.Result(), SessionCookie), err
}

// TestGroupsReadAgain: an admin demoted at the identity provider is no admin within
// GroupsTTL, whether the desk reads the groups with a refresh token or at userinfo; a
// person the provider removed is signed out then.
func TestGroupsReadAgain(t *testing.T) {
	groupPolicy := access.Policy{}
	groupPolicy.Groups.Admin = []string{"admins"}
	groupPolicy.Groups.Scientist = []string{"lab"}
	for _, noRefresh := range []bool{false, true} {
		idp := idptest.Start(idptest.User{Subject: "r", Email: "root@lab", Groups: []string{"admins", "lab"}},
			idptest.User{Subject: "a", Email: "ada@lab", Groups: []string{"lab"}})
		defer idp.Close()
		idp.NoRefresh = noRefresh
		clk := newClock()
		srv, a := oidcDesk(t, idp, false, func(c *Config) { c.Now = clk.Now; c.Roles = groupPolicy.Roles })
		idp.Auto = "root@lab"
		root := signedInCookie(t, srv)
		idp.Auto = "ada@lab"
		ada := signedInCookie(t, srv)

		idp.SetGroups("root@lab", "lab")
		idp.Remove("ada@lab")
		clk.add(GroupsTTL - time.Minute)
		if who, _, err := identify(a, root); err != nil || !who.Has(access.Admin) {
			t.Fatalf("noRefresh=%v: within %v of signing in root is %v (%v); the groups are not read again yet", noRefresh, GroupsTTL, who.Roles, err)
		}
		clk.add(time.Minute)
		who, fresh, err := identify(a, root)
		if err != nil || who.Has(access.Admin) || !who.Has(access.Scientist) {
			t.Errorf("noRefresh=%v: %v after signing in, root demoted at the provider is %v (%v); want a scientist only", noRefresh, GroupsTTL, who.Roles, err)
		}
		if fresh == nil {
			t.Fatalf("noRefresh=%v: the groups read again were not sealed into the cookie", noRefresh)
		}
		if who, _, err := identify(a, fresh); err != nil || who.Has(access.Admin) {
			t.Errorf("noRefresh=%v: the new cookie gives %v (%v)", noRefresh, who.Roles, err)
		}
		if _, gone, err := identify(a, ada); err == nil || gone == nil || gone.MaxAge >= 0 {
			t.Errorf("noRefresh=%v: ada, removed at the provider, is still signed in (%v), her cookie %+v", noRefresh, err, gone)
		}
		if n := idp.Refreshed(); (n > 0) == noRefresh {
			t.Errorf("noRefresh=%v: %d refreshes", noRefresh, n)
		}
	}
}

func TestPKCEIsChecked(t *testing.T) {
	idp := idptest.Start(idptest.User{Subject: "u1", Email: "ada@lab"})
	defer idp.Close()
	idp.Auto = "ada@lab"
	auth := idp.URL + "/auth?response_type=code&client_id=cosci-desk&redirect_uri=http://x/cb&state=s&code_challenge_method=S256&code_challenge="
	// Without a challenge, no code.
	if resp, _ := noFollow.Get(auth); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("authorize without PKCE: %d", resp.StatusCode)
	}
	resp, _ := noFollow.Get(auth + "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM") // RFC 7636's example
	loc, _ := url.Parse(resp.Header.Get("Location"))
	for _, tt := range []struct {
		verifier string
		want     int
	}{{"wrong-verifier-wrong-verifier-wrong-verifier", 400}, {"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", 400 /* spent by the wrong one */}} {
		form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {"http://x/cb"},
			"code_verifier": {tt.verifier}, "client_id": {"cosci-desk"}, "client_secret": {"test-secret"}}
		resp, _ := http.PostForm(idp.URL+"/token", form)
		if resp.StatusCode != tt.want {
			t.Errorf("verifier %q: %d, want %d", tt.verifier, resp.StatusCode, tt.want)
		}
	}
	resp, _ = noFollow.Get(auth + "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
	loc, _ = url.Parse(resp.Header.Get("Location"))
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {"http://x/cb"},
		"code_verifier": {"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"}, "client_id": {"cosci-desk"}, "client_secret": {"test-secret"}}
	if resp, _ := http.PostForm(idp.URL+"/token", form); resp.StatusCode != 200 {
		t.Errorf("the right verifier: %d, want 200", resp.StatusCode)
	}
}

func TestProxy(t *testing.T) {
	a, err := New(Config{Mode: ModeProxy, Key: RandomKey(), Proxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.5/32")}, Roles: policy.Roles})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, remote string
		headers      http.Header
		want         string // "" for nobody
		err          error
	}{
		{"from the proxy, by e-mail", "10.0.0.5:4000", http.Header{"X-Forwarded-Email": {"ada@lab"}, "X-Forwarded-User": {"ada"}}, "ada@lab", nil},
		{"from the proxy, user only", "10.0.0.5:4000", http.Header{"X-Forwarded-User": {"bob"}, "X-Forwarded-Groups": {"a,b"}}, "bob", nil},
		{"from the proxy, no identity", "10.0.0.5:4000", http.Header{}, "", ErrNotSignedIn},
		{"from elsewhere, headers ignored", "10.0.0.6:4000", http.Header{"X-Forwarded-Email": {"root@lab"}}, "", ErrNotSignedIn},
		{"from loopback, headers ignored", "127.0.0.1:4000", http.Header{"X-Forwarded-Email": {"root@lab"}}, "", ErrNotSignedIn},
		{"header injection", "10.0.0.5:4000", http.Header{"X-Forwarded-Email": {"ada@lab\r\nX: y"}}, "", ErrNotSignedIn},
		// A client's own header sent ahead of the proxy's: which one is the proxy's cannot
		// be told, so neither is believed.
		{"groups twice", "10.0.0.5:4000", http.Header{"X-Forwarded-Email": {"ada@lab"}, "X-Forwarded-Groups": {"cosci-admins", "lab"}}, "", ErrRepeatedHeader},
		{"e-mail twice", "10.0.0.5:4000", http.Header{"X-Forwarded-Email": {"root@lab", "ada@lab"}}, "", ErrRepeatedHeader},
		{"user twice", "10.0.0.5:4000", http.Header{"X-Forwarded-User": {"root", "ada"}}, "", ErrRepeatedHeader},
		{"name twice", "10.0.0.5:4000", http.Header{"X-Forwarded-Email": {"ada@lab"}, "X-Forwarded-Preferred-Username": {"a", "b"}}, "", ErrRepeatedHeader},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tt.remote
		r.Header = tt.headers
		who, err := a.Identify(httptest.NewRecorder(), r)
		if who.ID != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("%s: identified %q (%v), want %q (%v)", tt.name, who.ID, err, tt.want, tt.err)
		}
	}
	// Each browser the proxy sends is a sign-in of its own: its own CSRF token, kept in
	// the desk's cookie, and a cookie of another person is not theirs.
	as := func(email string, ck *http.Cookie) (Who, *http.Cookie) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "10.0.0.5:4000"
		r.Header.Set("X-Forwarded-Email", email)
		if ck != nil {
			r.AddCookie(ck)
		}
		w := httptest.NewRecorder()
		who, err := a.Identify(w, r)
		if err != nil {
			t.Fatal(err)
		}
		return who, cookieNamed(w.Result(), SessionCookie)
	}
	one, ck1 := as("ada@lab", nil)
	two, ck2 := as("ada@lab", nil)
	again, none := as("ada@lab", ck1)
	bob, ck3 := as("bob@lab", ck1)
	switch {
	case ck1 == nil || ck2 == nil || ck3 == nil:
		t.Fatal("a new sign-in through the proxy set no cookie")
	case one.CSRF == two.CSRF || two.CheckCSRF(one.CSRF):
		t.Error("two browsers of ada's share a CSRF token")
	case again.CSRF != one.CSRF || none != nil:
		t.Error("the same browser's sign-in changed")
	case bob.CheckCSRF(one.CSRF) || bob.SID == one.SID:
		t.Error("bob, behind ada's cookie, got her sign-in")
	}
}

func TestLocal(t *testing.T) {
	a, err := New(Config{Mode: ModeLocal, Key: RandomKey(), LocalUser: "me", LocalToken: "the-desks-own-token-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	srv := desk(t, a)
	link := a.SignInLink(srv.URL)
	if link != srv.URL+"/?token=the-desks-own-token-0123456789" {
		t.Fatalf("link %q", link)
	}
	// Without the link's token, nobody: a page of another site rebound to 127.0.0.1 gets
	// nothing of the desk.
	if code, _ := get(t, browser(t), srv.URL+"/sessions"); code != http.StatusUnauthorized {
		t.Errorf("loopback without the token: %d, want 401", code)
	}
	if code, _ := get(t, browser(t), srv.URL+"/sessions?token=a-guess"); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d, want 401", code)
	}
	c := browser(t)
	resp, err := noFollow.Get(strings.Replace(link, "/?", "/s/x?c=3&", 1))
	if err != nil {
		t.Fatal(err)
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/s/x?c=3" {
		t.Errorf("the link: %d to %q, want 303 to the same page without the token", resp.StatusCode, loc)
	}
	if code, body := get(t, c, link); code != 200 || body != "me scientist,admin /" {
		t.Errorf("signed in by the link: %d %q", code, body)
	}
	if code, body := get(t, c, srv.URL+"/sessions"); code != 200 || !strings.HasPrefix(body, "me ") {
		t.Errorf("then without it: %d %q", code, body)
	}
	// The cookie from another machine is nobody: local is this machine only.
	ck := cookieNamed(resp, SessionCookie)
	for remote, want := range map[string]bool{"127.0.0.1:5": true, "[::1]:5": true, "192.168.1.4:5": false} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		r.AddCookie(ck)
		who, err := a.Identify(httptest.NewRecorder(), r)
		if (err == nil) != want || (err == nil && (who.ID != "me" || !who.Has(access.Scientist))) {
			t.Errorf("local from %s: %+v %v, want identified %v", remote, who, err, want)
		}
	}
}

// memRevocations is Revocations in memory, shared by the desks of a test as the store is.
type memRevocations struct {
	mu     sync.Mutex
	sids   map[string]bool
	before map[string]time.Time
	reads  int
}

func (m *memRevocations) SignedOut(_ context.Context, sid string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	return m.sids[sid], nil
}

func (m *memRevocations) SignOut(_ context.Context, _, sid string, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sids[sid] = true
	return nil
}

func (m *memRevocations) SignedOutBefore(_ context.Context, person string) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	return m.before[person], nil
}

func (m *memRevocations) SignOutEverywhere(_ context.Context, person, _ string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.before[person] = at
	return nil
}

// TestSignOutHolds: a copied cookie is refused after its sign-in signs out, at once at
// the desk that signed it out and within RevocationTTL at another; "sign out everywhere"
// ends every sign-in of the person, and not those after it.
func TestSignOutHolds(t *testing.T) {
	idp := idptest.Start(idptest.User{Subject: "u1", Email: "ada@lab"}, idptest.User{Subject: "u2", Email: "bob@lab"})
	defer idp.Close()
	store := &memRevocations{sids: map[string]bool{}, before: map[string]time.Time{}}
	clk := newClock()
	key := RandomKey()
	shared := func(c *Config) { c.Key, c.Revocations, c.Now = key, store, clk.Now }
	srv, one := oidcDesk(t, idp, false, shared)
	_, two := oidcDesk(t, idp, false, shared) // another replica of the same desk
	idp.Auto = "ada@lab"
	ada := signedInCookie(t, srv)
	if _, _, err := identify(two, ada); err != nil {
		t.Fatal(err)
	}
	who, _, _ := identify(one, ada)
	w := httptest.NewRecorder()
	if err := one.SignOut(t.Context(), w, who); err != nil {
		t.Fatal(err)
	}
	if gone := cookieNamed(w.Result(), SessionCookie); gone == nil || gone.MaxAge >= 0 {
		t.Error("signing out does not tell the browser to drop its cookie")
	}
	if _, _, err := identify(one, ada); err == nil {
		t.Error("a copy of the signed-out cookie still signs in at the desk that signed it out")
	}
	clk.add(RevocationTTL)
	if _, _, err := identify(two, ada); err == nil {
		t.Errorf("a copy of the signed-out cookie still signs in at another desk after %v", RevocationTTL)
	}

	// Sign out everywhere: both of bob's sign-ins end; one made after it does not.
	idp.Auto = "bob@lab"
	bob1, bob2 := signedInCookie(t, srv), signedInCookie(t, srv)
	if err := one.SignOutEverywhere(t.Context(), "bob@lab", "root@lab"); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Millisecond)
	bob3 := signedInCookie(t, srv)
	clk.add(RevocationTTL)
	for name, ck := range map[string]*http.Cookie{"first": bob1, "second": bob2} {
		for d, a := range map[string]*Authenticator{"this desk": one, "another desk": two} {
			if _, _, err := identify(a, ck); err == nil {
				t.Errorf("bob's %s sign-in still works at %s after sign out everywhere", name, d)
			}
		}
	}
	if who, _, err := identify(two, bob3); err != nil || who.ID != "bob@lab" {
		t.Errorf("bob's sign-in after sign out everywhere: %q %v", who.ID, err)
	}
	// The store is asked at most once per sign-in and person per RevocationTTL.
	store.mu.Lock()
	before := store.reads
	store.mu.Unlock()
	for range 50 {
		identify(two, bob3)
	}
	store.mu.Lock()
	if store.reads != before {
		t.Errorf("50 requests within %v read the store %d times, want 0", RevocationTTL, store.reads-before)
	}
	store.mu.Unlock()
}

func TestCSRFTokens(t *testing.T) {
	k := RandomKey()
	tok := k.CSRF("ada@lab", "n1")
	for _, tt := range []struct {
		id, nonce, token string
		ok               bool
	}{
		{"ada@lab", "n1", tok, true},
		{"bob@lab", "n1", tok, false},
		{"ada@lab", "n2", tok, false},
		{"ada@lab", "n1", "", false},
		{"ada@lab", "n1", tok[:len(tok)-1], false},
	} {
		if got := k.CheckCSRF(tt.id, tt.nonce, tt.token); got != tt.ok {
			t.Errorf("CheckCSRF(%s, %s) = %v, want %v", tt.id, tt.nonce, got, tt.ok)
		}
		if got := (Who{CSRF: k.CSRF(tt.id, tt.nonce)}).CheckCSRF(tt.token); got != tt.ok {
			t.Errorf("Who.CheckCSRF(%s, %s) = %v, want %v", tt.id, tt.nonce, got, tt.ok)
		}
	}
	if RandomKey().CheckCSRF("ada@lab", "n1", tok) {
		t.Error("another desk key accepted the token")
	}
	if (Who{}).CheckCSRF("") {
		t.Error("an empty token passed for nobody")
	}
}

func TestSafeNext(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/s/x", "/s/x"},
		{"/s/x?c=3#conversation", "/s/x?c=3#conversation"},
		{"", "/"},
		{"https://evil/", "/"},
		{"evil.example", "/"},
		{"//evil.example/", "/"},
		{`/\evil.example`, "/"},
		{"/\t/evil.example", "/"},
		{"/%09/evil.example", "/"}, // browsers drop the tab: //evil.example
		{"/\n/evil.example", "/"},
		{"/%0a/evil.example", "/"},
		{"/%0D%0A/evil.example", "/"},
		{`/%5Cevil.example`, "/"},
		{`/%5C%5Cevil.example`, "/"},
		{"/%2F/evil.example", "/"},
		{"/%2f%2fevil.example", "/"},
		{"/ /evil.example", "/"},
		{"/%20/evil.example", "/"},
		{"/s/x\\y", "/"},
		{"/s/%00", "/"},
		{"/s/%zz", "/"}, // not percent-decodable
		{"/a\r\nb", "/"},
	}
	for _, tt := range tests {
		if got := SafeNext(tt.in); got != tt.want {
			t.Errorf("SafeNext(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestKeyFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if _, found, err := KeyFromEnv(env(nil)); found || err != nil {
		t.Errorf("no key: found %v err %v", found, err)
	}
	hex := strings.Repeat("ab", 32)
	if k, _, err := KeyFromEnv(env(map[string]string{"COSCI_DESK_KEY": hex})); err != nil || k == nil {
		t.Errorf("hex key: %v", err)
	}
	if _, _, err := KeyFromEnv(env(map[string]string{"COSCI_DESK_KEY": "short"})); err == nil {
		t.Error("a short key was accepted")
	}
}
