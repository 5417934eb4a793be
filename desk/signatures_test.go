package main

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/vouch"
	"github.com/cosci-dev/cosci/workflows"
)

// TestSignaturesBoundToTheAct: the page shows a "by" as signed only when its signature is
// this desk's of that very act: a question's text and update, a confirmation's proposal
// and update within the window, a trust-tool's payload and update. A signature anyone can
// read from the session's queries, put on another act of the same session, another kind
// of act, or an edited payload, is "not signed"; so is a string nobody signed.
func TestSignaturesBoundToTheAct(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC) // the question's time (testConversation)
	question := func(td *testDesk) *workflows.ConversationEntry { return &td.fake.conversation["s-1"].Messages[0] }
	confirmation := func(td *testDesk) *session.Proposal {
		return &td.fake.conversation["s-1"].Messages[1].Proposals[1]
	}
	sign := func(td *testDesk, a vouch.Act) string {
		a.Session, a.By = "s-1", "ada@lab"
		return td.key.Acts().Sign(a, at)
	}
	confirmed := vouch.Act{Kind: vouch.Confirm, Payload: session.ConfirmDigest("m-0002.2", testProposals[1].Digest()), Update: "desk-c1"}
	trust := session.Command{Name: "trust-tool", Tool: "literature.fetch"}
	trustAct := vouch.Act{Kind: "trust-tool", Payload: trust.Digest(), Update: "desk-t1"}
	tests := []struct {
		name   string
		change func(td *testDesk)
		shown  string // what the page shows of the act
		signed bool
	}{
		{"a question as signed", func(*testDesk) {}, "question", true},
		{"a question with a made-up signature", func(td *testDesk) { question(td).Signed = "x" }, "question", false},
		{"the same question sent again as another update", func(td *testDesk) { question(td).Update = "desk-q2" }, "question", false},
		{"a question with the signature of another kind of act", func(td *testDesk) {
			q := question(td)
			q.Signed = sign(td, vouch.Act{Kind: "feedback", Payload: session.TextDigest(q.Text), Update: q.Update})
		}, "question", false},
		{"an edited question", func(td *testDesk) { question(td).Text = "Why not astrocytes?" }, "question", false},
		{"a question with the signature of a confirmation in the session", func(td *testDesk) {
			question(td).Signed, question(td).Update = sign(td, confirmed), confirmed.Update
		}, "question", false},
		{"a confirmation as signed", func(td *testDesk) {
			p := confirmation(td)
			p.Signed, p.Update, p.At = sign(td, confirmed), confirmed.Update, at.Add(time.Second).Format(time.RFC3339)
		}, "confirmation", true},
		{"a confirmation recorded outside the window", func(td *testDesk) {
			p := confirmation(td)
			p.Signed, p.Update, p.At = sign(td, confirmed), confirmed.Update, at.Add(vouch.Skew+time.Minute).Format(time.RFC3339)
		}, "confirmation", false},
		{"a confirmation with the signature of the other proposal's", func(td *testDesk) {
			other := confirmed
			other.Payload = session.ConfirmDigest("m-0002.1", testProposals[0].Digest())
			p := confirmation(td)
			p.Signed, p.Update, p.At = sign(td, other), other.Update, at.Format(time.RFC3339)
		}, "confirmation", false},
		{"a trust-tool as signed", func(td *testDesk) { trusts(td, sign(td, trustAct), trustAct) }, "trust", true},
		{"a trust-tool with the question's signature", func(td *testDesk) { trusts(td, question(td).Signed, trustAct) }, "trust", false},
		{"a trust-tool of another tool", func(td *testDesk) {
			other := trustAct
			other.Payload = session.Command{Name: "trust-tool", Tool: "web.search"}.Digest()
			trusts(td, sign(td, other), trustAct)
		}, "trust", false},
	}
	marks := map[string][2]string{ // what the page says of the act: signed, not signed
		"question":     {"m-0001 · scientist (ada@lab) · ", `m-0001 · scientist (ada@lab, <span class="unsigned"`},
		"confirmation": {"confirmed by ada@lab</span>", "confirmed by ada@lab (not signed)"},
		"trust":        {"(trusted by ada@lab, <time", `(trusted by ada@lab, <span class="unsigned"`},
	}
	for _, tt := range tests {
		td, _ := newConversingDesk(t)
		conv := td.fake.conversation["s-1"]
		conv.Messages = append([]workflows.ConversationEntry(nil), conv.Messages...)
		conv.Messages[1].Proposals = append([]session.Proposal(nil), conv.Messages[1].Proposals...)
		td.fake.conversation["s-1"] = conv
		tt.change(td)
		_, body := td.do(t, "ada@lab", "GET", "/s/s-1", nil)
		want, not := marks[tt.shown][0], marks[tt.shown][1]
		if !tt.signed {
			want, not = not, want
		}
		if !strings.Contains(body, want) || strings.Contains(body, not) {
			t.Errorf("%s: the page does not show %q (signed: %v)", tt.name, want, tt.signed)
		}
	}
}

