package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/auth"
	"github.com/cosci-dev/cosci/internal/httpguard"
	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// fake is a Backend without Temporal: sessions by id, the commands and starts it got.
type fake struct {
	mu                sync.Mutex
	status            map[string]workflows.Status
	state             map[string]workflows.StateView
	commands          []string // "id name payload"
	sent              []sentCommand
	started           []research.Request
	queries           int // progress queries
	pages             int // page queries
	statuses          int // status queries
	owners            int // Owner calls (not queries: Temporal's visibility)
	states, histories int // state and history queries
	// conversation is a session's conversation, as its page query answers it.
	conversation map[string]workflows.ConversationView
	// from is where a session started from (List's Parent and Relation).
	from map[string]Row
	// broken, when set, is every page query's and list's error.
	broken error
	// lab is each session's lab as its experiments query answers it; labSent the lab's
	// updates the fake got (lab_test.go).
	lab     map[string]workflows.ExperimentsView
	labSent []sentLab
	// labRefuses is the reason the session refuses a lab update of that name with.
	labRefuses map[string]string
}

func newFake() *fake {
	return &fake{status: map[string]workflows.Status{}, state: map[string]workflows.StateView{}, lab: map[string]workflows.ExperimentsView{}}
}

func (f *fake) add(id, scientist, goal string, entries ...session.Entry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status[id] = workflows.Status{SessionID: id, State: session.Active, ScientistID: scientist, Goal: goal}
	f.state[id] = workflows.StateView{SessionID: id, State: session.Active, Goal: goal, ScientistID: scientist, Hypotheses: entries, Total: len(entries)}
}

// setState puts session id in state.
func (f *fake) setState(id string, state session.State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.status[id]
	st.State = state
	f.status[id] = st
}

func (f *fake) Owner(_ context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.owners++
	s, ok := f.status[id]
	if !ok {
		return "", errNoSession
	}
	return s.ScientistID, nil
}

func (f *fake) Status(_ context.Context, id string) (workflows.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses++
	s, ok := f.status[id]
	if !ok {
		return s, errNoSession
	}
	return s, nil
}

func (f *fake) Page(_ context.Context, id string, r workflows.PageRequest) (workflows.PageView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages++
	if f.broken != nil {
		return workflows.PageView{}, f.broken
	}
	s, ok := f.status[id]
	if !ok {
		return workflows.PageView{}, errNoSession
	}
	v := workflows.PageView{Status: s, Progress: f.progress(id), State: paged(f.state[id], r.Ranking)}
	if c, ok := f.conversation[id]; ok {
		// c is what the session keeps, as the workflow pages it: the messages from InStore.
		lo, hi, limit := r.Conversation.Bounds(c.Total)
		v.Conversation = c
		v.Conversation.Messages = c.Messages[max(lo, c.InStore)-c.InStore : max(hi, c.InStore)-c.InStore]
		v.Conversation.Offset, v.Conversation.Limit = lo, limit
	}
	return v, nil
}

func (f *fake) Progress(_ context.Context, id string) (session.Progress, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries++
	return f.progress(id), nil
}

func (f *fake) progress(id string) session.Progress {
	return session.Progress{State: session.Active, HypothesesGenerated: len(f.state[id].Hypotheses), MaxHypotheses: 20, Rounds: 1}
}

func (f *fake) State(_ context.Context, id string, p workflows.Page) (workflows.StateView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.states++
	return paged(f.state[id], p), nil
}

// paged is a page of v's ranking.
func paged(v workflows.StateView, p workflows.Page) workflows.StateView {
	if p.Offset >= len(v.Hypotheses) {
		v.Hypotheses = nil
	} else {
		v.Hypotheses = v.Hypotheses[p.Offset:min(len(v.Hypotheses), p.Offset+max(p.Limit, 1))]
	}
	v.Offset = p.Offset
	return v
}

func (f *fake) History(context.Context, string, workflows.Page) (workflows.HistoryView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.histories++
	return workflows.HistoryView{}, nil
}

// counts are the queries the fake answered: page, status, progress, state and history.
func (f *fake) counts() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []int{f.pages, f.statuses, f.queries, f.states, f.histories}
}

// sentCommand is a command as the session would get it: its update id and payload.
type sentCommand struct {
	id, name, update string
	payload          []byte
}

func (f *fake) Command(_ context.Context, id, name, update string, payload map[string]any) (workflows.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commands = append(f.commands, strings.TrimSpace(id+" "+name+" "+fmtPayload(payload)))
	b, _ := json.Marshal(payload)
	f.sent = append(f.sent, sentCommand{id, name, update, b})
	return f.status[id], nil
}

