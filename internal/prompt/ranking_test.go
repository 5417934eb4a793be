package prompt

import (
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

func TestCompare(t *testing.T) {
	p := Compare(research.CompareRequest{Goal: goal, A: hyp, B: hyp2}).Prompt
	containsAll(t, p, goal, "Hypothesis A (h-7): Tau seeding via exosomes", "Hypothesis B (h-9): Synaptic tau release", hyp2.Statement, `"winner" is "A" or "B"`,
		"Testable predictions:\n- Silencing neurons reduces extracellular tau\n- Blocking synaptic vesicle release slows tau spread\n")
	if strings.Index(p, "Hypothesis A") > strings.Index(p, "Hypothesis B") {
		t.Error("A should come before B")
	}
}

func TestDebateSpeaker(t *testing.T) {
	var got []string
	for turn := 1; turn <= 5; turn++ {
		got = append(got, DebateSpeaker(turn, 5))
	}
	if want := []string{"A", "B", "A", "B", "judge"}; !slices.Equal(got, want) {
		t.Errorf("speakers of a 5-turn debate = %q, want %q", got, want)
	}
}

func TestDebate(t *testing.T) {
	transcript := []research.DebateTurn{
		{Turn: 1, Speaker: "A", Argument: "Exosomes are found in CSF."},
		{Turn: 2, Speaker: "B", Argument: "Free tau is far more abundant."},
	}
	tests := []struct {
		name string
		req  research.DebateRequest
		want []string
		not  []string
	}{
		{
			name: "opening turn",
			req:  research.DebateRequest{Goal: goal, A: hyp, B: hyp2, Turn: 1, Turns: 3},
			want: []string{"You are advocate A", "advocate B argues for hypothesis B", "Hypothesis A (h-7): Tau seeding", "Hypothesis B (h-9): Synaptic tau", "opens with this turn", "This is turn 1 of 3", "better than hypothesis B", "in one paragraph"},
			not:  []string{`"winner"`, "Turn 1, advocate A"},
		},
		{
			name: "B answers",
			req:  research.DebateRequest{Goal: goal, A: hyp, B: hyp2, Transcript: transcript[:1], Turn: 2, Turns: 4},
			want: []string{"You are advocate B", "Turn 1, advocate A: Exosomes are found in CSF.", "This is turn 2 of 4", "Answer advocate A's last point"},
			not:  []string{`"winner"`},
		},
		{
			name: "judge",
			req:  research.DebateRequest{Goal: goal, A: hyp, B: hyp2, Transcript: transcript, Turn: 3, Turns: 3},
			want: []string{"You are the judge", "Turn 1, advocate A: Exosomes", "Turn 2, advocate B: Free tau", "the last turn (3 of 3)", `"winner" is "A" or "B"`, `Sum the debate up in "argument"`},
			not:  []string{"You are advocate"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Debate(tt.req).Prompt
			containsAll(t, p, goal)
			containsAll(t, p, tt.want...)
			containsNone(t, p, tt.not...)
		})
	}
}

// decision is what ParseComparison and ParseJudgement give (a comparison has no argument).
type decision struct{ argument, winner, reasoning string }

func parseComparison(raw []byte) (decision, error) {
	winner, reasoning, err := ParseComparison(raw)
	return decision{winner: winner, reasoning: reasoning}, err
}

func parseJudgement(raw []byte) (decision, error) {
	argument, winner, reasoning, err := ParseJudgement(raw)
	return decision{argument, winner, reasoning}, err
}

// decisionCase is an answer that decides a match; want is what a good one gives.
type decisionCase struct {
	name    string
	raw     string
	want    decision
	wantErr []string // as in parseCase
}

// testDecision is testParse for answers that decide a match.
func testDecision(t *testing.T, parse func([]byte) (decision, error), cases []decisionCase) {
	t.Helper()
	for _, tt := range cases {
		testParse(t, AgentRanking, parse, []parseCase{{tt.name, tt.raw, tt.wantErr}}, func(t *testing.T, d decision) {
			if d != tt.want {
				t.Errorf("got %+v, want %+v", d, tt.want)
			}
		})
	}
}

func TestParseComparison(t *testing.T) {
	testDecision(t, parseComparison, []decisionCase{
		{"A wins", `{"winner": "A", "reasoning": "A is testable."}`, decision{winner: "A", reasoning: "A is testable."}, nil},
		{"lower-case b", `{"winner": "b", "reasoning": "B is testable."}`, decision{winner: "B", reasoning: "B is testable."}, nil},
		{"fenced", "After debate:\n```json\n{\"winner\": \"B\", \"reasoning\": \"r\"}\n```", decision{winner: "B", reasoning: "r"}, nil},
		{"winner by id", `{"winner": "h-3", "reasoning": "r"}`, decision{}, []string{`"h-3"`, `"A" nor "B"`}},
		{"missing winner", `{"reasoning": "r"}`, decision{}, []string{`winner ""`}},
		{"missing reasoning", `{"winner": "A"}`, decision{}, []string{`"reasoning" is empty`}},
		{"winner as number", `{"winner": 1, "reasoning": "r"}`, decision{}, []string{"winner", "a string"}},
		{"truncated", `{"winner": "A", "reas`, decision{}, []string{"truncated"}},
		{"not JSON", "A wins.", decision{}, []string{"no JSON object"}},
	})
}

func TestParseAdvocate(t *testing.T) {
	testParse(t, AgentRanking, ParseAdvocate, []parseCase{
		{"good", `{"argument": " A explains the CSF data. "}`, nil},
		{"empty", `{"argument": ""}`, []string{`"argument" is empty`}},
		{"missing", `{"winner": "A"}`, []string{`"argument" is empty`}},
		{"not JSON", "A is better.", []string{"no JSON object"}},
	}, func(t *testing.T, arg string) {
		if arg != "A explains the CSF data." {
			t.Errorf("got %q", arg)
		}
	})
}

func TestParseJudgement(t *testing.T) {
	testDecision(t, parseJudgement, []decisionCase{
		{"A wins", `{"argument": "Both argued well.", "winner": "A", "reasoning": "A is testable."}`, decision{"Both argued well.", "A", "A is testable."}, nil},
		{"lower-case b", `{"argument": "s", "winner": "b", "reasoning": "r"}`, decision{"s", "B", "r"}, nil},
		{"winner by id", `{"argument": "s", "winner": "h-3", "reasoning": "r"}`, decision{}, []string{`"h-3"`, `"A" nor "B"`}},
		{"no argument", `{"winner": "A", "reasoning": "r"}`, decision{}, []string{`"argument" is empty`}},
		{"no reasoning", `{"argument": "s", "winner": "A"}`, decision{}, []string{`"reasoning" is empty`}},
		{"truncated", `{"argument": "s", "winn`, decision{}, []string{"truncated"}},
	})
}
