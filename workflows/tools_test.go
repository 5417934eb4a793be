package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/tools"
	"github.com/cosci-dev/cosci/internal/tools/toolstest"
)

// literatureTools are the tools of the test library, as a session names them.
var literatureTools = []string{"literature.search", "literature.fetch"}

// grounded is a session request whose agents may search and fetch from the library.
func grounded(max int) research.Request {
	req := goal(max)
	req.Config.Tools = literatureTools
	req.Config.Seed = 3
	return req
}

// libraryHarness is a harness whose tools are the literature server over the test
// library, which counts its calls in calls.
func libraryHarness(t testing.TB, turn time.Duration, model activities.Model, calls *toolstest.Calls) *harness {
	t.Helper()
	box := toolstest.NewBox(t, map[string]*mcp.Server{"literature": toolstest.Library(calls)})
	h := newHarness(t, turn, model)
	h.acts.Tools = box
	return h
}

// activityCounts counts the activities a run started, by type, and keeps the tool calls'
// summaries.
type activityCounts struct {
	mu        sync.Mutex
	started   map[string]int
	completed map[string]int
}

func countActivities(h *harness) *activityCounts {
	c := &activityCounts{started: map[string]int{}, completed: map[string]int{}}
	h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		c.mu.Lock()
		c.started[info.ActivityType.Name]++
		c.mu.Unlock()
	})
	h.env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, err error) {
		if err == nil {
			c.mu.Lock()
			c.completed[info.ActivityType.Name]++
			c.mu.Unlock()
		}
	})
	return c
}

