package activities

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/cosci-dev/cosci/internal/notify"
)

// TestNotifyKeepsTheReasonIn: the reason's text (here the scientist's terminate reason)
// reaches the webhook only when the lab opted in, and the worker's log of an encrypted
// deployment only then too; a failed delivery's error, which goes to the log and the
// history, holds the webhook's host and not its secret path.
func TestNotifyKeepsTheReasonIn(t *testing.T) {
	const reason = "terminated: tardigrade-secret-q7 is a dead end"
	const path = "/services/T0SECRET/B0SECRET/XSECRET"
	var posted []byte
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posted, _ = io.ReadAll(r.Body)
		w.WriteHeader(status)
	}))
	defer srv.Close()

	tests := []struct {
		name                  string
		encrypted, notifyText bool
		inWebhook, inLog      bool
	}{
		{"plain deployment", false, false, false, true},
		{"encrypted", true, false, false, false},
		{"encrypted, opted in", true, true, true, true},
		{"plain, opted in", false, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logged bytes.Buffer
			var suite testsuite.WorkflowTestSuite
			suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(&logged, nil))))
			env := suite.NewTestActivityEnvironment()
			hook, err := notify.NewWebhook(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			hook.Text = tt.notifyText
			a := &Activities{Webhook: hook, Encrypted: tt.encrypted, NotifyText: tt.notifyText}
			env.RegisterActivity(a)
			status, posted = http.StatusOK, nil
			in := NotifyInput{SessionID: "s-0123456789abcdef", Event: "completed", State: "terminated", Reason: reason, Time: "t"}
			if _, err := env.ExecuteActivity(a.Notify, in); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(posted), "tardigrade"); got != tt.inWebhook || !strings.Contains(string(posted), in.SessionID) {
				t.Errorf("the webhook was sent %s; want the reason: %v, and the session id", posted, tt.inWebhook)
			}
			if got := strings.Contains(logged.String(), "tardigrade"); got != tt.inLog || !strings.Contains(logged.String(), in.SessionID) {
				t.Errorf("the log reads %s; want the reason: %v, and the session id", logged.String(), tt.inLog)
			}

			status = http.StatusNotFound
			_, err = env.ExecuteActivity(a.Notify, in)
			if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "404") {
				t.Errorf("a failed delivery: %v; want the status, not the URL's path", err)
			}
			if strings.Contains(logged.String(), "SECRET") {
				t.Errorf("the log holds the URL's path: %s", logged.String())
			}
		})
	}
}
