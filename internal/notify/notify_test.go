package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestWebhook: an event arrives as JSON; a refusal is an error naming the status; a URL
// that cannot be a webhook is refused at start.
func TestWebhook(t *testing.T) {
	var got Event
	status := http.StatusNoContent
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&got) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	w, err := NewWebhook(srv.URL + "/hook")
	if err != nil {
		t.Fatal(err)
	}
	w.Text = true
	e := Event{Event: "suspended", SessionID: "s-1", State: "suspended", Reason: "token budget reached"}
	want := e
	want.Text = "cosci: session s-1 suspended: token budget reached"
	if err := w.Send(context.Background(), e); err != nil || got != want {
		t.Errorf("sent %+v, got %+v, %v; want %+v", e, got, err, want)
	}
	status = http.StatusServiceUnavailable
	if err := w.Send(context.Background(), e); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("a refusal: %v", err)
	}
	for _, bad := range []string{"", "ftp://x", "hooks.slack.com/x", "http://"} {
		if _, err := NewWebhook(bad); err == nil {
			t.Errorf("NewWebhook(%q) accepted", bad)
		}
	}
}

// TestReasonOnlyWhenOptedIn: without Text, the webhook is sent ids, the state and the kind
// of event, never the reason's text, and told where to read it; with Text, the reason.
func TestReasonOnlyWhenOptedIn(t *testing.T) {
	const reason = "terminated by the scientist: tardigrade-secret-q7 is a dead end"
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
	}))
	defer srv.Close()
	tests := []struct {
		text      bool
		reason    string
		want      Event
		forbidden string
	}{
		{false, reason, Event{Event: "completed", SessionID: "s-0a1b", State: "terminated", ReasonWithheld: true, Scientist: "ada", Time: "t",
			Text: "cosci: session s-0a1b completed (state terminated); the reason: starter status s-0a1b"}, "tardigrade"},
		{false, "", Event{Event: "completed", SessionID: "s-0a1b", State: "terminated", Scientist: "ada", Time: "t",
			Text: "cosci: session s-0a1b completed"}, "reason"},
		{true, reason, Event{Event: "completed", SessionID: "s-0a1b", State: "terminated", Reason: reason, Scientist: "ada", Time: "t",
			Text: "cosci: session s-0a1b completed: " + reason}, "reason_withheld"},
	}
	for _, tt := range tests {
		w, err := NewWebhook(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		w.Text = tt.text
		if err := w.Send(context.Background(), Event{Event: "completed", SessionID: "s-0a1b", State: "terminated", Reason: tt.reason, Scientist: "ada", Time: "t"}); err != nil {
			t.Fatal(err)
		}
		var got Event
		if err := json.Unmarshal(body, &got); err != nil || got != tt.want {
			t.Errorf("text %v, reason %q: sent %s (%v); want %+v", tt.text, tt.reason, body, err, tt.want)
		}
		if strings.Contains(string(body), tt.forbidden) {
			t.Errorf("text %v, reason %q: the payload holds %q: %s", tt.text, tt.reason, tt.forbidden, body)
		}
	}
}

// TestErrorsRedactTheURL: a webhook's URL path is its secret (Slack's, for one); no error
// of a failed delivery holds it, whether the host is unreachable, refuses, echoes the path
// in its answer or redirects; and a bad URL is refused without being quoted.
func TestErrorsRedactTheURL(t *testing.T) {
	const secret = "/services/T000SECRET/B000SECRET/XXXXSECRETXXXX"
	redirected := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/elsewhere"):
			redirected = true
		case strings.HasSuffix(r.URL.Path, "moved"):
			http.Redirect(w, r, "/elsewhere"+secret, http.StatusTemporaryRedirect)
		case strings.HasSuffix(r.URL.Path, "long"):
			// the path echoed across the first 200 bytes of the answer
			http.Error(w, strings.Repeat("x", 170)+" no service at "+r.URL.Path, http.StatusNotFound)
		default:
			http.Error(w, "no service at "+r.URL.Path+"\x1b[31m", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	for _, target := range []string{srv.URL + secret + "?token=SECRET", srv.URL + secret + "moved", srv.URL + secret + "long", closed.URL + secret, "https://user:SECRET@unreachable.invalid" + secret} {
		w, err := NewWebhook(target)
		if err != nil {
			t.Fatal(err)
		}
		err = w.Send(context.Background(), Event{Event: "suspended", SessionID: "s-1"})
		if err == nil {
			t.Errorf("%s: delivered", Redact(target))
			continue
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "\x1b") {
			t.Errorf("the error holds the URL's secret or a control character: %q", err)
		}
		if !strings.Contains(err.Error(), "the webhook at http") || !strings.Contains(err.Error(), "/…") {
			t.Errorf("the error %q does not name the webhook's host", err)
		}
	}
	if redirected {
		t.Error("the event followed a redirect")
	}
	if _, err := NewWebhook("ftp://hooks.example" + secret); err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("a bad URL: %v; want an error without its path", err)
	}
	for in, want := range map[string]string{
		"https://hooks.slack.com" + secret:  "https://hooks.slack.com/…",
		"https://u:p@ops.example:8443/?k=v": "https://ops.example:8443/…",
		"http://127.0.0.1:9000":             "http://127.0.0.1:9000",
		"http://127.0.0.1:9000/":            "http://127.0.0.1:9000",
		"hooks.example/x":                   "an unreadable URL",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
