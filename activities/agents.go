package activities

// The agents: every model turn cosci takes is a declaration (agent, turn.go), run by
// runTurn. An agent's declaration, its activity method, what its turn reads before the
// model call (prepare) and keeps after it are in the file of its agent: supervisor.go,
// generation.go, reflection.go, ranking.go, metareview.go; this file holds what reads
// them all. docs/design.md ("Adding an agent") says how to add one;
// TestEveryAgentIsDeclared checks that each has what a turn
// needs, that the offline simulator answers it, and that the docs list it.

import (
	"context"
	"fmt"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/research"
)

// agents are the declarations, for what reads them all: the declarations' test. Each
// agent's file declares it (declare), so that a new agent is added in its file alone; they
// are in the order Go initializes them (by file name, then in each file).
var agents []declared

// declare adds ag to agents, and returns it.
func declare[In input, Req, Ans, Res any](ag agent[In, Req, Ans, Res]) agent[In, Req, Ans, Res] {
	agents = append(agents, ag)
	return ag
}

// declared is an agent's declaration whatever its types, as agents holds it.
type declared interface {
	// names are the activity's method name and the agent's label (turn records, metrics).
	names() (activity, label string)
	// callsTools says whether the agent's turns may call tools.
	callsTools() bool
	// missing says what of what every declaration must give it lacks ("" if nothing).
	missing() string
	// simulate asks m for an answer to req, which must be the agent's request type (and,
	// for an agent that may call tools, for a step's too).
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
	case ag.spec.Agent == "" || ag.spec.Schema == nil || ag.spec.Parse == nil:
		return "a model call (spec: the agent, its schema and its parser)"
	case ag.spec.Agent != ag.label:
		// The model call's agent names the turn to the provider (a batch's digest) and in
		// a malformed answer's error; the label names it in records and metrics.
		return fmt.Sprintf("a model call of its own agent (spec.Agent is %q, the label %q)", ag.spec.Agent, ag.label)
	case tools != (ag.refs != nil):
		return "both loop and refs (an agent that may call tools), or neither"
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
	if _, _, err := provider.Ask(ctx, m, ag.spec, r, "", research.Cache{}, nil); err != nil || ag.loop == nil {
		return err
	}
	_, _, err := provider.Ask(ctx, m, ag.spec, r, "", research.Cache{}, &research.Tooling{})
	return err
}
