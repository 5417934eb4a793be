package activities

// The ranking agent's turns: a match's verdict in one turn (Compare), or a multi-turn
// debate whose last turn judges (Debate). The tournament's own activities are in
// tournament.go.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/telemetry"
)

// Compare runs a ranking turn: one match between two hypotheses.
func (a *Activities) Compare(ctx context.Context, in CompareInput) (CompareResult, error) {
	return runTurn(ctx, a, comparison, in)
}

// compareTurn is a match's turn, named once.
type compareTurn = turn[research.CompareRequest, research.Comparison, CompareResult]

var comparison = agent[CompareInput, research.CompareRequest, research.Comparison, CompareResult]{
	activity: "Compare", label: AgentRanking, many: true,
	prompt: prompt.Compare, ask: Model.Compare,
	frame: func(r *research.CompareRequest) frame { return frame{prompt: &r.Prompt, cache: &r.Cache} },
	prepare: func(ctx context.Context, a *Activities, in CompareInput, turnID string) (compareTurn, error) {
		hs, err := a.Store.Hypotheses(ctx, in.SessionID, []string{in.A, in.B})
		if err != nil {
			return compareTurn{}, err
		}
		shared, err := a.context(ctx, in.SessionID, in.Context)
		if err != nil {
			return compareTurn{}, err
		}
		return compareTurn{
			req: research.CompareRequest{TurnID: turnID, Goal: in.Goal, A: hs[in.A], B: hs[in.B], Context: shared, Seed: in.Seed},
			keep: func(_ research.CompareRequest, c research.Comparison, usage research.Usage) (CompareResult, error) {
				if c.Winner != in.A && c.Winner != in.B {
					return CompareResult{}, malformed(fmt.Errorf("winner %q is neither %s nor %s", c.Winner, in.A, in.B))
				}
				return CompareResult{Winner: c.Winner, Usage: usage}, nil
			},
		}, nil
	},
	count: func(ctx context.Context, m *telemetry.Metrics, _ CompareResult) { m.Matches(ctx, 1) },
}

// Debate runs one turn of a multi-turn debate between in.A and in.B. The transcript lives
// in the store under in.DebateID and grows by one turn per call; the last turn (Number ==
// Of) is the judge's, and its result names the winner.
//
// A turn is idempotent twice over: by its turn ID, like every provider turn, and by its
// number, so a retry that finds its turn already in the transcript (the debate file was
// written, the turn record was not) reuses it instead of asking the model again.
func (a *Activities) Debate(ctx context.Context, in DebateInput) (DebateResult, error) {
	return runTurn(ctx, a, debate, in)
}

// debateTurn is a debate's turn, named once.
type debateTurn = turn[research.DebateRequest, research.DebateAnswer, DebateResult]

var debate = agent[DebateInput, research.DebateRequest, research.DebateAnswer, DebateResult]{
	activity: "Debate", label: AgentRanking, many: true,
	prompt: prompt.Debate, ask: Model.Debate,
	frame:   func(r *research.DebateRequest) frame { return frame{prompt: &r.Prompt, cache: &r.Cache} },
	prepare: prepareDebate,
	count: func(ctx context.Context, m *telemetry.Metrics, r DebateResult) {
		if r.Winner != "" {
			m.Matches(ctx, 1)
		}
	},
}

// prepareDebate checks a debate turn, reads the transcript so far, and says how the turn
// grows it; a turn an earlier attempt spoke is done without the model.
func prepareDebate(ctx context.Context, a *Activities, in DebateInput, turnID string) (debateTurn, error) {
	switch {
	case in.A == "" || in.B == "" || in.A == in.B:
		return debateTurn{}, invalid("a debate needs two different hypotheses; got %q and %q", in.A, in.B)
	case in.Of < 2:
		return debateTurn{}, invalid("a debate of %d turns has no room for both an advocate and the judge; give at least 2", in.Of)
	case in.Number < 1 || in.Number > in.Of:
		return debateTurn{}, invalid("debate turn %d of %d does not exist; number turns from 1 to %d", in.Number, in.Of, in.Of)
	}
	d, err := a.Store.Debate(ctx, in.SessionID, in.DebateID)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d = research.Debate{A: in.A, B: in.B}
	case err != nil:
		return debateTurn{}, err
	case d.A != in.A || d.B != in.B:
		return debateTurn{}, invalid("debate %s is between %s and %s, not %s and %s; use a new debate id", in.DebateID, d.A, d.B, in.A, in.B)
	}
	if in.Number > len(d.Turns)+1 {
		return debateTurn{}, invalid("debate %s has %d turns; turn %d cannot come before turn %d", in.DebateID, len(d.Turns), in.Number, len(d.Turns)+1)
	}
	hs, err := a.Store.Hypotheses(ctx, in.SessionID, []string{in.A, in.B})
	if err != nil {
		return debateTurn{}, err
	}
	c, err := a.context(ctx, in.SessionID, in.Context)
	if err != nil {
		return debateTurn{}, err
	}
	tu := debateTurn{req: research.DebateRequest{
		TurnID: turnID, Goal: in.Goal, A: hs[in.A], B: hs[in.B],
		Transcript: slices.Clone(d.Turns[:in.Number-1]), Turn: in.Number, Turns: in.Of, Context: c, Seed: in.Seed,
	}}
	last := in.Number == in.Of
	if in.Number <= len(d.Turns) { // spoken by an earlier attempt
		if last && d.Winner == "" {
			return debateTurn{}, fmt.Errorf("debate %s has its last turn but no winner; it was changed outside cosci", in.DebateID)
		}
		var res DebateResult
		if last {
			res.Winner = d.Winner
		}
		tu.done = &res
		return tu, nil
	}
	tu.keep = func(_ research.DebateRequest, ans research.DebateAnswer, usage research.Usage) (DebateResult, error) {
		turn := ans.Turn
		turn.Turn, turn.Speaker = in.Number, prompt.DebateSpeaker(in.Number, in.Of)
		turn.Argument = strings.TrimSpace(turn.Argument)
		if turn.Argument == "" {
			return DebateResult{}, malformed(fmt.Errorf("debate turn %d has no argument", in.Number))
		}
		d.Turns = append(d.Turns, turn)
		var res DebateResult
		if last {
			if ans.Winner != in.A && ans.Winner != in.B {
				return DebateResult{}, malformed(fmt.Errorf("winner %q is neither %s nor %s", ans.Winner, in.A, in.B))
			}
			d.Winner, d.Reasoning = ans.Winner, strings.TrimSpace(ans.Reasoning)
			res.Winner = ans.Winner
		}
		if err := a.Store.PutDebate(ctx, in.SessionID, in.DebateID, d); err != nil {
			return DebateResult{}, err
		}
		res.Usage = usage
		return res, nil
	}
	return tu, nil
}
