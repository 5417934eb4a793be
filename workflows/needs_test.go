package workflows

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/tools/toolstest"
)

// memos records the needs memo's upserts, in order (nil: removed).
type memos struct {
	mu  sync.Mutex
	all []*session.Needs
}

func recordMemos(h *harness) *memos {
	m := &memos{}
	h.env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		fields := args.Get(0).(map[string]any)
		v, ok := fields[MemoNeeds]
		if !ok {
			return // the lineage memo
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if v == nil {
			m.all = append(m.all, nil)
			return
		}
		n := v.(session.Needs)
		m.all = append(m.all, &n)
	}).Return(nil)
	return m
}

func (m *memos) seen(match func(*session.Needs) bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range m.all {
		if match(n) {
			return true
		}
	}
	return false
}

// TestNeedsMemo: the session's memo says what it waits for its scientist for, as it
// changes: calls to approve, a proposal to confirm, a suspension of its own; and says
// nothing once nothing waits.
func TestNeedsMemo(t *testing.T) {
	t.Run("calls and proposals", func(t *testing.T) {
		var calls toolstest.Calls
		h := libraryHarness(t, time.Second, &simulator.Offline{}, &calls)
		m := recordMemos(h)
		req := grounded(16)
		req.Config.ApproveTools = []string{"literature.fetch"}
		asked := false
		var poll func()
		begun := h.env.Now()
		poll = func() {
			if h.env.IsWorkflowCompleted() {
				return
			}
			if st := query[Status](h, QueryStatus); st.State == session.Suspended || h.env.Now().Sub(begun) > 6*time.Hour {
				// A round's checkpoint that met the one the confirmation asked for once
				// suspended the session here ("session is checkpointing").
				t.Fatalf("the session stopped: %s (%s)", st.State, st.Reason)
			}
			for _, w := range query[Status](h, QueryStatus).Waiting {
				h.mustUpdate(AnswerTool, map[string]any{"call": w.ID, "decision": "approve"})
			}
			h.at(5*time.Second, poll)
		}
		h.at(5*time.Second, poll)
		h.at(10*time.Second, func() {
			talk(h, Ask, AskRequest{Text: "Please focus on microglia.", By: "ada"}, func(ans AskAnswer, err error) {
				asked = true
				if err != nil || len(ans.Answer.Proposals) != 1 {
					t.Fatalf("ask: %+v %v", ans, err)
				}
				h.at(5*time.Second, func() {
					talk(h, Confirm, ConfirmRequest{Proposal: ans.Answer.Proposals[0].ID, By: "ada"}, func(ConfirmAnswer, error) {})
				})
			})
		})
		if res := h.run(req); res.State != session.Completed || !asked {
			t.Fatalf("result %+v; asked %v", res, asked)
		}
		if !m.seen(func(n *session.Needs) bool { return n != nil && n.Calls > 0 && strings.Contains(n.Why(), "to approve") }) {
			t.Errorf("no memo said a call waits: %v", m.all)
		}
		if !m.seen(func(n *session.Needs) bool { return n != nil && n.Proposals == 1 && n.Why() != "" }) {
			t.Errorf("no memo said a proposal waits: %v", m.all)
		}
		if last := m.all[len(m.all)-1]; last != nil {
			t.Errorf("the last memo says %+v; nothing waits at the end", last)
		}
	})
	t.Run("its own suspension", func(t *testing.T) {
		h := newHarness(t, time.Second, &priced{perToken: 1e-6})
		m := recordMemos(h)
		req := goal(16)
		req.Config.BudgetUSD = 0.05
		h.at(2*time.Hour, func() {
			if !m.seen(func(n *session.Needs) bool { return n != nil && strings.HasPrefix(n.Suspended, "budget reached") }) {
				t.Errorf("suspended for its budget, the memo says %v", m.all)
			}
			h.mustUpdate(SetBudget, map[string]any{"budget_usd": 0})
			h.mustUpdate(Resume, nil)
		})
		if res := h.run(req); res.State != session.Completed {
			t.Fatalf("result %+v", res)
		}
		if last := m.all[len(m.all)-1]; last != nil {
			t.Errorf("after the resume the memo says %+v", last)
		}
	})
}