func fmtPayload(p map[string]any) string {
	var parts []string
	for _, k := range []string{"reason", "toward", "away", "call", "decision", "title", "by"} {
		if v, ok := p[k]; ok {
			parts = append(parts, k+"="+v.(string))
		}
	}
	return strings.Join(parts, " ")
}

func (f *fake) Start(_ context.Context, id string, req research.Request) error {
	f.mu.Lock()
	f.started = append(f.started, req)
	f.mu.Unlock()
	f.add(id, req.ScientistID, req.ResearchGoal)
	return nil
}

func (f *fake) List(context.Context, int) ([]Row, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken != nil {
		return nil, f.broken
	}
	var rows []Row
	for id, s := range f.status {
		rows = append(rows, Row{ID: id, Scientist: s.ScientistID, Goal: s.Goal, Status: string(s.State), Parent: f.from[id].Parent, Relation: f.from[id].Relation, Needs: f.from[id].Needs})
	}
	return rows, nil
}

func (f *fake) Tools(context.Context) (workflows.Catalog, error) { return workflows.Catalog{}, nil }

// testDesk is a desk behind the proxy sign-in (the test sets the identity in headers),
// over the fake and a directory store.
type testDesk struct {
	*desk
	fake *fake
	key  *auth.Key
	h    http.Handler
	// cookies are each person's sign-in at the desk (through the proxy), tokens their
	// CSRF tokens, read from a page as a browser does.
	cookies map[string][]*http.Cookie
	tokens  map[string]string
}

var testPolicy = access.Policy{Admins: []string{"root@lab"}, Scientists: []string{"ada@lab", "bob@lab"}}

func newTestDesk(t testing.TB) *testDesk {
	t.Helper()
	key := auth.RandomKey()
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	a, err := auth.New(auth.Config{Mode: auth.ModeProxy, Key: key, Proxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.1/32")}, Roles: testPolicy.Roles, Revocations: st})
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	d, err := newDesk(a, f, st, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	d.now = func() time.Time { return time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC) }
	d.hosts = []string{"example.com"} // httptest's requests' Host
	return &testDesk{desk: d, fake: f, key: key, h: d.handler(), cookies: map[string][]*http.Cookie{}, tokens: map[string]string{}}
}

// csrfInput is a form's CSRF token as a page carries it.
var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is who's CSRF token, read from their sessions page (which signs them in).
func (td *testDesk) csrf(t testing.TB, who string) string {
	t.Helper()
	if tok, ok := td.tokens[who]; ok {
		return tok
	}
	_, body := td.do(t, who, "GET", "/sessions", nil)
	m := csrfInput.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("%s's sessions page has no CSRF token:\n%.400s", who, body)
	}
	td.tokens[who] = html.UnescapeString(m[1])
	return td.tokens[who]
}

// do sends a request as who ("" for nobody); a form gets who's CSRF token unless it has one.
func (td *testDesk) do(t testing.TB, who, method, target string, form url.Values) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		if _, ok := form["csrf"]; !ok && who != "" {
			form.Set("csrf", td.csrf(t, who))
		}
		body = strings.NewReader(form.Encode())
	}
	// A stream this opens ends within streamWait: a broken guard fails the test rather than
	// hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), streamWait)
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, method, target, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	if who != "" {
		r.Header.Set("X-Forwarded-Email", who)
		for _, c := range td.cookies[who] {
			r.AddCookie(c)
		}
	}
	w := httptest.NewRecorder()
	td.h.ServeHTTP(w, r)
	if set := w.Result().Cookies(); who != "" && len(set) > 0 {
		td.cookies[who] = set
	}
	return w.Code, w.Body.String()
}

