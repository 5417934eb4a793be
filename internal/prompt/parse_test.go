package prompt

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

const goodHypothesis = `{"title": "Tau seeding via exosomes", "statement": "Exosomes carry tau seeds between neurons.", "rationale": "Exosomal tau is found in CSF.", "testable_predictions": ["Blocking exosome release slows spread", "CSF exosomes seed tau in vitro"]}`

// wantMalformed checks that err is a *MalformedError for agent whose problem mentions each of words.
func wantMalformed(t *testing.T, err error, agent string, words ...string) {
	t.Helper()
	var me *MalformedError
	if !errors.As(err, &me) {
		t.Fatalf("error = %v (%T), want *MalformedError", err, err)
	}
	if me.Agent != agent {
		t.Errorf("Agent = %q, want %q", me.Agent, agent)
	}
	for _, w := range words {
		if !strings.Contains(me.Problem, w) {
			t.Errorf("Problem %q does not mention %q", me.Problem, w)
		}
	}
}

func TestParseHypothesis(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		wantErr []string // words the problem must mention; nil means the answer is good
	}{
		{"good", goodHypothesis, nil},
		{"fenced", "```json\n" + goodHypothesis + "\n```", nil},
		{"text around", "Here is my hypothesis:\n" + goodHypothesis + "\nI hope it helps {really}.", nil},
		{"brace in prose first", "Considering {A, B} I propose: " + goodHypothesis, nil},
		{"missing title", `{"statement": "s", "testable_predictions": ["p"]}`, []string{"no title"}},
		{"missing statement", `{"title": "t", "testable_predictions": ["p"]}`, []string{"no statement"}},
		{"no predictions", `{"title": "t", "statement": "s", "testable_predictions": []}`, []string{"no testable predictions"}},
		{"blank prediction", `{"title": "t", "statement": "s", "testable_predictions": ["p", "  "]}`, []string{"testable_predictions[1]"}},
		{"wrong type", `{"title": "t", "statement": "s", "testable_predictions": "p"}`, []string{"testable_predictions", "an array"}},
		{"truncated", goodHypothesis[:len(goodHypothesis)-20], []string{"truncated"}},
		{"truncated inside fence", "```json\n" + goodHypothesis[:60], []string{"truncated"}},
		{"not JSON", "I think exosomes spread tau.", []string{"no JSON object"}},
		{"invalid JSON", `{title: "t"}`, []string{"no valid JSON object"}},
		{"empty", "", []string{"no JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHypothesis([]byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, AgentGeneration, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatalf("ParseHypothesis: %v", err)
			}
			want := research.Hypothesis{
				Title:       "Tau seeding via exosomes",
				Statement:   "Exosomes carry tau seeds between neurons.",
				Rationale:   "Exosomal tau is found in CSF.",
				Predictions: []string{"Blocking exosome release slows spread", "CSF exosomes seed tau in vitro"},
			}
			if h.Title != want.Title || h.Statement != want.Statement || h.Rationale != want.Rationale || !slices.Equal(h.Predictions, want.Predictions) {
				t.Errorf("got %+v, want %+v", h, want)
			}
		})
	}
}

func TestParseReview(t *testing.T) {
	const good = `{"scores": {"novelty": 7, "plausibility": 6.5, "testability": 8, "safety": 10}, "critique": "Sound, but the dose is unclear.", "verdict": "accept"}`
	tests := []struct {
		name    string
		raw     string
		wantErr []string
	}{
		{"good", good, nil},
		{"fenced", "```json\n" + good + "\n```", nil},
		{"verdict in capitals", strings.Replace(good, `"accept"`, `"ACCEPT"`, 1), nil},
		{"zero score is a score", strings.Replace(good, `"novelty": 7`, `"novelty": 0`, 1), nil},
		{"missing scores", `{"critique": "c", "verdict": "accept"}`, []string{`"scores" is missing`}},
		{"missing one score", strings.Replace(good, `"testability": 8, `, "", 1), []string{"scores.testability is missing"}},
		{"score above 10", strings.Replace(good, `"safety": 10`, `"safety": 11`, 1), []string{"scores.safety is 11", "0 to 10"}},
		{"negative score", strings.Replace(good, `"novelty": 7`, `"novelty": -1`, 1), []string{"scores.novelty is -1"}},
		{"score as string", strings.Replace(good, `"novelty": 7`, `"novelty": "high"`, 1), []string{"scores.novelty", "a number"}},
		{"bad verdict", strings.Replace(good, `"accept"`, `"maybe"`, 1), []string{`"maybe"`, "accept, revise, reject"}},
		{"missing verdict", strings.Replace(good, `, "verdict": "accept"`, "", 1), []string{`verdict ""`}},
		{"empty critique", strings.Replace(good, "Sound, but the dose is unclear.", " ", 1), []string{`"critique" is empty`}},
		{"truncated", good[:40], []string{"truncated"}},
		{"not JSON", "Accept. Scores: 7/10.", []string{"no JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseReview([]byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, AgentReflection, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatalf("ParseReview: %v", err)
			}
			if r.Verdict != "accept" || r.Critique != "Sound, but the dose is unclear." || r.Scores.Plausibility != 6.5 {
				t.Errorf("got %+v", r)
			}
		})
	}
}

