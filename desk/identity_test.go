package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/auth"
	"github.com/cosci-dev/cosci/internal/session"
)

// TestRebindingIsRefused: a page of another site whose name resolves to the desk's
// address sends its own name as Host, and its own origin: the desk answers neither, in
// any mode, before anyone is identified.
func TestRebindingIsRefused(t *testing.T) {
	td := newTestDesk(t)
	td.fake.add("s-1", "ada@lab", "g")
	tests := []struct {
		name, host, origin string
		code               int
	}{
		{"the desk's own name", "example.com", "", http.StatusOK},
		{"its own origin", "example.com", "http://example.com", http.StatusOK},
		{"a rebound name", "rebind.attacker.example", "", http.StatusForbidden},
		{"a rebound name with its port", "rebind.attacker.example:8090", "http://rebind.attacker.example:8090", http.StatusForbidden},
		{"another origin", "example.com", "https://evil.example", http.StatusForbidden},
	}
	for _, tt := range tests {
		for _, path := range []string{"/sessions", "/s/s-1", "/s/s-1/events"} {
			// A stream let through by a broken guard ends within streamWait, and fails.
			ctx, cancel := context.WithTimeout(t.Context(), streamWait)
			defer cancel()
			r := httptest.NewRequestWithContext(ctx, "GET", path, nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			r.Header.Set("X-Forwarded-Email", "ada@lab")
			r.RemoteAddr = "192.0.2.1:1"
			w := httptest.NewRecorder()
			if tt.code == http.StatusOK && path == "/s/s-1/events" {
				continue // a stream; its refusals are what matter here
			}
			td.h.ServeHTTP(w, r)
			if w.Code != tt.code {
				t.Errorf("%s, %s: %d, want %d", tt.name, path, w.Code, tt.code)
			}
			if tt.code != http.StatusOK && strings.Contains(w.Body.String(), "csrf") {
				t.Errorf("%s, %s: a refusal carries a CSRF token", tt.name, path)
			}
		}
	}
}

// localDesk is a desk in the local mode, as `go run ./desk` starts it, over the fake.
func localDesk(t *testing.T) (*testDesk, *auth.Authenticator) {
	t.Helper()
	td := newTestDesk(t)
	a, err := auth.New(auth.Config{Mode: auth.ModeLocal, Key: td.key, LocalUser: "me", LocalToken: "desk-token-0123456789abcdef", LocalAddr: "127.0.0.1:8090", Revocations: td.st})
	if err != nil {
		t.Fatal(err)
	}
	td.desk.auth = a
	td.hosts = []string{"127.0.0.1", "localhost"}
	td.h = td.handler()
	return td, a
}

// local sends a request from this machine, to 127.0.0.1:8090, with the cookies given.
func local(td *testDesk, method, target string, form url.Values, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	return localFrom(td, "127.0.0.1:5555", method, target, form, cookies...)
}

// localFrom is local from the address remote.
func localFrom(td *testDesk, remote, method, target string, form url.Values, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	var r *http.Request
	if form != nil {
		r = httptest.NewRequest(method, "http://127.0.0.1:8090"+target, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, "http://127.0.0.1:8090"+target, nil)
	}
	r.RemoteAddr = remote
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	td.h.ServeHTTP(w, r)
	return w
}

// TestLocalSignIn: the local desk believes only the browser that opened its link; a
// signed-out cookie, copied or not, is nobody.
func TestLocalSignIn(t *testing.T) {
	td, a := localDesk(t)
	td.fake.add("s-1", "me", "g")
	w := local(td, "GET", "/s/s-1", nil)
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "?token=") || strings.Contains(w.Body.String(), "desk-token") {
		t.Fatalf("from this machine without the link: %d\n%s\nwant 401 that says how to sign in, without the token", w.Code, w.Body.String())
	}
	// A wrong token, or the right one from another machine, signs nobody in.
	for _, tt := range []struct{ name, remote, target string }{
		{"a wrong token", "127.0.0.1:5555", "/s/s-1?token=desk-token-0123456789abcdeX"},
		{"an empty token", "127.0.0.1:5555", "/s/s-1?token="},
		{"the token from another machine", "192.0.2.7:5555", "/s/s-1?token=desk-token-0123456789abcdef"},
	} {
		w := localFrom(td, tt.remote, "GET", tt.target, nil)
		if w.Code != http.StatusUnauthorized || len(w.Result().Cookies()) > 0 {
			t.Errorf("%s: %d, cookies %v; want 401 and none", tt.name, w.Code, w.Result().Cookies())
		}
	}
	w = local(td, "GET", "/s/s-1?token=desk-token-0123456789abcdef", nil)
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || loc != "/s/s-1" {
		t.Fatalf("the link: %d to %q", w.Code, loc)
	}
	cookie := w.Result().Cookies()[0]
	if !strings.HasSuffix(cookie.Name, "-127.0.0.1-8090") {
		t.Errorf("the cookie %q does not name the desk's address: a browser sends it to every port of 127.0.0.1", cookie.Name)
	}
	// Another desk on this machine with the same key believes it not: as another user, or
	// on another port (the cookie renamed for it, as a page could not but a test can).
	for _, tt := range []struct{ name, user, addr string }{
		{"another --local-user", "you", "127.0.0.1:8090"},
		{"another port", "me", "127.0.0.1:8091"},
	} {
		other, _ := localDesk(t)
		other.fake.add("s-1", "me", "g")
		other.desk.auth, _ = auth.New(auth.Config{Mode: auth.ModeLocal, Key: td.key, LocalUser: tt.user, LocalAddr: tt.addr, Revocations: other.st})
		other.h = other.handler()
		moved := *cookie
		moved.Name = other.desk.auth.CookieName(auth.SessionCookie)
		if w := local(other, "GET", "/s/s-1", nil, &moved); w.Code != http.StatusUnauthorized {
			t.Errorf("the cookie at a desk with %s: %d, want 401", tt.name, w.Code)
		}
	}
	// From another machine, the cookie is nobody either.
	if w := localFrom(td, "192.0.2.7:5555", "GET", "/s/s-1", nil, cookie); w.Code != http.StatusUnauthorized {
		t.Errorf("the cookie from another machine: %d, want 401", w.Code)
	}
	if link := a.SignInLink("http://127.0.0.1:8090"); link != "http://127.0.0.1:8090/?token=desk-token-0123456789abcdef" {
		t.Errorf("the printed link is %q", link)
	}
	w = local(td, "GET", "/s/s-1", nil, cookie)
	if w.Code != http.StatusOK {
		t.Fatalf("signed in: %d", w.Code)
	}
	token := csrfInput.FindStringSubmatch(w.Body.String())[1]
	if w := local(td, "POST", "/s/s-1/command/suspend", url.Values{"csrf": {token}}, cookie); w.Code != http.StatusSeeOther {
		t.Fatalf("a command: %d %s", w.Code, w.Body.String())
	}
	if w := local(td, "POST", "/auth/logout", url.Values{"csrf": {token}}, cookie); w.Code != http.StatusSeeOther {
		t.Fatalf("sign out: %d", w.Code)
	}
	// The cookie was copied before: it signs nobody in now, here or at a desk started
	// again with the same key and store.
	if w := local(td, "GET", "/s/s-1", nil, cookie); w.Code != http.StatusUnauthorized {
		t.Errorf("the signed-out cookie: %d, want 401", w.Code)
	}
	again, _ := localDesk(t)
	again.desk.auth, _ = auth.New(auth.Config{Mode: auth.ModeLocal, Key: td.key, LocalUser: "me", LocalAddr: "127.0.0.1:8090", Revocations: td.st})
	again.h = again.handler()
	if w := local(again, "POST", "/s/s-1/command/resume", url.Values{"csrf": {token}}, cookie); w.Code != http.StatusUnauthorized {
		t.Errorf("the signed-out cookie and its token at another desk: %d, want 401", w.Code)
	}
	if n := len(td.fake.commands); n != 1 {
		t.Errorf("%d commands reached the session, want the one before signing out", n)
	}
}

