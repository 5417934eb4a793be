package activities

// The one runner of every model turn. Each agent is a declaration (agent): its name, its
// prompt, its model call (a prompt.Spec), whether it may call tools, and what it reads
// before the call and keeps after it. runTurn does, once, what every turn does with a
// declaration: return the stored result of a turn that already succeeded, choose the model
// (a batch's answer or the provider), keep the activity alive, ask the model one step of
// the tool loop or one plain call (provider.Ask, the same for every model), count what the
// call spent whatever came of it, and record the turn. So a new agent
// repeats none of it, and a change to what every turn does is made here once.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/internal/telemetry"
)

// input is what every turn's activity input has: the turn's identity (Turn, embedded).
type input interface{ Identity() Turn }

// agent declares one kind of model turn: In is the activity's input, Req the request the
// model is asked (package research), Ans the model's answer, Res the activity's result.
// Generic over the four so that each declaration is checked by the compiler: a prompt
// builder for another request, or a model call answering another type, does not build.
type agent[In input, Req, Ans, Res any] struct {
	activity string // the activity's method name, as the worker registers it
	// label is the agent as turn records, the metrics' "agent" label, the cache key and
	// the Web UI name it (AgentGeneration, ...); several activities may share one.
	label string
	// many says the agent takes many turns a round, so marking its prompt's prefix for a
	// provider's cache pays for the write (research.Cache.Breakpoints).
	many bool
	// prompt renders the request's prompt (package prompt).
	prompt func(Req) prompt.Text
	// spec is the agent's model call (package prompt): its schema and its parser, with
	// which any model is asked (provider.Ask).
	spec prompt.Spec[Req, Ans]
	// prepare checks the input, reads what the prompt needs from the store, and builds
	// the request (turnID is the turn's, or its step's); what it returns also says what
	// to make of the answer.
	prepare func(ctx context.Context, a *Activities, in In, turnID string) (turn[Req, Ans, Res], error)
	// count adds what a finished turn made to the metrics (hypotheses, matches); nil for
	// an agent that makes none of them.
	count func(context.Context, *telemetry.Metrics, Res)

	// An agent whose turns may call tools (the workflow runs the loop; see tools.go)
	// also declares these two, and its prepare gives each turn its asked; the others
	// leave them nil.
	loop func(In) Loop                    // where the turn is in its loop
	refs func(*Ans) *[]research.Reference // the answer's references, resolved against what the tools returned
}

// frame is where a request holds what the runner fills in.
type frame struct {
	prompt  *string
	cache   *research.Cache
	tooling *research.Tooling
	context *research.Context // the shared context, where the request has one: the lab's results a turn may cite
}

// framed points at the fields of a request the runner fills in: Prompt and Cache, which
// every request of package research has, and Tooling, which the requests of the agents
// that may call tools have (nil where there is none). Found by name because Go's generics
// cannot reach a field of a type parameter; a field missing or of another type is nil,
// and TestEveryAgentIsDeclared fails on it (agent.missing).
func framed(req any) frame {
	v := reflect.ValueOf(req).Elem()
	field := func(name string) any {
		if v.Kind() != reflect.Struct {
			return nil
		}
		if f := v.FieldByName(name); f.IsValid() {
			return f.Addr().Interface()
		}
		return nil
	}
	p, _ := field("Prompt").(*string)
	c, _ := field("Cache").(*research.Cache)
	t, _ := field("Tooling").(*research.Tooling)
	rc, _ := field("Context").(*research.Context)
	return frame{prompt: p, cache: c, tooling: t, context: rc}
}

// turn is one turn as its agent's prepare made it: the request, and what to make of the
// answer.
type turn[Req, Ans, Res any] struct {
	req Req
	// keep checks the answer, stores what it made, and returns the activity's result.
	keep func(req Req, ans Ans, u research.Usage) (Res, error)
	// done, when set, is the result of a turn that needs no model call (a debate turn
	// an earlier attempt spoke): the runner renders the prompt, for the turn's record,
	// and returns done.
	done *Res
	// asked is the result of a step that asked for tool calls instead of answering; the
	// prepare of an agent that may call tools must give it.
	asked func(calls []PendingCall, u research.Usage) Res
	// inherited are references the answer may cite without a tool returning them in
	// this turn (an evolved hypothesis' parents').
	inherited []research.Reference
}

// loopOf is where a turn is in its tool loop: the zero Loop for a turn without tools.
func (ag agent[In, Req, Ans, Res]) loopOf(in In) Loop {
	if ag.loop == nil {
		return Loop{}
	}
	return ag.loop(in)
}