func TestParseComparison(t *testing.T) {
	tests := []struct {
		name       string
		raw        string
		wantWinner string
		wantErr    []string
	}{
		{"A wins", `{"winner": "A", "reasoning": "A is testable."}`, "A", nil},
		{"lower-case b", `{"winner": "b", "reasoning": "B is testable."}`, "B", nil},
		{"fenced", "After debate:\n```json\n{\"winner\": \"B\", \"reasoning\": \"r\"}\n```", "B", nil},
		{"winner by id", `{"winner": "h-3", "reasoning": "r"}`, "", []string{`"h-3"`, `"A" nor "B"`}},
		{"missing winner", `{"reasoning": "r"}`, "", []string{`winner ""`}},
		{"missing reasoning", `{"winner": "A"}`, "", []string{`"reasoning" is empty`}},
		{"winner as number", `{"winner": 1, "reasoning": "r"}`, "", []string{"winner", "a string"}},
		{"truncated", `{"winner": "A", "reas`, "", []string{"truncated"}},
		{"not JSON", "A wins.", "", []string{"no JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			winner, reasoning, err := ParseComparison([]byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, AgentRanking, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatalf("ParseComparison: %v", err)
			}
			if winner != tt.wantWinner || reasoning == "" {
				t.Errorf("got (%q, %q), want winner %q", winner, reasoning, tt.wantWinner)
			}
		})
	}
}

