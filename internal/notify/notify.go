// Package notify tells the people who run cosci that a session needs one: it suspended for
// a budget, the provider's credentials or a store fault, or it ended. The worker posts
// each event to a webhook of the lab's (an incoming webhook of a chat, a pager, a script).
//
// A webhook leaves the lab: a chat service keeps what it is sent, beyond the lab's keys. So
// an event carries ids, states and the kind of event, and its reason (free text, which may
// quote the scientist's terminate reason, a provider's error or a store record's name)
// only when the lab opts in (Webhook.Text, the worker's --notify-text). The webhook's URL
// is a secret too (a Slack webhook's path is its credential): no error names more of it
// than its scheme and host.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// Event is what a notification says. Text is the whole of it in one line, which chat
// webhooks (Slack's, Mattermost's, Teams' workflows) show as it is; Send writes it.
type Event struct {
	Event     string `json:"event"` // suspended, completed
	SessionID string `json:"session_id"`
	State     string `json:"state"`
	Reason    string `json:"reason,omitempty"`
	// ReasonWithheld says that the event has a reason the webhook was not sent (the lab did
	// not opt in): `starter status` shows it.
	ReasonWithheld bool   `json:"reason_withheld,omitempty"`
	Scientist      string `json:"scientist_id,omitempty"`
	Time           string `json:"time"`
	Text           string `json:"text"`
}

// Line is the event in one line, its reason included when it has one.
func (e Event) Line() string {
	text := fmt.Sprintf("cosci: session %s %s", e.SessionID, e.Event)
	switch {
	case e.Reason != "":
		text += ": " + e.Reason
	case e.ReasonWithheld:
		text += " (state " + e.State + "); the reason: starter status " + e.SessionID
	}
	return text
}

// Webhook posts events as JSON to a URL.
type Webhook struct {
	URL    string
	Client *http.Client
	// Text sends each event's reason. Without it the reason is left out (ReasonWithheld),
	// and the line says where to read it.
	Text bool
}

// NewWebhook checks a webhook URL: http or https, with a host. Its error names no more of
// the URL than Redact does.
func NewWebhook(rawURL string) (*Webhook, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the webhook URL (%s) is not an http(s) URL with a host", Redact(rawURL))
	}
	return &Webhook{URL: rawURL, Client: &http.Client{
		Timeout: 20 * time.Second,
		// A webhook answers; it does not send the event on. A redirect is an error (its
		// status), so the event never reaches a host the lab did not name.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// Redact is a URL as errors and logs may show it: its scheme and host, with "/…" for a
// path or query (a webhook's path is often its secret) and never its user or password.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "an unreadable URL"
	}
	s := u.Scheme + "://" + u.Host
	if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		s += "/…"
	}
	return s
}

// Send posts e, its Text written and its reason left out unless w.Text. A status other
// than 2xx is an error, for the caller's retries; no error holds the URL's path.
func (w *Webhook) Send(ctx context.Context, e Event) error {
	if !w.Text && e.Reason != "" {
		e.Reason, e.ReasonWithheld = "", true
	}
	e.Text = e.Line()
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return w.redacted(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "cosci-worker")
	resp, err := w.Client.Do(req)
	if err != nil {
		return w.redacted(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		// Redacted before it is cut: a URL the answer echoes across the cut would leave a
		// piece of its secret path that no longer matches the whole.
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		text := w.redacted(errors.New(printable(msg))).Error()
		if r := []rune(text); len(r) > 200 {
			text = string(r[:200]) + "…"
		}
		return fmt.Errorf("answered %s: %s", resp.Status, text)
	}
	return nil
}

// redacted is err as the webhook at Redact(w.URL) met it: the URL that net/http's errors
// hold (*url.Error) is dropped, and any other mention of it is cut to the redacted form.
func (w *Webhook) redacted(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	where := Redact(w.URL)
	msg := err.Error()
	if u, perr := url.Parse(w.URL); perr == nil {
		for _, secret := range []string{w.URL, u.String(), u.RequestURI(), u.EscapedPath(), u.Path} {
			if strings.Trim(secret, "/") != "" {
				msg = strings.ReplaceAll(msg, secret, "/…")
			}
		}
	}
	return fmt.Errorf("the webhook at %s: %s", where, msg)
}

// printable is a webhook's answer as one line of printable text.
func printable(b []byte) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, strings.TrimSpace(string(b)))
}
