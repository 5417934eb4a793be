package activities

import (
	"context"

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

// reasonWithheld stands for a reason the worker's log does not show: the research is
// encrypted and the lab did not opt in to its text leaving the history (--notify-text).
const reasonWithheld = "withheld: the research is encrypted (see starter status; worker --notify-text logs it)"

// Notify says that a session needs a person (it suspended for a budget, the provider's
// credentials or a store fault) or that it ended: in the worker's log, always, and to the
// worker's webhook when it has one. A webhook that fails is retried by the activity's
// retry policy; its word is late, the session is not held up. The reason is free text
// (the scientist's terminate reason, a provider's error): the webhook is sent it only when
// the lab opted in (notify.Webhook.Text), and in an encrypted deployment the log shows it
// only then too, as the input that holds it is sealed in the history.
func (a *Activities) Notify(ctx context.Context, in NotifyInput) error {
	reason := in.Reason
	if reason != "" && a.Encrypted && !a.NotifyText {
		reason = reasonWithheld
	}
	log := activity.GetLogger(ctx)
	if in.Event == "suspended" {
		log.Warn("a session needs a person", "session", in.SessionID, "event", in.Event, "reason", reason)
	} else {
		log.Info("a session ended", "session", in.SessionID, "event", in.Event, "state", in.State, "reason", reason)
	}
	if a.Webhook == nil {
		return nil
	}
	return a.Webhook.Send(ctx, notify.Event{
		Event: in.Event, SessionID: in.SessionID, State: in.State, Reason: in.Reason,
		Scientist: in.Scientist, Time: in.Time,
	})
}
