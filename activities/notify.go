package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"

	"github.com/cosci-dev/cosci/internal/notify"
)

// NotifyInput is a session event a person should hear of.
type NotifyInput struct {
	SessionID string `json:"session_id"`
	Event     string `json:"event"` // suspended, completed
	State     string `json:"state"`
	Reason    string `json:"reason,omitempty"`
	Scientist string `json:"scientist_id,omitempty"`
	Time      string `json:"time"`
}

// Notify says that a session needs a person (it suspended for a budget, the provider's
// credentials or a store fault) or that it ended: in the worker's log, always, and to the
// worker's webhook when it has one. A webhook that fails is retried by the activity's
// retry policy; its word is late, the session is not held up.
func (a *Activities) Notify(ctx context.Context, in NotifyInput) error {
	text := fmt.Sprintf("cosci: session %s %s", in.SessionID, in.Event)
	if in.Reason != "" {
		text += ": " + in.Reason
	}
	log := activity.GetLogger(ctx)
	if in.Event == "suspended" {
		log.Warn("a session needs a person", "session", in.SessionID, "event", in.Event, "reason", in.Reason)
	} else {
		log.Info("a session ended", "session", in.SessionID, "event", in.Event, "state", in.State, "reason", in.Reason)
	}
	if a.Webhook == nil {
		return nil
	}
	return a.Webhook.Send(ctx, notify.Event{
		Event: in.Event, SessionID: in.SessionID, State: in.State, Reason: in.Reason,
		Scientist: in.Scientist, Time: in.Time, Text: text,
	})
}