func TestMalformedErrorMessage(t *testing.T) {
	err := &MalformedError{Agent: AgentRanking, Problem: `winner "C" is neither "A" nor "B"`}
	if got, want := err.Error(), `malformed ranking answer: winner "C" is neither "A" nor "B"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestParseEvolved(t *testing.T) {
	h, err := ParseEvolved([]byte(goodHypothesis))
	if err != nil || h.Title != "Tau seeding via exosomes" {
		t.Fatalf("ParseEvolved = %+v, %v", h, err)
	}
	_, err = ParseEvolved([]byte(`{"title": "t", "testable_predictions": ["p"]}`))
	wantMalformed(t, err, AgentEvolution, "no statement")
	long := strings.Replace(goodHypothesis, "Tau seeding via exosomes", strings.Repeat("x", 101), 1)
	_, err = ParseHypothesis([]byte(long))
	wantMalformed(t, err, AgentGeneration, "title is 101 characters", "at most 100")
}

func TestParseDeepVerification(t *testing.T) {
	const scores = `"scores": {"novelty": 7, "plausibility": 6.5, "testability": 8, "safety": 10}, "critique": "c", "verdict": "revise"`
	const good = `{` + scores + `, "assumptions": [{"text": "tau is secreted", "verdict": "holds", "note": "shown in vitro"}, {"text": "exosomes reach distant neurons", "verdict": "FAILS", "note": ""}]}`
	tests := []struct {
		name    string
		typ     string
		raw     string
		want    int // assumptions
		wantErr []string
	}{
		{"good", research.ReviewDeepVerification, good, 2, nil},
		{"other types may omit them", research.ReviewFull, `{` + scores + `}`, 0, nil},
		{"missing", research.ReviewDeepVerification, `{` + scores + `}`, 0, []string{`"assumptions" is missing or empty`}},
		{"empty", research.ReviewDeepVerification, `{` + scores + `, "assumptions": []}`, 0, []string{`"assumptions" is missing or empty`}},
		{"bad verdict", research.ReviewDeepVerification, strings.Replace(good, `"holds"`, `"maybe"`, 1), 0, []string{`assumptions[0].verdict "maybe"`, "holds, doubtful, fails"}},
		{"blank text", research.ReviewDeepVerification, strings.Replace(good, "tau is secreted", " ", 1), 0, []string{"assumptions[0].text is empty"}},
		{"not an array", research.ReviewDeepVerification, `{` + scores + `, "assumptions": "all hold"}`, 0, []string{"assumptions", "an array"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseReviewOf(tt.typ, []byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, AgentReflection, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Assumptions) != tt.want {
				t.Fatalf("%d assumptions, want %d", len(r.Assumptions), tt.want)
			}
			if tt.want > 0 && (r.Assumptions[1].Verdict != "fails" || r.Assumptions[0].Note != "shown in vitro") {
				t.Errorf("assumptions = %+v", r.Assumptions)
			}
		})
	}
}

func TestParsePlan(t *testing.T) {
	const good = `{"preferences": ["mechanistic", "novel"], "constraints": ["no human experiments"], "evaluation_criteria": ["testable in mice", "explains spread"], "summary": "Mechanistic hypotheses on tau spread."}`
	tests := []struct {
		name    string
		raw     string
		wantErr []string
	}{
		{"good", good, nil},
		{"fenced", "Plan:\n```json\n" + good + "\n```", nil},
		{"missing criteria", strings.Replace(good, `"evaluation_criteria": ["testable in mice", "explains spread"], `, "", 1), []string{`"evaluation_criteria" has 0 items`}},
		{"empty constraints", strings.Replace(good, `["no human experiments"]`, `[]`, 1), []string{`"constraints" has 0 items`}},
		{"blank preference", strings.Replace(good, `"novel"`, `" "`, 1), []string{"preferences[1] is empty"}},
		{"too many", strings.Replace(good, `["mechanistic", "novel"]`, `["a", "b", "c", "d", "e", "f"]`, 1), []string{`"preferences" has 6 items`, "at most 5"}},
		{"no summary", strings.Replace(good, "Mechanistic hypotheses on tau spread.", "", 1), []string{`"summary" is empty`}},
		{"long summary", strings.Replace(good, "Mechanistic hypotheses on tau spread.", strings.Repeat("w ", 101), 1), []string{`"summary" is 201 characters`}},
		{"criteria as string", strings.Replace(good, `["testable in mice", "explains spread"]`, `"testable"`, 1), []string{"evaluation_criteria", "an array"}},
		{"truncated", good[:50], []string{"truncated"}},
		{"not JSON", "Study tau.", []string{"no JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePlan([]byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, AgentSupervisor, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Preferences, []string{"mechanistic", "novel"}) || len(p.Constraints) != 1 || len(p.Criteria) != 2 || p.Summary == "" {
				t.Errorf("got %+v", p)
			}
		})
	}
}

func TestParseAdvocate(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		wantErr []string
	}{
		{"good", `{"argument": " A explains the CSF data. "}`, nil},
		{"empty", `{"argument": ""}`, []string{`"argument" is empty`}},
		{"missing", `{"winner": "A"}`, []string{`"argument" is empty`}},
		{"not JSON", "A is better.", []string{"no JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arg, err := ParseAdvocate([]byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, AgentRanking, tt.wantErr...)
				return
			}
			if err != nil || arg != "A explains the CSF data." {
				t.Errorf("got %q, %v", arg, err)
			}
		})
	}
}

func TestParseJudgement(t *testing.T) {
	tests := []struct {
		name       string
		raw        string
		wantWinner string
		wantErr    []string
	}{
		{"A wins", `{"argument": "Both argued well.", "winner": "A", "reasoning": "A is testable."}`, "A", nil},
		{"lower-case b", `{"argument": "s", "winner": "b", "reasoning": "r"}`, "B", nil},
		{"winner by id", `{"argument": "s", "winner": "h-3", "reasoning": "r"}`, "", []string{`"h-3"`, `"A" nor "B"`}},
		{"no argument", `{"winner": "A", "reasoning": "r"}`, "", []string{`"argument" is empty`}},
		{"no reasoning", `{"argument": "s", "winner": "A"}`, "", []string{`"reasoning" is empty`}},
		{"truncated", `{"argument": "s", "winn`, "", []string{"truncated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arg, winner, reasoning, err := ParseJudgement([]byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, AgentRanking, tt.wantErr...)
				return
			}
			if err != nil || winner != tt.wantWinner || arg == "" || reasoning == "" {
				t.Errorf("got (%q, %q, %q), %v; want winner %q", arg, winner, reasoning, err, tt.wantWinner)
			}
		})
	}
}

