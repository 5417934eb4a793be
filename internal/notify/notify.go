// Package notify tells the people who run cosci that a session needs one: it suspended for
// a budget, the provider's credentials or a store fault, or it ended. The worker posts
// each event to a webhook of the lab's (an incoming webhook of a chat, a pager, a script).
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Event is what a notification says. Text is the whole of it in one line, which chat
// webhooks (Slack's, Mattermost's, Teams' workflows) show as it is.
type Event struct {
	Event     string `json:"event"` // suspended, completed
	SessionID string `json:"session_id"`
	State     string `json:"state"`
	Reason    string `json:"reason,omitempty"`
	Scientist string `json:"scientist_id,omitempty"`
	Time      string `json:"time"`
	Text      string `json:"text"`
}

// Webhook posts events as JSON to a URL.
type Webhook struct {
	URL    string
	Client *http.Client
}

// NewWebhook checks a webhook URL: http or https, with a host.
func NewWebhook(rawURL string) (*Webhook, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the webhook URL %q is not an http(s) URL", rawURL)
	}
	return &Webhook{URL: rawURL, Client: &http.Client{Timeout: 20 * time.Second}}, nil
}

// Send posts e. A status other than 2xx is an error, for the caller's retries.
func (w *Webhook) Send(ctx context.Context, e Event) error {
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "cosci-worker")
	resp, err := w.Client.Do(req)
	if err != nil {
		return fmt.Errorf("the webhook: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return fmt.Errorf("the webhook answered %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}
