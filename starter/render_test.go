package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/vouch"
	"github.com/cosci-dev/cosci/workflows"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func render(t *testing.T, f func(w *bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func checkContains(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("output does not contain %q:\n%s", w, got)
		}
	}
}

var sampleEntries = []session.Entry{
	{ID: "h-0002", Title: "Metabolic rewiring limits survival under nutrient scarcity", Origin: "evolution", Strategy: "combination",
		Parents: []string{"h-0003", "h-0007"}, Cluster: 2, Elo: 1247.4, Wins: 3, Losses: 0, Reviews: 2, Score: 8.25},
	{ID: "h-0004", Title: "Persister cells | dormancy", Origin: "scientist", Elo: 1245, Wins: 4, Losses: 1, Reviews: 0},
}

func TestRenderStatus(t *testing.T) {
	got := render(t, func(w *bytes.Buffer) error {
		return renderStatus(w, workflows.Status{
			SessionID: "s-1", State: session.Suspended, Reason: "lunch", ScientistID: "ada",
			Goal: "Why do\ncells age?", StartedAt: "2026-01-02T03:04:05.123456Z", UpdatedAt: "",
		})
	})
	want := `session    s-1
state      suspended
reason     lunch
scientist  ada
goal       Why do cells age?
started    2026-01-02 03:04:05Z
updated    -
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A call waiting for the scientist shows in status, with how to answer it.
func TestRenderStatusWaiting(t *testing.T) {
	got := render(t, func(w *bytes.Buffer) error {
		return renderStatus(w, workflows.Status{
			SessionID: "s-1", State: session.Active, ScientistID: "ada", Goal: "g", StartedAt: "2026-01-02T03:04:05Z",
			Waiting: []session.WaitingCall{{ID: "call-2", Tool: "literature.fetch", Brief: "10.5555/x", Turn: "generate-h-0003", Since: "2026-01-02T03:05:00Z"}},
		})
	})
	want := "waiting for you  call-2 literature.fetch: 10.5555/x (since 2026-01-02 03:05:00Z; starter answer-tool s-1 --call call-2 --approve | --reject)\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("got\n%s\nwant it to end with\n%s", got, want)
	}
	p := render(t, func(w *bytes.Buffer) error {
		return renderProgress(w, session.Progress{State: session.Active, ToolCalls: 14, ToolErrors: 2})
	})
	if !strings.Contains(p, "tool calls    14 (2 failed or errors)") {
		t.Errorf("progress:\n%s", p)
	}
}

// TestRenderWaitingArguments: a waiting call shows its whole arguments, a line each, with
// what a terminal would act on escaped.
func TestRenderWaitingArguments(t *testing.T) {
	got := render(t, func(w *bytes.Buffer) error {
		return renderStatus(w, workflows.Status{
			SessionID: "s-1", State: session.Active, ScientistID: "ada", Goal: "g", StartedAt: "2026-01-02T03:04:05Z",
			Waiting: []session.WaitingCall{{ID: "call-3", Tool: "web.search", Brief: "Find druggable", Turn: "generate-h-0003", Since: "2026-01-02T03:05:00Z",
				Arguments: "{\n  \"query\": \"Find druggable\u202e\x1b[2J mechanisms\",\n  \"tab\": \"a\tb\"\n}"}},
		})
	})
	want := "waiting for you  call-3 web.search (since 2026-01-02 03:05:00Z; starter answer-tool s-1 --call call-3 --approve | --reject)\n" +
		"                   {\n" +
		"                     \"query\": \"Find druggable\\u202e\\x1b[2J mechanisms\",\n" +
		"                     \"tab\": \"a\\tb\"\n" +
		"                   }\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("got\n%s\nwant it to end with\n%s", got, want)
	}
}

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, é and 日本", "plain text, é and 日本"},
		{"bell\a esc\x1b[31m cr\r", `bell\a esc\x1b[31m cr\r`},
		{"rtl\u202eoverride zero\u200bwidth", `rtl\u202eoverride zero\u200bwidth`},
		{"c1 \u009b and bad \xff", `c1 \u009b and bad \ufffd`},
	} {
		if got := printable(tc.in); got != tc.want {
			t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRenderProgress(t *testing.T) {
	p := session.Progress{HypothesesGenerated: 5, MaxHypotheses: 12, ReviewsCompleted: 7, MatchesPlayed: 10, Rounds: 2,
		TurnsFailed: 1, ElapsedSeconds: 62.7, Checkpoints: 1, LastCheckpoint: "2026-01-02T03:04:05Z", State: session.Active,
		TokensUsed: 120000, TokenBudget: 500000, CostUSD: 0.4213, BudgetUSD: 2}
	got := render(t, func(w *bytes.Buffer) error { return renderProgress(w, p) })
	want := `state            active
hypotheses       5/12
reviews          7
matches          10
rounds           2
failed turns     1
cost             $0.42 of $2.00 (21%); 120,000 of 500,000 tokens
elapsed          1m3s
checkpoints      1
last checkpoint  2026-01-02 03:04:05Z
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestProgressDescription(t *testing.T) {
	agents := []workflows.AgentStat{{Agent: "generation", Turns: 12}, {Agent: "reflection", Turns: 24}, {Agent: "ranking", Turns: 30},
		{Agent: "evolution", Turns: 4}, {Agent: "meta-review", Turns: 2}, {Agent: "proximity", Turns: 0}, {Agent: "oracle", Turns: 1}}
	tests := []struct {
		p      session.Progress
		agents []workflows.AgentStat
		want   string
	}{
		{session.Progress{State: session.Active, ReviewsCompleted: 7, MatchesPlayed: 10, ElapsedSeconds: 62.2}, nil,
			"active · 7 reviews · 10 matches · 1m2s"},
		{session.Progress{State: session.Suspended, ElapsedSeconds: 0.4}, nil,
			"SUSPENDED (starter resume s-1) · 0 reviews · 0 matches · 0s"},
		{session.Progress{State: session.Active, ReviewsCompleted: 24, MatchesPlayed: 30, ElapsedSeconds: 5}, agents,
			"active · 24 reviews · 30 matches · 5s · gen 12 · rev 24 · rank 30 · evo 4 · meta 2 · prox 0 · oracle 1"},
		{session.Progress{State: session.Active, ElapsedSeconds: 5, CostUSD: 0.123}, nil,
			"active · 0 reviews · 0 matches · 5s · $0.12"},
		{session.Progress{State: session.Active, ElapsedSeconds: 5, CostUSD: 0.004, BudgetUSD: 2}, nil,
			"active · 0 reviews · 0 matches · 5s · $0.0040 of $2.00"},
	}
	for _, tt := range tests {
		if got := progressDescription("s-1", tt.p, tt.agents); got != tt.want {
			t.Errorf("progressDescription = %q, want %q", got, tt.want)
		}
	}
	if got, want := progressLine("s-1", session.Progress{HypothesesGenerated: 3, MaxHypotheses: 12, State: session.Active}, nil),
		"hypotheses 3/12 · active · 0 reviews · 0 matches · 0s"; got != want {
		t.Errorf("progressLine = %q, want %q", got, want)
	}
	if got, want := progressLine("s-1", session.Progress{HypothesesGenerated: 3, MaxHypotheses: 12, State: session.Active}, agents[:3]),
		"hypotheses 3/12 · active · 0 reviews · 0 matches · 0s · gen 12 · rev 24 · rank 30"; got != want {
		t.Errorf("progressLine = %q, want %q", got, want)
	}
}

func TestRenderState(t *testing.T) {
	v := workflows.StateView{
		SessionID: "s-1", State: session.Active, Goal: "Why do cells age?", ScientistID: "ada",
		Refinements: []session.Refinement{{Time: "2026-01-02T03:04:05Z", Focus: "persister cells"}},
		Config: research.Config{MaxHypotheses: 12, TimeLimit: research.Duration(2 * time.Hour), ReviewTypes: []string{"initial", "full"},
			SafetyLevel: "standard", Provider: "offline", Seed: 7},
		Hypotheses: sampleEntries, Total: 5, Offset: 2, Limit: 2,
		Agents: []workflows.AgentStat{{Agent: "generation", Turns: 6, Succeeded: 5, Failed: 1, Usage: research.Usage{PromptTokens: 9000, CompletionTokens: 3000, CostUSD: 0.0123}}},
		Usage:  research.Usage{PromptTokens: 100, CompletionTokens: 20, Requests: 3},
	}
	got := render(t, func(w *bytes.Buffer) error { return renderState(w, v) })
	checkContains(t, got,
		"session    s-1 (active)\n",
		"goal       Why do cells age?\n",
		"refined    2026-01-02 03:04:05Z  focus: persister cells\n",
		"config     max 12 hypotheses, time limit 2h0m0s, reviews initial+full, safety standard, provider offline, seed 7\n",
		"usage      100 prompt + 20 completion tokens in 3 requests\n",
		"AGENT       TURNS  OK  FAILED  TOKENS  COST\ngeneration  6      5   1       12,000  $0.012\n",
		"budget     120 tokens used; no budget (no cap)\n",
		"RANK  ID      ELO   W-L  SCORE  ORIGIN                 CLUSTER  LINEAGE           TITLE\n",
		"3     h-0002  1247  3-0  8.2    evolution/combination  2        ← h-0003, h-0007  Metabolic rewiring limits survival under nutrient scarcity\n",
		"4     h-0004  1245  4-1  -      scientist              -        -                 Persister cells | dormancy\n",
		"hypotheses 3-4 of 5; next page: --offset 4\n",
	)

	for _, unwanted := range []string{"plan ", "meta-review", "top 10", "stop reason", "excluded"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("state without %q says it:\n%s", unwanted, got)
		}
	}

	empty := render(t, func(w *bytes.Buffer) error { return renderState(w, workflows.StateView{SessionID: "s-2"}) })
	checkContains(t, empty, "no hypotheses yet")
}

func TestRenderStateCoScientist(t *testing.T) {
	entries := append(slices.Clone(sampleEntries),
		session.Entry{ID: "h-0005", Title: "Toxin design", Origin: "generation", Strategy: "debate", Elo: 1190, Excluded: "unsafe: safety score 1.0 below the floor 3.5"},
		session.Entry{ID: "h-0006", Title: "Dormancy again", Origin: "generation", Strategy: "literature", Cluster: 2, Elo: 1180, Excluded: "near-duplicate of h-0004"},
	)
	v := workflows.StateView{
		SessionID: "s-1", State: session.Suspended, Goal: "Why do cells age?", ScientistID: "ada",
		Config:     research.Config{MaxHypotheses: 12, SafetyLevel: "standard", Provider: "offline", TokenBudget: 500000},
		Hypotheses: entries, Total: 4, Limit: 50,
		Plan:        "Prefer mechanisms testable in yeast\nwithin a year.",
		MetaReview:  []string{"predictions are too vague", "ignores known persister literature"},
		TopShare:    map[string]int{"generation": 6, "evolution": 3, "scientist": 1},
		Usage:       research.Usage{PromptTokens: 400000, CompletionTokens: 100000, Requests: 90},
		TokenBudget: 500000,
		StopReason:  "token budget spent (500,000 tokens): raise it with set-budget, then resume",
	}
	got := render(t, func(w *bytes.Buffer) error { return renderState(w, v) })
	checkContains(t, got,
		"config       max 12 hypotheses, time limit none, reviews -, safety standard, provider offline, token budget 500,000, seed 0\n",
		"plan         Prefer mechanisms testable in yeast within a year.\n",
		"meta-review  - predictions are too vague\n             - ignores known persister literature\n",
		"top 10       generation 6 · evolution 3 · scientist 1\n",
		"usage        400000 prompt + 100000 completion tokens in 90 requests\n",
		"budget       500,000 of 500,000 tokens used (100%); 0 left\n",
		"stop reason  token budget spent (500,000 tokens): raise it with set-budget, then resume\n",
		"ORIGIN                 CLUSTER  LINEAGE           TITLE\n",
		"4     h-0006  1180  0-0  -      generation/literature  2        -                 [excluded] Dormancy again\n",
		"[excluded] Toxin design\n",
		"\nexcluded: h-0005 unsafe: safety score 1.0 below the floor 3.5\nexcluded: h-0006 near-duplicate of h-0004\n",
	)

	if got := topShareText(map[string]int{"scientist": 2, "zeta": 1, "alpha": 3}); got != "generation 0 · evolution 0 · scientist 2 · alpha 3 · zeta 1" {
		t.Errorf("topShareText = %q", got)
	}
	if got := budgetText(research.Usage{PromptTokens: 1000, CompletionTokens: 250}, 10000); got != "1,250 of 10,000 tokens used (12%); 8,750 left" {
		t.Errorf("budgetText = %q", got)
	}
}

// withActKey makes k the desk key the starter checks signatures with (nil: none) for the
// test.
func withActKey(t *testing.T, k *vouch.Key) {
	before := actKey
	actKey = func() *vouch.Key { return k }
	t.Cleanup(func() { actKey = before })
}

func TestRenderHistory(t *testing.T) {
	withActKey(t, nil)
	no, yes := false, true
	h := workflows.HistoryView{Total: 7, Offset: 0, Limit: 50, Events: []session.Event{
		{Seq: 1, Time: "2026-01-02T03:04:05Z", Kind: session.EventTransition, From: "initializing", To: "active", Command: "start", Detail: "session started"},
		{Seq: 2, Time: "2026-01-02T03:04:06Z", Kind: session.EventTurn, Turn: "generate-h-0001", Hypothesis: "h-0001", Detail: "generate hypothesis 1/6 (h-0001)"},
		{Seq: 3, Time: "2026-01-02T03:04:07Z", Kind: session.EventCommand, Command: "resume", Via: "signal", By: "root", Accepted: &no, Detail: "cannot resume: session is active"},
		{Seq: 4, Time: "2026-01-02T03:04:08Z", Kind: session.EventCommand, Command: "suspend", Via: "update", By: "ada", Signed: "v1.1.x", Accepted: &yes, Detail: "lunch"},
		{Seq: 5, Time: "2026-01-02T03:04:09Z", Kind: session.EventCheckpoint, Detail: "checkpoint 1 (requested) written"},
		{Seq: 6, Time: "2026-01-02T03:04:10Z", Kind: session.EventNote, Detail: "report written to r.md"},
		{Seq: 7, Time: "2026-01-02T03:04:11Z", Kind: session.EventTurn, Turn: "review-h-0001-full", Hypothesis: "h-0001"},
	}}
	got := render(t, func(w *bytes.Buffer) error { return renderHistory(w, h) })
	want := `1  2026-01-02 03:04:05Z  transition  initializing -> active (start): session started
2  2026-01-02 03:04:06Z  turn        generate hypothesis 1/6 (h-0001)
3  2026-01-02 03:04:07Z  command     resume via signal by root (not signed): REJECTED: cannot resume: session is active
4  2026-01-02 03:04:08Z  command     suspend via update by ada (signature not checked): lunch
5  2026-01-02 03:04:09Z  checkpoint  checkpoint 1 (requested) written
6  2026-01-02 03:04:10Z  note        report written to r.md
7  2026-01-02 03:04:11Z  turn        review-h-0001-full h-0001
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	h.Events, h.Offset, h.Total = h.Events[:2], 10, 40
	checkContains(t, render(t, func(w *bytes.Buffer) error { return renderHistory(w, h) }), "events 11-12 of 40; next page: --offset 12")
	checkContains(t, render(t, func(w *bytes.Buffer) error { return renderHistory(w, workflows.HistoryView{}) }), "no events yet")
	checkContains(t, render(t, func(w *bytes.Buffer) error {
		return renderHistory(w, workflows.HistoryView{Total: 3, Offset: 9})
	}), "no events at offset 9 (there are 3)")
	checkContains(t, render(t, func(w *bytes.Buffer) error {
		return renderHistory(w, workflows.HistoryView{Total: 13212, InStore: 12709, Limit: 50})
	}), "events 1-12709 are in the session store's events.jsonl on the worker's machine; the session keeps the later ones (--offset 12709)")
}

// TestHistoryChecksSignatures: with the desk's key, `starter history` shows a "by" as
// signed only when its signature checks for that very act; a made-up string, an old
// signature of the name alone, or another act's signature is "not signed"; without the
// key, a signature is "signature not checked", never taken as signed.
func TestHistoryChecksSignatures(t *testing.T) {
	secret := make([]byte, vouch.KeyLen)
	secret[0] = 7
	k, _ := vouch.NewKey(secret)
	at := time.Date(2026, 1, 2, 3, 4, 8, 0, time.UTC)
	feedback := session.Command{Name: "feedback", Toward: "microglia"}
	act := vouch.Act{Session: "s-1", Kind: "feedback", By: "ada", Payload: feedback.Digest(), Update: "desk-1"}
	sig := k.Sign(act, at)
	event := func(sig, update string) session.Event {
		yes := true
		return session.Event{Seq: 1, Time: at.Format(time.RFC3339), Kind: session.EventCommand, Command: "feedback", Via: "update",
			By: "ada", Signed: sig, Update: update, Digest: act.Payload, Accepted: &yes}
	}
	tests := []struct {
		name string
		key  *vouch.Key
		e    session.Event
		want string
	}{
		{"signed, checked", k, event(sig, "desk-1"), "feedback via update by ada\n"},
		{"a made-up string", k, event("x", "desk-1"), "by ada (not signed)"},
		{"a made-up string, no key", nil, event("x", "desk-1"), "by ada (signature not checked)"},
		{"the signature, no key", nil, event(sig, "desk-1"), "by ada (signature not checked)"},
		{"the signature on another update", k, event(sig, "desk-2"), "by ada (not signed)"},
		{"no signature", nil, event("", ""), "by ada (not signed)"},
	}
	for _, tt := range tests {
		withActKey(t, tt.key)
		got := render(t, func(w *bytes.Buffer) error {
			return renderHistory(w, workflows.HistoryView{SessionID: "s-1", Total: 1, Limit: 50, Events: []session.Event{tt.e}})
		})
		if want := tt.want; !strings.Contains(got, want) {
			t.Errorf("%s: %q lacks %q", tt.name, got, want)
		}
	}
	// A question in the conversation, the same.
	q := workflows.ConversationEntry{Message: session.Message{ID: "m-0001", Role: session.RoleScientist, By: "ada", Time: at.Format(time.RFC3339), Update: "desk-q"}, Text: "why?"}
	q.Signed = k.Sign(vouch.Act{Session: "s-1", Kind: vouch.Ask, By: "ada", Payload: session.TextDigest("why?"), Update: "desk-q"}, at)
	for _, tt := range []struct {
		name string
		key  *vouch.Key
		text string
		want string
	}{
		{"signed, checked", k, "why?", "m-0001 scientist (ada), "},
		{"an edited question", k, "why not?", "(ada, not signed)"},
		{"no key", nil, "why?", "(ada, signature not checked)"},
	} {
		withActKey(t, tt.key)
		e := q
		e.Text = tt.text
		var b bytes.Buffer
		printEntry(&b, "s-1", e)
		if !strings.Contains(b.String(), tt.want) {
			t.Errorf("%s: %q lacks %q", tt.name, b.String(), tt.want)
		}
	}
}

func TestRenderResult(t *testing.T) {
	r := workflows.Result{SessionID: "s-1", State: session.Completed, StopReason: "reached max_hypotheses (6)", Hypotheses: 6,
		Top: sampleEntries, ReportPath: "/data/s-1/report.md", Usage: research.Usage{PromptTokens: 1, CompletionTokens: 2, Requests: 3}}
	got := render(t, func(w *bytes.Buffer) error { return renderResult(w, r, "http://ui/namespaces/default/workflows/s-1") })
	checkContains(t, got,
		"session s-1 completed: reached max_hypotheses (6)\n6 hypotheses generated; the best 2:\n",
		"RANK  ID      ELO   W-L  ORIGIN                 TITLE\n1     h-0002  1247  3-0  evolution/combination  Metabolic rewiring",
		"2     h-0004  1245  4-1  scientist              Persister cells | dormancy\n",
		"report  /data/s-1/report.md\n",
		"web UI  http://ui/namespaces/default/workflows/s-1\n",
	)
	if strings.Contains(got, "SCORE") {
		t.Error("the result's ranking has no review score column")
	}
}

func TestRenderList(t *testing.T) {
	count, none, elo, cost := int64(6), int64(0), 1247.4, 0.4213
	rows := []listRow{
		{ID: "s-1", Status: "active", Hypotheses: &count, TopElo: &elo, CostUSD: &cost, Scientist: "ada", Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			Goal: "Find why some bacteria tolerate antibiotics without resistance genes, and which of them"},
		{ID: "s-2", Status: "initializing", Hypotheses: &none, TopElo: new(float64), Scientist: "anonymous"},
		{ID: "s-3", Status: "terminated"},
	}
	got := render(t, func(w *bytes.Buffer) error { return renderList(w, rows) })
	want := `SESSION  STATUS        HYPOTHESES  TOP ELO  COST   SCIENTIST  STARTED               GOAL
s-1      active        6           1247     $0.42  ada        2026-01-02 03:04:05Z  Find why some bacteria tolerate antibiotics without…
s-2      initializing  0           -        -      anonymous  -                     -
s-3      terminated    -           -        -      -          -                     -
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSessionStatus(t *testing.T) {
	tests := []struct {
		attr string
		s    enumspb.WorkflowExecutionStatus
		want string
	}{
		{"suspended", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "suspended"},
		{"", enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "running"},
		{"completed", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, "completed"},
		{"active", enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, "terminated"},
		{"active", enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, "timed-out"},
		{"", enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, "continued-as-new"},
	}
	for _, tt := range tests {
		if got := sessionStatus(tt.attr, tt.s); got != tt.want {
			t.Errorf("sessionStatus(%q, %v) = %q, want %q", tt.attr, tt.s, got, tt.want)
		}
	}
}

func TestWhen(t *testing.T) {
	if got := when("not a time"); got != "not a time" {
		t.Errorf("when = %q", got)
	}
	if got := when("2026-01-02T04:04:05+01:00"); got != "2026-01-02 03:04:05Z" {
		t.Errorf("when = %q", got)
	}
}

func TestLineDisplay(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d := &lineDisplay{w: &out, id: "s-1", now: func() time.Time { return now }}
	p := session.Progress{MaxHypotheses: 4, State: session.Active}
	step := func(dt time.Duration, change func()) {
		now = now.Add(dt)
		if change != nil {
			change()
		}
		d.show(p, nil)
	}
	step(0, nil)                                                     // printed: first
	step(500*time.Millisecond, func() { p.ElapsedSeconds = 0.5 })    // same but for time: not printed
	step(500*time.Millisecond, func() { p.HypothesesGenerated = 1 }) // changed, 1s later: printed
	step(500*time.Millisecond, func() { p.HypothesesGenerated = 2 }) // changed, too soon: not yet
	step(600*time.Millisecond, nil)                                  // 1.1s later: printed now
	step(2*time.Second, nil)                                         // nothing new
	d.note("no worker answering")
	d.note("no worker answering")
	now = now.Add(time.Second)
	d.finish("completed · done", 4)

	want := `hypotheses 0/4 · active · 0 reviews · 0 matches · 0s
hypotheses 1/4 · active · 0 reviews · 0 matches · 1s
hypotheses 2/4 · active · 0 reviews · 0 matches · 1s
no worker answering
hypotheses 4/4 · completed · done
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestUsageLineShowsCost(t *testing.T) {
	tests := []struct {
		u    research.Usage
		want string
	}{
		{research.Usage{PromptTokens: 100, CompletionTokens: 20, Requests: 3}, "100 prompt + 20 completion tokens in 3 requests"},
		{research.Usage{PromptTokens: 33901, CompletionTokens: 2780, Requests: 64, CostUSD: 0.00676}, "33901 prompt + 2780 completion tokens in 64 requests, about $0.0068"},
		{research.Usage{PromptTokens: 4000, CompletionTokens: 100, Requests: 2, CachedTokens: 3000, CacheWriteTokens: 500},
			"4000 prompt + 100 completion tokens in 2 requests (75% of the prompt from cache, 500 written to cache)"},
	}
	for _, tt := range tests {
		if got := usageText(tt.u); got != tt.want {
			t.Errorf("usageText(%+v) = %q, want %q", tt.u, got, tt.want)
		}
	}
}

// TestBatchWait: while a session waits for a provider batch, status, progress and watch
// say so: how many requests of what, which batch, since when.
func TestBatchWait(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	b := &session.BatchWait{What: "matches", Requests: 40, ID: "batch_abc", Submitted: "2026-11-25T11:48:00Z"}
	if got, want := batchText(b, now), "a batch of 40 matches (batch_abc), submitted 12 min ago"; got != want {
		t.Errorf("batchText = %q, want %q", got, want)
	}
	p := session.Progress{State: session.Active, Batch: b}
	if got := progressDescription("s-1", p, nil); !strings.Contains(got, "waiting for a batch of 40 matches") {
		t.Errorf("watch line %q", got)
	}
	out := render(t, func(w *bytes.Buffer) error { return renderProgress(w, p) })
	checkContains(t, out, "waiting for   a batch of 40 matches (batch_abc), submitted ")
	out = render(t, func(w *bytes.Buffer) error {
		return renderStatus(w, workflows.Status{SessionID: "s-1", State: session.Active, Batch: b})
	})
	checkContains(t, out, "waiting for  a batch of 40 matches (batch_abc), submitted ")
	for d, want := range map[time.Duration]string{30 * time.Second: "just now", 90 * time.Minute: "1.5 h ago", 72 * time.Hour: "3 days ago"} {
		if got := ago(d); got != want {
			t.Errorf("ago(%s) = %q, want %q", d, got, want)
		}
	}
}
