package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/internal/tools/toolstest"
)

// reportSays fails unless the session's report.md holds line.
func reportSays(t *testing.T, res Result, line string) {
	t.Helper()
	report, err := os.ReadFile(res.ReportPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), line) {
		i := strings.Index(string(report), "- **Hypotheses:**")
		t.Errorf("the report has no %q; it says %q", line, strings.SplitN(string(report[max(i, 0):]), "\n", 2)[0])
	}
}

// TestMaxHypothesesHoldsWithSubagents is the run a new user tried (issue #21): at most 20
// hypotheses, seed 4, 150 ms a turn. The offline meta-review delegates an evolution line
// whose winner comes in as round 5 begins; the round had planned its 4 from the 16 made
// before taking it in, and the session finished with 21, "21 of at most 20". Seed 6 does
// the same. Now a round plans what is left once the subagents' hypotheses are in.
func TestMaxHypothesesHoldsWithSubagents(t *testing.T) {
	for _, seed := range []int64{4, 6} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			h := newHarness(t, 150*time.Millisecond, nil)
			res := h.run(research.Request{
				ResearchGoal: "Find why some bacteria tolerate antibiotics without resistance genes",
				Config:       research.Config{MaxHypotheses: 20, Seed: seed},
			})
			st := query[StateView](h, QueryState, Page{Limit: MaxPageLimit})
			if !slices.ContainsFunc(st.Hypotheses, func(e session.Entry) bool { return e.Origin == "subagent" }) {
				t.Fatal("no subagent's hypothesis came in: the run no longer takes the path under test")
			}
			if res.Hypotheses != 20 || res.StopReason != "reached max_hypotheses (20)" {
				t.Errorf("finished with %d hypotheses (%s); want exactly 20", res.Hypotheses, res.StopReason)
			}
			p := query[session.Progress](h, QueryProgress)
			if p.Counted != 20 || p.HypothesesText() != "20/20" {
				t.Errorf("progress: %d counted, %q; want 20/20", p.Counted, p.HypothesesText())
			}
			reportSays(t, res, "- **Hypotheses:** 20 of at most 20")
		})
	}
}

// TestScientistsHypothesesDoNotCount: the scientist's own hypothesis does not count
// against max_hypotheses (the agents still make all 12), and progress and the report say
// what counted instead of claiming the limit was broken.
func TestScientistsHypothesesDoNotCount(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	h.at(2*time.Second, func() {
		h.mustUpdate(AddHypothesis, map[string]any{"title": "Microglial pruning spreads tau", "statement": "Microglia carry tau between synapses.",
			"testable_predictions": []string{"Depleting microglia slows spread"}})
	})
	res := h.run(goal(12))
	if res.Hypotheses != 13 {
		t.Fatalf("%d hypotheses; want the agents' 12 and the scientist's", res.Hypotheses)
	}
	p := query[session.Progress](h, QueryProgress)
	if want := "13 (12/12 by the agents, 1 by the scientist)"; p.HypothesesText() != want {
		t.Errorf("progress says %q; want %q", p.HypothesesText(), want)
	}
	reportSays(t, res, "- **Hypotheses:** 13 (12 of at most 12 by the agents, 1 added by the scientist)")
}

// TestMaxHypothesesHoldsWithLateTurns: a generation or evolution turn whose tool call
// waits for the scientist outlives its round, and its hypothesis comes in late. It holds
// its place under max_hypotheses meanwhile, so later rounds plan around it, and once only
// such turns are missing the session waits for them instead of planning more.
func TestMaxHypothesesHoldsWithLateTurns(t *testing.T) {
	var calls toolstest.Calls
	h := libraryHarness(t, time.Second, &simulator.Offline{}, &calls)
	req := grounded(6)
	req.Config.ApproveTools = []string{"literature.fetch"}
	const patience = 3 * time.Minute // the scientist answers long after the round moved on
	var (
		since   = map[string]int{} // a waiting call of a generation or evolution turn -> the round when first seen
		crossed bool               // such a call waited while a round ended
		over    []string
	)
	var poll func()
	poll = func() {
		if h.env.IsWorkflowCompleted() {
			return
		}
		p := query[session.Progress](h, QueryProgress)
		if counted, _, _ := p.Counts(); counted > p.MaxHypotheses {
			over = append(over, p.HypothesesText())
		}
		for _, w := range p.Waiting {
			if !strings.HasPrefix(w.Turn, "generate-") && !strings.HasPrefix(w.Turn, "evolve-") {
				h.mustUpdate(AnswerTool, map[string]any{"call": w.ID, "decision": "approve"})
				continue
			}
			r, seen := since[w.ID]
			if !seen {
				since[w.ID] = p.Rounds
			}
			crossed = crossed || p.Rounds > r && seen
			at, err := time.Parse(time.RFC3339Nano, w.Since)
			if err != nil {
				t.Fatal(err)
			}
			if h.env.Now().Sub(at) >= patience {
				h.mustUpdate(AnswerTool, map[string]any{"call": w.ID, "decision": "approve"})
			}
		}
		h.at(2*time.Second, poll)
	}
	h.at(2*time.Second, poll)
	res := h.run(req)
	if !crossed {
		t.Fatalf("no generation or evolution call waited across a round (%d waited): the run no longer takes the path under test", len(since))
	}
	if res.Hypotheses != 6 || len(over) > 0 {
		t.Errorf("finished with %d hypotheses (%s), over the limit while running: %v; want exactly 6", res.Hypotheses, res.StopReason, over)
	}
	// The late ones got a round of their own: reviewed and ranked like the others.
	for _, e := range query[StateView](h, QueryState, Page{Limit: MaxPageLimit}).Hypotheses {
		if e.Excluded == "" && (e.Reviews == 0 || e.Wins+e.Losses == 0) {
			t.Errorf("%s was not reviewed and ranked: %+v", e.ID, e)
		}
	}
}