// runTurn runs one turn of ag: it returns the stored result if this turn (or step)
// already succeeded; otherwise it asks the model while keeping the activity alive, and
// stores the turn's record before returning the result. Storing last makes the turn
// record the commit point. What the model call spent is counted, and attached to a
// failure, whatever came of it: a malformed answer and its repair cost tokens too.
func runTurn[In input, Req, Ans, Res any](ctx context.Context, a *Activities, ag agent[In, Req, Ans, Res], in In) (_ Res, err error) {
	var zero Res
	t, l := in.Identity(), ag.loopOf(in)
	var rec *store.Turn // a step of a tool-using turn: its part of the conversation, stored with its record
	if l.On() {
		t.TurnID, rec = StepID(t.TurnID, l.Step), &store.Turn{}
	}
	ctx, end := a.observeTurn(ctx, t, ag.label)
	call := turnCall{turnID: t.TurnID, loop: l, rec: rec}
	stored := false // the turn had finished before: no model was called
	defer func() { end(err, call.spent, stored) }()
	if done, ok, err := a.Store.Turn(ctx, t.SessionID, t.TurnID); err != nil {
		return zero, err
	} else if ok {
		var r Res
		if err := json.Unmarshal(done.Result, &r); err != nil {
			return zero, &store.DamagedError{SessionID: t.SessionID, Record: "the record of turn " + t.TurnID, Problem: "its result is not a " + ag.label + " turn's: " + err.Error()}
		}
		activity.GetLogger(ctx).Info("turn already done; returning its stored result", "turn", t.TurnID)
		stored = true
		return r, nil
	}
	if call.model, err = a.turnModel(ctx, t); err != nil {
		return zero, err
	}
	stop := a.keepAlive(ctx)
	r, promptText, err := take(ctx, a, ag, in, &call)
	stop()
	if err != nil {
		return zero, withUsage(providerError(err), call.spent)
	}
	if call.spent.Unpriced > 0 {
		a.warnUnpriced(ctx, t)
	}
	result, err := json.Marshal(r)
	if err != nil {
		return zero, err
	}
	record := store.Turn{
		ID: t.TurnID, Agent: ag.label, Prompt: promptText, Result: result,
		Usage: call.spent, Finished: session.Stamp(time.Now()),
	}
	if call.asked != nil {
		name, model := provider.ModelName(t.Provider, t.Model)
		record.Cache = provider.CacheLifetime(name, model, *call.asked)
	}
	if rec != nil {
		record.Given, record.Said = rec.Given, rec.Said
	}
	if err := a.Store.PutTurn(ctx, t.SessionID, record); err != nil {
		return r, err
	}
	if ag.count != nil {
		ag.count(ctx, a.Metrics, r)
	}
	return r, nil
}

// turnCall is the one model call of a turn: what take is given (the model, the turn's
// or step's id, its place in the tool loop and its conversation) and what it leaves
// besides the result (what the call spent, how the prompt was asked to be cached).
type turnCall struct {
	model  Model
	turnID string
	loop   Loop
	rec    *store.Turn // a step of a tool-using turn: its part of the conversation, stored with its record

	spent research.Usage  // what the model call cost, whatever came of it
	asked *research.Cache // how the model was asked to cache the prompt; nil: not asked
}

// take is the agent's part of a turn: prepare the request, fill in its tooling (a step
// of a tool-using turn), prompt and cache, make the one model call, and keep the answer.
// It returns the rendered prompt for the turn's record, adds what the call spent to
// c.spent, and points c.asked at the prompt's cache when it asks the model.
func take[In input, Req, Ans, Res any](ctx context.Context, a *Activities, ag agent[In, Req, Ans, Res], in In, c *turnCall) (Res, string, error) {
	var zero Res
	l, rec := c.loop, c.rec
	tu, err := ag.prepare(ctx, a, in, c.turnID)
	if err != nil {
		return zero, "", err
	}
	f := framed(&tu.req)
	t := in.Identity()
	if l.On() {
		if *f.tooling, err = a.tooling(ctx, t.SessionID, t.TurnID, l, rec); err != nil {
			return zero, "", err
		}
	}
	*f.prompt, *f.cache = cached(t, ag.label, ag.prompt(tu.req), ag.many, batching(ctx, t))
	text := *f.prompt
	if tu.done != nil {
		return *tu.done, text, nil
	}
	asked := *f.cache
	c.asked = &asked
	var tooling *research.Tooling // a step of a tool-using turn: its tools and conversation
	if l.On() {
		tooling = f.tooling
	}
	st, u, err := provider.Ask(ctx, c.model, ag.spec, tu.req, text, *f.cache, tooling)
	c.spent = c.spent.Add(u)
	if err != nil {
		return zero, text, err
	}
	lab := labFound(f.context)
	if l.On() {
		if len(st.Calls) > 0 {
			return tu.asked(pending(rec, st), u), text, nil
		}
		answered(rec)
	}
	// An answer's references are resolved against what the turn read: its tools' results
	// and the lab's results its prompt carried.
	if ag.refs != nil && (l.On() || len(lab) > 0) {
		var found []citation.Result
		if l.On() {
			found = foundIn(*tooling)
		}
		refs := ag.refs(&st.Answer)
		*refs = citation.Resolve(*refs, append(found, lab...), tu.inherited)
	}
	res, err := tu.keep(tu.req, st.Answer, u)
	return res, text, err
}

