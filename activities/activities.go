// Package activities holds cosci's activities: the only code that calls a model or touches
// the session store. Each is a thin adapter; the science lives in internal/.
//
// Provider turns are idempotent by turn ID: the first success is stored, and a retried or
// re-run turn returns the stored result instead of asking the model again. So a worker
// killed mid-turn never makes a hypothesis twice.
package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/notify"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/internal/telemetry"
)

// Model is what a provider turn needs from a model: one method per agent task. It is the
// provider package's interface, which the offline simulator and the real providers
// implement, so the worker's provider registry serves as a Resolver as it is.
type Model = provider.Model

// Resolver finds the model a turn names by its provider ("offline", "openai",
// "anthropic") and model name ("" for the provider's default). The worker's provider
// registry is one: it builds real providers from the worker's credentials.
type Resolver interface {
	Model(provider, model string) (Model, error)
}

// Activities are registered on the worker as one struct; the workflow refers to its methods.
//
// Each provider turn resolves its model from the turn's Provider and Model: first in
// Models, then through Providers. A provider neither knows fails the turn with
// ErrUnknownProvider; an error from Providers (a missing key, say) is classified like any
// provider error (see providerError).
type Activities struct {
	Store *store.Store
	// Models are fixed models by provider name, e.g. {"offline": m}, used whatever model
	// name a turn gives. Tests use them; they take precedence over Providers.
	Models map[string]Model
	// Providers resolves every other (provider, model): the worker's provider registry.
	Providers Resolver
	// AliveEvery is how often a turn in progress tells Temporal it is alive (an activity
	// heartbeat; default 2 s), so a turn on a dead worker is retried after the activity's
	// heartbeat timeout, not its whole timeout. (The heartbeat session is another thing.)
	AliveEvery time.Duration
	// Sessions finds sessions through Temporal's visibility (the worker's client), to route
	// a message to the most recent foreground session.
	Sessions Lister
	// Tools are the worker's tool servers (tools.Box); nil when it has none.
	Tools Toolbox
	// Thresholds are the proximity thresholds of embedding models, by model, where they
	// differ from the defaults (calibrated for another model).
	Thresholds map[string]proximity.Measure
	// Webhook, if set, is told when a session needs a person or ends (Notify); its Text
	// says whether it is sent the reason's text.
	Webhook *notify.Webhook
	// Encrypted says that the lab's research is encrypted (keys configured): Notify's log
	// line then keeps the reason's text out too, unless the lab opted in (NotifyText).
	Encrypted, NotifyText bool
	// Metrics count the turns, tool calls, hypotheses, matches and checkpoints; nil counts
	// nothing.
	Metrics *telemetry.Metrics

	unpriced sync.Map // provider/model -> warned: a model the price table lacks, warned of once
}

// Application error types the workflow tells apart.
const (
	ErrUnknownProvider = "UnknownProvider"
	ErrMalformedAnswer = "MalformedAnswer"
	// ErrInvalidInput is an activity input that can never succeed (an unknown evolution
	// kind, a debate turn out of order, a scientist's hypothesis without a statement).
	ErrInvalidInput = "InvalidInput"
	// ErrProviderAuth: the provider refused the worker's credentials or quota. Retrying
	// cannot help; the session suspends until a human fixes the key and resumes it.
	ErrProviderAuth = "ProviderAuth"
	// ErrProviderRequest: the provider refused the request itself (a bad model name...).
	ErrProviderRequest = "ProviderRequest"
	// ErrProviderRateLimit: the provider asked the worker to slow down (HTTP 429). It is
	// retryable; the retry waits as long as the provider asked (Retry-After).
	ErrProviderRateLimit = "ProviderRateLimit"
	// ErrStoreDamaged: a record the session needs is damaged or missing in the session
	// store. Retrying cannot help; the session suspends until a person repairs the record,
	// or carries the research on from an earlier checkpoint.
	ErrStoreDamaged = "StoreDamaged"
	// ErrStoreUnavailable: the session store could not be read or written (a full disk, a
	// database that refuses writes or is down). Retried; when the retries run out the
	// session suspends, and resumes by itself once the store works again.
	ErrStoreUnavailable = "StoreUnavailable"
)

