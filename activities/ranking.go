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

var comparison = declare(agent[CompareInput, research.CompareRequest, research.Comparison, CompareResult]{
	activity: "Compare", label: AgentRanking, many: true, prompt: prompt.Compare, spec: prompt.CompareSpec,
	prepare: prepareCompare, count: countMatch,
})

type compareTurn = turn[research.CompareRequest, research.Comparison, CompareResult]

// prepareCompare reads the match; its verdict must name one of the two.
func prepareCompare(ctx context.Context, a *Activities, in CompareInput, turnID string) (compareTurn, error) {
	ha, hb, c, err := a.match(ctx, in.SessionID, in.A, in.B, in.Context)
	if err != nil {
		return compareTurn{}, err
	}
	keep := func(_ research.CompareRequest, v research.Comparison, usage research.Usage) (CompareResult, error) {
		if err := isWinner(v.Winner, in.A, in.B); err != nil {
			return CompareResult{}, err
		}
		return CompareResult{Winner: v.Winner, Usage: usage}, nil
	}
	req := research.CompareRequest{TurnID: turnID, Goal: in.Goal, A: ha, B: hb, Context: c, Seed: in.Seed}
	return compareTurn{req: req, keep: keep}, nil
}

// countMatch counts a match's verdict; countDebate the last turn of a debate, which
// names its winner.
func countMatch(ctx context.Context, m *telemetry.Metrics, _ CompareResult) { m.Matches(ctx, 1) }

func countDebate(ctx context.Context, m *telemetry.Metrics, r DebateResult) {
	if r.Winner != "" {
		m.Matches(ctx, 1)
	}
}

// match reads a match's two hypotheses and the shared context its prompt carries.
func (a *Activities) match(ctx context.Context, sessionID, idA, idB string, ref ContextRef) (ha, hb research.Hypothesis, c research.Context, err error) {
	hs, err := a.Store.Hypotheses(ctx, sessionID, []string{idA, idB})
	if err != nil {
		return ha, hb, c, err
	}
	c, err = a.context(ctx, sessionID, ref)
	return hs[idA], hs[idB], c, err
}

// isWinner fails a verdict that names neither side of the match.
func isWinner(winner, idA, idB string) error {
	if winner != idA && winner != idB {
		return malformed(fmt.Errorf("winner %q is neither %s nor %s", winner, idA, idB))
	}
	return nil
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

var debate = declare(agent[DebateInput, research.DebateRequest, research.DebateAnswer, DebateResult]{
	activity: "Debate", label: AgentRanking, many: true, prompt: prompt.Debate, spec: prompt.DebateSpec,
	prepare: prepareDebate, count: countDebate,
})

type debateTurn = turn[research.DebateRequest, research.DebateAnswer, DebateResult]

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
	ha, hb, c, err := a.match(ctx, in.SessionID, in.A, in.B, in.Context)
	if err != nil {
		return debateTurn{}, err
	}
	tu := debateTurn{req: research.DebateRequest{
		TurnID: turnID, Goal: in.Goal, A: ha, B: hb,
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
			if err := isWinner(ans.Winner, in.A, in.B); err != nil {
				return DebateResult{}, err
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
