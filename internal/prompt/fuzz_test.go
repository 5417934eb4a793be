package prompt

import (
	"errors"
	"slices"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// Fuzz targets for every agent's answer parser: a model's answer is outside input. Each
// answer either parses into a value that passes the parser's own checks, or is refused with a
// *MalformedError naming the agent and the problem; it never panics. `make fuzz` runs them
// for a set time each; `go test` runs the seeds.

// malformedBy checks that err is a *MalformedError of agent with a problem to quote back.
func malformedBy(t *testing.T, agent string, err error) {
	t.Helper()
	var m *MalformedError
	if !errors.As(err, &m) || m.Agent != agent || m.Problem == "" {
		t.Fatalf("error %v (%T); want a *MalformedError of the %s agent that says what is wrong", err, err, agent)
	}
}

// decided checks a parsed match decision (what): refused as a ranking agent's malformed
// answer, or won by the label "A" or "B".
func decided(t *testing.T, what, winner string, err error) {
	t.Helper()
	if err != nil {
		malformedBy(t, AgentRanking, err)
		return
	}
	if winner != "A" && winner != "B" {
		t.Fatalf("%s parsed with winner %q", what, winner)
	}
}

// answers seeds a fuzz target: a good answer and the broken shapes models send.
func answers(f *testing.F, good string) {
	for _, s := range []string{good, "", "null", "{}", "[]", `"text"`, "```json\n" + good + "\n```", good + good, `{"title": 7}`, "\xff\xfe", good[:len(good)/2]} {
		f.Add([]byte(s))
	}
}

func FuzzParseHypothesis(f *testing.F) {
	answers(f, `{"title":"Microglia carry tau","statement":"Microglia carry tau between synapses.","rationale":"They prune synapses.","testable_predictions":["Depleting microglia slows spread."]}`)
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, parse := range []struct {
			agent string
			parse func([]byte) (research.Hypothesis, error)
		}{{AgentGeneration, ParseHypothesis}, {AgentEvolution, ParseEvolved}} {
			h, err := parse.parse(raw)
			if err != nil {
				malformedBy(t, parse.agent, err)
				continue
			}
			if err := h.Check(); err != nil || len([]rune(h.Title)) > MaxTitleLength {
				t.Fatalf("parsed %+v, which fails its own checks: %v", h, err)
			}
		}
	})
}

func FuzzParseReview(f *testing.F) {
	answers(f, `{"scores":{"novelty":7,"plausibility":6,"testability":8,"safety":9},"critique":"Sound but known.","verdict":"revise","assumptions":[{"text":"Microglia reach synapses.","verdict":"holds","note":"Seen in vivo."}]}`)
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, typ := range research.ReviewTypes {
			r, err := ParseReviewOf(typ, raw)
			if err != nil {
				malformedBy(t, AgentReflection, err)
				continue
			}
			if !slices.Contains(research.Verdicts, r.Verdict) {
				t.Fatalf("%s review parsed with verdict %q", typ, r.Verdict)
			}
		}
	})
}

func FuzzParseComparison(f *testing.F) {
	answers(f, `{"winner":"A","reasoning":"A predicts more."}`)
	f.Fuzz(func(t *testing.T, raw []byte) {
		winner, _, err := ParseComparison(raw)
		decided(t, "comparison", winner, err)
	})
}

func FuzzParsePlan(f *testing.F) {
	answers(f, `{"summary":"Seek testable mechanisms.","preferences":["mechanistic"],"constraints":["no animal work"],"evaluation_criteria":["testability"]}`)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := ParsePlan(raw); err != nil {
			malformedBy(t, AgentSupervisor, err)
		}
	})
}

func FuzzParseDebate(f *testing.F) {
	answers(f, `{"argument":"B ignores the data.","winner":"B","reasoning":"B answered the objection."}`)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := ParseAdvocate(raw); err != nil {
			malformedBy(t, AgentRanking, err)
		}
		_, winner, _, err := ParseJudgement(raw)
		decided(t, "judgement", winner, err)
	})
}

func FuzzParseMetaReview(f *testing.F) {
	answers(f, `{"critiques":["Predictions are vague."],"strengths":["Mechanistic."],"feedback":"Name the cell type.","delegations":[]}`)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := ParseMetaReview(raw); err != nil {
			malformedBy(t, AgentMetaReview, err)
		}
	})
}

func FuzzParseOverview(f *testing.F) {
	answers(f, `{"summary":"Two themes.","themes":[{"title":"Microglia","hypotheses":["h-0001"],"summary":"Uptake."}],"open_questions":["Which cell?"],"suggested_experiments":["Deplete microglia."]}`)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := ParseOverview(raw); err != nil {
			malformedBy(t, AgentMetaReview, err)
		}
	})
}