// Turn is what every provider turn's input has in common.
type Turn struct {
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id"`
	Goal      string `json:"goal"`
	Provider  string `json:"provider"`
	Model     string `json:"model,omitempty"`
	Seed      int64  `json:"seed"`
	// Round is the session's round, for the key that groups a round's calls in a
	// provider's prompt cache (0 in sessions started before it).
	Round int `json:"round,omitempty"`
	// Batch names the batch the turn's request went out in (batch.go): the turn reads its
	// answer from the batch's result. "" for a turn that calls the provider itself.
	Batch string `json:"batch,omitempty"`
}

// Identity is the turn's identity, which every turn input has: the workflow reads it
// without knowing the input's type.
func (t Turn) Identity() Turn { return t }

// GenerateInput asks for one new hypothesis with a known id.
type GenerateInput struct {
	Turn
	HypothesisID string     `json:"hypothesis_id"`
	Focus        []string   `json:"focus,omitempty"`
	Strategy     string     `json:"strategy,omitempty"`
	Context      ContextRef `json:"context"`
	Loop         Loop       `json:"loop,omitzero"` // a turn that may call tools: the step to take
}

// GenerateResult is what the workflow keeps of a new hypothesis, or, at a step of a
// tool-using turn, the calls the model asked for instead.
type GenerateResult struct {
	HypothesisID string         `json:"hypothesis_id,omitempty"`
	Title        string         `json:"title,omitempty"`
	References   int            `json:"references,omitempty"` // how many sources it cites
	Calls        []PendingCall  `json:"calls,omitempty"`
	Usage        research.Usage `json:"usage"`
}

// ReviewInput asks for one review of one hypothesis.
type ReviewInput struct {
	Turn
	HypothesisID string     `json:"hypothesis_id"`
	Type         string     `json:"type"`
	Context      ContextRef `json:"context"`
	Loop         Loop       `json:"loop,omitzero"` // a turn that may call tools: the step to take
}

// ReviewResult is what the workflow keeps of a review.
type ReviewResult struct {
	HypothesisID string  `json:"hypothesis_id"`
	Type         string  `json:"type"`
	Score        float64 `json:"score"`  // overall, 0 to 10
	Safety       float64 `json:"safety"` // the safety mark, 0 to 10 (see research.SafetyFloor)
	Verdict      string  `json:"verdict"`
	// FailedAssumptions counts the assumptions a deep verification found to fail.
	FailedAssumptions int `json:"failed_assumptions,omitempty"`
	// Invented counts the hypothesis' citations of sources no tool returned; Unsupported
	// the others flagged: unsupported or contradicted quotes, and quotes the review found
	// contradicting or irrelevant to their claims (an altered quote is only a warning).
	// Their sum is what the workflow shows as flagged.
	Invented    int            `json:"invented,omitempty"`
	Unsupported int            `json:"unsupported,omitempty"`
	Calls       []PendingCall  `json:"calls,omitempty"` // at a step of a tool-using turn
	Usage       research.Usage `json:"usage"`
}

// CompareInput asks for the verdict of one match.
type CompareInput struct {
	Turn
	A       string     `json:"a"`
	B       string     `json:"b"`
	Context ContextRef `json:"context,omitzero"`
}

// CompareResult is the winner's id.
type CompareResult struct {
	Winner string         `json:"winner"`
	Usage  research.Usage `json:"usage"`
}

