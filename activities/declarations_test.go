package activities

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/analysis"
	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/doccheck"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// designDoc is docs/design.md's section on adding an agent.
func designDoc(t *testing.T) string {
	t.Helper()
	doc := doccheck.Files(t, "..")["docs/design.md"]
	_, section, ok := strings.Cut(doc, "\n## Adding an agent\n")
	if !ok {
		t.Fatal(`docs/design.md has no section "## Adding an agent"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}

// simulated are a request of each agent, for the offline simulator to answer. A new agent
// adds one.
var simulated = func() map[string]any {
	a := research.Hypothesis{ID: "h-0001", Title: "Tau spreads along synapses", Statement: "Blocking LRP1 slows tau spread."}
	b := research.Hypothesis{ID: "h-0002", Title: "Microglia carry tau", Statement: "Depleting microglia slows tau spread."}
	return map[string]any{
		"Plan":       research.PlanRequest{TurnID: "t-plan", Goal: testGoal, Seed: 7},
		"Generate":   research.GenerateRequest{TurnID: "t-gen", HypothesisID: "h-0003", Goal: testGoal, Strategy: "literature_exploration", Seed: 7},
		"Review":     research.ReviewRequest{TurnID: "t-rev", Goal: testGoal, Type: research.ReviewFull, Hypothesis: a, Seed: 7},
		"Compare":    research.CompareRequest{TurnID: "t-cmp", Goal: testGoal, A: a, B: b, Seed: 7},
		"Debate":     research.DebateRequest{TurnID: "t-deb", Goal: testGoal, A: a, B: b, Turn: 3, Turns: 3, Seed: 7},
		"Evolve":     research.EvolveRequest{TurnID: "t-evo", HypothesisID: "h-0003", Goal: testGoal, Kind: research.EvolutionKinds[0], Parents: []research.Hypothesis{a}, Seed: 7},
		"MetaReview": research.MetaReviewRequest{TurnID: "t-meta", Goal: testGoal, Round: 1, Seed: 7},
		"Overview":   research.OverviewRequest{TurnID: "t-ov", Goal: testGoal, Top: []research.Hypothesis{a, b}, Seed: 7},
		"Converse":   research.ConverseRequest{TurnID: "t-conv", Goal: testGoal, Message: "What is the best hypothesis?", State: "active", Top: []research.Ranked{{Rank: 1, Hypothesis: a, Elo: 1250}}, Seed: 7},
		"ProposeAnalysis": research.AnalysisRequest{TurnID: "t-an", Goal: testGoal, Hypothesis: a, Menu: analysis.Menu(), Conventions: analysis.Conventions, Seed: 7,
			Datasets: []research.AnalysisDataset{{Table: "result", Name: "lab.csv", Preview: [][]string{{"S001", "control", "41.5"}, {"S002", "treated", "52.0"}},
				Schema: dataset.Schema{Format: "csv", Rows: 2, Columns: []dataset.Column{{Name: "sample_id", Type: "VARCHAR"}, {Name: "arm", Type: "VARCHAR"}, {Name: "response", Type: "DOUBLE"}}}}}},
	}
}()

// TestEveryAgentIsDeclared checks each agent's declaration: that it names its activity
// and a metrics label, has a prompt and a model call (which parses the answer), that the
// offline simulator answers it through that call, and that docs/design.md lists it. It
// also checks that every activity that takes a turn is a declared agent, so none
// runs past the declarations.
func TestEveryAgentIsDeclared(t *testing.T) {
	doc := designDoc(t)
	label := regexp.MustCompile(`^[a-z][a-z-]*$`) // a low-cardinality metrics label
	declaredActivities := map[string]bool{}
	for _, ag := range agents {
		activity, lbl := ag.names()
		declaredActivities[activity] = true
		t.Run(activity, func(t *testing.T) {
			if m := ag.missing(); m != "" {
				t.Fatalf("the agent is declared without %s", m)
			}
			if !label.MatchString(lbl) {
				t.Errorf("metrics label %q is not a lower-case word (the metrics' agent label)", lbl)
			}
			if _, ok := reflect.TypeFor[*Activities]().MethodByName(activity); !ok {
				t.Errorf("Activities has no method %s, which the declaration names", activity)
			}
			req, ok := simulated[activity]
			if !ok {
				t.Fatalf("no request of %s for the offline simulator to answer: add one to simulated", activity)
			}
			if err := ag.simulate(context.Background(), &simulator.Offline{}, req); err != nil {
				t.Errorf("the offline simulator does not answer %s: %v", activity, err)
			}
			row := ""
			for line := range strings.SplitSeq(doc, "\n") {
				if strings.HasPrefix(line, "| `"+activity+"` |") {
					row = line
				}
			}
			if row == "" || !doccheck.Mentions(row, "`"+lbl+"`") {
				t.Fatalf("docs/design.md (Adding an agent) has no line | `%s` | `%s` | ... in its table of agents", activity, lbl)
			}
			_, batchable := reflect.TypeFor[BatchTurn]().FieldByName(activity)
			want := []string{yesNo(ag.callsTools()), yesNo(batchable)}
			if cells := strings.Split(strings.Trim(row, "| "), " | "); len(cells) != 4 || !slices.Equal(cells[2:], want) {
				t.Errorf("docs/design.md's line of %s says it may call tools, may be batched: %q; the declaration and BatchTurn say %q", activity, row, want)
			}
		})
	}
	// Every activity whose input is a turn (it embeds Turn) is a model turn: declared.
	input := reflect.TypeFor[interface{ Identity() Turn }]()
	at := reflect.TypeFor[*Activities]()
	for i := range at.NumMethod() {
		m := at.Method(i)
		if m.Type.NumIn() == 3 && m.Type.In(2).Implements(input) && !declaredActivities[m.Name] {
			t.Errorf("activity %s takes a turn but is not a declared agent (declare, in its agent's file)", m.Name)
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// TestAddingAnAgentExample checks that each Go block of docs/design.md's "Adding an agent"
// is code of the file its first line names, as it stands there (indentation aside), so the
// example compiles and stays the agent it shows.
func TestAddingAnAgentExample(t *testing.T) {
	blocks := regexp.MustCompile("(?s)```go\n// (\\S+)\n(.*?)```").FindAllStringSubmatch(designDoc(t), -1)
	if len(blocks) == 0 {
		t.Fatal("docs/design.md (Adding an agent) has no Go block whose first line names its file")
	}
	trimmed := func(text string) []string {
		var out []string
		for line := range strings.SplitSeq(text, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, line)
			}
		}
		return out
	}
	for _, b := range blocks {
		src, err := os.ReadFile(filepath.Join("..", b[1]))
		if err != nil {
			t.Errorf("the docs' example names %s: %v", b[1], err)
			continue
		}
		want, have := trimmed(b[2]), trimmed(string(src))
		found := false
		for i := range have {
			if len(have)-i >= len(want) && slices.Equal(have[i:i+len(want)], want) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("the docs' example of %s is not the file's code; copy it again from the file:\n%s", b[1], b[2])
		}
	}
}