// trusts makes the session's one trusted tool literature.fetch, trusted by ada with sig
// for act.
func trusts(td *testDesk, sig string, act vouch.Act) {
	td.fake.mu.Lock()
	defer td.fake.mu.Unlock()
	st := td.fake.status["s-1"]
	st.Trusted = []session.Trust{{Tool: "literature.fetch", By: "ada@lab", Time: "2026-11-27T09:00:01Z", Signed: sig, Update: act.Update, Digest: act.Payload}}
	td.fake.status["s-1"] = st
}

// TestDeskSignsWhatItSends: each command, question and confirmation the desk sends
// carries a signature that verifies for the act as the session records it: the update id
// the desk sent it as, and the digest the session makes of what it got.
func TestDeskSignsWhatItSends(t *testing.T) {
	td, talk := newConversingDesk(t)
	now := td.now()
	td.do(t, "ada@lab", "POST", "/s/s-1/command/feedback", url.Values{"toward": {" microglia "}})
	td.do(t, "ada@lab", "POST", "/s/s-1/calls", url.Values{"decision": {"approve"}, "calls": {"call-1"}})
	td.do(t, "ada@lab", "POST", "/s/s-1/conversation", url.Values{"message": {"  Why microglia?  "}})
	td.do(t, "ada@lab", "POST", "/s/s-1/conversation", url.Values{"confirm": {"m-0002.1"}, "digest": {testProposals[0].Digest()}})
	key, updates := td.key.Acts(), map[string]bool{}
	for _, c := range td.fake.sent {
		cmd, err := session.ParseCommand(c.name, c.payload) // as the session reads it
		if err != nil {
			t.Fatal(err)
		}
		act := vouch.Act{Session: c.id, Kind: c.name, By: cmd.By, Payload: cmd.Digest(), Update: c.update}
		if !key.Verify(act, cmd.BySig, now) {
			t.Errorf("%s: the signature %q does not verify for the command the session gets", c.name, cmd.BySig)
		}
		updates[c.update] = true
	}
	for _, q := range talk.asks {
		act := vouch.Act{Session: "s-1", Kind: vouch.Ask, By: q.By, Payload: session.TextDigest(strings.TrimSpace(q.Text)), Update: q.UpdateID}
		if !key.Verify(act, q.BySig, now) {
			t.Errorf("the question %q: its signature does not verify", q.Text)
		}
		updates[q.UpdateID] = true
	}
	for _, c := range talk.confirms {
		act := vouch.Act{Session: "s-1", Kind: vouch.Confirm, By: c.By, Payload: session.ConfirmDigest(c.Proposal, c.Digest), Update: c.UpdateID}
		if !key.Verify(act, c.BySig, now) {
			t.Errorf("the confirmation of %s: its signature does not verify", c.Proposal)
		}
		updates[c.UpdateID] = true
	}
	if n := len(td.fake.sent) + len(talk.asks) + len(talk.confirms); n != 4 || len(updates) != 4 || updates[""] {
		t.Errorf("%d acts sent as updates %v: want 4, each with an update id of its own", n, updates)
	}
	var sent []string
	for _, c := range td.fake.sent {
		var p map[string]any
		_ = json.Unmarshal(c.payload, &p)
		sent = append(sent, c.name)
	}
	if strings.Join(sent, ",") != "feedback,answer-tool" {
		t.Errorf("commands sent: %v", sent)
	}
}

// TestEndedSessionsQuestionsAreChecked: an ended session's conversation is read from the
// store, its questions asked since it ended too; each keeps its signature and update id
// there, and is shown signed only when they check.
func TestEndedSessionsQuestionsAreChecked(t *testing.T) {
	td, _ := newConversingDesk(t)
	td.fake.setState("s-1", session.Completed)
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	signed := func(text, update string) string {
		return td.key.Acts().Sign(vouch.Act{Session: "s-1", Kind: vouch.Ask, By: "ada@lab", Payload: session.TextDigest(text), Update: update}, at)
	}
	for _, m := range []research.Message{
		{ID: "m-0001", Role: session.RoleScientist, By: "ada@lab", Time: at.Format(time.RFC3339), Text: "Why tau?", Signed: signed("Why tau?", "desk-q1"), Update: "desk-q1"},
		{ID: "m-0003", Role: session.RoleScientist, By: "ada@lab", Time: at.Format(time.RFC3339), Text: "Why not?", Signed: signed("Why tau?", "desk-q1"), Update: "desk-q3"},
	} {
		if err := td.st.PutMessage(t.Context(), "s-1", m); err != nil {
			t.Fatal(err)
		}
	}
	_, body := td.do(t, "ada@lab", "GET", "/s/s-1", nil)
	for _, want := range []string{"m-0001 · scientist (ada@lab) · ", `m-0003 · scientist (ada@lab, <span class="unsigned"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the ended session's page lacks %q", want)
		}
	}
}