// Generate runs a generation turn: the model proposes a hypothesis, the store keeps it.
// The prompt carries the shared context in.Context names (plan, meta-review, steering).
func (a *Activities) Generate(ctx context.Context, in GenerateInput) (GenerateResult, error) {
	t, rec := in.Turn, stepRecord(in.Loop)
	if in.Loop.On() {
		t.TurnID = StepID(in.TurnID, in.Loop.Step)
	}
	return runStep(ctx, a, t, AgentGeneration, rec, func(m Model) (GenerateResult, string, error) {
		c, err := a.context(ctx, in.SessionID, in.Context)
		if err != nil {
			return GenerateResult{}, "", err
		}
		focus := in.Focus
		if len(focus) == 0 {
			focus = c.Focus
		} else if len(c.Focus) == 0 {
			c.Focus = focus
		}
		req := research.GenerateRequest{
			TurnID: t.TurnID, HypothesisID: in.HypothesisID, Goal: in.Goal,
			Focus: focus, Strategy: in.Strategy, Context: c, Seed: in.Seed,
		}
		var (
			h     research.Hypothesis
			usage research.Usage
		)
		if in.Loop.On() {
			if req.Tooling, err = a.tooling(ctx, in.SessionID, in.TurnID, in.Loop, rec); err != nil {
				return GenerateResult{}, "", err
			}
			req.Prompt, req.Cache = cached(in.Turn, AgentGeneration, prompt.Generate(req), true)
			sm, err := stepper(m)
			if err != nil {
				return GenerateResult{}, req.Prompt, err
			}
			st, u, err := sm.GenerateStep(ctx, req)
			if err != nil {
				return GenerateResult{}, req.Prompt, err
			}
			if len(st.Calls) > 0 {
				return GenerateResult{Calls: pending(rec, st), Usage: u}, req.Prompt, nil
			}
			answered(rec)
			h, usage = st.Answer, u
			h.References = citation.Resolve(h.References, foundIn(req.Tooling), nil)
		} else {
			req.Prompt, req.Cache = cached(in.Turn, AgentGeneration, prompt.Generate(req), true)
			if h, usage, err = m.Generate(ctx, req); err != nil {
				return GenerateResult{}, req.Prompt, err
			}
		}
		h.ID, h.Goal = in.HypothesisID, in.Goal
		if h.Origin == "" {
			h.Origin = "generation"
		}
		if in.Strategy != "" {
			h.Strategy = in.Strategy
		}
		out, err := a.keep(ctx, in.SessionID, h, usage)
		return out, req.Prompt, err
	})
}

// stepRecord is the record a step of a tool-using turn fills in, or nil for a turn
// without tools.
func stepRecord(l Loop) *store.Turn {
	if !l.On() {
		return nil
	}
	return &store.Turn{}
}