func TestWhoMayDoWhat(t *testing.T) {
	td := newTestDesk(t)
	td.fake.add("s-1", "ada@lab", "tau propagation")
	steps := []struct {
		name        string
		who, method string
		target      string
		form        url.Values
		code        int
		body        string // a part of the answer
		lastCommand string // the command the session got, if any
	}{
		{"owner reads", "ada@lab", "GET", "/s/s-1", nil, 200, "tau propagation", ""},
		{"owner steers", "ada@lab", "POST", "/s/s-1/command/suspend", url.Values{"reason": {"lunch"}}, 303, "", "s-1 suspend reason=lunch by=ada@lab"},
		// A session another may not read is, to them, one that does not exist: the same
		// 404, naming no one.
		{"another scientist cannot read", "bob@lab", "GET", "/s/s-1", nil, 404, "No such session", ""},
		{"nor its live line", "bob@lab", "GET", "/s/s-1/events", nil, 404, "No such session", ""},
		{"nor its report", "bob@lab", "GET", "/s/s-1/files/report.md", nil, 404, "No such session", ""},
		{"nor a hypothesis", "bob@lab", "GET", "/s/s-1/h/h-0001", nil, 404, "No such session", ""},
		{"nor its tree", "bob@lab", "GET", "/s/s-1/tree", nil, 404, "No such session", ""},
		{"nor steer it", "bob@lab", "POST", "/s/s-1/command/resume", url.Values{}, 404, "No such session", ""},
		{"nor ask it", "bob@lab", "POST", "/s/s-1/conversation", url.Values{"message": {"hi"}}, 404, "No such session", ""},
		{"nor share it", "bob@lab", "POST", "/s/s-1/share", url.Values{"who": {"bob@lab"}, "level": {"steer"}}, 404, "No such session", ""},
		{"nor see it listed", "bob@lab", "GET", "/sessions", nil, 200, "No sessions to show", ""},
		{"owner shares for reading", "ada@lab", "POST", "/s/s-1/share", url.Values{"who": {"bob@lab"}, "level": {"read"}}, 303, "", ""},
		{"reader reads", "bob@lab", "GET", "/s/s-1", nil, 200, "You may read this session", ""},
		{"reader sees it listed", "bob@lab", "GET", "/sessions?whose=shared", nil, 200, "/s/s-1", ""},
		{"reader still cannot steer", "bob@lab", "POST", "/s/s-1/command/resume", url.Values{}, 403, "may read it only", ""},
		{"reader cannot answer a tool call", "bob@lab", "POST", "/s/s-1/command/answer-tool", url.Values{"call": {"call-1"}, "decision": {"approve"}}, 403, "steer access", ""},
		{"admin steers", "root@lab", "POST", "/s/s-1/command/feedback", url.Values{"toward": {"microglia"}}, 303, "", "s-1 feedback toward=microglia by=root@lab"},
		{"admin reads", "root@lab", "GET", "/s/s-1", nil, 200, "tau propagation", ""},
		{"no role, nothing", "eve@lab", "GET", "/sessions", nil, 403, "the scientist role", ""},
		{"nobody, nothing", "", "GET", "/sessions", nil, 401, "Not signed in", ""},
		{"unknown session", "ada@lab", "GET", "/s/nope", nil, 404, "No such session", ""},
	}
	for _, s := range steps {
		code, body := td.do(t, s.who, s.method, s.target, s.form)
		if code != s.code || !strings.Contains(body, s.body) {
			t.Errorf("%s: %d, want %d with %q; body:\n%.600s", s.name, code, s.code, s.body, body)
		}
		if code == http.StatusNotFound && s.who != "ada@lab" && strings.Contains(body, "ada@lab") {
			t.Errorf("%s: the 404 names the owner:\n%.600s", s.name, body)
		}
		if s.lastCommand != "" {
			if got := td.fake.commands[len(td.fake.commands)-1]; got != s.lastCommand {
				t.Errorf("%s: the session got %q, want %q", s.name, got, s.lastCommand)
			}
		}
	}
	if len(td.fake.commands) != 2 {
		t.Errorf("the session got %d commands, want the 2 allowed: %v", len(td.fake.commands), td.fake.commands)
	}
	rec, found, err := td.st.Access(t.Context(), "s-1")
	if err != nil || !found || len(rec.Grants) != 1 || rec.Grants[0] != (access.Grant{Who: "bob@lab", Level: access.Read, By: "ada@lab", At: "2026-11-27T09:00:00Z"}) {
		t.Errorf("access record %+v (%v, %v): want bob's read grant, by ada, in the store", rec, found, err)
	}
}

func TestStartIsTheSignedInScientist(t *testing.T) {
	td := newTestDesk(t)
	tests := []struct {
		name string
		form url.Values
		code int
		body string
	}{
		{"a typed scientist is ignored", url.Values{"goal": {"Why do neurons die"}, "scientist": {"mallory@lab"}, "scientist_id": {"mallory@lab"}, "max_hypotheses": {"12"}}, 303, ""},
		{"no goal", url.Values{"goal": {"  "}}, 422, "research_goal"},
		{"a bad number", url.Values{"goal": {"g"}, "max_hypotheses": {"many"}}, 422, "is not a number"},
		{"a bad duration", url.Values{"goal": {"g"}, "time_limit": {"soon"}}, 422, "not a duration"},
		{"a bad approval timeout", url.Values{"goal": {"g"}, "approval_timeout": {"-5m"}}, 422, "approval_timeout"},
		{"a bad review type", url.Values{"goal": {"g"}, "review_types": {"vibes"}}, 422, "review"},
		{"a tool the workers lack", url.Values{"goal": {"g"}, "tools": {"nowhere.search"}}, 422, "nowhere"},
		{"a negative budget", url.Values{"goal": {"g"}, "budget_usd": {"-1"}}, 422, "budget_usd"},
	}
	for _, tt := range tests {
		code, body := td.do(t, "ada@lab", "POST", "/sessions", tt.form)
		if code != tt.code || !strings.Contains(body, tt.body) {
			t.Errorf("%s: %d, want %d with %q; body:\n%.400s", tt.name, code, tt.code, tt.body, body)
		}
	}
	if len(td.fake.started) != 1 {
		t.Fatalf("%d sessions started, want 1", len(td.fake.started))
	}
	req := td.fake.started[0]
	if req.ScientistID != "ada@lab" || req.Config.MaxHypotheses != 12 {
		t.Errorf("started %+v: want scientist ada@lab (the signed-in one) and 12 hypotheses", req)
	}
	for id := range td.fake.status {
		rec, found, _ := td.st.Access(t.Context(), id)
		if !found || rec.Owner != "ada@lab" {
			t.Errorf("session %s: access record %+v, want owner ada@lab", id, rec)
		}
	}
}

