package activities

// The agents' declarations, in one list: every model turn cosci takes is one of these,
// run by runTurn (turn.go). Each lives in the file of its agent: supervisor.go,
// generation.go, reflection.go, ranking.go, metareview.go. docs/design.md ("Adding an
// agent") says how to add one; TestEveryAgentIsDeclared checks that each has what a turn
// needs, that the offline simulator answers it, and that the docs list it.

import (
	"context"
	"fmt"
)

// declared is an agent's declaration whatever its types, as the list holds it.
type declared interface {
	// names are the activity's method name and the agent's label (turn records, metrics).
	names() (activity, label string)
	// complete says which of what every declaration must give is missing ("" if none).
	complete() string
	// simulate asks m for an answer to req, which must be the agent's request type.
	simulate(ctx context.Context, m Model, req any) error
}

// agents are every model turn's declaration, in the order of a session.
var agents = []declared{planning, generation, reflection, comparison, debate, evolution, metaReview, overview}

func (ag agent[In, Req, Ans, Res]) names() (string, string) { return ag.activity, ag.label }

func (ag agent[In, Req, Ans, Res]) complete() string {
	switch {
	case ag.activity == "" || ag.label == "":
		return "a name (activity) or a metrics label (label)"
	case ag.prompt == nil:
		return "a prompt"
	case ag.ask == nil:
		return "a model call (ask), which parses the answer"
	case ag.frame == nil || ag.prepare == nil:
		return "a frame or a prepare"
	case (ag.loop == nil) != (ag.step == nil) || (ag.loop == nil) != (ag.refs == nil):
		return "all three of loop, step and refs (an agent that may call tools), or none"
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