// Review runs a reflection turn on one hypothesis, in the shared context in.Context names.
func (a *Activities) Review(ctx context.Context, in ReviewInput) (ReviewResult, error) {
	t, rec := in.Turn, stepRecord(in.Loop)
	if in.Loop.On() {
		t.TurnID = StepID(in.TurnID, in.Loop.Step)
	}
	return runStep(ctx, a, t, AgentReflection, rec, func(m Model) (ReviewResult, string, error) {
		h, err := a.Store.Hypothesis(ctx, in.SessionID, in.HypothesisID)
		if err != nil {
			return ReviewResult{}, "", err
		}
		c, err := a.context(ctx, in.SessionID, in.Context)
		if err != nil {
			return ReviewResult{}, "", err
		}
		req := research.ReviewRequest{TurnID: t.TurnID, Goal: in.Goal, Type: in.Type, Hypothesis: h, Context: c, Seed: in.Seed}
		var (
			r     research.Review
			usage research.Usage
		)
		if in.Loop.On() {
			if req.Tooling, err = a.tooling(ctx, in.SessionID, in.TurnID, in.Loop, rec); err != nil {
				return ReviewResult{}, "", err
			}
			req.Prompt, req.Cache = cached(in.Turn, AgentReflection, prompt.Review(req), true)
			sm, err := stepper(m)
			if err != nil {
				return ReviewResult{}, req.Prompt, err
			}
			st, u, err := sm.ReviewStep(ctx, req)
			if err != nil {
				return ReviewResult{}, req.Prompt, err
			}
			if len(st.Calls) > 0 {
				return ReviewResult{HypothesisID: h.ID, Type: in.Type, Calls: pending(rec, st), Usage: u}, req.Prompt, nil
			}
			answered(rec)
			r, usage = st.Answer, u
			r.References = citation.Resolve(r.References, foundIn(req.Tooling), nil)
		} else {
			req.Prompt, req.Cache = cached(in.Turn, AgentReflection, prompt.Review(req), true)
			if r, usage, err = m.Review(ctx, req); err != nil {
				return ReviewResult{}, req.Prompt, err
			}
		}
		r.HypothesisID, r.Type = h.ID, in.Type
		if r.Reviewer == "" {
			r.Reviewer = "agent"
		}
		if in.Type == research.ReviewDeepVerification && len(r.Assumptions) == 0 {
			return ReviewResult{}, req.Prompt, malformed(errors.New("a deep verification review lists no assumptions"))
		}
		if err := a.checkCitations(ctx, in.SessionID, h, &r); err != nil {
			return ReviewResult{}, req.Prompt, err
		}
		if err := a.Store.PutReview(ctx, in.SessionID, 0, r); err != nil {
			return ReviewResult{}, req.Prompt, err
		}
		failed := 0
		for _, as := range r.Assumptions {
			if as.Verdict == "fails" {
				failed++
			}
		}
		res := ReviewResult{
			HypothesisID: h.ID, Type: in.Type, Score: r.Scores.Overall(), Safety: r.Scores.Safety,
			Verdict: r.Verdict, FailedAssumptions: failed, Usage: usage,
		}
		for _, c := range r.Citations {
			switch {
			case c.Verdict == research.CitationInvented:
				res.Invented++
			case c.Verdict == research.CitationContradicted, c.Verdict == research.CitationUnsupported,
				c.Support == research.SupportContradicts, c.Support == research.SupportIrrelevant:
				res.Unsupported++
			}
		}
		return res, req.Prompt, nil
	})
}

// Compare runs a ranking turn: one match between two hypotheses.
func (a *Activities) Compare(ctx context.Context, in CompareInput) (CompareResult, error) {
	return runTurn(ctx, a, in.Turn, AgentRanking, func(m Model) (CompareResult, string, error) {
		hs, err := a.Store.Hypotheses(ctx, in.SessionID, []string{in.A, in.B})
		if err != nil {
			return CompareResult{}, "", err
		}
		shared, err := a.context(ctx, in.SessionID, in.Context)
		if err != nil {
			return CompareResult{}, "", err
		}
		req := research.CompareRequest{TurnID: in.TurnID, Goal: in.Goal, A: hs[in.A], B: hs[in.B], Context: shared, Seed: in.Seed}
		req.Prompt, req.Cache = cached(in.Turn, AgentRanking, prompt.Compare(req), true)
		c, usage, err := m.Compare(ctx, req)
		if err != nil {
			return CompareResult{}, req.Prompt, err
		}
		if c.Winner != in.A && c.Winner != in.B {
			return CompareResult{}, req.Prompt, malformed(fmt.Errorf("winner %q is neither %s nor %s", c.Winner, in.A, in.B))
		}
		return CompareResult{Winner: c.Winner, Usage: usage}, req.Prompt, nil
	})
}

// runTurn is the turn lifecycle every provider turn shares: return the stored result if
// this turn already succeeded; otherwise call the model while keeping the activity alive, and store the
// result before returning it. Storing last makes the turn record the commit point.
func runTurn[R any](ctx context.Context, a *Activities, t Turn, agent string, call func(Model) (R, string, error)) (R, error) {
	return runStep(ctx, a, t, agent, nil, call)
}

