// Package activities holds cosci's activities: the only code that calls a model or touches
// the session store. Each is a thin adapter; the science lives in internal/.
//
// Provider turns are idempotent by turn ID: the first success is stored, and a retried or
// re-run turn returns the stored result instead of asking the model again. So a worker
// killed mid-turn never makes a hypothesis twice.
package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/notify"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/sandbox"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/internal/telemetry"
)

// Model is what a turn needs from a model: the answer to one step of any agent's turn,
// asked with the agent's prompt.Spec (provider.Ask). It is the provider package's
// interface, which the offline simulator and the real providers implement, so the
// worker's provider registry serves as a Resolver as it is.
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
	// KeepBatchOrder sends a batch's requests in the order the step made them, not
	// leaders first by the prefix they share (provider.Group): the cost benchmark's
	// control, to measure what the order saves.
	KeepBatchOrder bool
	// Sandbox runs analyses' queries (RunAnalysis): the worker's sandbox.Runner, with
	// SandboxCaps; nil runs the child binary found as sandbox.Runner finds it.
	Sandbox     Sandbox
	SandboxCaps sandbox.Caps

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
	// Lab are the session's experiments from the workflow's state (ids, digests, marks,
	// outcomes, the plan's prediction): the report's "Tested in the lab". Sessions
	// without experiments, and histories recorded before the field, leave it empty.
	Lab []report.LabTest `json:"lab,omitempty"`
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
	input := report.Input{Final: snap, History: history, Hypotheses: hyps, Reviews: reviews, Lab: in.Lab}
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
	if input.Analyses, err = reportAnalyses(ctx, a.Store, in.SessionID); err != nil {
		return "", err
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

// reportAnalyses are the session's analysis records as the report places them in the
// family its q-values adjust over (report.Analysis): every one, from the lab's tool too.
func reportAnalyses(ctx context.Context, st *store.Store, sessionID string) ([]report.Analysis, error) {
	recs, err := st.Analyses(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]report.Analysis, len(recs))
	for i, r := range recs {
		out[i] = report.Analysis{ID: r.ID, Hypothesis: r.Hypothesis, Experiment: r.Experiment, Kind: r.Kind, Test: r.Test, Ran: r.Ran, Refused: r.Refused}
		if r.Stats != nil {
			p := r.Stats.P
			out[i].P = &p
		}
	}
	return out, nil
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
