package workflows

import (
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// The query answers of a session that Temporal no longer keeps (its retention deleted the
// workflow), made from what the session store holds: its latest checkpoint and its event
// log. The starter answers status, progress, state and history with them.

// StoredStatus is the status query's answer from a checkpoint.
func StoredStatus(snap session.Snapshot) Status {
	return Status{
		SessionID:   snap.SessionID,
		State:       snap.State,
		Reason:      snap.StopReason,
		ScientistID: snap.ScientistID,
		Goal:        snap.Goal,
		StartedAt:   snap.StartedAt,
		UpdatedAt:   snap.Time,
	}
}

// StoredProgress is the progress query's answer from a checkpoint.
func StoredProgress(snap session.Snapshot) session.Progress {
	p := snap.Progress
	p.State = snap.State
	return p
}

// StoredState is the state query's answer from a checkpoint: everything but the per-agent
// turn counts, which a checkpoint does not keep.
func StoredState(snap session.Snapshot, p Page) StateView {
	lo, hi, limit := p.Bounds(len(snap.Hypotheses))
	share := map[string]int{"generation": 0, "evolution": 0, "scientist": 0}
	n := 0
	for _, e := range snap.Hypotheses { // ranked, excluded last
		if e.Excluded == "" && n < 10 {
			share[e.Origin]++
			n++
		}
	}
	return StateView{
		SessionID:   snap.SessionID,
		State:       snap.State,
		Goal:        snap.Goal,
		Refinements: snap.Refinements,
		ScientistID: snap.ScientistID,
		Config:      snap.Config,
		Hypotheses:  snap.Hypotheses[lo:hi],
		Total:       len(snap.Hypotheses),
		Offset:      lo,
		Limit:       limit,
		TopShare:    share,
		Plan:        snap.Plan,
		MetaReview:  snap.MetaCritiques,
		Usage:       snap.Usage,
		TokenBudget: snap.Config.TokenBudget,
		StopReason:  snap.StopReason,
	}
}

// StoredHistory is the history query's answer from the store's event log.
func StoredHistory(events []session.Event, p Page) HistoryView {
	lo, hi, limit := p.Bounds(len(events))
	return HistoryView{Events: events[lo:hi], Total: len(events), Offset: lo, Limit: limit}
}

// StoredConversation is the conversation query's answer from a session's latest
// checkpoint and the messages the store holds (texts included): what the session and the
// EndedConversation workflow wrote. Proposals left open are refused for reason: the
// session has ended (EndedReason), or keeps them no longer (OldProposalReason).
func StoredConversation(snap session.Snapshot, stored []research.Message, p Page, reason string) ConversationView {
	msgs, _ := session.EndedConversation(snap.Conversation, stored, reason)
	texts := make(map[string]string, len(stored))
	for _, m := range stored {
		texts[m.ID] = m.Text
	}
	lo, hi, limit := p.Bounds(len(msgs))
	v := ConversationView{Messages: []ConversationEntry{}, Total: len(msgs), Offset: lo, Limit: limit}
	for _, m := range msgs[lo:hi] {
		v.Messages = append(v.Messages, ConversationEntry{Message: m, Text: texts[m.ID]})
	}
	return v
}