// TestDeclarationMissing checks what TestEveryAgentIsDeclared relies on: a declaration
// that lacks one of the things every turn needs is told apart, and says what it lacks.
func TestDeclarationMissing(t *testing.T) {
	with := func(change func(*agent[Turn, research.PlanRequest, research.Plan, PlanResult])) declared {
		ag := planning
		change(&ag)
		return ag
	}
	// An agent whose request has no Prompt field: its runner would have nowhere to put it.
	type bare struct{ Cache research.Cache }
	noPrompt := agent[Turn, bare, research.Plan, PlanResult]{
		activity: "Plan", label: AgentSupervisor, prompt: func(bare) prompt.Text { return prompt.Text{} },
		spec: prompt.Spec[bare, research.Plan]{Agent: AgentSupervisor, Schema: func(bare) (string, json.RawMessage) { return "plan", nil },
			Parse: func(bare, []byte) (research.Plan, error) { return research.Plan{}, nil }},
		prepare: func(context.Context, *Activities, Turn, string) (turn[bare, research.Plan, PlanResult], error) {
			return turn[bare, research.Plan, PlanResult]{}, nil
		},
	}
	for _, tt := range []struct {
		name string
		ag   declared
		want string // in what missing says; "" for nothing missing
	}{
		{"complete", planning, ""},
		{"no label", with(func(ag *agent[Turn, research.PlanRequest, research.Plan, PlanResult]) { ag.label = "" }), "metrics label"},
		{"no prompt", with(func(ag *agent[Turn, research.PlanRequest, research.Plan, PlanResult]) { ag.prompt = nil }), "a prompt"},
		{"no parser", with(func(ag *agent[Turn, research.PlanRequest, research.Plan, PlanResult]) { ag.spec.Parse = nil }), "its parser"},
		{"another agent's model call", with(func(ag *agent[Turn, research.PlanRequest, research.Plan, PlanResult]) { ag.label = AgentRanking }), `spec.Agent is "supervisor", the label "ranking"`},
		{"a loop without references", with(func(ag *agent[Turn, research.PlanRequest, research.Plan, PlanResult]) {
			ag.loop = func(Turn) Loop { return Loop{} }
		}), "both loop and refs"},
		{"a request without a Prompt", noPrompt, "a request with a Prompt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.ag.missing()
			if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
				t.Errorf("missing() = %q; want %q", got, tt.want)
			}
		})
	}
}
