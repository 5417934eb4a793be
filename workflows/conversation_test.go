package workflows

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// talk sends an update of the conversation; done gets its answer (of type T) or its rejection.
func talk[T any](h *harness, name string, arg any, done func(T, error)) {
	talkAs(h, name, "", arg, done)
}

// talkAs is talk as the update of that id, as the desk sends its updates.
func talkAs[T any](h *harness, name, id string, arg any, done func(T, error)) {
	h.env.UpdateWorkflow(name, id, &testsuite.TestUpdateCallback{
		OnReject: func(err error) { var zero T; done(zero, err) },
		OnAccept: func() {},
		OnComplete: func(v any, err error) {
			if err != nil {
				var zero T
				done(zero, err)
				return
			}
			done(v.(T), nil)
		},
	}, arg)
}

// TestConversation talks with a running session: questions are answered from its state,
// requests get the matching proposals, and only a confirmed proposal changes the session,
// as the confirming scientist's command, once.
func TestConversation(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	type step struct {
		text        string
		wantErr     string // the ask is refused
		wantCommand string // the proposal's command; "" for none
		wantEffect  string // in the proposal's effect
		confirm     bool
		wantState   session.State // after the confirmation
		wantTop     bool          // the answer names the top hypothesis it was shown
	}
	steps := []step{
		{text: "", wantErr: "the message is empty"},
		{text: strings.Repeat("x", session.MaxAskLength+1), wantErr: "at most 4000"},
		{text: "What is the best hypothesis so far?", wantTop: true},
		{text: "Please focus on microglia.", wantCommand: RefineGoal, wantEffect: `focus "microglia"`, confirm: true, wantState: session.Active},
		{text: "Leave cell-free assays aside.", wantCommand: Feedback, wantEffect: `away from "cell-free assays"`, confirm: true, wantState: session.Active},
		{text: "Test this idea: Microglia carry tau between synapses.", wantCommand: AddHypothesis, wantEffect: "Microglia carry tau between synapses", confirm: true, wantState: session.Active},
		{text: "Stop at 150 hypotheses", wantCommand: SetBudget, wantEffect: "max_hypotheses to 150", confirm: true, wantState: session.Active},
		{text: "pause", wantCommand: Suspend, wantEffect: "Pauses", confirm: true, wantState: session.Suspended},
		{text: "Which tool calls wait for me?"}, // a suspended session answers too
		{text: "resume", wantCommand: Resume, wantEffect: "Resumes", confirm: true, wantState: session.Active},
		{text: "stop", wantCommand: Terminate, wantEffect: "Ends the session", confirm: true, wantState: session.Terminating},
	}
	var proposals []string // confirmed, in order
	for i, st := range steps {
		at := time.Duration(40+20*i) * time.Second
		h.at(at, func() {
			talk(h, Ask, AskRequest{Text: st.text, By: "grace"}, func(ans AskAnswer, err error) {
				if st.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), st.wantErr) {
						t.Errorf("ask %q: %v; want refused with %q", st.text, err, st.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("ask %q: %v", st.text, err)
				}
				if ans.Question.Text != st.text || ans.Question.By != "grace" || ans.Answer.Role != session.RoleSession || ans.Answer.Text == "" {
					t.Errorf("ask %q: answer %+v", st.text, ans)
				}
				var got []string
				for _, p := range ans.Answer.Proposals {
					got = append(got, p.Command)
				}
				if want := []string{st.wantCommand}; st.wantCommand == "" && len(got) > 0 || st.wantCommand != "" && !slices.Equal(got, want) {
					t.Fatalf("ask %q proposes %v; want %q (answer: %s)", st.text, got, st.wantCommand, ans.Answer.Text)
				}
				if st.wantTop {
					in := h.lastConverse()
					if len(in.Top) == 0 || !strings.Contains(ans.Answer.Text, in.Top[0].ID) {
						t.Errorf("ask %q: the answer %q does not name the top hypothesis it was shown (%v)", st.text, ans.Answer.Text, in.Top)
					}
				}
				if st.wantCommand == "" {
					return
				}
				p := ans.Answer.Proposals[0]
				if p.Status != session.ProposalProposed || !strings.Contains(p.Effect, st.wantEffect) {
					t.Errorf("proposal %+v; want proposed, with %q in its effect", p, st.wantEffect)
				}
				if !st.confirm {
					return
				}
				talk(h, Confirm, ConfirmRequest{Proposal: p.ID, By: "ada"}, func(c ConfirmAnswer, err error) {
					state := c.Status.State
					if c.Status.After != "" {
						state = c.Status.After // it landed during a checkpoint
					}
					if err != nil || c.Proposal.Status != session.ProposalConfirmed || c.Proposal.By != "ada" || state != st.wantState {
						t.Errorf("confirm %s (%s): %+v, %v; want confirmed by ada, state %s", p.ID, p.Command, c, err, st.wantState)
					}
					proposals = append(proposals, p.Command)
					// A proposal is confirmed once.
					talk(h, Confirm, ConfirmRequest{Proposal: p.ID, By: "ada"}, func(_ ConfirmAnswer, err error) {
						if err == nil || !strings.Contains(err.Error(), "confirmed already") {
							t.Errorf("second confirm of %s: %v; want refused", p.ID, err)
						}
					})
				})
			})
		})
	}
	h.at(30*time.Second, func() {
		talk(h, Confirm, ConfirmRequest{Proposal: "m-0009.1"}, func(_ ConfirmAnswer, err error) {
			if err == nil || !strings.Contains(err.Error(), "no proposal") {
				t.Errorf("confirm of a proposal never made: %v; want refused", err)
			}
		})
	})
	res := h.run(goal(200))
	if res.State != session.Completed || !strings.HasPrefix(res.StopReason, "terminated by the scientist") {
		t.Fatalf("result %s %q", res.State, res.StopReason)
	}
	if want := []string{RefineGoal, Feedback, AddHypothesis, SetBudget, Suspend, Resume, Terminate}; !slices.Equal(proposals, want) {
		t.Errorf("confirmed %v; want %v", proposals, want)
	}
	// The history says who did what: each confirmed command as ada's, via the conversation.
	var applied []string
	events, err := h.store.Events(t.Context(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Kind == session.EventCommand && e.Via == "conversation" && *e.Accepted {
			if e.By != "ada" {
				t.Errorf("%s via the conversation recorded as by %q", e.Command, e.By)
			}
			applied = append(applied, e.Command)
		}
	}
	if !slices.Equal(applied, proposals) {
		t.Errorf("history has %v applied via the conversation; want %v", applied, proposals)
	}
	st := query[StateView](h, QueryState, Page{})
	if !slices.ContainsFunc(st.Refinements, func(r session.Refinement) bool { return r.Focus == "microglia" }) || st.Config.MaxHypotheses != 150 {
		t.Errorf("state after the confirmations: refinements %v, max_hypotheses %d", st.Refinements, st.Config.MaxHypotheses)
	}
	// The conversation: every message, oldest first, its text and its proposals' status.
	conv := query[ConversationView](h, QueryConversation, Page{Limit: 100})
	if asked := len(steps) - 2; conv.Total != 2*asked || len(conv.Messages) != 2*asked {
		t.Fatalf("conversation has %d messages (total %d); want %d", len(conv.Messages), conv.Total, 2*asked)
	}
	for i, m := range conv.Messages {
		if m.ID != session.MessageID(i+1) || m.Text == "" || (i%2 == 0) != (m.Role == session.RoleScientist) {
			t.Errorf("message %d: %+v", i, m)
		}
		for _, p := range m.Proposals {
			if p.Status != session.ProposalConfirmed {
				t.Errorf("proposal %s is %s", p.ID, p.Status)
			}
		}
	}
	page := query[ConversationView](h, QueryConversation, Page{Offset: 4, Limit: 2})
	if len(page.Messages) != 2 || page.Messages[0].ID != "m-0005" {
		t.Errorf("page 4+2: %+v", page.Messages)
	}
	// The desk's page query answers what the four queries answer.
	all := query[PageView](h, QueryPage, PageRequest{Ranking: Page{Offset: 1, Limit: 3}, Conversation: Page{Offset: 4, Limit: 2}})
	each := PageView{Status: query[Status](h, QueryStatus), Progress: query[session.Progress](h, QueryProgress),
		State: query[StateView](h, QueryState, Page{Offset: 1, Limit: 3}), Conversation: page}
	if !reflect.DeepEqual(all, each) {
		t.Errorf("the page query answers\n%+v\nwant the four queries' answers\n%+v", all, each)
	}
	if len(all.State.Hypotheses) != 3 || all.State.Offset != 1 {
		t.Errorf("the page query's ranking: %d entries from %d; want 3 from 1", len(all.State.Hypotheses), all.State.Offset)
	}
	// The texts are in the store.
	var stored []research.Message
	stored, err = h.store.Conversation(t.Context(), res.SessionID)
	if err != nil || len(stored) != conv.Total || stored[2].Text != steps[3].text {
		t.Errorf("stored conversation: %d messages, %v", len(stored), err)
	}
	// Later prompts carry the scientist's latest remarks.
	if !h.generatedWithRemarks() {
		t.Error("no generation turn after the first message carried the scientist's remarks")
	}
	// The converse agent is counted like any other.
	if i := slices.IndexFunc(st.Agents, func(a AgentStat) bool { return a.Agent == "converse" }); i < 0 || st.Agents[i].Succeeded != conv.Total/2 {
		t.Errorf("agents: %+v; want converse with %d turns", st.Agents, conv.Total/2)
	}
}