// turnModel is the model a turn asks: SubmitBatch's recorder while a batch is made, the
// batch's stored answer for a turn whose request went out in one, else the provider.
func (a *Activities) turnModel(ctx context.Context, t Turn) (Model, error) {
	switch stand, ok := ctx.Value(modelKey{}).(Model); {
	case ok:
		return stand, nil
	case t.Batch != "":
		return a.batchModel(ctx, t)
	}
	return a.model(t)
}

// warnUnpriced says, once per model in this worker's life, that a model has no price: its
// turns' cost is unknown, not free.
func (a *Activities) warnUnpriced(ctx context.Context, t Turn) {
	if _, warned := a.unpriced.LoadOrStore(t.Provider+"/"+t.Model, true); warned {
		return
	}
	activity.GetLogger(ctx).Warn("the model has no price in this worker's price table: its turns' cost is counted as unknown, and a session with a dollar budget suspends; give it a price with --prices FILE",
		"provider", t.Provider, "model", t.Model)
}

// model resolves the model a turn names: first in Models, then through Providers.
func (a *Activities) model(t Turn) (Model, error) {
	if m, ok := a.Models[t.Provider]; ok {
		return m, nil
	}
	if a.Providers == nil {
		return nil, unknownProvider(t.Provider, nil)
	}
	m, err := a.Providers.Model(t.Provider, t.Model)
	switch {
	case err == nil && m == nil:
		return nil, unknownProvider(t.Provider, nil)
	case err != nil:
		return nil, resolveError(t.Provider, err)
	}
	return m, nil
}

// keepAlive records an activity heartbeat every AliveEvery until stop is called.
func (a *Activities) keepAlive(ctx context.Context) (stop func()) {
	every := a.AliveEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

// context loads the shared context a turn's ContextRef names.
func (a *Activities) context(ctx context.Context, sessionID string, ref ContextRef) (research.Context, error) {
	c := research.Context{Focus: ref.Focus, Feedback: ref.Feedback}
	if ref.Plan {
		p, err := a.Store.Plan(ctx, sessionID)
		if err != nil {
			return c, fmt.Errorf("load the research plan for the prompt: %w", err)
		}
		c.Plan = &p
	}
	if ref.MetaReviewRound > 0 {
		m, err := a.Store.MetaReview(ctx, sessionID, ref.MetaReviewRound)
		if err != nil {
			return c, fmt.Errorf("load the meta-review for the prompt: %w", err)
		}
		c.MetaReview = &m
	}
	if len(ref.Remarks) > 0 {
		msgs, err := a.Store.Messages(ctx, sessionID, ref.Remarks)
		if err != nil {
			return c, fmt.Errorf("load the scientist's remarks for the prompt: %w", err)
		}
		c.Remarks = prompt.Remarks(msgs, len(ref.Remarks))
	}
	if len(ref.Lab) > 0 {
		lab, err := a.labResults(ctx, sessionID, ref.Lab)
		if err != nil {
			return c, err
		}
		c.Lab = lab
	}
	return c, nil
}

// cached is a rendered prompt as a request carries it: its text, and how a provider may
// cache it. The calls of one agent in one round of a session share a key (a provider that
// routes by key sends them where their prefix is cached); breakpoints says whether the
// turn is one of many of its agent in a round, so that marking its prefix for the cache
// pays for the write. batch says the turn goes out in a provider's batch: its prefix is
// asked to live long (research.Cache.Long), since a batch runs minutes to hours after its
// requests are sent and the one before it, so a 5-minute cache written by the first of
// its requests, or by the turns before the batch, is gone by the time the others read it;
// the long lifetime (Anthropic's 1 hour, OpenAI's extended retention) outlives most
// batches, and its higher write price is paid once for the many reads.
func cached(t Turn, agent string, p prompt.Text, breakpoints, batch bool) (string, research.Cache) {
	return p.Prompt, research.Cache{Prefix: p.Prefix, Key: CacheKey(t.SessionID, t.Round, agent), Breakpoints: breakpoints, Long: batch}
}

// batching says whether a turn's request goes in a batch: it is recorded for one
// (SubmitBatch runs it with a recorder in ctx) or runs from one (t.Batch). Both must ask
// alike, so that a request the batch failed, which the turn then sends itself, still
// reads the long-lived prefix the batch wrote.
func batching(ctx context.Context, t Turn) bool {
	_, recording := ctx.Value(modelKey{}).(Model)
	return recording || t.Batch != ""
}

// CacheKey names the calls of one agent in one round of a session: a short hash, since a
// session's id may be long and the key is sent to the provider.
func CacheKey(sessionID string, round int, agent string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s", sessionID, round, agent)))
	return "cosci-" + hex.EncodeToString(sum[:12])
}
