package activities

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/tools/toolstest"
)

// TestConverseToolSteps walks a converse turn that may call tools step by step, as the
// workflow does: a question about the literature asks for a search, then a fetch, then
// answers; the answer's references are tied to the tool results they quote and checked
// (verified), and the stored answer carries them. A question about the session answers at
// the first step, without a call.
func TestConverseToolSteps(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		wantCalls  []string // the tools asked for, step by step
		wantCited  bool
	}{
		{name: "literature", text: "What does the literature say about microglia?", wantCalls: []string{"literature.search", "literature.fetch"}, wantCited: true},
		{name: "the session", text: "What is the state of the session?"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var served toolstest.Calls
			env, a := newActivities(t, &simulator.Offline{})
			a.Tools = toolstest.NewBox(t, map[string]*mcp.Server{"literature": toolstest.Library(&served)})
			ctx := t.Context()
			in := ConverseInput{
				Turn:    Turn{SessionID: "s-1", TurnID: "converse-m-0001", Goal: testGoal, Provider: "offline", Seed: 1},
				Message: "m-0001", Text: tt.text, By: "ada", Time: "2026-11-27T12:00:00Z", Answer: "m-0002", State: "active",
			}
			loop := Loop{Tools: []string{"literature.search", "literature.fetch"}}
			var asked []string
			var out ConverseResult
			for step := 1; ; step++ {
				if step > 4 {
					t.Fatalf("no answer after %d steps", step-1)
				}
				loop.Step = step
				in.Loop = loop
				out = ConverseResult{}
				must(t, run(t, env, a.Converse, in, &out))
				if len(out.Calls) == 0 {
					break
				}
				loop.Given = nil
				for i, c := range out.Calls {
					asked = append(asked, c.Name)
					var res ToolCallResult
					must(t, run(t, env, a.CallTool, ToolCallInput{SessionID: "s-1", TurnID: in.TurnID, Step: step, Call: i}, &res))
					loop.Given = append(loop.Given, ToolOutcome{CallID: c.ID, Name: c.Name, Source: res.Source})
				}
			}
			if len(asked) != len(tt.wantCalls) || served.Of("search")+served.Of("fetch") != len(tt.wantCalls) {
				t.Fatalf("asked for %v (the server answered %d); want %v", asked, served.Of("search")+served.Of("fetch"), tt.wantCalls)
			}
			for i := range asked {
				if asked[i] != tt.wantCalls[i] {
					t.Fatalf("asked for %v; want %v", asked, tt.wantCalls)
				}
			}
			m, err := a.Store.Message(ctx, "s-1", "m-0002")
			if err != nil || m.Role != session.RoleSession || m.Text != out.Text || out.Answer != "m-0002" {
				t.Fatalf("stored answer %+v, %v; result %+v", m, err, out)
			}
			if got := len(m.References) > 0; got != tt.wantCited || out.References != len(m.References) || out.Flagged != 0 {
				t.Fatalf("the answer cites %d sources (result: %d, flagged %d); want some: %v (%q)", len(m.References), out.References, out.Flagged, tt.wantCited, m.Text)
			}
			for _, r := range m.References {
				rec, err := a.Store.ToolRecord(ctx, "s-1", r.Source)
				if err != nil || r.Title == "" {
					t.Errorf("reference %+v is not tied to a tool result with the library's details: %v", r, err)
					continue
				}
				if rec.Tool != "literature.search" && rec.Tool != "literature.fetch" {
					t.Errorf("reference %s quotes a record of %s", r.ID, rec.Tool)
				}
			}
			if len(m.Citations) != len(m.References) {
				t.Fatalf("%d citations checked of %d references", len(m.Citations), len(m.References))
			}
			for _, c := range m.Citations {
				if c.Verdict != research.CitationVerified {
					t.Errorf("citation %+v: want verified", c)
				}
			}
		})
	}
}
