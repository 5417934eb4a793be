// Package idptest is an OpenID Connect provider for tests: discovery, keys and ID token
// signing from go-oidc's own oidctest, and the two endpoints of the authorization code
// flow, which oidctest lacks: /auth (sign in as one of the provider's users) and /token
// (exchange a code, checking the client, the redirect and the PKCE verifier). It is small
// enough to read in one go, which a full provider (zitadel's op, with its storage
// interface of some thirty methods) is not.
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
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/coreos/go-oidc/v3/oidc/oidctest"
)

// User is one of the provider's people.
type User struct {
	Subject string
	Email   string
	Name    string
	Groups  []string
}

// Provider is a running test identity provider.
type Provider struct {
	URL          string
	ClientID     string
	ClientSecret string
	// Auto, if set, signs in as this user (by e-mail) without showing the form.
	Auto string

	srv   *httptest.Server
	key   *rsa.PrivateKey
	keys  *oidctest.Server
	mu    sync.Mutex
	users []User
	codes map[string]grant
	// Exchanged counts the codes exchanged, for tests that check a code is single-use.
	Exchanged int
}

type grant struct {
	user                       User
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
	p := &Provider{ClientID: "cosci-desk", ClientSecret: "test-secret", key: key, users: users, codes: map[string]grant{}}
	p.keys = &oidctest.Server{PublicKeys: []oidctest.PublicKey{{PublicKey: key.Public(), KeyID: "k1", Algorithm: oidc.RS256}}}
	mux := http.NewServeMux()
	mux.Handle("/.well-known/openid-configuration", p.keys)
	mux.Handle("/keys", p.keys)
	mux.HandleFunc("/auth", p.authorize)
	mux.HandleFunc("/token", p.token)
	p.srv = httptest.NewServer(mux)
	p.URL = p.srv.URL
	p.keys.SetIssuer(p.URL)
	return p
}

// Close stops the provider.
func (p *Provider) Close() { p.srv.Close() }

var form = template.Must(template.New("f").Parse(`<!doctype html><title>Test identity provider</title>
<h1>Sign in</h1><form method="post" action="/auth">
{{range $k, $v := .Params}}<input type="hidden" name="{{$k}}" value="{{$v}}">{{end}}
{{range .Users}}<button type="submit" name="user" value="{{.Email}}" id="as-{{.Subject}}">{{.Email}}</button>{{end}}
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
	if who == "" {
		params := map[string]string{}
		for _, k := range []string{"response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method"} {
			params[k] = q.Get(k)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = form.Execute(w, map[string]any{"Params": params, "Users": p.users})
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var user *User
	for i := range p.users {
		if p.users[i].Email == who {
			user = &p.users[i]
		}
	}
	if user == nil {
		http.Error(w, "no such user", http.StatusForbidden)
		return
	}
	code := rand.Text()
	p.codes[code] = grant{user: *user, redirect: q.Get("redirect_uri"), nonce: q.Get("nonce"),
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
// verifier whose S256 challenge the authorization carried.
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
	g, found := p.codes[r.Form.Get("code")]
	delete(p.codes, r.Form.Get("code"))
	p.mu.Unlock()
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
	now := time.Now()
	claims, _ := json.Marshal(map[string]any{
		"iss": p.URL, "aud": p.ClientID, "sub": g.user.Subject, "email": g.user.Email, "email_verified": true,
		"name": g.user.Name, "groups": g.user.Groups, "nonce": g.nonce, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	})
	p.mu.Lock()
	p.Exchanged++
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": rand.Text(), "token_type": "Bearer", "expires_in": 3600,
		"id_token": oidctest.SignIDToken(p.key, "k1", oidc.RS256, string(claims)),
	})
}