// lastConverse is the input of the latest Converse turn.
func (h *harness) lastConverse() (in struct{ Top []session.Entry }) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range slices.Backward(h.starts) {
		if s.activity == "Converse" {
			in.Top = s.converse.Top
			return in
		}
	}
	return in
}

// generatedWithRemarks says whether a generation turn's prompt carried the scientist's remarks.
func (h *harness) generatedWithRemarks() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.ContainsFunc(h.starts, func(s started) bool { return s.activity == "Generate" && len(s.input.Context.Remarks) > 0 })
}

// TestConversationAfterTheEnd asks a session that has ended. Its own run, still open
// while it logs its last events, refuses the question with the words clients know an
// ended session by (EndedAskRefusal); then a workflow of its own answers from the final
// state in the store, appends to the same conversation, and refuses every proposal.
func TestConversationAfterTheEnd(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	h.at(3*time.Second, func() {
		talk(h, Ask, AskRequest{Text: "focus on microglia", By: "ada"}, func(ans AskAnswer, err error) {
			if err != nil || len(ans.Answer.Proposals) != 1 {
				t.Errorf("ask while running: %+v, %v", ans, err)
			}
		})
	})
	// A closed workflow takes no update at all (the test environment drops it), so the
	// question comes while the run is still open: the store takes a minute over the
	// session's last events, which are logged after it has completed, and the question is
	// sent as soon as the status says completed.
	h.env.OnActivity(h.acts.Log, mock.Anything, mock.Anything).After(time.Minute).Return(h.acts.Log)
	refused := false
	var askOnceEnded func()
	askOnceEnded = func() {
		if query[Status](h, QueryStatus).State != session.Completed {
			h.env.RegisterDelayedCallback(askOnceEnded, 10*time.Second)
			return
		}
		talk(h, Ask, AskRequest{Text: "what is the best hypothesis?"}, func(_ AskAnswer, err error) {
			refused = true
			if err == nil || !strings.Contains(err.Error(), EndedAskRefusal) {
				t.Errorf("the ended session's run answered a question (error %v); want it refused with %q", err, EndedAskRefusal)
			}
		})
	}
	h.at(10*time.Second, askOnceEnded)
	res := h.run(goal(6))
	if res.State != session.Completed {
		t.Fatalf("result %s", res.State)
	}
	if !refused {
		t.Fatal("no question reached the ended session's run")
	}

	h.newEnv()
	type step struct {
		text, want  string
		wantRefused bool
	}
	steps := []step{
		{text: "What is the best hypothesis?", want: res.Top[0].ID},
		{text: "Please focus on astrocytes.", want: "ended", wantRefused: true},
	}
	for i, st := range steps {
		h.at(time.Duration(i+1)*time.Second, func() {
			talkAs(h, Ask, fmt.Sprintf("desk-e%d", i), AskRequest{Text: st.text, By: "grace", BySig: "v2.1.e"}, func(ans AskAnswer, err error) {
				if err != nil || !strings.Contains(ans.Answer.Text, st.want) {
					t.Fatalf("ask %q of the ended session: %q, %v; want %q in the answer", st.text, ans.Answer.Text, err, st.want)
				}
				if want := session.MessageID(2*i + 3); ans.Question.ID != want {
					t.Errorf("the question is %s; want %s, after the live conversation", ans.Question.ID, want)
				}
				if !st.wantRefused {
					return
				}
				if len(ans.Answer.Proposals) != 1 || ans.Answer.Proposals[0].Status != session.ProposalRefused || ans.Answer.Proposals[0].Reason != "the session has ended" {
					t.Errorf("proposals of an ended session: %+v; want one, refused", ans.Answer.Proposals)
				}
				talk(h, Confirm, ConfirmRequest{Proposal: ans.Answer.Proposals[0].ID}, func(_ ConfirmAnswer, err error) {
					if err == nil || !strings.Contains(err.Error(), "the session has ended") {
						t.Errorf("confirm on an ended session: %v", err)
					}
				})
			})
		})
	}
	h.env.ExecuteWorkflow(EndedConversation, EndedConversationInput{SessionID: res.SessionID})
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	conv := query[ConversationView](h, QueryConversation, Page{})
	if conv.Total != 6 || conv.Messages[1].Proposals[0].Status != session.ProposalRefused {
		t.Errorf("the ended session's conversation: %+v", conv)
	}
	stored, err := h.store.Conversation(t.Context(), res.SessionID)
	if err != nil || len(stored) != 6 || stored[4].Text != steps[1].text {
		t.Fatalf("stored conversation: %d messages, %v", len(stored), err)
	}
	// A question to the ended session keeps its signature and its update's id, for the
	// pages that check them: the desk reads an ended session's conversation from here.
	if q := stored[4]; q.Signed != "v2.1.e" || q.Update != "desk-e1" {
		t.Errorf("the ended session's question %s stored signed %q, update %q; want v2.1.e, desk-e1", q.ID, q.Signed, q.Update)
	}
}

