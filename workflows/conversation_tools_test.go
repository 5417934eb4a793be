package workflows

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/tools/toolstest"
)

// TestConversationTools: in a session with tools, a question about the literature is a
// tool loop like the research turns' (each step and each call an activity), and the
// answer cites what the tools returned, checked like any citation; a call that needs the
// scientist's approval is not made and the answer comes all the same, at once; the
// turn's and the session's tool budgets hold; a session without tools, a spent tool
// budget or a question about the session answer in one step. Whatever its steps, the turn
// is booked once and what its steps spent is counted once.
func TestConversationTools(t *testing.T) {
	const literature = "What does the literature say about microglia?"
	for _, tt := range []struct {
		name   string
		config func(*research.Config) // nil: a session without tools
		text   string
		// afterCalls, when set, asks once the session has made this many tool calls
		// (its research turns'), instead of at once.
		afterCalls int
		suspended  bool     // asked while the session is suspended, resumed once answered
		wantSteps  int      // the turn's Converse activities
		wantTools  []string // the turn's tool events, each the start of one, in order
		wantCited  bool     // the answer cites a result of its own calls (all its citations verified)
		wantText   string   // in the answer
		wantCalls  int      // the session's tool calls at the end; -1: not checked
	}{
		{
			name: "search, fetch, cite", config: func(*research.Config) {}, text: literature, wantSteps: 3,
			wantTools: []string{"search literature: microglia (", "fetch literature: 10.5555/"}, wantCited: true, wantText: "On microglia", wantCalls: -1,
		},
		{
			name: "a call needing approval is not made", config: func(c *research.Config) {
				// The research turns' calls wait a minute for an answer that does not come.
				c.ApproveTools, c.ApprovalTimeout = []string{"literature.fetch"}, research.Duration(time.Minute)
			}, text: literature, wantSteps: 3,
			wantTools: []string{"search literature: microglia (", "fetch literature not made: it needs the scientist's approval"}, wantCited: true,
			wantText: "My call of literature.fetch gave no result: " + noApproval, wantCalls: -1,
		},
		{
			name: "one call a turn", config: func(c *research.Config) { c.ToolCallsPerTurn = 1 }, text: literature, wantSteps: 2,
			wantTools: []string{"search literature: microglia ("}, wantCited: true, wantText: "On microglia", wantCalls: -1,
		},
		{
			name: "the session's tool budget is spent", config: func(c *research.Config) { c.ToolCallsPerSession = 3 }, text: literature, afterCalls: 3,
			wantSteps: 1, wantText: "The best hypothesis is", wantCalls: 3,
		},
		{
			name: "while suspended", config: func(*research.Config) {}, text: literature, suspended: true, wantSteps: 3,
			wantTools: []string{"search literature: microglia (", "fetch literature: 10.5555/"}, wantCited: true, wantText: "On microglia", wantCalls: -1,
		},
		{name: "a question about the session", config: func(*research.Config) {}, text: "What is the best hypothesis so far?", wantSteps: 1, wantText: "The best hypothesis is", wantCalls: -1},
		{name: "a session without tools", text: literature, wantSteps: 1, wantText: "The best hypothesis is", wantCalls: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var served toolstest.Calls
			h := libraryHarness(t, time.Second, &simulator.Offline{}, &served)
			req := goal(8)
			req.Config.Seed = 3
			if tt.config != nil {
				req = grounded(8)
				tt.config(&req.Config)
			}
			var (
				ans             AskAnswer
				asked, answered time.Time
				waitingConverse bool // a call of the converse turn ever waited for the scientist
				askedOnce       bool
			)
			ask := func() {
				askedOnce = true
				if tt.suspended {
					h.mustUpdate(Suspend, nil)
				}
				asked = h.env.Now()
				talk(h, Ask, AskRequest{Text: tt.text, By: "ada"}, func(a AskAnswer, err error) {
					if err != nil {
						t.Errorf("ask: %v", err)
					}
					ans, answered = a, h.env.Now()
					if tt.suspended {
						if st := query[Status](h, QueryStatus); st.State != session.Suspended {
							t.Errorf("answered in state %s; want suspended", st.State)
						}
						h.mustUpdate(Resume, nil)
					}
				})
			}
			var poll func()
			poll = func() {
				if h.env.IsWorkflowCompleted() {
					return
				}
				st := query[Status](h, QueryStatus)
				waitingConverse = waitingConverse || slices.ContainsFunc(st.Waiting, func(w session.WaitingCall) bool { return strings.HasPrefix(w.Turn, "converse-") })
				if !askedOnce && query[session.Progress](h, QueryProgress).ToolCalls >= tt.afterCalls {
					ask()
				}
				if askedOnce && answered.IsZero() && h.env.Now().Sub(asked) > time.Minute {
					t.Errorf("no answer a minute after the ask")
					if tt.suspended {
						h.mustUpdate(Resume, nil) // so that the session, and the test, end
					}
					return
				}
				h.at(time.Second, poll)
			}
			h.at(5*time.Second, poll)
			res := h.run(req)
			if res.State != session.Completed {
				t.Fatalf("result %+v", res)
			}
			if !askedOnce || answered.IsZero() {
				t.Fatalf("asked %v, answered %v", askedOnce, !answered.IsZero())
			}
			// Nothing waits: the answer takes its steps and calls, not a scientist's time.
			if took := answered.Sub(asked); took > time.Duration(2*tt.wantSteps)*time.Second || waitingConverse {
				t.Errorf("the answer took %s; a call of the converse turn waited: %v", took, waitingConverse)
			}
			if !strings.Contains(ans.Answer.Text, tt.wantText) {
				t.Errorf("answer %q; want %q in it", ans.Answer.Text, tt.wantText)
			}

			// Its steps: each a Converse activity on the turns queue, told its step.
			var steps []int
			h.mu.Lock()
			for _, s := range h.starts {
				if s.activity == "Converse" {
					steps = append(steps, s.converse.Loop.Step)
					if s.queue != TurnsQueue {
						t.Errorf("a converse step ran on %s", s.queue)
					}
				}
			}
			h.mu.Unlock()
			if len(steps) != tt.wantSteps || tt.wantSteps > 1 && steps[len(steps)-1] != tt.wantSteps {
				t.Errorf("converse steps %v; want %d", steps, tt.wantSteps)
			}

			// Its calls, in the session's history, as the research turns' are.
			var tools []string
			for _, ev := range h.history() {
				if ev.Kind == session.EventTool && ev.Turn == "converse-m-0001" {
					tools = append(tools, ev.Detail)
				}
			}
			if len(tools) != len(tt.wantTools) {
				t.Fatalf("the converse turn's tool events %q; want %q", tools, tt.wantTools)
			}
			for i, w := range tt.wantTools {
				if !strings.HasPrefix(tools[i], w) {
					t.Errorf("tool event %d %q; want it to start with %q", i, tools[i], w)
				}
			}
			p := query[session.Progress](h, QueryProgress)
			if tt.wantCalls >= 0 && p.ToolCalls != tt.wantCalls {
				t.Errorf("the session made %d tool calls; want %d", p.ToolCalls, tt.wantCalls)
			}
			if tt.config == nil && p.ToolCalls != 0 || served.Of("search")+served.Of("fetch") > p.ToolCalls {
				t.Errorf("the server answered %d calls; the session counted %d", served.Of("search")+served.Of("fetch"), p.ToolCalls)
			}

			// Its steps' records: what they were given, what they spent.
			ctx := t.Context()
			given := map[string]bool{} // the sources its own calls returned
			var spent research.Usage
			for _, k := range steps {
				id := "converse-m-0001"
				if k > 0 {
					id = activities.StepID(id, k)
				}
				rec, ok, err := h.store.Turn(ctx, res.SessionID, id)
				if err != nil || !ok {
					t.Fatalf("turn record %s: %v, %v", id, ok, err)
				}
				spent = spent.Add(rec.Usage)
				for _, g := range rec.Given {
					if g.Source != "" {
						given[g.Source] = true
					}
				}
			}

			// Its citations: of what its calls returned, and every one checked.
			m, err := h.store.Message(ctx, res.SessionID, "m-0002")
			if err != nil {
				t.Fatal(err)
			}
			var returned []string // the results its calls gave (a work its hypotheses cite may keep their record)
			for src := range given {
				rec, err := h.store.ToolRecord(ctx, res.SessionID, src)
				if err != nil {
					t.Fatal(err)
				}
				returned = append(returned, rec.Content)
			}
			var fromCalls int
			for i, r := range m.References {
				if slices.ContainsFunc(returned, func(content string) bool { return strings.Contains(content, r.ID) }) {
					fromCalls++
				}
				if i >= len(m.Citations) || m.Citations[i].Verdict != research.CitationVerified {
					t.Errorf("reference %s: its check %+v; want verified", r.ID, m.Citations)
				}
			}
			if (fromCalls > 0) != tt.wantCited || ans.References != len(m.References) || ans.Flagged != 0 {
				t.Errorf("the answer cites %d results of its calls of %d references (ask: %d, flagged %d); want some: %v", fromCalls, len(m.References), ans.References, ans.Flagged, tt.wantCited)
			}

			// Booked once, its steps' usage counted once.
			st := query[StateView](h, QueryState, Page{})
			i := slices.IndexFunc(st.Agents, func(a AgentStat) bool { return a.Agent == activities.AgentConverse })
			if i < 0 || st.Agents[i].Turns != 1 || st.Agents[i].Succeeded != 1 {
				t.Fatalf("agents %+v; want one converse turn, succeeded", st.Agents)
			}
			if got := st.Agents[i].Usage; got.PromptTokens != spent.PromptTokens || got.CompletionTokens != spent.CompletionTokens || spent.PromptTokens == 0 {
				t.Errorf("the converse agent spent %+v; its steps' records %+v", got, spent)
			}
		})
	}
}