// runStep is runTurn for a step of a tool-using turn: rec, filled in by call, is the
// step's part of the conversation, stored with the step's record.
func runStep[R any](ctx context.Context, a *Activities, t Turn, agent string, rec *store.Turn, call func(Model) (R, string, error)) (_ R, err error) {
	var zero R
	ctx, end := a.observeTurn(ctx, t, agent)
	var spent research.Usage // what the model calls cost, whatever came of them
	stored := false          // the turn had finished before: no model was called
	defer func() { end(err, spent, stored) }()
	if done, ok, err := a.Store.Turn(ctx, t.SessionID, t.TurnID); err != nil {
		return zero, err
	} else if ok {
		var r R
		if err := json.Unmarshal(done.Result, &r); err != nil {
			return zero, &store.DamagedError{SessionID: t.SessionID, Record: "the record of turn " + t.TurnID, Problem: "its result is not a " + agent + " turn's: " + err.Error()}
		}
		activity.GetLogger(ctx).Info("turn already done; returning its stored result", "turn", t.TurnID)
		stored = true
		return r, nil
	}
	var m Model
	switch stand, ok := ctx.Value(modelKey{}).(Model); {
	case ok:
		m = stand // SubmitBatch's recorder
	case t.Batch != "":
		m, err = a.batchModel(ctx, t)
	default:
		m, err = a.model(t)
	}
	if err != nil {
		return zero, err
	}
	metered := &meter{Model: m}
	stop := a.keepAlive(ctx)
	r, promptText, err := call(metered)
	stop()
	spent = metered.spent
	if err != nil {
		return zero, withUsage(providerError(err), metered.spent)
	}
	if u := usageOf(r); u.Unpriced > 0 {
		a.warnUnpriced(ctx, t)
	}
	result, err := json.Marshal(r)
	if err != nil {
		return zero, err
	}
	record := store.Turn{
		ID: t.TurnID, Agent: agent, Prompt: promptText, Result: result,
		Usage: usageOf(r), Finished: session.Stamp(time.Now()),
	}
	if rec != nil {
		record.Given, record.Said = rec.Given, rec.Said
	}
	if err := a.Store.PutTurn(ctx, t.SessionID, record); err != nil {
		return r, err
	}
	a.made(ctx, agent, r)
	return r, nil
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

func usageOf(r any) research.Usage {
	switch v := r.(type) {
	case GenerateResult:
		return v.Usage
	case ReviewResult:
		return v.Usage
	case CompareResult:
		return v.Usage
	case PlanResult:
		return v.Usage
	case DebateResult:
		return v.Usage
	case MetaReviewResult:
		return v.Usage
	case OverviewResult:
		return v.Usage
	}
	return research.Usage{}
}

// malformed marks a model answer that cannot be used; retrying the same turn would not help.
func malformed(err error) error {
	return temporal.NewNonRetryableApplicationError("model answer unusable: "+err.Error(), ErrMalformedAnswer, err)
}

// invalid marks an input that no retry can make work.
func invalid(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), ErrInvalidInput, nil)
}

// CheckpointInput is a snapshot plus the events logged since the previous checkpoint.
type CheckpointInput struct {
	Snapshot session.Snapshot `json:"snapshot"`
	Events   []session.Event  `json:"events"`
	// Base, when above 0, makes the snapshot incremental: its hypotheses, pairs and
	// similarities are only those that changed since checkpoint Base (see session.Merge).
	Base int `json:"base,omitempty"`
	// BaseSession, when set, says checkpoint Base is another session's: the one this
	// session was restored from. The checkpoint is then written whole, Base with the changes.
	BaseSession string `json:"base_session,omitempty"`
}

// LogInput is events to append to a session's event log.
type LogInput struct {
	SessionID string          `json:"session_id"`
	Events    []session.Event `json:"events"`
}

// Log appends the events a session logged after its final checkpoint to its event log, so
// the log in the store ends where the session did.
func (a *Activities) Log(ctx context.Context, in LogInput) error {
	return a.Store.PutEvents(ctx, in.SessionID, in.Events)
}