// TestConversationAcrossContinueAsNew: the conversation outlives a run: its ids, who and
// the proposals' status are carried, the latest texts read back from the store, and a
// proposal made in the first run is confirmed in the next.
func TestConversationAcrossContinueAsNew(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	runs := 0
	confirmed := false
	h.runEach(goal(40), func() {
		runs++
		switch runs {
		case 1:
			h.at(3*time.Second, func() {
				talk(h, Ask, AskRequest{Text: "Please focus on microglia.", By: "ada"}, func(ans AskAnswer, err error) {
					if err != nil || ans.Answer.ID != "m-0002" {
						t.Errorf("ask: %+v, %v", ans, err)
					}
				})
			})
			h.at(10*time.Second, func() { h.env.SetContinueAsNewSuggested(true) })
		case 2:
			h.at(2*time.Second, func() {
				v := query[ConversationView](h, QueryConversation, Page{})
				if v.Total != 2 || v.Messages[0].Text != "Please focus on microglia." || v.Messages[1].Text == "" || v.Messages[1].Proposals[0].Status != session.ProposalProposed {
					t.Errorf("the next run's conversation: %+v", v)
				}
				talk(h, Confirm, ConfirmRequest{Proposal: "m-0002.1", By: "ada"}, func(c ConfirmAnswer, err error) {
					confirmed = err == nil && c.Proposal.Status == session.ProposalConfirmed
				})
				talk(h, Ask, AskRequest{Text: "terminate", By: "ada"}, func(ans AskAnswer, err error) {
					if err != nil || ans.Question.ID != "m-0003" {
						t.Errorf("the next run numbers on: %+v, %v", ans.Question, err)
					}
				})
			})
		}
	})
	if runs < 2 || !confirmed {
		t.Errorf("%d runs; the first run's proposal confirmed in the next: %v", runs, confirmed)
	}
}

