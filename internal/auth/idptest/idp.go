// Package idptest is an OpenID Connect provider for tests: keys and ID token signing from
// go-oidc's own oidctest, and what oidctest lacks: a discovery document that names a
// userinfo endpoint, /auth (sign in as one of the provider's users), /token (exchange a
// code, checking the client, the redirect and the PKCE verifier; or a refresh token) and
// /userinfo. People can be changed while signed in (their groups, or removed), so tests
// can check that the desk notices. It is small enough to read in one go, which a full
// provider (zitadel's op, with its storage interface of some thirty methods) is not.
package idptest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/coreos/go-oidc/v3/oidc/oidctest"
)

// Verified is what a user's ID tokens say of their e-mail address.
type Verified int

// The email_verified claim: true (the zero value, as most providers say), false, or left
// out (some providers omit it, and let users set their own address).
const (
	EmailVerified Verified = iota
	EmailUnverified
	EmailVerifiedOmitted
)

// User is one of the provider's people.
type User struct {
	Subject string
	Email   string
	Name    string
	Groups  []string
	// Verified is the email_verified claim of their tokens.
	Verified Verified
}

// Provider is a running test identity provider.
type Provider struct {
	URL          string
	ClientID     string
	ClientSecret string
	// Auto, if set, signs in as this user (by subject, or e-mail) without showing the form.
	Auto string
	// WrongNonce makes ID tokens carry a nonce other than the one asked for.
	WrongNonce bool
	// NoRefresh issues no refresh tokens: the desk then reads userinfo with the access token.
	NoRefresh bool

	srv  *httptest.Server
	key  *rsa.PrivateKey
	keys *oidctest.Server
	mu   sync.Mutex
	// users are the people, by subject; a removed one is gone.
	users    []User
	codes    map[string]grant
	refresh  map[string]string // refresh token → subject
	access   map[string]string // access token → subject
	refreshd int
	// Exchanged counts the codes exchanged, for tests that check a code is single-use.
	Exchanged int
}

type grant struct {
	subject                    string
	redirect, nonce, challenge string
	clientID                   string
	expires                    time.Time
}

// Start starts a provider with these users; Close stops it.
func Start(users ...User) *Provider {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	p := &Provider{ClientID: "cosci-desk", ClientSecret: "test-secret", key: key, users: users,
		codes: map[string]grant{}, refresh: map[string]string{}, access: map[string]string{}}
	p.keys = &oidctest.Server{PublicKeys: []oidctest.PublicKey{{PublicKey: key.Public(), KeyID: "k1", Algorithm: oidc.RS256}}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", p.discovery)
	mux.Handle("/keys", p.keys)
	mux.HandleFunc("/auth", p.authorize)
	mux.HandleFunc("/token", p.token)
	mux.HandleFunc("/userinfo", p.userinfo)
	p.srv = httptest.NewServer(mux)
	p.URL = p.srv.URL
	p.keys.SetIssuer(p.URL)
	return p
}

// Close stops the provider.
func (p *Provider) Close() { p.srv.Close() }

// SetGroups changes a user's groups (by e-mail): the next refresh or userinfo says so.
func (p *Provider) SetGroups(email string, groups ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.users {
		if p.users[i].Email == email {
			p.users[i].Groups = groups
		}
	}
}

// Remove takes a user (by e-mail) away: their refresh and access tokens stop working.
func (p *Provider) Remove(email string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users = slices.DeleteFunc(p.users, func(u User) bool { return u.Email == email })
}

// Refreshed counts the refresh tokens exchanged.
func (p *Provider) Refreshed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refreshd
}

func (p *Provider) discovery(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"issuer": p.URL, "authorization_endpoint": p.URL + "/auth", "token_endpoint": p.URL + "/token",
		"jwks_uri": p.URL + "/keys", "userinfo_endpoint": p.URL + "/userinfo",
		"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		"id_token_signing_alg_values_supported": []string{oidc.RS256},
	})
}

// user finds a user by subject or e-mail; p.mu is held.
func (p *Provider) user(match func(User) bool) (User, bool) {
	i := slices.IndexFunc(p.users, match)
	if i < 0 {
		return User{}, false
	}
	return p.users[i], true
}

