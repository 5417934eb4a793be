package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/auth"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// quietDesk is a test desk whose streams check their access only when told to, or before
// a reading they send: no clock of theirs ends a stream in a test that means another
// check to.
func quietDesk(t *testing.T) *testDesk {
	td := newTestDesk(t)
	td.signInCheck, td.shareCheck = time.Hour, time.Hour
	td.hub = newHub(watched{td.desk}, 20*time.Millisecond)
	td.fake.add("s-1", "ada@lab", "g")
	return td
}

// opened reads a stream's first reading: the live line and the status part.
func opened(t *testing.T, next streamEvents) {
	t.Helper()
	if e, _ := next(); e != "progress" {
		t.Fatalf("the first event: %q", e)
	}
	if e, data := next(); e != "part" || !strings.Contains(data, `"id":"status"`) {
		t.Fatalf("the second event: %s %.200s", e, data)
	}
}

// ended reads a stream to its end and says why it ended, failing at any part it sends
// first: a person whose access was taken away gets nothing more of the session.
func ended(t *testing.T, next streamEvents) string {
	t.Helper()
	for {
		switch event, data := next(); event {
		case "end":
			if e, _ := next(); e != "closed" {
				t.Errorf("after its last event the stream sent %q", e)
			}
			return data
		case "closed":
			t.Fatal("the stream closed without saying why")
		case "part":
			t.Fatalf("the stream sent a part after access was taken away: %.200s", data)
		}
	}
}

// suspend changes the session, so its watcher has a new reading to send.
func suspend(td *testDesk, id string) { td.fake.setState(id, session.Suspended) }

// TestStreamEndsAtSignOut: signing out at this desk ends the sign-in's open streams at
// once, with a last event that says why; another person's stream goes on.
func TestStreamEndsAtSignOut(t *testing.T) {
	td := quietDesk(t)
	td.csrf(t, "ada@lab") // her page: the stream is the same sign-in's
	td.csrf(t, "root@lab")
	ada := listen(t, td, "ada@lab", "s-1", "status")
	root := streamEvents(listen(t, td, "root@lab", "s-1", "status"))
	opened(t, ada)
	opened(t, root)
	if code, _ := td.do(t, "ada@lab", "POST", "/auth/logout", url.Values{}); code != 303 {
		t.Fatalf("sign out: %d", code)
	}
	if why := ended(t, ada); why != endSignedOut {
		t.Errorf("ada's stream ended with %q, want %q", why, endSignedOut)
	}
	suspend(td, "s-1")
	if e, data := root.part(t, "status"); !strings.Contains(data, "suspended") {
		t.Errorf("root's stream after ada signed out: %s %.200s", e, data)
	}
	// Ada signs in again, and an admin signs her out everywhere at this desk.
	again := streamEvents(listen(t, td, "ada@lab", "s-1", "status"))
	opened(t, again)
	if code, _ := td.do(t, "root@lab", "POST", "/auth/signout-everywhere", url.Values{"who": {"ada@lab"}}); code != 200 {
		t.Fatalf("root signs ada out everywhere: %d", code)
	}
	if why := ended(t, again); why != endSignedOut {
		t.Errorf("ada's stream after she was signed out everywhere ended with %q, want %q", why, endSignedOut)
	}
}

// part is the next part the stream sends, whatever comes before it but its end.
func (next streamEvents) part(t *testing.T, id string) (string, string) {
	t.Helper()
	for {
		e, data := next()
		if e == "closed" || e == "end" {
			return e, data
		}
		if e == "part" && strings.Contains(data, fmt.Sprintf(`"id":%q`, id)) {
			return e, data
		}
	}
}

type streamEvents func() (string, string)

// TestStreamEndsWhenTheShareIsTakenBack: a reader's stream ends the moment the owner
// takes the grant back at this desk; a share that leaves them reading changes nothing.
func TestStreamEndsWhenTheShareIsTakenBack(t *testing.T) {
	td := quietDesk(t)
	td.do(t, "ada@lab", "POST", "/s/s-1/share", url.Values{"who": {"bob@lab"}, "level": {"read"}})
	bob := streamEvents(listen(t, td, "bob@lab", "s-1", "status"))
	opened(t, bob)
	td.do(t, "ada@lab", "POST", "/s/s-1/share", url.Values{"who": {"carol@lab"}, "level": {"read"}})
	suspend(td, "s-1")
	if e, data := bob.part(t, "status"); e != "part" || !strings.Contains(data, "suspended") {
		t.Fatalf("bob's stream after a share with another: %s %.200s", e, data)
	}
	if code, _ := td.do(t, "ada@lab", "POST", "/s/s-1/share", url.Values{"who": {"bob@lab"}, "level": {""}}); code != 303 {
		t.Fatalf("taking the share back: %d", code)
	}
	if why := ended(t, bob); why != endUnshared {
		t.Errorf("bob's stream ended with %q, want %q", why, endUnshared)
	}
}

