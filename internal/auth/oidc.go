package auth

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// OIDC is the lab's identity provider: the authorization code flow with PKCE.
type OIDC struct {
	conf     oauth2.Config
	verifier *oidc.IDTokenVerifier
	// groups is the ID token's claim that lists the person's groups.
	groups string
	client *http.Client
}

// OIDCConfig names the provider and this desk's registration with it.
type OIDCConfig struct {
	Issuer       string
	ClientID     string
	ClientSecret string // "" for a public client (PKCE alone)
	RedirectURL  string // https://desk.lab.example/auth/callback
	Scopes       []string
	GroupsClaim  string // default "groups"
	// Client is the HTTP client for the provider (tests); nil is http.DefaultClient.
	Client *http.Client
}

// NewOIDC discovers the provider (its /.well-known/openid-configuration).
func NewOIDC(ctx context.Context, c OIDCConfig) (*OIDC, error) {
	if c.Client != nil {
		ctx = oidc.ClientContext(ctx, c.Client)
	}
	p, err := oidc.NewProvider(ctx, c.Issuer)
	if err != nil {
		return nil, fmt.Errorf("the identity provider at %s: %w", c.Issuer, err)
	}
	scopes := c.Scopes
	if len(scopes) == 0 {
		scopes = []string{oidc.ScopeOpenID, "profile", "email"}
	}
	if c.GroupsClaim == "" {
		c.GroupsClaim = "groups"
	}
	return &OIDC{
		conf: oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Endpoint: p.Endpoint(),
			RedirectURL: c.RedirectURL, Scopes: scopes},
		verifier: p.Verifier(&oidc.Config{ClientID: c.ClientID}),
		groups:   c.GroupsClaim,
		client:   c.Client,
	}, nil
}

// flowCookie holds one sign-in in flight, from the redirect to the provider to its return.
const flowCookie = "cosci_desk_flow"

type flow struct {
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	Next     string `json:"next"`
}

// login sends the browser to the provider: a fresh state, nonce and PKCE verifier, kept in
// a sealed cookie for ten minutes, only the verifier's S256 challenge sent.
func (a *Authenticator) login(w http.ResponseWriter, r *http.Request) {
	f := flow{State: random(24), Nonce: random(24), Verifier: oauth2.GenerateVerifier(), Next: safeNext(r.URL.Query().Get("next"))}
	v, err := a.c.Key.Seal(flowCookie, f, a.c.Now().Add(10*time.Minute))
	if err != nil {
		http.Error(w, "cannot start signing in", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, a.cookie(flowCookie, v, "/auth/", 600))
	http.Redirect(w, r, a.c.OIDC.conf.AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusFound)
}

// claims are the ID token's claims the desk reads.
type claims struct {
	Subject       string `json:"sub"`
	Email         string `json:"email"`
	EmailVerified *bool  `json:"email_verified"`
	Name          string `json:"name"`
}

// callback finishes a sign-in: the state must match the flow cookie's, the code is
// exchanged with the verifier, the ID token verified (issuer, audience, expiry, signature)
// and its nonce matched. The identity is the verified e-mail address, else the subject.
func (a *Authenticator) callback(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, msg string, args ...any) {
		slog.Info("desk: sign-in refused", "reason", fmt.Sprintf(msg, args...))
		http.Error(w, "sign-in failed: "+fmt.Sprintf(msg, args...)+"; start again at /auth/login", code)
	}
	c, err := r.Cookie(flowCookie)
	var f flow
	if err != nil || a.c.Key.Open(flowCookie, c.Value, a.c.Now(), &f) != nil {
		fail(http.StatusBadRequest, "no sign-in in flight (it expired after ten minutes, or cookies are off)")
		return
	}
	http.SetCookie(w, a.cookie(flowCookie, "", "/auth/", -1))
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		fail(http.StatusForbidden, "the identity provider said %s", strings.TrimSpace(e+" "+q.Get("error_description")))
		return
	}
	if q.Get("state") == "" || q.Get("state") != f.State {
		fail(http.StatusBadRequest, "the state does not match this browser's sign-in")
		return
	}
	o := a.c.OIDC
	ctx := r.Context()
	if o.client != nil {
		ctx = oidc.ClientContext(ctx, o.client)
	}
	tok, err := o.conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		fail(http.StatusBadGateway, "the code was not exchanged: %v", err)
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := o.verifier.Verify(ctx, raw)
	if err != nil {
		fail(http.StatusForbidden, "the ID token is not valid: %v", err)
		return
	}
	if idt.Nonce != f.Nonce {
		fail(http.StatusForbidden, "the ID token's nonce is not this sign-in's")
		return
	}
	var cl claims
	all := map[string]any{}
	if err := idt.Claims(&cl); err != nil || idt.Claims(&all) != nil {
		fail(http.StatusForbidden, "the ID token's claims cannot be read")
		return
	}
	s := signedIn{ID: cl.Subject, Name: cl.Name, Groups: stringsOf(all[o.groups]), Nonce: random(18)}
	if cl.Email != "" && (cl.EmailVerified == nil || *cl.EmailVerified) {
		s.ID = cl.Email
	}
	if err := a.setSignedIn(w, s); err != nil {
		fail(http.StatusInternalServerError, "cannot write the session cookie")
		return
	}
	http.Redirect(w, r, safeNext(f.Next), http.StatusFound)
}

// stringsOf reads a claim that lists strings ([]any from JSON), or one string.
func stringsOf(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
