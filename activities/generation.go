package activities

// The generation and evolution agents: each turn makes one new hypothesis, with an id the
// workflow chose, and stores it. Both may call tools.

import (
	"context"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/telemetry"
)

// Generate runs a generation turn: the model proposes a hypothesis, the store keeps it.
// The prompt carries the shared context in.Context names (plan, meta-review, steering).
func (a *Activities) Generate(ctx context.Context, in GenerateInput) (GenerateResult, error) {
	return runTurn(ctx, a, generation, in)
}

var generation = declare(agent[GenerateInput, research.GenerateRequest, research.Hypothesis, GenerateResult]{
	activity: "Generate", label: AgentGeneration, many: true, prompt: prompt.Generate, spec: prompt.GenerateSpec,
	prepare: prepareGenerate, count: madeHypothesis("generated"), loop: GenerateInput.loop, refs: hypothesisRefs,
})

type generateTurn = turn[research.GenerateRequest, research.Hypothesis, GenerateResult]

// prepareGenerate asks for a hypothesis in the session's focus: the steering's, or the
// turn's own when the scientist has given none.
func prepareGenerate(ctx context.Context, a *Activities, in GenerateInput, turnID string) (generateTurn, error) {
	c, err := a.context(ctx, in.SessionID, in.Context)
	if err != nil {
		return generateTurn{}, err
	}
	focus := in.Focus
	if len(focus) == 0 {
		focus = c.Focus
	} else if len(c.Focus) == 0 {
		c.Focus = focus
	}
	req := research.GenerateRequest{
		TurnID: turnID, HypothesisID: in.HypothesisID, Goal: in.Goal,
		Focus: focus, Strategy: in.Strategy, Context: c, Seed: in.Seed,
	}
	keep := func(_ research.GenerateRequest, h research.Hypothesis, usage research.Usage) (GenerateResult, error) {
		h.ID, h.Goal = in.HypothesisID, in.Goal
		if h.Origin == "" {
			h.Origin = "generation"
		}
		if in.Strategy != "" {
			h.Strategy = in.Strategy
		}
		return a.keep(ctx, in.SessionID, h, usage)
	}
	return generateTurn{req: req, keep: keep, asked: askedForTools}, nil
}

// Evolve runs an evolution turn: a new hypothesis, with id in.HypothesisID, evolved from
// in.Parents by in.Kind. It never changes a parent; the new hypothesis records them.
func (a *Activities) Evolve(ctx context.Context, in EvolveInput) (GenerateResult, error) {
	return runTurn(ctx, a, evolution, in)
}

var evolution = declare(agent[EvolveInput, research.EvolveRequest, research.Hypothesis, GenerateResult]{
	activity: "Evolve", label: AgentEvolution, many: true, prompt: prompt.Evolve, spec: prompt.EvolveSpec,
	prepare: prepareEvolve, count: madeHypothesis("evolved"), loop: EvolveInput.loop, refs: hypothesisRefs,
})

type evolveTurn = turn[research.EvolveRequest, research.Hypothesis, GenerateResult]

// prepareEvolve checks the evolution asked for and reads the parents it starts from.
func prepareEvolve(ctx context.Context, a *Activities, in EvolveInput, turnID string) (evolveTurn, error) {
	switch {
	case !slices.Contains(research.EvolutionKinds, in.Kind):
		return evolveTurn{}, invalid("evolution kind %q is not one of %s", in.Kind, strings.Join(research.EvolutionKinds, ", "))
	case len(in.Parents) == 0:
		return evolveTurn{}, invalid("evolution of %s names no parents", in.HypothesisID)
	case slices.Contains(in.Parents, in.HypothesisID):
		return evolveTurn{}, invalid("hypothesis %s cannot be its own parent", in.HypothesisID)
	}
	parents, err := a.hypothesesInOrder(ctx, in.SessionID, in.Parents)
	if err != nil {
		return evolveTurn{}, err
	}
	var inherited []research.Reference
	for _, p := range parents {
		inherited = append(inherited, p.References...)
	}
	c, err := a.context(ctx, in.SessionID, in.Context)
	if err != nil {
		return evolveTurn{}, err
	}
	req := research.EvolveRequest{
		TurnID: turnID, HypothesisID: in.HypothesisID, Goal: in.Goal, Kind: in.Kind,
		Parents: parents, Context: c, Seed: in.Seed,
	}
	keep := func(_ research.EvolveRequest, h research.Hypothesis, usage research.Usage) (GenerateResult, error) {
		h.ID, h.Goal, h.Origin, h.Strategy = in.HypothesisID, in.Goal, "evolution", in.Kind
		h.Parents = slices.Clone(in.Parents)
		return a.keep(ctx, in.SessionID, h, usage)
	}
	// A parent's source may be cited again without fetching it anew.
	return evolveTurn{req: req, keep: keep, asked: askedForTools, inherited: inherited}, nil
}

func (in GenerateInput) loop() Loop { return in.Loop }
func (in EvolveInput) loop() Loop   { return in.Loop }

// hypothesisRefs are a new hypothesis' references.
func hypothesisRefs(h *research.Hypothesis) *[]research.Reference { return &h.References }

// askedForTools is a generation or evolution step that asked for tool calls.
func askedForTools(calls []PendingCall, u research.Usage) GenerateResult {
	return GenerateResult{Calls: calls, Usage: u}
}

// madeHypothesis counts a new hypothesis, made how ("generated", "evolved"); a step that
// asked for tools made none.
func madeHypothesis(how string) func(context.Context, *telemetry.Metrics, GenerateResult) {
	return func(ctx context.Context, m *telemetry.Metrics, r GenerateResult) {
		if r.HypothesisID != "" {
			m.Hypotheses(ctx, how, 1)
		}
	}
}

// hypothesesInOrder reads the hypotheses ids names, in its order.
func (a *Activities) hypothesesInOrder(ctx context.Context, sessionID string, ids []string) ([]research.Hypothesis, error) {
	found, err := a.Store.Hypotheses(ctx, sessionID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]research.Hypothesis, len(ids))
	for i, id := range ids {
		out[i] = found[id]
	}
	return out, nil
}

// keep checks a new hypothesis, stores it, and returns what the workflow keeps of the one
// the store holds: h, or the one an earlier attempt of the same turn stored first.
func (a *Activities) keep(ctx context.Context, sessionID string, h research.Hypothesis, usage research.Usage) (GenerateResult, error) {
	if err := h.Check(); err != nil {
		return GenerateResult{}, malformed(err)
	}
	stored, err := a.putHypothesis(ctx, sessionID, h)
	if err != nil {
		return GenerateResult{}, err
	}
	return GenerateResult{HypothesisID: stored.ID, Title: stored.Title, References: len(stored.References), Usage: usage}, nil
}

// putHypothesis stores h and returns the hypothesis the store holds under its id: h, or
// the one an earlier attempt of the same turn stored first.
func (a *Activities) putHypothesis(ctx context.Context, sessionID string, h research.Hypothesis) (research.Hypothesis, error) {
	if err := a.Store.PutHypothesis(ctx, sessionID, h); err != nil {
		return research.Hypothesis{}, err
	}
	return a.Store.Hypothesis(ctx, sessionID, h.ID)
}