// clock is a test's time, which the streams' goroutines read too.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }
func newClock(t time.Time) *clock    { c := &clock{}; c.ns.Store(t.UnixNano()); return c }
func proxyAt(td *testDesk, now *clock) auth.Config {
	return auth.Config{Mode: auth.ModeProxy, Key: td.key, Proxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.1/32")},
		Roles: testPolicy.Roles, Revocations: td.st, Now: now.now}
}

// TestStreamEndsAtSignOutEverywhereElsewhere: "sign out everywhere" at another desk of
// the lab reaches an open stream here once this desk reads the sign-outs again (within
// auth.RevocationTTL), found by the stream's own clock when the session is quiet, and
// before the next reading it would send when it is not.
func TestStreamEndsAtSignOutEverywhereElsewhere(t *testing.T) {
	for _, tt := range []struct {
		name  string
		check time.Duration // the stream's clock
		wake  func(td *testDesk)
	}{
		{"a quiet session: the stream's clock", 10 * time.Millisecond, func(*testDesk) {}},
		{"a new reading: before it is sent", time.Hour, func(td *testDesk) { suspend(td, "s-1") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			td := quietDesk(t)
			now := newClock(time.Now())
			a, err := auth.New(proxyAt(td, now))
			if err != nil {
				t.Fatal(err)
			}
			td.desk.auth, td.signInCheck = a, tt.check
			td.h = td.handler()
			td.csrf(t, "ada@lab")
			next := listen(t, td, "ada@lab", "s-1", "status")
			opened(t, next)
			// Another desk, with the same key and store, signs ada out everywhere.
			now.add(time.Second)
			other, err := auth.New(proxyAt(td, now))
			if err != nil {
				t.Fatal(err)
			}
			if err := other.SignOutEverywhere(t.Context(), "ada@lab", "root@lab"); err != nil {
				t.Fatal(err)
			}
			now.add(auth.RevocationTTL) // this desk reads the sign-outs again
			tt.wake(td)
			if why := ended(t, next); why != endSignedOut {
				t.Errorf("the stream ended with %q, want %q", why, endSignedOut)
			}
		})
	}
}

// TestStalledReaderLosesItsSlot: a client that opens a stream and reads none of it loses
// its slot, its share of the session's watcher and its connection once a write waits past
// its deadline, rather than holding them for the stream's 5 minutes.
func TestStalledReaderLosesItsSlot(t *testing.T) {
	td := quietDesk(t)
	td.streamWrite = 100 * time.Millisecond
	td.hub = newHub(&growing{}, time.Millisecond)
	ends := make(chan string, 1)
	td.streamEnded = func(_, _, why string) { ends <- why }
	td.hosts = []string{"127.0.0.1"}
	td.h = td.handler()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.RemoteAddr = "192.0.2.1:1" // through the proxy
		td.h.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(c, "GET /s/s-1/events?parts=waiting HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-Email: ada@lab\r\n\r\n")
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.Contains(line, "200") {
		t.Fatalf("the stream's answer: %q %v", line, err)
	}
	// The client reads nothing more.
	select {
	case why := <-ends:
		if !strings.HasPrefix(why, "write:") {
			t.Errorf("the stream ended with %q, want a write that timed out", why)
		}
	case <-time.After(streamWait):
		t.Fatalf("a reader that reads nothing still holds its stream after %v", streamWait)
	}
	for i := range maxStreams {
		if _, ok := td.streams.take("ada@lab"); !ok {
			t.Fatalf("stream %d of %d refused: the stalled one kept its slot", i+1, maxStreams)
		}
	}
	if n := td.hub.watching(); n != 0 {
		t.Errorf("%d watchers after the only stream ended", n)
	}
}

// growing is a session whose waiting call's arguments change at every reading, each
// reading a part of 256 KiB to send.
type growing struct{ n atomic.Int64 }

func (g *growing) read(context.Context, string, *snapshot) *snapshot {
	n := g.n.Add(1)
	args := fmt.Sprintf("%d %s", n, strings.Repeat("x", 256<<10))
	st := workflows.Status{SessionID: "s-1", State: session.Active, ScientistID: "ada@lab",
		Waiting: []session.WaitingCall{{ID: "call-1", Tool: "literature.fetch", Arguments: args}}}
	return &snapshot{View: workflows.PageView{Status: st}, At: time.Now()}
}