func TestCSRF(t *testing.T) {
	td := newTestDesk(t)
	td.fake.add("s-1", "ada@lab", "g")
	// Another browser of ada's: a sign-in of its own, with its own token.
	other := newTestDesk(t)
	other.desk.auth, other.h = td.desk.auth, td.h
	otherSignIn := other.csrf(t, "ada@lab")
	send := func(mod func(r *http.Request), form url.Values) int {
		r := httptest.NewRequest("POST", "/s/s-1/command/suspend", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("X-Forwarded-Email", "ada@lab")
		for _, c := range td.cookies["ada@lab"] {
			r.AddCookie(c)
		}
		mod(r)
		w := httptest.NewRecorder()
		td.h.ServeHTTP(w, r)
		return w.Code
	}
	good := url.Values{"csrf": {td.csrf(t, "ada@lab")}}
	tests := []struct {
		name string
		mod  func(r *http.Request)
		form url.Values
		code int
	}{
		{"same origin, token", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-origin") }, good, 303},
		{"no token", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-origin") }, url.Values{}, 403},
		{"another person's token", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-origin") }, url.Values{"csrf": {td.csrf(t, "bob@lab")}}, 403},
		{"a token of another sign-in of hers", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-origin") }, url.Values{"csrf": {otherSignIn}}, 403},
		{"cross-site, even with the token", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }, good, 403},
		{"another origin", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, good, 403},
	}
	for _, tt := range tests {
		if code := send(tt.mod, tt.form); code != tt.code {
			t.Errorf("%s: %d, want %d", tt.name, code, tt.code)
		}
	}
	if n := len(td.fake.commands); n != 1 {
		t.Errorf("%d commands reached the session, want 1", n)
	}
	// State changes never ride on GET.
	if code, _ := td.do(t, "ada@lab", "GET", "/s/s-1/command/suspend?csrf="+url.QueryEscape(td.csrf(t, "ada@lab")), nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET of a command: %d, want 405", code)
	}
	// Bodies are bounded.
	big := url.Values{"csrf": good["csrf"], "reason": {strings.Repeat("x", maxBody)}}
	if code := send(func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-origin") }, big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a %d-byte form: %d, want 413", maxBody, code)
	}
}

func TestEscaping(t *testing.T) {
	td := newTestDesk(t)
	evil := `<script>alert(1)</script>`
	td.fake.add("s-1", "ada@lab", "goal "+evil, session.Entry{ID: "h-0001", Title: "title " + evil, Origin: "generation", Parents: []string{`"><img src=x onerror=alert(2)>`}})
	td.fake.status["s-1"] = workflows.Status{SessionID: "s-1", State: session.Active, ScientistID: "ada@lab", Goal: "goal " + evil,
		Waiting: []session.WaitingCall{{ID: "call-1", Tool: "lit.search", Brief: "brief " + evil, Arguments: `{"q": "` + evil + `"}`}}}
	if err := td.st.PutHypothesis(t.Context(), "s-1", research.Hypothesis{ID: "h-0001", Title: "t", Statement: "statement " + evil,
		Rationale: "r", Predictions: []string{"p " + evil}, Origin: "generation",
		References: []research.Reference{{ID: "doi:1", Quote: "quote " + evil, Claim: "claim " + evil}}}); err != nil {
		t.Fatal(err)
	}
	if err := td.st.PutAccess(t.Context(), "s-1", access.Record{SessionID: "s-1", Owner: "ada@lab",
		Grants: []access.Grant{{Who: "bob@lab" + evil, Level: access.Read, By: "ada@lab", At: "now"}}}); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"/s/s-1", "/s/s-1/h/h-0001", "/sessions"} {
		code, body := td.do(t, "ada@lab", "GET", page, nil)
		if code != 200 {
			t.Fatalf("%s: %d\n%s", page, code, body)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s shows a model's or a person's markup unescaped", page)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not show the text, escaped", page)
		}
	}
}

func TestHeaders(t *testing.T) {
	td := newTestDesk(t)
	r := httptest.NewRequest("GET", "/sessions", nil)
	r.Header.Set("X-Forwarded-Email", "ada@lab")
	w := httptest.NewRecorder()
	td.h.ServeHTTP(w, r)
	csp := w.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q: want scripts from the desk only", csp)
	}
	if w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Error("no nosniff")
	}
	if strings.Contains(w.Body.String(), "<script>") {
		t.Error("a page has an inline script")
	}
}