// TestNoEvolutionLineOnceFull: a line a subagent would explore once the session has its
// max_hypotheses could never bring its hypothesis in, so none is forked (with 12, the
// offline meta-review of round 3 asks for one as the session fills up).
func TestNoEvolutionLineOnceFull(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	res := h.run(goal(12))
	events, err := h.store.Events(t.Context(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	skipped := false
	for _, e := range events {
		skipped = skipped || strings.HasPrefix(e.Detail, "no evolution line from ")
		if strings.Contains(e.Detail, "stays in") || e.Kind == session.EventSubagent && strings.Contains(e.Detail, " to evolve ") {
			t.Errorf("a line was forked that could not come in: %s", e.Detail)
		}
	}
	if !skipped {
		t.Error("the meta-review asked for no line once the session was full: the run no longer takes the path under test")
	}
}

// TestForkClearsTheParentsTokenBudget: a fork whose request gives "token_budget": 0 over a
// parent that had a budget runs without one, as `temporal workflow start --input` and
// `starter fork --token-budget 0` ask; a fork that gives none keeps the parent's, and
// suspends when it is spent.
func TestForkClearsTheParentsTokenBudget(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const budget = 40_000
	parent := newHarnessOn(t, st, time.Second, nil)
	parent.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "tau"})
	req := goal(4)
	req.Config.TokenBudget = budget
	if res := parent.run(req); res.State != session.Completed || res.Usage.PromptTokens+res.Usage.CompletionTokens >= budget {
		t.Fatalf("parent: %s with %d tokens; want it completed within its budget of %d", res.State, res.Usage.PromptTokens+res.Usage.CompletionTokens, budget)
	}

	fork := func(id, config string) (*harness, research.Request) {
		var r research.Request
		in := `{"config": ` + config + `, "lineage": {"parent_session_id": "tau", "relation": "fork"}}`
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			t.Fatal(err)
		}
		h := newHarnessOn(t, st, time.Second, nil)
		h.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
		return h, r
	}

	// run runs a fork to its end; one that suspends is terminated, and its reason returned.
	run := func(h *harness, r research.Request) (Result, string) {
		suspended := ""
		var watch func()
		watch = func() {
			if s := query[Status](h, QueryStatus); s.State == session.Suspended {
				suspended = s.Reason
				h.env.SignalWorkflow(Terminate, map[string]string{"reason": "suspended"})
				return
			}
			h.at(10*time.Second, watch)
		}
		h.at(10*time.Second, watch)
		return h.run(r), suspended
	}

	free, r := fork("tau-fork-00000001", `{"max_hypotheses": 16, "token_budget": 0}`)
	res, suspended := run(free, r)
	used := res.Usage.PromptTokens + res.Usage.CompletionTokens
	if suspended != "" || res.StopReason != "reached max_hypotheses (16)" || used <= budget {
		t.Errorf("fork with token_budget 0: suspended %q, ended %q with %d tokens; want it to pass the parent's %d and finish", suspended, res.StopReason, used, budget)
	}
	if c := query[StateView](free, QueryState, Page{Limit: 1}).Config; c.TokenBudget != 0 || c.MaxHypotheses != 16 {
		t.Errorf("fork's config: token budget %d, max %d; want 0 and 16", c.TokenBudget, c.MaxHypotheses)
	}

	// The same fork without the key inherits the budget.
	kept, r := fork("tau-fork-00000002", `{"max_hypotheses": 16}`)
	if _, suspended := run(kept, r); !strings.HasPrefix(suspended, "token budget reached") || !strings.Contains(suspended, fmt.Sprintf("of %d tokens", budget)) {
		t.Errorf("the fork that gave no budget: suspended %q; want the parent's budget of %d reached", suspended, budget)
	}
}
