package main

// The desk's HTTP server: its routes and the doors every request passes, in order:
// security headers (a Content-Security-Policy without inline scripts), the Host and
// Origin checks against DNS rebinding (internal/httpguard), a bounded body (a form's maxBody, an upload's
// --max-upload-mb), Go's
// cross-origin protection for every request that changes something, sign-in (and its
// revocations), the CSRF token of every form, and then the handler, which asks
// internal/access before it asks Temporal anything.

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/auth"
	"github.com/cosci-dev/cosci/internal/httpguard"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/internal/vouch"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// maxBody bounds a request's body: the largest form (a hypothesis, a tool result) is far
// smaller.
const maxBody = 256 << 10

// csp allows the desk's own script and style files only: no inline script, no other
// origin, no frames but the report's (served sandboxed from the desk itself).
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'self'"

// desk is the server's state: none of it is a person's or a session's, which live in
// the cookie, Temporal and the store.
type desk struct {
	auth  *auth.Authenticator
	be    Backend
	st    *store.Store
	hub   *hub
	conv  Conversation
	pages map[string]*template.Template
	log   *slog.Logger
	now   func() time.Time
	// sealed says the lab's keys encrypt its research: new sessions get ids that spell
	// nothing of the goal.
	sealed bool
	// library is the lab's library folder (--library), from which the files sessions
	// cite are served at their page; nil: quotes link to their DOIs (sources.go).
	library *os.Root
	// hosts are the names the desk answers to (its Host header), origins its public
	// origin behind a proxy: anything else is a page of another site (httpguard.Pages).
	hosts, origins []string
	// streams counts each person's live streams; questions their questions a minute;
	// starts the sessions they start an hour, running how many may run at once (0: any).
	streams           *perPerson
	questions, starts *perWindow
	running           int
	// live are the open streams, which a sign-out or a share changed here tells at once;
	// each checks its sign-in every signInCheck and its access every shareCheck besides,
	// and gives each write streamWrite. streamEnded, when set, hears why each one ended.
	live                                 liveStreams
	signInCheck, shareCheck, streamWrite time.Duration
	streamEnded                          func(who, session, why string)
	// listed is Temporal's list of sessions, read at most once every needsTTL (needs.go).
	listed listCache
	// maxUpload caps an uploaded table, in bytes (--max-upload-mb).
	maxUpload int64
}

// maxStreams bounds one person's live streams (pages open on sessions) at once.
const maxStreams = 8

// defaultQuestions is how many questions a person may ask a minute: each is a model turn.
const defaultQuestions = 6

// defaultStarts is how many sessions a person may start an hour, and defaultRunning how
// many of theirs may run at once: each session is many model turns.
const (
	defaultStarts  = 10
	defaultRunning = 5
)

func newDesk(a *auth.Authenticator, be Backend, st *store.Store, log *slog.Logger) (*desk, error) {
	d := &desk{auth: a, be: be, st: st, conv: noConversation{}, log: log, now: time.Now,
		hosts: httpguard.LoopbackHosts, streams: newPerPerson(maxStreams),
		signInCheck: signInCheck, shareCheck: shareCheck, streamWrite: streamWrite, maxUpload: defaultMaxUploadMB << 20}
	d.questions = newPerWindow(defaultQuestions, time.Minute, func() time.Time { return d.now() })
	d.starts = newPerWindow(defaultStarts, time.Hour, func() time.Time { return d.now() })
	d.running = defaultRunning
	d.hub = newHub(watched{d}, time.Second)
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	d.pages = pages
	return d, nil
}