// countingSource counts the readings of each session and says when one was made.
type countingSource struct {
	mu    sync.Mutex
	calls map[string]int
	asked chan string
}

func (c *countingSource) read(_ context.Context, id string, _ *snapshot) *snapshot {
	c.mu.Lock()
	c.calls[id]++
	c.mu.Unlock()
	c.asked <- id
	return &snapshot{View: workflows.PageView{Progress: session.Progress{State: session.Active}}}
}

func TestOneWatcherPerSession(t *testing.T) {
	src := &countingSource{calls: map[string]int{}, asked: make(chan string, 1000)}
	h := newHub(src, time.Hour) // one reading when a watcher starts, then one an hour
	var stops []func()
	var chans []<-chan *snapshot
	for i := range 200 {
		ch, stop := h.subscribe([]string{"s-1", "s-2"}[i%2])
		stops, chans = append(stops, stop), append(chans, ch)
	}
	<-src.asked
	<-src.asked
	if n := h.watching(); n != 2 {
		t.Errorf("200 pages on 2 sessions: %d watchers, want 2", n)
	}
	h.mu.Lock()
	var exited []chan struct{}
	for _, w := range h.watchers {
		exited = append(exited, w.exited)
	}
	h.mu.Unlock()
	for _, ch := range chans {
		if snap := <-ch; snap.View.Progress.State != session.Active {
			t.Fatalf("a page got %+v", snap)
		}
	}
	src.mu.Lock()
	if src.calls["s-1"] != 1 || src.calls["s-2"] != 1 {
		t.Errorf("readings %v: want one per session for 200 pages", src.calls)
	}
	src.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	if n := h.watching(); n != 0 {
		t.Errorf("every page gone: %d watchers left", n)
	}
	// Each watcher's goroutine ends: one left running would read its session forever.
	deadline := time.After(10 * time.Second)
	for _, e := range exited {
		select {
		case <-e:
		case <-deadline:
			t.Fatal("a watcher goes on after its last page left")
		}
	}
}

func TestEvents(t *testing.T) {
	td := newTestDesk(t)
	td.fake.add("s-1", "ada@lab", "g")
	td.hosts = httpguard.LoopbackHosts // the test server's
	td.h = td.handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.RemoteAddr = "192.0.2.1:1"
		td.h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/s/s-1/events", nil)
	req.Header.Set("X-Forwarded-Email", "ada@lab")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	buf := make([]byte, 256)
	n, _ := io.ReadAtLeast(resp.Body, buf, len("event: progress\ndata: active"))
	if got := string(buf[:n]); !strings.HasPrefix(got, "event: progress\ndata: active · hypotheses 0") {
		t.Errorf("first event %q", got)
	}
}

func TestCommandPayload(t *testing.T) {
	tests := []struct {
		name string
		form url.Values
		err  string
	}{
		{"feedback", url.Values{"toward": {"x"}}, ""},
		{"review", url.Values{"hypothesis_id": {"h-0001"}, "score": {"11"}}, "score"},
		{"review", url.Values{"hypothesis_id": {"h-0001"}, "score": {"high"}}, "not a number"},
		{"set-budget", url.Values{"token_budget": {"500,000"}}, ""},
		{"add-hypothesis", url.Values{"title": {"t"}, "statement": {"s"}, "testable_predictions": {"a\n\nb"}}, ""},
		{"answer-tool", url.Values{"call": {"call-1"}, "decision": {"maybe"}}, "decision"},
	}
	for _, tt := range tests {
		p, _, err := commandPayload(tt.name, tt.form, "ada@lab")
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s %v: err %v, want %q", tt.name, tt.form, err, tt.err)
		}
		if by, _ := p["by"].(string); err == nil && by != "ada@lab" {
			t.Errorf("%s: by in payload = %q, want the signed-in identity", tt.name, by)
		}
	}
}