// TestGroundedSession: the agents search and fetch through MCP, every tool call is an
// activity, each hypothesis' references come from what the tools returned, and the
// references the simulator made up are caught by reflection while the genuine ones pass.
func TestGroundedSession(t *testing.T) {
	var calls toolstest.Calls
	model := &simulator.Offline{Fabricate: 0.3}
	h := libraryHarness(t, 0, model, &calls)
	counts := countActivities(h)
	res := h.run(grounded(12))
	if res.State != session.Completed || res.Hypotheses != 12 {
		t.Fatalf("result %+v", res)
	}

	// Every call the server answered was one CallTool activity, and the session counted it.
	p := query[session.Progress](h, QueryProgress)
	served := calls.Of("search") + calls.Of("fetch")
	if served == 0 || counts.completed["CallTool"] != served || p.ToolCalls != served {
		t.Errorf("the server answered %d calls; %d CallTool activities completed; the session counted %d", served, counts.completed["CallTool"], p.ToolCalls)
	}
	if calls.Of("fetch") == 0 {
		t.Errorf("no fetch: the agents searched (%d) but read nothing whole", calls.Of("search"))
	}

	// Each hypothesis' references: a genuine one names the tool result it came from and
	// carries the library's details; an invented one names none.
	ctx := t.Context()
	var ids []string
	for _, e := range query[StateView](h, QueryState, Page{Limit: 50}).Hypotheses {
		ids = append(ids, e.ID)
	}
	hs, err := h.store.Hypotheses(ctx, res.SessionID, ids)
	if err != nil {
		t.Fatal(err)
	}
	var grounded, genuine, fabricated, caught, wronglyFlagged int
	for _, id := range ids {
		hyp := hs[id]
		if len(hyp.References) == 0 {
			continue
		}
		grounded++
		reviews, err := h.store.Reviews(ctx, res.SessionID, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range hyp.References {
			flagged := false
			for _, r := range reviews {
				for _, c := range r.Citations {
					if c.ID == ref.ID && c.Verdict != research.CitationVerified {
						flagged = true
					}
				}
			}
			if kind, _ := model.Planted().Hypothesis(hyp, ref); !simulator.Honest(kind) {
				fabricated++
				if flagged {
					caught++
				}
				continue
			}
			genuine++
			if flagged {
				wronglyFlagged++
			}
			if ref.Source == "" || ref.Title == "" || ref.Year == 0 {
				t.Errorf("%s cites %s without the library's details: %+v", id, ref.ID, ref)
			}
			rec, err := h.store.ToolRecord(ctx, res.SessionID, ref.Source)
			if err != nil || !strings.Contains(rec.Content, ref.ID) || !strings.HasPrefix(rec.Tool, "literature.") {
				t.Errorf("%s's source %s: %+v, %v", id, ref.Source, rec, err)
			}
		}
	}
	if grounded == 0 || genuine == 0 || fabricated == 0 {
		t.Fatalf("grounded hypotheses %d, genuine references %d, made-up ones %d: want some of each", grounded, genuine, fabricated)
	}
	if caught != fabricated || wronglyFlagged != 0 {
		t.Errorf("the check caught %d of %d made-up references and flagged %d of %d genuine ones", caught, fabricated, wronglyFlagged, genuine)
	}

	// The history reads like the notebook: each call with what it found.
	var found bool
	for _, ev := range h.history() {
		if ev.Kind == session.EventTool && strings.HasPrefix(ev.Detail, "search literature: ") && strings.HasSuffix(ev.Detail, " results)") {
			found = true
		}
	}
	if !found {
		t.Error("no tool event reads like \"search literature: ... (N results)\"")
	}
}

// TestToolBudgets: a turn makes at most its calls and then answers; once the session's
// calls are spent, the agents go on without tools.
func TestToolBudgets(t *testing.T) {
	var calls toolstest.Calls
	h := libraryHarness(t, 0, &simulator.Offline{}, &calls)
	counts := countActivities(h)
	req := grounded(12)
	req.Config.ToolCallsPerTurn = 1
	req.Config.ToolCallsPerSession = 5
	res := h.run(req)
	if res.State != session.Completed || res.Hypotheses != 12 {
		t.Fatalf("result %+v", res)
	}
	p := query[session.Progress](h, QueryProgress)
	if p.ToolCalls != 5 || calls.Of("search")+calls.Of("fetch") != 5 || counts.completed["CallTool"] != 5 {
		t.Errorf("tool calls: the session counted %d, the server answered %d, activities %d; want the session's 5", p.ToolCalls, calls.Of("search")+calls.Of("fetch"), counts.completed["CallTool"])
	}
	// With one call a turn, no turn made two.
	var spent bool
	perTurn := map[string]int{}
	for _, ev := range h.history() {
		spent = spent || strings.Contains(ev.Detail, "tool budget is spent (5 calls)")
		if ev.Kind == session.EventTool {
			if perTurn[ev.Turn]++; perTurn[ev.Turn] > 1 {
				t.Errorf("turn %s made %d calls with one call a turn", ev.Turn, perTurn[ev.Turn])
			}
		}
	}
	if !spent {
		t.Error("the history does not say the session's tool budget was spent")
	}
}

// failingBox is a toolbox whose calls fail (a server that is down), or hang until their
// context ends (a server that does not answer).
type failingBox struct {
	activities.Toolbox
	hang  bool
	mu    sync.Mutex
	calls int
}

func (f *failingBox) Call(ctx context.Context, name string, args json.RawMessage) (tools.Outcome, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if f.hang {
		// As tools.Box does for a server that does not answer within its timeout.
		ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		<-ctx.Done()
		return tools.Outcome{}, fmt.Errorf("tool %s did not answer within 20ms: %w", name, ctx.Err())
	}
	return tools.Outcome{}, errors.New("connection refused")
}

// TestFailingTools: a tool that fails or never answers is retried by Temporal, then handed
// to the model as a tool error; the session completes all the same.
func TestFailingTools(t *testing.T) {
	for _, hang := range []bool{false, true} {
		t.Run(fmt.Sprintf("hang=%v", hang), func(t *testing.T) {
			box := &failingBox{Toolbox: toolstest.NewBox(t, map[string]*mcp.Server{"literature": toolstest.Library(nil)}).Box, hang: hang}
			h := newHarness(t, 0, &simulator.Offline{})
			h.acts.Tools = box
			res := h.run(grounded(6))
			if res.State != session.Completed || res.Hypotheses != 6 {
				t.Fatalf("result %+v", res)
			}
			p := query[session.Progress](h, QueryProgress)
			if p.ToolCalls == 0 || p.ToolErrors != p.ToolCalls || p.TurnsFailed != 0 {
				t.Errorf("progress %+v: want every call failed and no turn failed", p)
			}
			if box.calls != 3*p.ToolCalls {
				t.Errorf("%d attempts for %d calls; want 3 each (Temporal's retries)", box.calls, p.ToolCalls)
			}
			var failed bool
			for _, ev := range h.history() {
				failed = failed || (ev.Kind == session.EventTool && strings.Contains(ev.Detail, "failed"))
			}
			if !failed {
				t.Error("no failed call in the history")
			}
		})
	}
}

// TestUnknownToolRefusedAtStart: a tool the workers do not offer fails the session at its
// start, naming it, before any model turn.
func TestUnknownToolRefusedAtStart(t *testing.T) {
	for _, tt := range []struct{ tool, want string }{
		{"literature.serch", `"literature.serch" is not a tool the workers offer; they offer literature.fetch, literature.search`},
		{"europepmc.search", `the workers have no tool server "europepmc"`},
		{"pubmed.search", `tool server "pubmed" does not answer`},
	} {
		h := newHarness(t, 0, &simulator.Offline{})
		h.acts.Tools = toolstest.NewBox(t, map[string]*mcp.Server{"literature": toolstest.Library(nil)}, "pubmed")
		counts := countActivities(h)
		req := grounded(4)
		req.Config.Tools = []string{tt.tool}
		h.env.ExecuteWorkflow(ResearchSession, req, (*Carried)(nil))
		err := h.env.GetWorkflowError()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one saying %q", tt.tool, err, tt.want)
		}
		if n := counts.started["Plan"] + counts.started["Generate"]; n != 0 {
			t.Errorf("%s: %d model turns ran for a session refused at start", tt.tool, n)
		}
	}
}