// TestConfirmWhatWasShown: a confirmation that names a command other than the proposal's
// (by its digest) applies nothing and leaves the proposal open; one that names it applies
// it. Who confirmed is recorded with the desk's signature of them, as the question is.
func TestConfirmWhatWasShown(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	var wrong, right error
	var confirmed ConfirmAnswer
	var shown research.ProposedCommand
	h.at(40*time.Second, func() {
		talkAs(h, Ask, "desk-q", AskRequest{Text: "Please focus on microglia.", By: "ada", BySig: "v1.100.question"}, func(ans AskAnswer, err error) {
			if err != nil || len(ans.Answer.Proposals) != 1 {
				t.Fatalf("ask: %+v %v", ans, err)
			}
			p := ans.Answer.Proposals[0]
			stored, err := h.store.Message(t.Context(), query[Status](h, QueryStatus).SessionID, ans.Answer.ID)
			if err != nil || len(stored.Proposals) != 1 {
				t.Fatalf("the answer in the store: %+v %v", stored, err)
			}
			shown = stored.Proposals[0]
			other := shown
			other.Args = []byte(`{"focus": "microglia", "goal": "something else entirely"}`)
			talk(h, Confirm, ConfirmRequest{Proposal: p.ID, By: "ada", Digest: other.Digest()}, func(_ ConfirmAnswer, err error) {
				wrong = err
				talkAs(h, Confirm, "desk-c", ConfirmRequest{Proposal: p.ID, By: "ada", BySig: "v1.101.confirm", Digest: shown.Digest()}, func(c ConfirmAnswer, err error) {
					confirmed, right = c, err
				})
			})
		})
	})
	h.at(60*time.Second, func() { talk(h, Terminate, nil, func(Status, error) {}) })
	res := h.run(goal(200))
	if wrong == nil || !strings.Contains(wrong.Error(), "not the one proposed") {
		t.Errorf("a confirmation of another command: %v; want refused", wrong)
	}
	if right != nil || confirmed.Proposal.Status != session.ProposalConfirmed || confirmed.Proposal.Signed != "v1.101.confirm" {
		t.Errorf("the confirmation of what was shown: %+v, %v; want confirmed, its signature kept", confirmed, right)
	}
	// What a desk's signature covers besides: the update that carried each act, and the
	// digest of what it carried, as the desk computes it.
	if p := confirmed.Proposal; p.Update != "desk-c" || p.At == "" {
		t.Errorf("the confirmed proposal records update %q at %q; want desk-c, and when", p.Update, p.At)
	}
	events, err := h.store.Events(t.Context(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var asked, applied int
	for _, e := range events {
		switch {
		case e.Kind == session.EventAsk && e.By == "ada":
			asked++
			if e.Signed != "v1.100.question" || e.Update != "desk-q" || e.Digest != session.TextDigest("Please focus on microglia.") {
				t.Errorf("the question's event: signed %q, update %q, digest %q", e.Signed, e.Update, e.Digest)
			}
		case e.Kind == session.EventCommand && e.Via == "conversation" && *e.Accepted:
			applied++
			if e.Command != RefineGoal || e.Signed != "v1.101.confirm" || e.Update != "desk-c" || e.Digest != session.ConfirmDigest(confirmed.Proposal.ID, shown.Digest()) {
				t.Errorf("the applied command's event: %+v", e)
			}
		}
	}
	if asked != 1 || applied != 1 {
		t.Errorf("events: %d questions by ada, %d commands applied via the conversation; want 1 and 1", asked, applied)
	}
	conv := query[ConversationView](h, QueryConversation, Page{Limit: 10})
	if len(conv.Messages) == 0 || conv.Messages[0].Signed != "v1.100.question" || conv.Messages[0].Update != "desk-q" {
		t.Errorf("the question as the session keeps it: %+v", conv.Messages)
	}
}