// StoreWorks checks that the session store takes a write for the session; a suspended
// session runs it, retried, to resume once a fault of the store has passed.
func (a *Activities) StoreWorks(ctx context.Context, sessionID string) error {
	return a.Store.Check(ctx, sessionID, time.Now())
}

// Checkpoint writes an immutable snapshot to the session store and returns its path.
func (a *Activities) Checkpoint(ctx context.Context, in CheckpointInput) (string, error) {
	if in.BaseSession != "" && in.BaseSession != in.Snapshot.SessionID && in.Base > 0 {
		base, err := a.Store.Checkpoint(ctx, in.BaseSession, in.Base)
		if err != nil {
			return "", fmt.Errorf("checkpoint %d builds on checkpoint %d of %s: %w", in.Snapshot.Seq, in.Base, in.BaseSession, err)
		}
		path, err := a.Store.PutCheckpoint(ctx, session.Merge(base, in.Snapshot), in.Events)
		a.Metrics.Checkpoint(ctx, err)
		return path, err
	}
	path, err := a.Store.PutCheckpointOver(ctx, in.Base, in.Snapshot, in.Events)
	a.Metrics.Checkpoint(ctx, err)
	return path, err
}

// ReportInput names the checkpoint a report is written from, and the latest meta-review.
type ReportInput struct {
	SessionID       string `json:"session_id"`
	Checkpoint      int    `json:"checkpoint"`
	MetaReviewRound int    `json:"meta_review_round,omitempty"`
}

// Report renders the research report (report.md, report.json, the Elo chart elo.svg,
// report.html and the bibliography as BibTeX and CSL-JSON, side by side) from the final checkpoint, the checkpoints before it (Elo over time) and
// the texts in the store, and returns the Markdown report's path. A text missing from the
// store renders as missing rather than failing the report.
func (a *Activities) Report(ctx context.Context, in ReportInput) (string, error) {
	snap, err := a.Store.Checkpoint(ctx, in.SessionID, in.Checkpoint)
	if err != nil {
		return "", err
	}
	history, err := a.Store.Checkpoints(ctx, in.SessionID)
	if err != nil {
		return "", err
	}
	ids := make([]string, len(snap.Hypotheses))
	for i, e := range snap.Hypotheses {
		ids[i] = e.ID
	}
	hyps, err := a.Store.Hypotheses(ctx, in.SessionID, ids)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	reviews := make(map[string][]research.Review, len(ids))
	for _, id := range ids {
		rs, err := a.Store.Reviews(ctx, in.SessionID, id)
		if err != nil {
			return "", err
		}
		reviews[id] = rs
	}
	input := report.Input{Final: snap, History: history, Hypotheses: hyps, Reviews: reviews}
	if input.Plan, err = optional(a.Store.Plan(ctx, in.SessionID)); err != nil {
		return "", err
	}
	if input.Overview, err = optional(a.Store.Overview(ctx, in.SessionID)); err != nil {
		return "", err
	}
	if in.MetaReviewRound > 0 {
		if input.MetaReview, err = optional(a.Store.MetaReview(ctx, in.SessionID, in.MetaReviewRound)); err != nil {
			return "", err
		}
	}
	files, err := report.Render(input)
	if err != nil {
		return "", err
	}
	// Every artefact but the Markdown first: report.md last says the report is whole.
	for _, f := range files.Named() {
		if f.Name == report.MarkdownFile {
			continue
		}
		if _, err := a.Store.PutFile(ctx, in.SessionID, f.Name, f.Data); err != nil {
			return "", err
		}
	}
	return a.Store.PutReport(ctx, in.SessionID, files.Markdown)
}

// optional turns a record the store may not have into a pointer: nil when it is absent.
func optional[T any](v T, err error) (*T, error) {
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// IsMalformed reports whether a turn failed because the model's answer was unusable.
func IsMalformed(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == ErrMalformedAnswer
}