// TestToolApproval: a call of a tool that needs approval waits for the scientist, who
// approves one, refuses one and gives the result of another; status and progress show
// what waits and since when; the rest of the session carries on meanwhile.
func TestToolApproval(t *testing.T) {
	var calls toolstest.Calls
	h := libraryHarness(t, time.Second, &simulator.Offline{}, &calls)
	req := grounded(8)
	req.Config.ApproveTools = []string{"literature.fetch"}
	decisions := []map[string]any{
		{"decision": "approve"},
		{"decision": "reject", "reason": "paywalled"},
		{"result": "The scientist's notes: microglia carry tau in exosomes."},
	}
	const patience = 20 * time.Second // how long the scientist takes to answer
	var (
		answered int
		moved    bool                  // other work went on while a call waited
		work     = map[string]int{}    // a waiting call's id -> the session's work when it was first seen
		answers  = map[string]string{} // a call's id -> the decision given
	)
	done := func(p session.Progress) int { return p.HypothesesGenerated + p.ReviewsCompleted + p.MatchesPlayed }
	var poll func()
	poll = func() {
		if h.env.IsWorkflowCompleted() {
			return
		}
		st := query[Status](h, QueryStatus)
		p := query[session.Progress](h, QueryProgress)
		if len(st.Waiting) != len(p.Waiting) {
			t.Errorf("status shows %d waiting calls, progress %d", len(st.Waiting), len(p.Waiting))
		}
		for _, w := range st.Waiting {
			if w.Tool != "literature.fetch" || w.Turn == "" || !strings.HasPrefix(w.ID, "call-") {
				t.Errorf("waiting call %+v", w)
			}
			// The scientist sees the whole call: its arguments, indented.
			if !strings.HasPrefix(w.Arguments, "{\n  \"id\": \"") || !strings.Contains(w.Arguments, w.Brief) {
				t.Errorf("waiting call %s shows arguments %q (brief %q)", w.ID, w.Arguments, w.Brief)
			}
			since, err := time.Parse(time.RFC3339Nano, w.Since)
			if err != nil {
				t.Fatalf("since %q: %v", w.Since, err)
			}
			if _, seen := work[w.ID]; !seen {
				work[w.ID] = done(p)
			}
			if _, sent := answers[w.ID]; sent || h.env.Now().Sub(since) < patience {
				continue
			}
			moved = moved || done(p) > work[w.ID]
			arg := map[string]any{"call": w.ID}
			for k, v := range decisions[answered%len(decisions)] {
				arg[k] = v
			}
			answers[w.ID] = fmt.Sprint(arg)
			answered++
			h.mustUpdate(AnswerTool, arg)
		}
		h.at(2*time.Second, poll)
	}
	h.at(2*time.Second, poll)
	res := h.run(req)
	if res.State != session.Completed {
		t.Fatalf("result %+v", res)
	}
	if answered < 3 {
		t.Fatalf("answered %d waiting calls; want at least 3", answered)
	}
	if !moved {
		t.Error("nothing else happened while the calls waited")
	}
	if calls.Of("fetch") == 0 || calls.Of("fetch") >= answered {
		t.Errorf("%d fetches made for %d answers of which a third approved", calls.Of("fetch"), answered)
	}
	// Refused calls were not made; the scientist's result is in the audit trail as theirs.
	var refused, supplied bool
	for _, ev := range h.history() {
		refused = refused || strings.Contains(ev.Detail, "refused: paywalled")
		supplied = supplied || strings.Contains(ev.Detail, "(the scientist's result)")
	}
	if !refused || !supplied {
		t.Errorf("history: refused %v, the scientist's result %v", refused, supplied)
	}
}

// TestAnswerWithoutWaitingCall: an answer to a call that is not waiting is refused, and
// says so; a malformed answer is refused before it reaches the session.
func TestAnswerWithoutWaitingCall(t *testing.T) {
	h := newHarness(t, time.Second, &simulator.Offline{})
	h.at(3*time.Second, func() {
		h.update(AnswerTool, map[string]any{"call": "call-9", "decision": "approve"}, func(_ Status, err error) {
			if err == nil || !strings.Contains(err.Error(), `cannot answer "call-9": no tool call is waiting`) {
				t.Errorf("answer to no call: %v", err)
			}
		})
		h.update(AnswerTool, map[string]any{"call": "call-9", "decision": "maybe"}, func(_ Status, err error) {
			if err == nil || !strings.Contains(err.Error(), `decision "maybe" is not one of approve, reject, result`) {
				t.Errorf("a bad decision: %v", err)
			}
		})
	})
	if res := h.run(goal(4)); res.State != session.Completed {
		t.Fatalf("result %+v", res)
	}
}