// TestRepeatedIdentityHeaders: a client's own identity header sent ahead of the proxy's
// is refused, not believed.
func TestRepeatedIdentityHeaders(t *testing.T) {
	td := newTestDesk(t)
	for _, h := range auth.ProxyHeaders {
		r := httptest.NewRequest("GET", "/sessions", nil)
		r.RemoteAddr = "192.0.2.1:1"
		r.Header.Set("X-Forwarded-Email", "ada@lab")
		r.Header.Add(h, "root@lab")
		r.Header.Add(h, "cosci-admins")
		w := httptest.NewRecorder()
		td.h.ServeHTTP(w, r)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "repeats an identity header") {
			t.Errorf("%s twice: %d %q, want 400", h, w.Code, w.Body.String())
		}
	}
}

// TestAccessBeforeAnyQuery: a session the person may not read is a 404 like a missing
// one, and nothing of it is asked of Temporal; a session started without a scientist
// ("anonymous") is nobody's who signs in by that name.
func TestAccessBeforeAnyQuery(t *testing.T) {
	testPolicy.Scientists = append(testPolicy.Scientists, "anonymous")
	defer func() { testPolicy.Scientists = testPolicy.Scientists[:len(testPolicy.Scientists)-1] }()
	td := newTestDesk(t)
	td.fake.add("s-1", "ada@lab", "secret goal")
	td.fake.add("s-anon", "anonymous", "a goal started from the command line")
	for _, tt := range []struct {
		who, id string
		code    int
	}{
		{"bob@lab", "s-1", http.StatusNotFound},
		{"bob@lab", "s-nope", http.StatusNotFound},
		{"anonymous", "s-anon", http.StatusNotFound},
		{"root@lab", "s-anon", http.StatusOK},
		{"ada@lab", "s-1", http.StatusOK},
	} {
		td.fake.mu.Lock()
		pages := td.fake.pages
		td.fake.mu.Unlock()
		code, body := td.do(t, tt.who, "GET", "/s/"+tt.id, nil)
		td.fake.mu.Lock()
		asked := td.fake.pages - pages
		td.fake.mu.Unlock()
		if code != tt.code {
			t.Errorf("%s on %s: %d, want %d", tt.who, tt.id, code, tt.code)
		}
		if code == http.StatusNotFound && (asked != 0 || strings.Contains(body, "secret goal") || strings.Contains(body, "ada@lab")) {
			t.Errorf("%s on %s: refused after %d page queries, or naming what it hides", tt.who, tt.id, asked)
		}
	}
	// An admin shares the anonymous session; then it is read by whom it is shared with.
	if code, _ := td.do(t, "root@lab", "POST", "/s/s-anon/share", url.Values{"who": {"bob@lab"}, "level": {"read"}}); code != http.StatusSeeOther {
		t.Errorf("the admin's share: %d", code)
	}
	if code, _ := td.do(t, "bob@lab", "GET", "/s/s-anon", nil); code != http.StatusOK {
		t.Errorf("bob after the admin shared it: %d", code)
	}
}