// handler is the desk with all its doors.
func (d *desk) handler() http.Handler {
	mux := http.NewServeMux()
	d.auth.Handle(mux)
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	signed := http.NewServeMux()
	signed.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/sessions", http.StatusFound) })
	signed.HandleFunc("GET /sessions", d.list)
	signed.HandleFunc("GET /needs", d.needs)
	signed.HandleFunc("POST /sessions", d.start)
	signed.HandleFunc("GET /s/{id}", d.session)
	signed.HandleFunc("GET /s/{id}/events", d.events)
	signed.HandleFunc("GET /s/{id}/h/{hid}", d.hypothesis)
	signed.HandleFunc("GET /s/{id}/tree", d.tree)
	signed.HandleFunc("GET /s/{id}/files/{name}", d.file)
	signed.HandleFunc("GET /s/{id}/h/{hid}/ref/{n}", d.hypothesisSource)
	signed.HandleFunc("GET /s/{id}/m/{mid}/ref/{n}", d.answerSource)
	signed.HandleFunc("POST /s/{id}/command/{name}", d.command)
	signed.HandleFunc("POST /s/{id}/calls", d.answerCalls)
	signed.HandleFunc("POST /s/{id}/share", d.share)
	signed.HandleFunc("POST /s/{id}/conversation", d.ask)
	signed.HandleFunc("GET /s/{id}/lab", d.lab)
	signed.HandleFunc("GET /s/{id}/analysis/{aid}", d.analysis)
	signed.HandleFunc("POST /s/{id}/data", d.upload)
	signed.HandleFunc("POST /s/{id}/lab/{act}", d.labAct)
	signed.HandleFunc("POST /auth/logout", d.signOut)
	signed.HandleFunc("POST /auth/signout-everywhere", d.signOutEverywhere)
	mux.HandleFunc("GET /signed-out", func(w http.ResponseWriter, r *http.Request) {
		d.render(w, r, http.StatusOK, "signedout", &signedOutPage{SignIn: d.auth.SignInURL("/sessions")})
	})
	mux.Handle("/", d.signedIn(signed))
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "refused: a request from another site may not change anything here (cross-origin)", http.StatusForbidden)
	}))
	return headers(httpguard.Pages(d.bounded(cop.Handler(mux)), d.hosts, d.origins, "--allowed-host"))
}

// headers sets what every answer carries.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "SAMEORIGIN")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// signedIn lets through a signed-in person with a desk role, and, for a request that
// changes something, the right CSRF token; it sends anyone else to sign in, or refuses.
func (d *desk) signedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.auth.TokenSignIn(w, r) {
			return
		}
		who, err := d.auth.Identify(w, r)
		switch {
		case errors.Is(err, auth.ErrRepeatedHeader):
			http.Error(w, "refused: the request repeats an identity header ("+strings.Join(auth.ProxyHeaders, ", ")+"); the authenticating proxy must overwrite them, never pass a client's on", http.StatusBadRequest)
			return
		case err != nil:
			if u := d.auth.SignInURL(r.URL.RequestURI()); u != "" && r.Method == http.MethodGet {
				http.Redirect(w, r, u, http.StatusFound)
				return
			}
			if errors.Is(err, auth.ErrNotSignedIn) {
				d.render(w, r, http.StatusUnauthorized, "error", &errorPage{Title: "Not signed in", Message: "Not signed in: " + notSignedIn[d.auth.Mode()]})
			} else {
				d.fail(w, r, err)
			}
			return
		}
		if dec := access.Decide(who.Identity, access.Record{}, access.ActStart); !dec.Allowed {
			d.forbid(w, r, who, dec.Missing)
			return
		}
		// An upload's form, CSRF token included, is in its multipart body, which its
		// handler reads only once it has checked the person may steer (readUpload).
		upload := uploadRequest(r)
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !upload {
			var tooBig *http.MaxBytesError
			if err := r.ParseForm(); errors.As(err, &tooBig) {
				http.Error(w, fmt.Sprintf("refused: a form of at most %d bytes", maxBody), http.StatusRequestEntityTooLarge)
				return
			} else if err != nil {
				http.Error(w, "refused: the form cannot be read: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !upload && !who.CheckCSRF(r.PostFormValue("csrf")) {
			d.forbid(w, r, who, "this form's token (CSRF): reload the page and send the form again")
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.WithWho(r.Context(), who)))
	})
}