// TestTrustTool: trusting a tool for the session approves its waiting calls and lets its
// next ones run without waiting; untrusting makes them wait again; both are recorded with
// who sent them, and refused when they would change nothing.
func TestTrustTool(t *testing.T) {
	var calls toolstest.Calls
	h := libraryHarness(t, time.Second, &simulator.Offline{}, &calls)
	req := grounded(24)
	req.Config.ApproveTools = []string{"literature.fetch"}
	var trustedAt, untrustedAt time.Time
	var waitedWhileTrusted, waitedAfter bool
	var refusals []string
	var trusted []session.Trust
	var poll func()
	poll = func() {
		if h.env.IsWorkflowCompleted() {
			return
		}
		st := query[Status](h, QueryStatus)
		now := h.env.Now()
		switch {
		case trustedAt.IsZero() && len(st.Waiting) > 0:
			for _, bad := range []map[string]any{{"tool": "literature.search"}, {"tool": "nowhere.fetch"}, {"tool": "literature.*"}} {
				h.update(TrustTool, bad, func(_ Status, err error) {
					if err == nil {
						t.Errorf("trust-tool %v was accepted", bad)
					} else {
						refusals = append(refusals, err.Error())
					}
				})
			}
			h.updateAs(TrustTool, "desk-t", map[string]any{"tool": "literature.fetch", "by": "ada", "by_sig": "v1.1.x"}, func(s Status, err error) {
				if err != nil {
					t.Fatalf("trust-tool: %v", err)
				}
				trusted = slices.Clone(s.Trusted)
			})
			trustedAt = now
		case !trustedAt.IsZero() && untrustedAt.IsZero() && len(st.Waiting) > 0:
			waitedWhileTrusted = true
		case !trustedAt.IsZero() && untrustedAt.IsZero() && now.Sub(trustedAt) > 5*time.Second:
			h.mustUpdate(UntrustTool, map[string]any{"tool": "literature.fetch", "by": "ada"})
			untrustedAt = now
		case !untrustedAt.IsZero() && len(st.Waiting) > 0:
			waitedAfter = true
			for _, w := range st.Waiting {
				h.mustUpdate(AnswerTool, map[string]any{"call": w.ID, "decision": "approve"})
			}
		}
		h.at(time.Second, poll)
	}
	h.at(time.Second, poll)
	res := h.run(req)
	if res.State != session.Completed || trustedAt.IsZero() || untrustedAt.IsZero() {
		t.Fatalf("result %s; trusted at %v, untrusted at %v", res.State, trustedAt, untrustedAt)
	}
	if len(trusted) != 1 || trusted[0].Tool != "literature.fetch" || trusted[0].By != "ada" {
		t.Errorf("status after trust-tool: trusted %+v", trusted)
	}
	// The line "trusted by ada" is checked against what the desk signed: the signature, the
	// update that carried the command, and the digest of the command.
	if want := (session.Command{Name: TrustTool, Tool: "literature.fetch"}).Digest(); len(trusted) == 1 &&
		(trusted[0].Signed != "v1.1.x" || trusted[0].Update != "desk-t" || trusted[0].Digest != want) {
		t.Errorf("the trusted tool records signed %q, update %q, digest %q; want v1.1.x, desk-t, %s", trusted[0].Signed, trusted[0].Update, trusted[0].Digest, want)
	}
	if waitedWhileTrusted {
		t.Error("a call of the trusted tool waited for approval")
	}
	if !waitedAfter {
		t.Error("no call waited after untrust-tool")
	}
	if len(refusals) != 3 || !strings.Contains(refusals[0], "do not wait for approval") || !strings.Contains(refusals[1], "not among the session's tools") {
		t.Errorf("refusals %q", refusals)
	}
	var trustEvent bool
	for _, ev := range h.history() {
		if ev.Kind == session.EventCommand && ev.Command == TrustTool && ev.Accepted != nil && *ev.Accepted {
			trustEvent = ev.By == "ada" && ev.Signed == "v1.1.x" && regexp.MustCompile(`\(\d+ waiting approved\)`).MatchString(ev.Detail) && !strings.Contains(ev.Detail, "(0 waiting")
		}
	}
	if !trustEvent {
		t.Error("the history has no trust-tool by ada, signed, saying it approved the call that waited")
	}
	if calls.Of("fetch") == 0 {
		t.Error("no fetch was made")
	}
}