// TestSessionPageIsOneQuery: a session's page asks Temporal one query, the page query,
// for its access check, live line, ranking and conversation; none of the others, whether
// or not a watcher follows the session.
func TestSessionPageIsOneQuery(t *testing.T) {
	td := newTestDesk(t)
	td.hub = newHub(watched{td.desk}, time.Hour) // one reading when the watcher starts, no tick during the test
	td.fake.add("s-1", "ada@lab", "g", session.Entry{ID: "h-1", Title: "one"})
	td.fake.add("s-2", "ada@lab", "g")
	readings, done := td.hub.subscribe("s-1")
	defer done()
	<-readings // the watcher's first query is made
	for _, id := range []string{"s-1", "s-2"} {
		before := td.fake.counts()
		code, body := td.do(t, "ada@lab", "GET", "/s/"+id, nil)
		after := td.fake.counts()
		var got []int
		for i := range after {
			got = append(got, after[i]-before[i])
		}
		if code != http.StatusOK || !slices.Equal(got, []int{1, 0, 0, 0, 0}) {
			t.Errorf("%s: %d, %v page, status, progress, state and history queries; want 200 and [1 0 0 0 0]", id, code, got)
		}
		if want := html.EscapeString(progressLine(td.fake.progress(id))); !strings.Contains(body, want) {
			t.Errorf("%s: the page does not show the live line %q", id, want)
		}
	}
}

// BenchmarkSessionPage is the desk's own share of a session page of a 2,000-hypothesis
// session, 25 of the ranking at a time: the access check, the store's reads and the
// rendering, over a Backend that answers at once (e2e's BenchmarkDesk/page measures it
// with Temporal).
func BenchmarkSessionPage(b *testing.B) {
	td := newTestDesk(b)
	var entries []session.Entry
	for i := range 2000 {
		entries = append(entries, session.Entry{ID: fmt.Sprintf("h-%04d", i+1), Title: fmt.Sprintf("Hypothesis %d: a mechanism of the goal, one of many", i+1),
			Origin: "generation", Elo: 1200 + float64(2000-i), Wins: i % 7, Losses: i % 5, Reviews: 1, Score: 6.5})
	}
	td.fake.add("s-1", "ada@lab", "g", entries...)
	i := 0
	for b.Loop() {
		offset := (i * 25 * 7) % 2000
		i++
		code, body := td.do(b, "ada@lab", "GET", fmt.Sprintf("/s/s-1?offset=%d", offset), nil)
		if want := fmt.Sprintf("/h/h-%04d", offset+1); code != http.StatusOK || !strings.Contains(body, want) {
			b.Fatalf("offset %d: %d, no link to %s", offset, code, want)
		}
	}
}

