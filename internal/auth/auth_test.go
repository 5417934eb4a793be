package auth

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
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
		who, ok := a.Identify(r)
		if !ok {
			http.Redirect(w, r, a.SignInURL(r.URL.RequestURI()), http.StatusFound)
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

func oidcDesk(t *testing.T, idp *idptest.Provider, secure bool) (*httptest.Server, *Authenticator) {
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
	a, err = New(Config{Mode: ModeOIDC, Key: RandomKey(), OIDC: o, Secure: secure, Roles: policy.Roles})
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
		idptest.User{Subject: "u2", Email: "root@lab"}, idptest.User{Subject: "u3", Email: "eve@lab", Groups: []string{"x"}})
	defer idp.Close()
	srv, _ := oidcDesk(t, idp, false)
	for _, tt := range []struct{ user, want string }{
		{"ada@lab", "ada@lab scientist /sessions"},
		{"root@lab", "root@lab admin /sessions"},
		{"eve@lab", "eve@lab  /sessions"}, // signed in, but no role: the desk refuses her its pages
	} {
		idp.Auto = tt.user
		c := browser(t)
		code, body := get(t, c, srv.URL+"/sessions")
		if code != 200 || body != tt.want {
			t.Errorf("signed in as %s: %d %q, want %q (back where she started)", tt.user, code, body, tt.want)
		}
	}
}

func TestOIDCCookie(t *testing.T) {
	idp := idptest.Start(idptest.User{Subject: "u1", Email: "ada@lab"})
	defer idp.Close()
	idp.Auto = "ada@lab"
	for _, secure := range []bool{false, true} {
		srv, _ := oidcDesk(t, idp, secure)
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		// Follow the flow by hand, to look at the cookies.
		resp, _ := c.Get(srv.URL + "/auth/login?next=/x")
		flowC := resp.Cookies()[0]
		resp, _ = c.Get(resp.Header.Get("Location")) // the provider
		cb, _ := http.NewRequest("GET", resp.Header.Get("Location"), nil)
		cb.AddCookie(flowC)
		resp, err := c.Do(cb)
		if err != nil {
			t.Fatal(err)
		}
		var session *http.Cookie
		for _, ck := range resp.Cookies() {
			if ck.Name == SessionCookie {
				session = ck
			}
		}
		if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Secure != secure {
			t.Fatalf("secure=%v: session cookie %+v; want HttpOnly, SameSite=Lax, Secure=%v", secure, session, secure)
		}
		if strings.Contains(session.Value, "ada") {
			t.Error("the cookie shows who is signed in: it is not encrypted")
		}
		if resp.Header.Get("Location") != "/x" {
			t.Errorf("back to %q, want /x", resp.Header.Get("Location"))
		}
		// The same callback again: the code is spent, and the flow cookie is gone.
		again, _ := c.Do(cb)
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
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

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
	// Cookies that do not open: forged, from another key, expired.
	s := signedIn{ID: "ada@lab", Nonce: "n"}
	good, _ := a.c.Key.Seal(SessionCookie, s, time.Now().Add(time.Hour))
	other, _ := RandomKey().Seal(SessionCookie, s, time.Now().Add(time.Hour))
	old, _ := a.c.Key.Seal(SessionCookie, s, time.Now().Add(-time.Second))
	moved, _ := a.c.Key.Seal(flowCookie, s, time.Now().Add(time.Hour))
	for name, v := range map[string]string{"good": good, "other key": other, "expired": old, "another cookie's": moved,
		"tampered": good[:len(good)-2] + "AA", "garbage": "not a cookie"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.AddCookie(&http.Cookie{Name: SessionCookie, Value: v})
		_, ok := a.Identify(r)
		if ok != (name == "good") {
			t.Errorf("%s cookie: identified = %v", name, ok)
		}
	}
}

func TestPKCEIsChecked(t *testing.T) {
	idp := idptest.Start(idptest.User{Subject: "u1", Email: "ada@lab"})
	defer idp.Close()
	idp.Auto = "ada@lab"
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
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
		name, remote, email, user, groups string
		want                              string // "" for nobody
	}{
		{"from the proxy, by e-mail", "10.0.0.5:4000", "ada@lab", "ada", "", "ada@lab"},
		{"from the proxy, user only", "10.0.0.5:4000", "", "bob", "a,b", "bob"},
		{"from the proxy, no identity", "10.0.0.5:4000", "", "", "", ""},
		{"from elsewhere, headers ignored", "10.0.0.6:4000", "root@lab", "", "", ""},
		{"from loopback, headers ignored", "127.0.0.1:4000", "root@lab", "", "", ""},
		{"header injection", "10.0.0.5:4000", "ada@lab\r\nX: y", "", "", ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tt.remote
		r.Header.Set("X-Forwarded-Email", tt.email)
		r.Header.Set("X-Forwarded-User", tt.user)
		r.Header.Set("X-Forwarded-Groups", tt.groups)
		who, ok := a.Identify(r)
		if got := map[bool]string{true: who.ID}[ok]; got != tt.want {
			t.Errorf("%s: identified %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestLocal(t *testing.T) {
	a, err := New(Config{Mode: ModeLocal, Key: RandomKey(), LocalUser: "me"})
	if err != nil {
		t.Fatal(err)
	}
	for remote, want := range map[string]bool{"127.0.0.1:5": true, "[::1]:5": true, "192.168.1.4:5": false} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		who, ok := a.Identify(r)
		if ok != want || (ok && (who.ID != "me" || !who.Has(access.Scientist))) {
			t.Errorf("local from %s: %+v %v, want identified %v", remote, who, ok, want)
		}
	}
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
	} {
		if got := k.CheckCSRF(tt.id, tt.nonce, tt.token); got != tt.ok {
			t.Errorf("CheckCSRF(%s, %s) = %v, want %v", tt.id, tt.nonce, got, tt.ok)
		}
	}
	if RandomKey().CheckCSRF("ada@lab", "n1", tok) {
		t.Error("another desk key accepted the token")
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{"/s/x": "/s/x", "//evil.example/": "/", `/\evil`: "/", "https://evil/": "/", "": "/", "/a\r\nb": "/"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
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