// TestWhatOnePersonMayTake: at most maxStreams live pages at once, and the questions a
// minute the desk allows, each refusal a 429 that says when to try again.
func TestWhatOnePersonMayTake(t *testing.T) {
	td := newTestDesk(t)
	td.fake.add("s-1", "ada@lab", "g")
	var releases []func()
	for range maxStreams {
		release, ok := td.streams.take("ada@lab")
		if !ok {
			t.Fatal("a stream within the limit was refused")
		}
		releases = append(releases, release)
	}
	code, body := td.do(t, "ada@lab", "GET", "/s/s-1/events", nil)
	if code != http.StatusTooManyRequests || !strings.Contains(body, "at most 8 live pages") {
		t.Errorf("a 9th live page: %d %q", code, body)
	}
	if _, ok := td.streams.take("root@lab"); !ok {
		t.Error("another person's stream was refused")
	}
	releases[0]()
	if _, ok := td.streams.take("ada@lab"); !ok {
		t.Error("a stream after one closed was refused")
	}

	talk := &fakeTalk{}
	td.conv = temporalConversation{talk: talk, st: td.st}
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	td.now = func() time.Time { return now }
	ask := func() (int, http.Header) {
		r := httptest.NewRequest("POST", "/s/s-1/conversation", strings.NewReader(url.Values{"message": {"why?"}, "csrf": {td.csrf(t, "ada@lab")}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("X-Forwarded-Email", "ada@lab")
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.RemoteAddr = "192.0.2.1:1"
		for _, c := range td.cookies["ada@lab"] {
			r.AddCookie(c)
		}
		w := httptest.NewRecorder()
		td.h.ServeHTTP(w, r)
		return w.Code, w.Header()
	}
	for i := range defaultQuestions {
		if code, _ := ask(); code != http.StatusSeeOther {
			t.Fatalf("question %d: %d", i+1, code)
		}
		now = now.Add(5 * time.Second)
	}
	code, h := ask()
	if code != http.StatusTooManyRequests || h.Get("Retry-After") != "30" {
		t.Errorf("question %d within a minute: %d, Retry-After %q; want 429 in 30 s", defaultQuestions+1, code, h.Get("Retry-After"))
	}
	if n := len(talk.updates()); n != defaultQuestions {
		t.Errorf("%d questions reached the session, want %d", n, defaultQuestions)
	}
	now = now.Add(30 * time.Second)
	if code, _ := ask(); code != http.StatusSeeOther {
		t.Errorf("a question a minute after the first: %d", code)
	}
}

// TestSignOutEverywhere: an admin signs a person out of every desk; a scientist may sign
// out only themselves.
func TestSignOutEverywhere(t *testing.T) {
	td := newTestDesk(t)
	code, _ := td.do(t, "bob@lab", "POST", "/auth/signout-everywhere", url.Values{"who": {"ada@lab"}})
	if code != http.StatusForbidden {
		t.Errorf("bob signs ada out: %d, want 403", code)
	}
	if b, _ := td.st.SignedOutBefore(t.Context(), "ada@lab"); !b.IsZero() {
		t.Error("bob's refused request signed ada out")
	}
	if code, body := td.do(t, "root@lab", "POST", "/auth/signout-everywhere", url.Values{"who": {"ada@lab"}}); code != http.StatusOK || !strings.Contains(body, "Every sign-in of ada@lab") {
		t.Errorf("root signs ada out: %d %.300s", code, body)
	}
	if b, _ := td.st.SignedOutBefore(t.Context(), "ada@lab"); b.IsZero() {
		t.Error("the admin's sign-out is not in the store")
	}
}

// TestPolicyReadAgain: a policy file changed while the desk runs gives its roles at the
// next page after the check; one that no longer parses leaves the earlier one in force.
func TestPolicyReadAgain(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.yaml")
	write := func(s string, mod time.Time) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(file, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	write("admins: [ada@lab]\nscientists: [bob@lab]\n", start)
	// The test's clock from the first reading on: the policy's checks go by it alone.
	now := start
	p := &policy{file: file, log: slog.New(slog.DiscardHandler), now: func() time.Time { return now }}
	if err := p.load(); err != nil {
		t.Fatal(err)
	}
	roles := func(id string) []access.Role { return p.Roles(id, nil) }
	if r := roles("ada@lab"); len(r) != 1 || r[0] != access.Admin {
		t.Fatalf("ada: %v", r)
	}
	write("scientists: [ada@lab, bob@lab]\n", start.Add(time.Minute)) // ada demoted
	now = now.Add(policyCheck)
	if r := roles("ada@lab"); len(r) != 1 || r[0] != access.Scientist {
		t.Errorf("ada after the policy changed: %v, want scientist only", r)
	}
	write("admins: [bob@lab\n", start.Add(2*time.Minute)) // a typo
	now = now.Add(policyCheck)
	if r := roles("bob@lab"); len(r) != 1 || r[0] != access.Scientist {
		t.Errorf("bob after a policy that does not parse: %v, want the earlier policy's scientist", r)
	}
}

// TestWhatOnePersonMayStart: sessions started an hour and sessions running at once, each
// person's, each beyond its limit a 429 that says when to try again, with nothing started.
func TestWhatOnePersonMayStart(t *testing.T) {
	td := newTestDesk(t)
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	td.now = func() time.Time { return now }
	td.starts.limit, td.running = 3, 2
	start := func(who string) (int, http.Header, string) {
		r := httptest.NewRequest("POST", "/sessions", strings.NewReader(url.Values{"goal": {"Why do neurons die"}, "csrf": {td.csrf(t, who)}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("X-Forwarded-Email", who)
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		for _, c := range td.cookies[who] {
			r.AddCookie(c)
		}
		w := httptest.NewRecorder()
		td.h.ServeHTTP(w, r)
		return w.Code, w.Header(), w.Body.String()
	}
	end := func(n int) { // n of ada's sessions end
		td.fake.mu.Lock()
		for id, st := range td.fake.status {
			if st.ScientistID == "ada@lab" && !st.State.Terminal() && n > 0 {
				st.State = session.Completed
				td.fake.status[id] = st
				n--
			}
		}
		td.fake.mu.Unlock()
		now = now.Add(needsTTL) // the desk reads Temporal's list again
	}
	steps := []struct {
		name, who  string
		before     func()
		code       int
		retryAfter string
		says       string
	}{
		{"a first session", "ada@lab", nil, http.StatusSeeOther, "", ""},
		{"a second", "ada@lab", func() { now = now.Add(10 * time.Minute) }, http.StatusSeeOther, "", ""},
		{"a third while two run", "ada@lab", nil, http.StatusTooManyRequests, "60", "at most 2 sessions of one person running at once"},
		{"another person's", "bob@lab", nil, http.StatusSeeOther, "", ""},
		{"a third once one ended", "ada@lab", func() { end(1) }, http.StatusSeeOther, "", ""},
		{"a fourth within the hour, none running", "ada@lab", func() { end(2) }, http.StatusTooManyRequests, "2990", "at most 3 sessions started an hour"},
		{"an hour after the first", "ada@lab", func() { now = now.Add(50 * time.Minute) }, http.StatusSeeOther, "", ""},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		before := len(td.fake.started)
		code, h, body := start(s.who)
		if code != s.code || h.Get("Retry-After") != s.retryAfter || !strings.Contains(body, s.says) {
			t.Errorf("%s: %d, Retry-After %q, %q; want %d, %q, %q", s.name, code, h.Get("Retry-After"), body, s.code, s.retryAfter, s.says)
		}
		if started := len(td.fake.started) - before; code != http.StatusSeeOther && started != 0 {
			t.Errorf("%s: refused, yet %d sessions started", s.name, started)
		}
	}
}