var notSignedIn = map[string]string{
	auth.ModeOIDC:  "sign in at /auth/login",
	auth.ModeProxy: "the authenticating proxy sent no identity (X-Forwarded-Email or X-Forwarded-User), or the request did not come through it",
	auth.ModeLocal: "open the link the desk printed when it started (in its terminal, or its log: it ends in ?token=...); it signs you in on this machine",
}

// signOut ends this sign-in, at every desk (a copy of the cookie stops working too).
func (d *desk) signOut(w http.ResponseWriter, r *http.Request) {
	who, _ := auth.WhoFrom(r.Context())
	if err := d.auth.SignOut(r.Context(), w, who); err != nil {
		d.fail(w, r, err)
		return
	}
	n := d.live.poke(func(s *liveStream) bool { return s.sid == who.SID })
	d.log.Info("desk: signed out", "who", who.ID, "streams", n)
	http.Redirect(w, r, "/signed-out", http.StatusSeeOther)
}

// signOutEverywhere ends every sign-in of a person: one's own, or, for an admin, anyone's
// (a lost laptop, someone who left the lab).
func (d *desk) signOutEverywhere(w http.ResponseWriter, r *http.Request) {
	who, _ := auth.WhoFrom(r.Context())
	person := strings.TrimSpace(r.PostFormValue("who"))
	if person == "" {
		person = who.ID
	}
	if person != who.ID && !who.Has(access.Admin) {
		d.forbid(w, r, who, "the admin role, to sign someone else out")
		return
	}
	if err := d.auth.SignOutEverywhere(r.Context(), person, who.ID); err != nil {
		d.fail(w, r, err)
		return
	}
	n := d.live.poke(func(s *liveStream) bool { return s.person == person })
	d.log.Info("desk: signed out everywhere", "who", person, "by", who.ID, "streams", n)
	if person == who.ID {
		http.Redirect(w, r, "/signed-out", http.StatusSeeOther)
		return
	}
	d.render(w, r, http.StatusOK, "error", &errorPage{Title: "Signed out everywhere",
		Message: fmt.Sprintf("Every sign-in of %s begun before now ends, at every desk within %v.", person, auth.RevocationTTL)})
}

// forbid is a 403 that says what is missing.
func (d *desk) forbid(w http.ResponseWriter, r *http.Request, who auth.Who, missing string) {
	d.render(w, r, http.StatusForbidden, "error", &errorPage{frame: frame{Who: who}, Title: "Not allowed", Message: "Missing: " + missing})
}

// fail answers an error: 404 for an unknown session, 409 for a refused command, 502 for
// Temporal or the store not answering. What the page says is the desk's own words, with
// what the person can do; an error's own text (an address, a driver's message) goes to the
// log alone, under a request id the page shows, so whoever runs the desk can find it.
func (d *desk) fail(w http.ResponseWriter, r *http.Request, err error) {
	who, _ := auth.WhoFrom(r.Context())
	var ref *refused
	var late *notAnswering
	switch {
	case errors.Is(err, errNoSession), errors.Is(err, fs.ErrNotExist):
		d.render(w, r, http.StatusNotFound, "error", &errorPage{frame: frame{Who: who}, Title: "Not found", Message: "No such session, or nothing of that name in it."})
	case errors.As(err, &ref):
		d.render(w, r, http.StatusConflict, "error", &errorPage{frame: frame{Who: who}, Title: "Refused", Message: ref.msg})
	case errors.Is(err, context.Canceled):
	case errors.As(err, &late):
		req := d.logFailure(r, late.err)
		d.render(w, r, http.StatusGatewayTimeout, "error", &errorPage{frame: frame{Who: who}, Title: "Not answering", Request: req,
			Message: late.Error() + ". Reload the page in a minute; if it goes on, tell whoever runs the desk and its workers, with the request id below."})
	default:
		req := d.logFailure(r, err)
		d.render(w, r, http.StatusBadGateway, "error", &errorPage{frame: frame{Who: who}, Title: "Not answering", Request: req,
			Message: "The sessions did not answer just now (Temporal, a worker or the session store). Reload the page in a minute; if it goes on, tell whoever runs the desk, with the request id below: the reason is in the desk's log under it."})
	}
}

