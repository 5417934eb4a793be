package workflows

// Generation: the generation agent's new hypotheses, one turn each, by the strategies the
// supervisor chose for the round; and what evolution's step (evolve.go) shares with it:
// a turn per assigned kind (turnKinds), run at once as hypotheses in the making
// (newHypotheses), each adding the hypothesis it made (hypothesisTurn).

import (
	"context"
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/policy"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// generate asks for new hypotheses by the strategies the supervisor chose.
func (s *supervisor) generate(ctx workflow.Context, work []policy.Assignment) []string {
	strategies := turnKinds(work)
	lab := s.labRead(ctx)
	input := func(i int) activities.GenerateInput {
		id := s.newID()
		return activities.GenerateInput{
			Turn:         s.turnInput("generate-" + id),
			HypothesisID: id,
			Focus:        s.recent(s.Focus),
			Strategy:     strategies[i],
			Context:      withLab(s.contextRef(), lab),
		}
	}
	// Batched turns are known before they start, their ids with them; the others take
	// their ids as they start, as they always have.
	b := submit(ctx, s, "hypotheses", activities.AgentGeneration, len(strategies),
		func(i int) bool { return s.batching(activities.AgentGeneration, strategies[i]) }, input)
	defer b.release()
	return s.newHypotheses(ctx, len(strategies), func(ctx workflow.Context, i int) string {
		in := b.kept(i)
		summary := fmt.Sprintf("generate hypothesis %d/%d (%s, %s)", s.Generated+s.Evolved+i+1, s.req.Config.MaxHypotheses, in.HypothesisID, strategies[i])
		e := session.Entry{ID: in.HypothesisID, Origin: "generation", Strategy: strategies[i]}
		if !hypothesisTurn(ctx, s, activities.AgentGeneration, summary, in.Turn, a.Generate, in, (*activities.GenerateInput).SetLoop, e) {
			return ""
		}
		s.Generated++
		return in.HypothesisID
	})
}

// turnKinds lists the kind of each turn the supervisor assigned (a generation strategy or
// an evolution kind), as many times as it has turns.
func turnKinds(work []policy.Assignment) []string {
	var out []string
	for _, w := range work {
		for range w.N {
			out = append(out, w.Kind)
		}
	}
	return out
}

// newHypotheses runs a step's n turns that each make a new hypothesis, at once, and
// returns the ids of those it made. run runs turn i once the turn may start and returns
// the id of its hypothesis, "" for none. While turns run they count as hypotheses in the
// making (limits.go).
func (s *supervisor) newHypotheses(ctx workflow.Context, n int, run func(ctx workflow.Context, i int) string) []string {
	ids := make([]string, n)
	s.parallel(ctx, n, func(ctx workflow.Context, i int) {
		if !s.mayStart(ctx) {
			return
		}
		s.making++
		defer func() { s.making-- }()
		if id := run(ctx, i); id != "" {
			s.deliver(ctx, ids, i, id)
		}
	})
	return slices.DeleteFunc(ids, func(id string) bool { return id == "" })
}

// hypothesisTurn runs agent's turn fn on in, which makes the new hypothesis e (its id,
// origin, kind and parents), with the tools its kind may use, and adds the hypothesis to
// the session with the title and references the turn gave it. It says whether it did.
func hypothesisTurn[In any](ctx workflow.Context, s *supervisor, agent, summary string, t activities.Turn,
	fn func(context.Context, In) (activities.GenerateResult, error), in In, setLoop func(*In, activities.Loop), e session.Entry) bool {
	tools := s.toolsFor(agent, e.Strategy)
	out, err := toolTurn(ctx, s, agent, summary, t, e.ID, fn, in, tools, setLoop)
	if err != nil {
		return false
	}
	s.spend(agent, out.Usage)
	e.Title, e.References, e.Round, e.Elo = out.Title, out.References, s.Rounds, tournament.InitialElo
	s.add(e)
	return true
}
