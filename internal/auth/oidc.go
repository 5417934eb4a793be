package auth

import (
	"context"
	"errors"
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
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
	issuer   string
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
		provider: p,
		verifier: p.Verifier(&oidc.Config{ClientID: c.ClientID}),
		issuer:   c.Issuer,
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
	f := flow{State: random(24), Nonce: random(24), Verifier: oauth2.GenerateVerifier(), Next: SafeNext(r.URL.Query().Get("next"))}
	v, err := a.c.Key.Seal(flowCookie, f, a.c.Now().Add(10*time.Minute))
	if err != nil {
		http.Error(w, "cannot start signing in", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, a.cookie(flowCookie, v, 600))
	http.Redirect(w, r, a.c.OIDC.conf.AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusFound)
}

// claims are the ID token's (or userinfo's) claims the desk reads.
type claims struct {
	Subject       string `json:"sub"`
	Email         string `json:"email"`
	EmailVerified *bool  `json:"email_verified"`
	Name          string `json:"name"`
}

// Identity is who the claims name: the e-mail address only when the provider says it has
// verified it (email_verified true); otherwise the issuer and the subject, which no
// person can edit, written "issuer#subject" so that it can never equal an address. A
// provider that lets users set their own address and omits the claim, or says false,
// must not make anyone ada@lab.example.
func (o *OIDC) identity(c claims) string {
	if c.Email != "" && c.EmailVerified != nil && *c.EmailVerified {
		return c.Email
	}
	return SubjectID(o.issuer, c.Subject)
}

// SubjectID is the identity of a subject of an issuer whose e-mail address is not
// verified: "https://login.lab.example#u123" (an issuer has no fragment).
func SubjectID(issuer, subject string) string { return issuer + "#" + subject }

// callback finishes a sign-in: the state must match the flow cookie's, the code is
// exchanged with the verifier, the ID token verified (issuer, audience, expiry, signature)
// and its nonce matched. The flow cookie is cleared at once, so one flow signs in once.
func (a *Authenticator) callback(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, msg string, args ...any) {
		slog.Info("desk: sign-in refused", "reason", fmt.Sprintf(msg, args...))
		http.Error(w, "sign-in failed: "+fmt.Sprintf(msg, args...)+"; start again at /auth/login", code)
	}
	c, err := r.Cookie(a.CookieName(flowCookie))
	var f flow
	if err != nil || a.c.Key.Open(flowCookie, c.Value, a.c.Now(), &f) != nil {
		fail(http.StatusBadRequest, "no sign-in in flight (it expired after ten minutes, or cookies are off)")
		return
	}
	http.SetCookie(w, a.cookie(flowCookie, "", -1))
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		fail(http.StatusForbidden, "the identity provider said %s", strings.TrimSpace(e+" "+q.Get("error_description")))
		return
	}
	if q.Get("state") == "" || !equal(q.Get("state"), f.State) {
		fail(http.StatusBadRequest, "the state does not match this browser's sign-in")
		return
	}
	o := a.c.OIDC
	ctx := o.context(r.Context())
	tok, err := o.conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		fail(http.StatusBadGateway, "the code was not exchanged: %v", err)
		return
	}
	cl, groups, err := o.verify(ctx, tok)
	if err != nil {
		fail(http.StatusForbidden, "%v", err)
		return
	}
	if cl.nonce == "" || !equal(cl.nonce, f.Nonce) {
		fail(http.StatusForbidden, "the ID token's nonce is not this sign-in's")
		return
	}
	now := a.c.Now()
	s := signedIn{ID: o.identity(cl.claims), Name: cl.Name, Groups: groups, SID: random(18), Issued: now.UnixMilli(), GroupsAt: now.Unix()}
	s.Refresh, s.Access = keepable(tok)
	if err := a.setSignedIn(w, s); err != nil {
		fail(http.StatusInternalServerError, "cannot write the session cookie")
		return
	}
	http.Redirect(w, r, SafeNext(f.Next), http.StatusFound)
}

// keepable is what of tok the cookie keeps to read the groups again: the refresh token if
// the provider gave one, else the access token (for userinfo), if it lasts a while.
func keepable(tok *oauth2.Token) (refresh, access string) {
	if tok.RefreshToken != "" {
		return tok.RefreshToken, ""
	}
	return "", tok.AccessToken
}

func (o *OIDC) context(ctx context.Context) context.Context {
	if o.client != nil {
		return oidc.ClientContext(ctx, o.client)
	}
	return ctx
}

// verified is an ID token's claims, its nonce and all of them (for the groups claim).
type verified struct {
	claims
	nonce string
}

// verify checks a token response's ID token and reads its claims and groups.
func (o *OIDC) verify(ctx context.Context, tok *oauth2.Token) (verified, []string, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return verified{}, nil, errors.New("the provider sent no ID token")
	}
	idt, err := o.verifier.Verify(ctx, raw)
	if err != nil {
		return verified{}, nil, fmt.Errorf("the ID token is not valid: %w", err)
	}
	var cl claims
	all := map[string]any{}
	if err := idt.Claims(&cl); err != nil || idt.Claims(&all) != nil {
		return verified{}, nil, errors.New("the ID token's claims cannot be read")
	}
	return verified{claims: cl, nonce: idt.Nonce}, stringsOf(all[o.groups]), nil
}

// reread asks the provider again who s is and in which groups: with the refresh token (a
// new ID token), else the access token at the userinfo endpoint. It fails when the
// provider refuses (the person was removed, the grant revoked), when neither is kept, or
// when the answer names someone else: the sign-in then ends, and the person signs in
// again (at a provider where they are still signed in, without a word).
func (o *OIDC) reread(ctx context.Context, s signedIn) (signedIn, error) {
	ctx = o.context(ctx)
	switch {
	case s.Refresh != "":
		tok, err := o.conf.TokenSource(ctx, &oauth2.Token{RefreshToken: s.Refresh}).Token()
		if err != nil {
			return s, fmt.Errorf("the provider refused the refresh: %w", err)
		}
		cl, groups, err := o.verify(ctx, tok)
		if err != nil {
			return s, err
		}
		if o.identity(cl.claims) != s.ID {
			return s, errors.New("the refreshed ID token names someone else")
		}
		s.Name, s.Groups = cl.Name, groups
		s.Refresh, s.Access = keepable(tok) // oauth2 keeps the old refresh token if no new one came
		return s, nil
	case s.Access != "":
		info, err := o.provider.UserInfo(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: s.Access, TokenType: "Bearer"}))
		if err != nil {
			return s, fmt.Errorf("the provider's userinfo: %w", err)
		}
		var cl claims
		all := map[string]any{}
		if err := info.Claims(&cl); err != nil || info.Claims(&all) != nil {
			return s, errors.New("the userinfo's claims cannot be read")
		}
		if cl.Subject == "" || o.identity(cl) != s.ID {
			return s, errors.New("the userinfo names someone else")
		}
		s.Name, s.Groups = cl.Name, stringsOf(all[o.groups])
		return s, nil
	}
	return s, errors.New("nothing to read the groups again with: sign in again")
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