func TestParseMetaReview(t *testing.T) {
	const good = `{"critiques": ["mediator unseen (5 of 9 reviews)", "effect too small"], "strengths": ["falsifiable"], "feedback": "Propose mediators that can be imaged."}`
	tests := []struct {
		name    string
		raw     string
		wantErr []string
	}{
		{"good", good, nil},
		{"nothing recurs", `{"critiques": [], "strengths": [], "feedback": "Carry on."}`, nil},
		{"critiques missing", `{"strengths": [], "feedback": "f"}`, []string{`"critiques" is missing`}},
		{"strengths missing", `{"critiques": [], "feedback": "f"}`, []string{`"strengths" is missing`}},
		{"blank critique", strings.Replace(good, `"effect too small"`, `""`, 1), []string{"critiques[1] is empty"}},
		{"too many critiques", `{"critiques": ["a", "b", "c", "d", "e", "f"], "strengths": [], "feedback": "f"}`, []string{`"critiques" has 6 items`}},
		{"no feedback", strings.Replace(good, "Propose mediators that can be imaged.", "", 1), []string{`"feedback" is empty`}},
		{"critiques as string", `{"critiques": "many", "strengths": [], "feedback": "f"}`, []string{"critiques", "an array"}},
		{"not JSON", "Too vague.", []string{"no JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMetaReview([]byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, AgentMetaReview, tt.wantErr...)
				return
			}
			if err != nil || m.Feedback == "" || m.Critiques == nil || m.Strengths == nil {
				t.Errorf("got %+v, %v", m, err)
			}
		})
	}
}

func TestParseOverview(t *testing.T) {
	const good = `{"summary": "Spread follows synapses.", "themes": [{"title": "Synaptic release", "hypotheses": ["h-1", "h-3"], "note": "strongest cluster"}], "open_questions": ["Is release activity-dependent?"], "suggested_experiments": ["Silence neurons and measure tau."]}`
	tests := []struct {
		name    string
		raw     string
		wantErr []string
	}{
		{"good", good, nil},
		{"no themes", strings.Replace(good, `[{"title": "Synaptic release", "hypotheses": ["h-1", "h-3"], "note": "strongest cluster"}]`, `[]`, 1), nil},
		{"themes missing", `{"summary": "s", "open_questions": ["q"], "suggested_experiments": ["e"]}`, []string{`"themes" is missing`}},
		{"theme without title", strings.Replace(good, `"Synaptic release"`, `""`, 1), []string{"themes[0].title is empty"}},
		{"theme without hypotheses", strings.Replace(good, `["h-1", "h-3"]`, `[]`, 1), []string{`"themes[0].hypotheses" has 0 items`}},
		{"no summary", strings.Replace(good, "Spread follows synapses.", " ", 1), []string{`"summary" is empty`}},
		{"no questions", strings.Replace(good, `["Is release activity-dependent?"]`, `[]`, 1), []string{`"open_questions" has 0 items`}},
		{"too many experiments", strings.Replace(good, `["Silence neurons and measure tau."]`, `["a", "b", "c", "d", "e", "f"]`, 1), []string{`"suggested_experiments" has 6 items`}},
		{"truncated", good[:80], []string{"truncated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := ParseOverview([]byte(tt.raw))
			if tt.wantErr != nil {
				wantMalformed(t, err, AgentMetaReview, tt.wantErr...)
				return
			}
			if err != nil || o.Summary == "" || o.Themes == nil || len(o.OpenQuestions) != 1 || len(o.Experiments) != 1 {
				t.Errorf("got %+v, %v", o, err)
			}
		})
	}
}

