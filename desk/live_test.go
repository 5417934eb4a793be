package main

import (
	"bufio"
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/httpguard"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// streamWait is how long a test waits for a stream's next event: a guard that is broken
// fails the test in this time rather than hanging it.
const streamWait = 10 * time.Second

// listen opens a session's live stream as who and returns its events, one at a time, each
// within streamWait; ("closed", why) once the stream has ended.
func listen(t *testing.T, td *testDesk, who, id, parts string) func() (event, data string) {
	t.Helper()
	if !slices.Contains(td.hosts, "127.0.0.1") { // the test server's, besides the requests' own
		td.hosts = append(slices.Clone(td.hosts), httpguard.LoopbackHosts...)
		td.h = td.handler()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.RemoteAddr = "192.0.2.1:1"
		td.h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	target := srv.URL + "/s/" + id + "/events?parts=" + parts
	if strings.HasPrefix(parts, "/") {
		target = srv.URL + parts // the page's own address of its stream
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", target, nil)
	req.Header.Set("X-Forwarded-Email", who)
	for _, c := range td.cookies[who] { // the same browser as the page's: the same sign-in
		req.AddCookie(c)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	events := make(chan [2]string, 100)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var event, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && event != "":
				select {
				case events <- [2]string{event, data}:
				case <-ctx.Done():
					return
				}
				event, data = "", ""
			}
		}
		select {
		case events <- [2]string{"closed", errText(sc.Err())}:
		case <-ctx.Done():
		}
	}()
	closed := false
	return func() (string, string) {
		t.Helper()
		if closed {
			return "closed", ""
		}
		select {
		case e, ok := <-events:
			if !ok || e[0] == "closed" {
				closed = true
				return "closed", e[1]
			}
			return e[0], e[1]
		case <-time.After(streamWait):
			t.Fatalf("no event from the stream in %v", streamWait)
			return "", ""
		}
	}
}

// part waits for the next part of that id that holds with, skipping the live line, other
// parts, and earlier renderings of this one.
func part(t *testing.T, next func() (string, string), id, with string) string {
	t.Helper()
	for range 40 {
		event, data := next()
		if event == "closed" {
			t.Fatalf("the stream ended (%s) before a part %s with %q", data, id, with)
		}
		if event != "part" {
			continue
		}
		var p struct{ ID, HTML string }
		if err := json.Unmarshal([]byte(data), &p); err != nil {
			t.Fatalf("a part that is not JSON: %q", data)
		}
		if p.ID == id && strings.Contains(p.HTML, with) {
			return p.HTML
		}
	}
	t.Fatalf("no part %s with %q in 40 events", id, with)
	return ""
}

// TestLivePage: an open page's stream sends the parts that change (a call that waits,
// the conversation, the ranking, the state), each rendered for the person watching: the
// owner gets the forms, a reader the same parts without them.
func TestLivePage(t *testing.T) {
	td, _ := newConversingDesk(t)
	td.hub = newHub(watched{td.desk}, 20*time.Millisecond)
	td.do(t, "ada@lab", "POST", "/s/s-1/share", url.Values{"who": {"bob@lab"}, "level": {"read"}})
	owner := listen(t, td, "ada@lab", "s-1", "status,waiting,turns,ranking-rows")
	reader := listen(t, td, "bob@lab", "s-1", "waiting,turns")
	if first := part(t, owner, "turns", ""); !strings.Contains(first, "Microglia clear tau") {
		t.Fatalf("the first turns part: %.300s", first)
	}
	// A call starts waiting, and the session answers again: both reach the open pages.
	td.fake.mu.Lock()
	st := td.fake.status["s-1"]
	st.Waiting = []session.WaitingCall{{ID: "call-7", Tool: "literature.fetch", Arguments: `{"id": "<b>x</b>"}`, Since: "2026-11-27T09:00:00Z"}}
	td.fake.status["s-1"] = st
	c := td.fake.conversation["s-1"]
	c.Messages = append(c.Messages, workflows.ConversationEntry{Message: session.Message{ID: "m-0003", Role: session.RoleSession, Time: "2026-11-27T09:01:00Z"}, Text: "A new answer about h-0001."})
	c.Total++
	td.fake.conversation["s-1"] = c
	td.fake.mu.Unlock()
	waiting := part(t, owner, "waiting", "call-7")
	for _, w := range []string{"call-7: literature.fetch", `value="approve call-7"`, "Trust literature.fetch for this session", "&lt;b&gt;x&lt;/b&gt;", `datetime="2026-11-27T09:00:00Z"`} {
		if !strings.Contains(waiting, w) {
			t.Errorf("the owner's waiting part lacks %q:\n%s", w, waiting)
		}
	}
	if turns := part(t, owner, "turns", "m-0003"); !strings.Contains(turns, "A new answer about") || !strings.Contains(turns, `href="/s/s-1/h/h-0001"`) {
		t.Errorf("the owner's turns part lacks the new answer, as prose:\n%.2000s", turns)
	}
	if w := part(t, reader, "waiting", "call-7"); !strings.Contains(w, "call-7") || strings.Contains(w, "<form") || strings.Contains(w, "<button") {
		t.Errorf("the reader's waiting part: %s", w)
	}
	if turns := part(t, reader, "turns", "m-0003"); !strings.Contains(turns, "A new answer about") || strings.Contains(turns, "Confirm m-0002.1") {
		t.Errorf("the reader's turns part:\n%.2000s", turns)
	}
}

// TestBulkApprovals: calls are approved or rejected together, or one by one, each as its
// own answer-tool by the person who pressed; a reader may do neither.
func TestBulkApprovals(t *testing.T) {
	td := newTestDesk(t)
	td.fake.add("s-1", "ada@lab", "g")
	td.do(t, "ada@lab", "POST", "/s/s-1/share", url.Values{"who": {"bob@lab"}, "level": {"read"}})
	steps := []struct {
		name, who string
		form      url.Values
		code      int
		commands  []string
	}{
		{"approve selected", "ada@lab", url.Values{"decision": {"approve"}, "calls": {"call-1", "call-2", "call-3"}}, 303,
			[]string{"s-1 answer-tool call=call-1 decision=approve by=ada@lab", "s-1 answer-tool call=call-2 decision=approve by=ada@lab", "s-1 answer-tool call=call-3 decision=approve by=ada@lab"}},
		{"reject selected, with a reason", "ada@lab", url.Values{"decision": {"reject"}, "calls": {"call-4", "call-5"}, "reason": {"paywalled"}}, 303,
			[]string{"s-1 answer-tool reason=paywalled call=call-4 decision=reject by=ada@lab", "s-1 answer-tool reason=paywalled call=call-5 decision=reject by=ada@lab"}},
		{"one call's own button", "ada@lab", url.Values{"one": {"approve call-6"}, "calls": {"call-7"}}, 303, []string{"s-1 answer-tool call=call-6 decision=approve by=ada@lab"}},
		{"nothing selected", "ada@lab", url.Values{"decision": {"approve"}}, 409, nil},
		{"a decision that is none", "ada@lab", url.Values{"decision": {"result"}, "calls": {"call-1"}}, 409, nil},
		{"a reader", "bob@lab", url.Values{"decision": {"approve"}, "calls": {"call-1"}}, 403, nil},
	}
	for _, s := range steps {
		before := len(td.fake.commands)
		if code, body := td.do(t, s.who, "POST", "/s/s-1/calls", s.form); code != s.code {
			t.Errorf("%s: %d, want %d\n%.300s", s.name, code, s.code, body)
		}
		got := td.fake.commands[before:]
		if strings.Join(got, "\n") != strings.Join(s.commands, "\n") {
			t.Errorf("%s: the session got\n%s\nwant\n%s", s.name, strings.Join(got, "\n"), strings.Join(s.commands, "\n"))
		}
	}
	// Trusting a tool, and undoing it, are commands of the page too.
	for _, name := range []string{"trust-tool", "untrust-tool"} {
		if code, _ := td.do(t, "ada@lab", "POST", "/s/s-1/command/"+name, url.Values{"tool": {"literature.fetch"}}); code != 303 {
			t.Errorf("%s: %d", name, code)
		}
	}
}

// TestWhatNeedsYou: the sessions list marks those that wait for the signed-in person, and
// why, first; the title counts them; /needs answers the same for the page's script. A
// session that waits for another person is not counted.
func TestWhatNeedsYou(t *testing.T) {
	td := newTestDesk(t)
	td.fake.add("s-calls", "ada@lab", "calls wait")
	td.fake.add("s-idle", "ada@lab", "nothing waits")
	td.fake.add("s-budget", "ada@lab", "spent its budget")
	td.fake.add("s-bob", "bob@lab", "bob's")
	td.fake.from = map[string]Row{
		"s-calls":  {Needs: session.Needs{Calls: 2, Proposals: 1}},
		"s-budget": {Needs: session.Needs{Suspended: "budget reached: $5.00 of $5.00"}},
		"s-bob":    {Needs: session.Needs{Calls: 1}},
	}
	code, body := td.do(t, "ada@lab", "GET", "/sessions", nil)
	for _, w := range []string{"<title>(2) Sessions · cosci desk</title>", "2 sessions wait for you", "2 tool calls to approve · 1 proposal to confirm", "suspended: budget reached"} {
		if code != 200 || !strings.Contains(body, w) {
			t.Errorf("ada's sessions page lacks %q", w)
		}
	}
	if calls, idle := strings.Index(body, "/s/s-calls"), strings.Index(body, "/s/s-idle"); calls < 0 || idle < calls {
		t.Error("the sessions that wait are not listed first")
	}
	code, body = td.do(t, "ada@lab", "GET", "/needs", nil)
	var n struct {
		Count    int
		Sessions []needing
	}
	if err := json.Unmarshal([]byte(body), &n); code != 200 || err != nil || n.Count != 2 || len(n.Sessions) != 2 {
		t.Fatalf("/needs: %d %s", code, body)
	}
	// Root, an admin, reads them all, but none waits for him; bob's waits for bob.
	if _, body := td.do(t, "root@lab", "GET", "/needs", nil); !strings.Contains(body, `"count":0`) {
		t.Errorf("root's /needs: %s", body)
	}
	if _, body := td.do(t, "bob@lab", "GET", "/needs", nil); !strings.Contains(body, `"count":1`) || !strings.Contains(body, "s-bob") {
		t.Errorf("bob's /needs: %s", body)
	}
}

// TestStreamSendsOnlyWhatChanged: a page's stream, opened with the digests of what the
// page shows, sends no part again until the session changes it.
func TestStreamSendsOnlyWhatChanged(t *testing.T) {
	td, _ := newConversingDesk(t)
	td.hub = newHub(watched{td.desk}, 20*time.Millisecond)
	_, page := td.do(t, "ada@lab", "GET", "/s/s-1", nil)
	m := regexp.MustCompile(`data-events="([^"]+)"`).FindStringSubmatch(page)
	if m == nil || !strings.Contains(m[1], "shown=") {
		t.Fatalf("the page's stream address: %v", m)
	}
	next := listen(t, td, "ada@lab", "s-1", html.UnescapeString(m[1]))
	if event, _ := next(); event != "progress" {
		t.Fatalf("the first event is %q, want the live line", event)
	}
	td.fake.mu.Lock()
	st := td.fake.status["s-1"]
	st.State = session.Suspended
	td.fake.status["s-1"] = st
	td.fake.mu.Unlock()
	event, data := next()
	if event != "part" || !strings.Contains(data, `"id":"status"`) || !strings.Contains(data, "suspended") {
		t.Errorf("after the session changed: %s %.300s; want the status part, and nothing before it", event, data)
	}
}
