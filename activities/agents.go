package activities

// The agents, in one table: every model turn cosci takes is one of these declarations, run
// by runTurn (turn.go). An agent's activity method, what its turn reads before the model
// call (prepare) and keeps after it are in the file of its agent: supervisor.go,
// generation.go, reflection.go, ranking.go, metareview.go. docs/design.md ("Adding an
// agent") says how to add one; TestEveryAgentIsDeclared checks that each has what a turn
// needs, that the offline simulator answers it, and that the docs list it.

import (
	"context"
	"fmt"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// The declarations. many: the agent takes many turns a round (see agent.many). loop, step
// and refs: the agent's turns may call tools.
var (
	planning = agent[Turn, research.PlanRequest, research.Plan, PlanResult]{
		activity: "Plan", label: AgentSupervisor, prompt: prompt.Plan, ask: Model.Plan, prepare: preparePlan,
	}
	generation = agent[GenerateInput, research.GenerateRequest, research.Hypothesis, GenerateResult]{
		activity: "Generate", label: AgentGeneration, many: true, prompt: prompt.Generate, ask: Model.Generate,
		prepare: prepareGenerate, count: madeHypothesis("generated"),
		loop: GenerateInput.loop, step: Stepper.GenerateStep, refs: hypothesisRefs,
	}
	reflection = agent[ReviewInput, research.ReviewRequest, research.Review, ReviewResult]{
		activity: "Review", label: AgentReflection, many: true, prompt: prompt.Review, ask: Model.Review,
		prepare: prepareReview, loop: ReviewInput.loop, step: Stepper.ReviewStep, refs: reviewRefs,
	}
	comparison = agent[CompareInput, research.CompareRequest, research.Comparison, CompareResult]{
		activity: "Compare", label: AgentRanking, many: true, prompt: prompt.Compare, ask: Model.Compare,
		prepare: prepareCompare, count: countMatch,
	}
	debate = agent[DebateInput, research.DebateRequest, research.DebateAnswer, DebateResult]{
		activity: "Debate", label: AgentRanking, many: true, prompt: prompt.Debate, ask: Model.Debate,
		prepare: prepareDebate, count: countDebate,
	}
	evolution = agent[EvolveInput, research.EvolveRequest, research.Hypothesis, GenerateResult]{
		activity: "Evolve", label: AgentEvolution, many: true, prompt: prompt.Evolve, ask: Model.Evolve,
		prepare: prepareEvolve, count: madeHypothesis("evolved"),
		loop: EvolveInput.loop, step: Stepper.EvolveStep, refs: hypothesisRefs,
	}
	metaReview = agent[MetaReviewInput, research.MetaReviewRequest, research.MetaReview, MetaReviewResult]{
		activity: "MetaReview", label: AgentMetaReview, prompt: prompt.MetaReview, ask: Model.MetaReview, prepare: prepareMetaReview,
	}
	overview = agent[OverviewInput, research.OverviewRequest, research.Overview, OverviewResult]{
		activity: "Overview", label: AgentMetaReview, prompt: prompt.Overview, ask: Model.Overview, prepare: prepareOverview,
	}
)

// agents are the declarations, in the order of a session, for what reads them all: the
// declarations' test.
var agents = []declared{planning, generation, reflection, comparison, debate, evolution, metaReview, overview}

// declared is an agent's declaration whatever its types, as agents holds it.
type declared interface {
	// names are the activity's method name and the agent's label (turn records, metrics).
	names() (activity, label string)
	// callsTools says whether the agent's turns may call tools.
	callsTools() bool
	// missing says what of what every declaration must give it lacks ("" if nothing).
	missing() string
	// simulate asks m for an answer to req, which must be the agent's request type.
	simulate(ctx context.Context, m Model, req any) error
}

func (ag agent[In, Req, Ans, Res]) names() (string, string) { return ag.activity, ag.label }

func (ag agent[In, Req, Ans, Res]) callsTools() bool { return ag.loop != nil }

func (ag agent[In, Req, Ans, Res]) missing() string {
	var req Req
	tools := ag.loop != nil
	switch f := framed(&req); {
	case ag.activity == "" || ag.label == "":
		return "a name (activity) or a metrics label (label)"
	case ag.prompt == nil || ag.prepare == nil:
		return "a prompt or a prepare"
	case ag.ask == nil:
		return "a model call (ask), which parses the answer"
	case tools != (ag.step != nil) || tools != (ag.refs != nil):
		return "all three of loop, step and refs (an agent that may call tools), or none"
	case f.prompt == nil || f.cache == nil || (tools && f.tooling == nil):
		return fmt.Sprintf("a request with a Prompt, a Cache and, to call tools, a Tooling (%T)", req)
	}
	return ""
}

func (ag agent[In, Req, Ans, Res]) simulate(ctx context.Context, m Model, req any) error {
	r, ok := req.(Req)
	if !ok {
		var want Req
		return fmt.Errorf("%s: the request is a %T, not a %T", ag.activity, req, want)
	}
	_, _, err := ag.ask(m, ctx, r)
	return err
}