// logFailure logs a request's error whole, under a new request id, and returns the id.
func (d *desk) logFailure(r *http.Request, err error) string {
	var n [6]byte
	_, _ = rand.Read(n[:])
	req := hex.EncodeToString(n[:])
	d.log.Warn("desk: request failed", "request", req, "method", r.Method, "path", r.URL.Path, "err", err)
	return req
}

// render executes a page; every value is escaped by html/template. The layout's frame is
// the request's signed-in person, unless the page names one (a page that fails before
// anyone is known names nobody), and the desk's mode.
func (d *desk) render(w http.ResponseWriter, r *http.Request, code int, page string, data pageData) {
	f := data.framed()
	if f.Who.ID == "" {
		f.Who, _ = auth.WhoFrom(r.Context())
	}
	f.Mode = d.auth.Mode()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := d.pages[page].ExecuteTemplate(w, "layout", data); err != nil {
		d.log.Warn("desk: rendering", "page", page, "err", err)
	}
}

// record is a session's access record: the store's, or, for a session nobody has shared,
// its scientist's alone (scientist is the session's own ScientistID).
func (d *desk) record(ctx context.Context, id, scientist string) (access.Record, error) {
	rec, found, err := d.st.Access(ctx, id)
	if err != nil {
		return rec, err
	}
	if !found {
		rec = access.Record{SessionID: id, Owner: scientist}
	}
	return rec, nil
}

// accessOf is session id's access record, read without asking the session anything: the
// store's, else its scientist's as Temporal's visibility or the store name them
// (Backend.Owner). errNoSession when neither knows the session.
func (d *desk) accessOf(ctx context.Context, id string) (access.Record, error) {
	rec, found, err := d.st.Access(ctx, id)
	if err != nil || found {
		return rec, err
	}
	owner, err := d.be.Owner(ctx, id)
	if err != nil {
		return rec, err
	}
	return access.Record{SessionID: id, Owner: owner}, nil
}

// allowed checks, before anything of the session is asked for, who may act on session id.
// A session the person may not read answers as one that does not exist (404, naming no
// one), so that nobody learns which ids exist or whose they are; one they read but may not
// steer or share is refused with what is missing (403). On a refusal or an error it has
// answered, and returns false.
func (d *desk) allowed(w http.ResponseWriter, r *http.Request, id string, act access.Action) (auth.Who, access.Record, bool) {
	who, _ := auth.WhoFrom(r.Context())
	rec, err := d.accessOf(r.Context(), id)
	if err == nil && !access.Decide(who.Identity, rec, access.ActRead).Allowed {
		err = errNoSession
	}
	if err != nil {
		d.fail(w, r, err)
		return who, rec, false
	}
	if dec := access.Decide(who.Identity, rec, act); !dec.Allowed {
		d.forbid(w, r, who, dec.Missing)
		return who, rec, false
	}
	return who, rec, true
}

// signedBy is who sends a command, a question or a confirmation, this desk's signature of
// the act (internal/vouch), which the session records beside it, and the id of the update
// the desk sends it as, which the signature covers.
type signedBy struct{ ID, Sig, Update string }

// sign vouches that person does an act of that kind, whose payload has that digest, on
// session id now, as a new update.
func (d *desk) sign(id, kind, digest, person string) signedBy {
	by := session.CleanBy(person)
	update := "desk-" + newUpdateID()
	act := vouch.Act{Session: id, Kind: kind, By: by, Payload: digest, Update: update}
	return signedBy{ID: by, Sig: d.auth.Key().Acts().Sign(act, d.now()), Update: update}
}

// vouched says whether a desk with this key signed this very act, recorded at when (an
// RFC 3339 time the session recorded); pages mark any other "not signed".
func (d *desk) vouched(act vouch.Act, sig, when string) bool {
	return d.auth.Key().Acts().Of(act, sig, when) == vouch.Signed
}

// newUpdateID is a fresh update id: 12 random bytes.
func newUpdateID() string {
	var n [12]byte
	_, _ = rand.Read(n[:])
	return hex.EncodeToString(n[:])
}