var form = template.Must(template.New("f").Parse(`<!doctype html><title>Test identity provider</title>
<h1>Sign in</h1><form method="post" action="/auth">
{{range $k, $v := .Params}}<input type="hidden" name="{{$k}}" value="{{$v}}">{{end}}
{{range .Users}}<button type="submit" name="user" value="{{.Subject}}" id="as-{{.Subject}}">{{.Email}}</button>{{end}}
</form>`))

// authorize shows the users to sign in as (GET), or issues a code for the chosen one.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	q := r.Form
	switch {
	case q.Get("response_type") != "code":
		http.Error(w, "response_type must be code", http.StatusBadRequest)
		return
	case q.Get("client_id") != p.ClientID:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "PKCE with S256 is required", http.StatusBadRequest)
		return
	}
	who := q.Get("user")
	if r.Method == http.MethodGet {
		who = p.Auto
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if who == "" {
		params := map[string]string{}
		for _, k := range []string{"response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method"} {
			params[k] = q.Get(k)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = form.Execute(w, map[string]any{"Params": params, "Users": p.users})
		return
	}
	user, ok := p.user(func(u User) bool { return u.Subject == who })
	if !ok {
		user, ok = p.user(func(u User) bool { return u.Email == who })
	}
	if !ok {
		http.Error(w, "no such user", http.StatusForbidden)
		return
	}
	code := rand.Text()
	p.codes[code] = grant{subject: user.Subject, redirect: q.Get("redirect_uri"), nonce: q.Get("nonce"),
		challenge: q.Get("code_challenge"), clientID: q.Get("client_id"), expires: time.Now().Add(time.Minute)}
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token exchanges a code once, for the client it was issued to, with its redirect and the
// verifier whose S256 challenge the authorization carried; or a refresh token of a user
// the provider still has, for a new ID token with their groups as they are now.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
	}
	refuse := func(e string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": e})
	}
	if id != p.ClientID || secret != p.ClientSecret {
		refuse("invalid_client")
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var subject, nonce string
	switch r.Form.Get("grant_type") {
	case "refresh_token":
		var found bool
		subject, found = p.refresh[r.Form.Get("refresh_token")]
		if !found {
			refuse("invalid_grant")
			return
		}
		p.refreshd++
	default:
		g, found := p.codes[r.Form.Get("code")]
		delete(p.codes, r.Form.Get("code"))
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		switch {
		case !found || time.Now().After(g.expires) || g.clientID != id:
			refuse("invalid_grant")
			return
		case r.Form.Get("redirect_uri") != g.redirect:
			refuse("invalid_grant")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			refuse("invalid_grant") // PKCE: the verifier is not the challenge's
			return
		}
		subject, nonce = g.subject, g.nonce
		if p.WrongNonce {
			nonce = "not-the-nonce-asked-for"
		}
		p.Exchanged++
	}
	user, ok := p.user(func(u User) bool { return u.Subject == subject })
	if !ok {
		refuse("invalid_grant") // removed since
		return
	}
	now := time.Now()
	c := p.claims(user)
	c["iss"], c["aud"], c["iat"], c["exp"] = p.URL, p.ClientID, now.Unix(), now.Add(time.Hour).Unix()
	if nonce != "" {
		c["nonce"] = nonce
	}
	claims, _ := json.Marshal(c)
	access := rand.Text()
	p.access[access] = subject
	resp := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600,
		"id_token": oidctest.SignIDToken(p.key, "k1", oidc.RS256, string(claims))}
	if !p.NoRefresh {
		rt := rand.Text()
		p.refresh[rt] = subject
		resp["refresh_token"] = rt
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// claims are what a user's tokens and userinfo say of them.
func (p *Provider) claims(u User) map[string]any {
	c := map[string]any{"sub": u.Subject, "email": u.Email, "name": u.Name, "groups": u.Groups}
	switch u.Verified {
	case EmailVerified:
		c["email_verified"] = true
	case EmailUnverified:
		c["email_verified"] = false
	}
	return c
}

// userinfo answers who an access token's user is now.
func (p *Provider) userinfo(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	p.mu.Lock()
	defer p.mu.Unlock()
	subject, ok := p.access[token]
	user, found := p.user(func(u User) bool { return u.Subject == subject })
	if !ok || !found {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "invalid token", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(p.claims(user))
}
