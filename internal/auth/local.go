package auth

import (
	"net/http"
	"net/url"
)

// TokenParam is the query parameter of the local mode's sign-in link.
const TokenParam = "token"

// SignInLink is the link that signs the local user in: base (the desk's address) with
// the desk's token, as the desk prints it when it starts. Only someone who can read what
// the desk printed (its terminal, its log) has it; a page of another site does not.
func (a *Authenticator) SignInLink(base string) string {
	if a.c.Mode != ModeLocal {
		return base
	}
	return base + "/?" + TokenParam + "=" + url.QueryEscape(a.c.LocalToken)
}

// TokenSignIn signs the local user in from a link with the desk's token, from this
// machine: it sets the sealed cookie and sends the browser on to the same address without
// the token (so it stays out of the history and of Referer headers). handled is false for
// a request that carries no token, or in another mode; a wrong token is a 401.
func (a *Authenticator) TokenSignIn(w http.ResponseWriter, r *http.Request) (handled bool) {
	q := r.URL.Query()
	if a.c.Mode != ModeLocal || !q.Has(TokenParam) || r.Method != http.MethodGet {
		return false
	}
	if !loopback(r.RemoteAddr) || !equal(q.Get(TokenParam), a.c.LocalToken) {
		http.Error(w, "not signed in: this link's token is not this desk's; open the link the desk printed when it started (in its terminal or log)", http.StatusUnauthorized)
		return true
	}
	if err := a.setSignedIn(w, signedIn{ID: a.c.LocalUser, SID: random(18), Issued: a.c.Now().UnixMilli(), Desk: a.c.LocalAddr}); err != nil {
		http.Error(w, "cannot write the session cookie", http.StatusInternalServerError)
		return true
	}
	q.Del(TokenParam)
	next := r.URL.Path
	if len(q) > 0 {
		next += "?" + q.Encode()
	}
	http.Redirect(w, r, SafeNext(next), http.StatusSeeOther)
	return true
}