// TestProgressLine: the live line says what the session is at, and what waits for the
// scientist or for a provider.
func TestProgressLine(t *testing.T) {
	base := session.Progress{State: session.Active, HypothesesGenerated: 12, MaxHypotheses: 40, Counted: 12, ReviewsCompleted: 9, MatchesPlayed: 30, Rounds: 2, Elapsed: "2h14m3s", ElapsedSeconds: 8043, TokensUsed: 12345}
	tests := []struct {
		name      string
		change    func(*session.Progress)
		want, not []string
	}{
		{"running", func(*session.Progress) {}, []string{"active · hypotheses 12/40", "reviews 9", "matches 30", "rounds 2", "2 h 14 min", "12,345 tokens"}, []string{"wait"}},
		{"a call waits", func(p *session.Progress) { p.Waiting = []session.WaitingCall{{ID: "call-1"}} }, []string{"1 tool call waits for your answer"}, []string{"batch"}},
		{"two calls wait", func(p *session.Progress) { p.Waiting = make([]session.WaitingCall, 2) }, []string{"2 tool calls wait for your answer"}, nil},
		{"a batch", func(p *session.Progress) { p.Batch = &session.BatchWait{What: "reviews", Requests: 24} }, []string{"waiting for a provider batch of 24 reviews"}, []string{"tool call"}},
	}
	for _, tt := range tests {
		p := base
		tt.change(&p)
		line := progressLine(p)
		for _, w := range tt.want {
			if !strings.Contains(line, w) {
				t.Errorf("%s: %q lacks %q", tt.name, line, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(line, n) {
				t.Errorf("%s: %q has %q", tt.name, line, n)
			}
		}
	}
}

// TestTreeBeforeTheFirstCheckpoint: a fork that has not checkpointed yet is in its tree,
// under its parent (from Temporal's list), and its parent's tree has it.
func TestTreeBeforeTheFirstCheckpoint(t *testing.T) {
	td := newTestDesk(t)
	if _, err := td.st.PutCheckpoint(t.Context(), session.Snapshot{SessionID: "s-root", Seq: 1, State: session.Completed, ScientistID: "ada@lab", Goal: "tau propagation"}, nil); err != nil {
		t.Fatal(err)
	}
	td.fake.add("s-root", "ada@lab", "tau propagation")
	td.fake.add("s-fork", "ada@lab", "tau propagation, <b>microglia</b> first")
	td.fake.from = map[string]Row{"s-fork": {Parent: "s-root", Relation: lineage.Fork}}
	for _, id := range []string{"s-fork", "s-root"} {
		code, body := td.do(t, "ada@lab", "GET", "/s/"+id+"/tree", nil)
		_, tree, _ := strings.Cut(body, `<ul class="tree">`)
		root, fork := strings.Index(tree, `href="/s/s-root"`), strings.Index(tree, `href="/s/s-fork"`)
		if code != 200 || root < 0 || fork < root || !strings.Contains(body, `<span class="tag">fork</span>`) {
			t.Errorf("the tree of %s (%d) does not show s-fork, a fork, under s-root:\n%s", id, code, body)
		}
		if strings.Contains(body, "<b>microglia") {
			t.Errorf("the tree of %s shows a goal unescaped", id)
		}
	}
	// Bob's fork of ada's session: ada's tree names it, and shows nothing else of it.
	td.fake.add("s-bob", "bob@lab", "tau propagation, bob's secret angle")
	td.fake.from["s-bob"] = Row{Parent: "s-root", Relation: lineage.Fork}
	code, body := td.do(t, "ada@lab", "GET", "/s/s-root/tree", nil)
	if code != 200 || !strings.Contains(body, "s-bob <span class=\"tag\">fork</span> · <span class=\"hint\">not shared with you</span>") ||
		strings.Contains(body, "secret angle") || strings.Contains(body, `href="/s/s-bob"`) {
		t.Errorf("ada's tree (%d) shows bob's fork beyond its id:\n%s", code, body)
	}
}

// TestHypothesisPageShowsVerdicts: the hypothesis page shows each review's citation
// verdicts, overstated and out of context too, each with its quote and, where the quote is
// not the source's words, the source's words beside it.
func TestHypothesisPageShowsVerdicts(t *testing.T) {
	td := newTestDesk(t)
	ctx := t.Context()
	td.fake.add("s-1", "ada@lab", "tau", session.Entry{ID: "h-0001", Title: "t", Origin: "generation"})
	h := research.Hypothesis{ID: "h-0001", Title: "t", Statement: "s", Rationale: "r", Predictions: []string{"p"}, Origin: "generation",
		References: []research.Reference{
			{ID: "10.1/a", Quote: "microglia drive tau spread", Claim: "Microglia drive tau spread."},
			{ID: "10.1/b", Quote: "exercise slowed decline in all adults", Claim: "Exercise slows decline."},
			{ID: "10.1/c", Quote: "tau spreads along connected regions", Claim: "Tau spreads."}}}
	if err := td.st.PutHypothesis(ctx, "s-1", h); err != nil {
		t.Fatal(err)
	}
	review := research.Review{HypothesisID: "h-0001", Type: research.ReviewFull, Verdict: "revise", Critique: "c", Citations: []research.CitationCheck{
		{ID: "10.1/a", Verdict: research.CitationOutOfContext, Note: `"It has been proposed that" before it attributes it to others`,
			Passage: "It has been proposed that microglia drive tau spread."},
		{ID: "10.1/b", Verdict: research.CitationOverstated, Note: `it generalises the record's "some"`, Passage: "exercise slowed decline in some adults",
			Support: research.SupportOverstates, SupportNote: "the passage speaks of some adults"},
		{ID: "10.1/c", Verdict: research.CitationVerified, Passage: "In mice, tau spreads along connected regions."}}}
	if err := td.st.PutReview(ctx, "s-1", 0, review); err != nil {
		t.Fatal(err)
	}
	code, body := td.do(t, "ada@lab", "GET", "/s/s-1/h/h-0001", nil)
	if code != 200 {
		t.Fatalf("%d %.300s", code, body)
	}
	for _, want := range []string{
		`class="verdict-out-of-context"`, "<td>out of context</td>", "microglia drive tau spread",
		"the source says: It has been proposed that microglia drive tau spread.",
		`class="verdict-overstated"`, "<td>overstated</td>", "<td>overstates</td>", "the source says: exercise slowed decline in some adults",
		`class="verdict-verified"`, "tau spreads along connected regions",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the hypothesis page lacks %q", want)
		}
	}
	if strings.Contains(body, "In mice, tau spreads along connected regions.") {
		t.Error("the page shows a verified quote's passage: the quote is the source's words")
	}
}

// TestErrorsSayWhatToDo: when Temporal or the store fails, the page says in the desk's
// words what the person can do and shows a request id; the error itself, which may name
// an address or a driver's message, goes to the log under that id alone.
func TestErrorsSayWhatToDo(t *testing.T) {
	secret := errors.New("dial tcp 10.0.0.7:7233: connect: connection refused")
	tests := []struct {
		name, target string
		err          error
		code         int
		says         string
	}{
		{"a session page", "/s/s-1", secret, http.StatusBadGateway, "Reload the page in a minute"},
		{"a session that does not answer in time", "/s/s-1", &notAnswering{id: "s-1", err: secret}, http.StatusGatewayTimeout, "no worker is taking its tasks"},
		{"what needs you", "/needs", secret, http.StatusBadGateway, "the page asks again by itself"},
	}
	for _, tt := range tests {
		td := newTestDesk(t)
		var log strings.Builder
		td.desk.log = slog.New(slog.NewTextHandler(&log, nil))
		td.fake.add("s-1", "ada@lab", "g")
		td.fake.broken = tt.err
		code, body := td.do(t, "ada@lab", "GET", tt.target, nil)
		m := regexp.MustCompile(`request[ -]id[^0-9a-f]*([0-9a-f]{12})`).FindStringSubmatch(body)
		if code != tt.code || !strings.Contains(body, tt.says) || m == nil {
			t.Errorf("%s: %d, want %d saying %q and a request id:\n%.600s", tt.name, code, tt.code, tt.says, body)
			continue
		}
		if strings.Contains(body, "10.0.0.7") || strings.Contains(body, "connection refused") {
			t.Errorf("%s: the page shows the error itself:\n%.600s", tt.name, body)
		}
		if !strings.Contains(log.String(), "request="+m[1]) || !strings.Contains(log.String(), "10.0.0.7:7233") {
			t.Errorf("%s: the log has not the error under request id %s:\n%s", tt.name, m[1], log.String())
		}
	}
}

// TestHypothesisPageShowsCitationsAsTheReport: the hypothesis page lists its citations
// by the report's own render (report.Citations, report.Show, report.SourceTemplate): each
// with its source's line and link, its verdict and the source's words where the quote is
// not them, as the report's HTML shows it.
func TestHypothesisPageShowsCitationsAsTheReport(t *testing.T) {
	td := newTestDesk(t)
	ctx := t.Context()
	td.fake.add("s-1", "ada@lab", "tau", session.Entry{ID: "h-0001", Title: "t", Origin: "generation"})
	h := research.Hypothesis{ID: "h-0001", Title: "t", Statement: "s", Rationale: "r", Predictions: []string{"p"}, Origin: "generation",
		References: []research.Reference{
			{ID: "10.1/a#b", DOI: "10.1/a#b", Title: "Microglia & tau", Authors: []string{"Ito, Kenji"}, Year: 2021, Quote: "microglia drive tau spread", Claim: "Microglia drive tau spread.", Source: "x", Page: 7, Section: "results"},
			{ID: "10.1/a#b", DOI: "10.1/a#b", Title: "Microglia & tau", Quote: "microglia <b>carry</b> tau", Source: "x"},
			{ID: "kim2021", Quote: "made up"}}}
	review := research.Review{HypothesisID: "h-0001", Type: research.ReviewFull, Verdict: "revise", Critique: "c", Citations: []research.CitationCheck{
		{ID: "10.1/a#b", Verdict: research.CitationVerified},
		{ID: "10.1/a#b", Verdict: research.CitationAltered, Note: "a word changed", Passage: "microglia take up tau"},
		{ID: "kim2021", Verdict: research.CitationInvented}}}
	if err := td.st.PutHypothesis(ctx, "s-1", h); err != nil {
		t.Fatal(err)
	}
	if err := td.st.PutReview(ctx, "s-1", 0, review); err != nil {
		t.Fatal(err)
	}
	_, body := td.do(t, "ada@lab", "GET", "/s/s-1/h/h-0001", nil)
	tmpl := template.Must(template.New("").Parse(report.SourceTemplate))
	for i, c := range report.Citations(h.References, []research.Review{review}) {
		var b strings.Builder
		if err := tmpl.ExecuteTemplate(&b, "source", report.Show(c)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(body, b.String()) {
			t.Errorf("citation %d is not shown as the report shows it:\n%s\nin\n%s", i, b.String(), body)
		}
	}
	for _, want := range []string{`<a href="https://doi.org/10.1/a%23b">p. 7, Results</a>`, "flagged: altered", "microglia take up tau", "kim2021 (no tool returned it)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
