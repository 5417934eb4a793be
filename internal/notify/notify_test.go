package notify

import (
	"context"
	"encoding/json"
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
	e := Event{Event: "suspended", SessionID: "s-1", State: "suspended", Reason: "token budget reached", Text: "cosci: s-1 suspended"}
	if err := w.Send(context.Background(), e); err != nil || got != e {
		t.Errorf("sent %+v, got %+v, %v", e, got, err)
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