// TestParseMetaReviewDelegations: a bad delegation is dropped, not the whole answer; the
// critique is worth keeping whatever the recommendations look like.
func TestParseMetaReviewDelegations(t *testing.T) {
	req := research.MetaReviewRequest{
		Reviews: []research.Review{{HypothesisID: "h-1"}, {HypothesisID: "h-2"}},
		Debates: []research.Debate{{A: "h-2", B: "h-3"}},
	}
	answer := func(delegations string) string {
		return `{"critiques": ["vague"], "strengths": [], "feedback": "Be specific.", "delegations": ` + delegations + `}`
	}
	verify1 := research.Delegation{Task: research.DelegateVerify, Hypothesis: "h-1", Reason: "best of the round"}
	evolve3 := research.Delegation{Task: research.DelegateEvolve, Hypothesis: "h-3", Reason: "worth a line"}
	long := strings.Repeat("why ", 100)
	tests := []struct {
		name string
		raw  string
		want []research.Delegation
	}{
		{"good", answer(`[{"task": "verify", "hypothesis_id": "h-1", "reason": "best of the round"}, {"task": "evolve", "hypothesis_id": "h-3", "reason": "worth a line"}]`),
			[]research.Delegation{verify1, evolve3}},
		{"none", answer(`[]`), nil},
		{"field missing", `{"critiques": [], "strengths": [], "feedback": "f"}`, nil},
		{"null", answer(`null`), nil},
		{"not an array", answer(`"verify h-1"`), nil},
		{"unknown task", answer(`[{"task": "replicate", "hypothesis_id": "h-2", "reason": "r"}, {"task": "verify", "hypothesis_id": "h-1", "reason": "best of the round"}]`),
			[]research.Delegation{verify1}},
		{"unknown id", answer(`[{"task": "verify", "hypothesis_id": "h-9", "reason": "r"}, {"task": "evolve", "hypothesis_id": "h-3", "reason": "worth a line"}]`),
			[]research.Delegation{evolve3}},
		{"empty id", answer(`[{"task": "verify", "hypothesis_id": " ", "reason": "r"}]`), nil},
		{"item not an object", answer(`["verify h-1", {"task": "verify", "hypothesis_id": "h-1", "reason": "best of the round"}]`),
			[]research.Delegation{verify1}},
		{"field of the wrong type", answer(`[{"task": "verify", "hypothesis_id": 1, "reason": "r"}]`), nil},
		{"too many", answer(`[{"task": "verify", "hypothesis_id": "h-1", "reason": "best of the round"}, {"task": "evolve", "hypothesis_id": "h-3", "reason": "worth a line"}, {"task": "evolve", "hypothesis_id": "h-2", "reason": "r"}]`),
			[]research.Delegation{verify1, evolve3}},
		{"bad ones do not count toward the limit", answer(`[{"task": "x", "hypothesis_id": "h-1", "reason": "r"}, {"task": "verify", "hypothesis_id": "h-9", "reason": "r"}, {"task": "verify", "hypothesis_id": "h-1", "reason": "best of the round"}, {"task": "evolve", "hypothesis_id": "h-3", "reason": "worth a line"}]`),
			[]research.Delegation{verify1, evolve3}},
		{"repeat", answer(`[{"task": "verify", "hypothesis_id": "h-1", "reason": "best of the round"}, {"task": "verify", "hypothesis_id": "h-1", "reason": "again"}]`),
			[]research.Delegation{verify1}},
		{"tidied", answer(`[{"task": " Verify ", "hypothesis_id": " h-1 ", "reason": "best\n of the   round"}]`), []research.Delegation{verify1}},
		{"blank reason", answer(`[{"task": "evolve", "hypothesis_id": "h-2", "reason": ""}]`),
			[]research.Delegation{{Task: research.DelegateEvolve, Hypothesis: "h-2", Reason: "The meta-review asks for an evolution line of its own from h-2"}}},
		{"long reason", answer(`[{"task": "verify", "hypothesis_id": "h-1", "reason": "` + long + `"}]`),
			[]research.Delegation{{Task: research.DelegateVerify, Hypothesis: "h-1", Reason: string([]rune(strings.TrimSpace(long))[:MaxReasonLength-1]) + "…"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMetaReviewFor(req, []byte(tt.raw))
			if err != nil {
				t.Fatalf("ParseMetaReviewFor: %v", err)
			}
			if !slices.Equal(m.Delegations, tt.want) {
				t.Errorf("delegations:\n%q\nwant\n%q", m.Delegations, tt.want)
			}
			if m.Feedback == "" {
				t.Errorf("the critique was lost: %+v", m)
			}
		})
	}

	// Without the request, ParseMetaReview cannot check ids, but checks everything else.
	raw := answer(`[{"task": "verify", "hypothesis_id": "h-9", "reason": "r"}, {"task": "fork", "hypothesis_id": "h-1", "reason": "r"}]`)
	if m, err := ParseMetaReview([]byte(raw)); err != nil || len(m.Delegations) != 1 || m.Delegations[0].Hypothesis != "h-9" {
		t.Errorf("ParseMetaReview: %+v, %v", m.Delegations, err)
	}
	// A request that names no hypothesis admits no delegation.
	if m, err := ParseMetaReviewFor(research.MetaReviewRequest{}, []byte(raw)); err != nil || m.Delegations != nil {
		t.Errorf("ParseMetaReviewFor an empty round: %+v, %v", m.Delegations, err)
	}
}

func TestCheckDelegations(t *testing.T) {
	ds := []research.Delegation{
		{Task: "verify", Hypothesis: "h-1", Reason: "r"},
		{Task: "evolve", Hypothesis: "h-2", Reason: "r"},
		{Task: "evolve", Hypothesis: "h-1", Reason: "r"},
	}
	tests := []struct {
		name  string
		known []string
		want  []string // "task hypothesis"
	}{
		{"all known: the first two", []string{"h-1", "h-2"}, []string{"verify h-1", "evolve h-2"}},
		{"one unknown", []string{"h-1"}, []string{"verify h-1", "evolve h-1"}},
		{"none known", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range CheckDelegations(ds, tt.known) {
				got = append(got, d.Task+" "+d.Hypothesis)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
