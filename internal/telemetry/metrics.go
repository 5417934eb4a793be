// Package telemetry holds what a cosci worker tells the people who run it: cosci's own
// metrics beside the Temporal SDK's, served for Prometheus on /metrics, and the tracer
// that the standard OTEL_* environment variables configure.
//
// Every label is low-cardinality: agents, providers, models, outcomes, tool servers and
// tools, store operations and backends. No session id, goal or hypothesis is ever a label:
// a deployment runs thousands of sessions, and their texts are unpublished research.
package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/cosci-dev/cosci/internal/research"
)

// Metrics are cosci's own instruments. A nil *Metrics records nothing, so code that runs
// without a worker (tests, the starter) needs none.
type Metrics struct {
	turns       metric.Int64Counter
	turnSeconds metric.Float64Histogram
	slotWait    metric.Float64Histogram
	tokens      metric.Int64Counter
	cost        metric.Float64Counter
	toolCalls   metric.Int64Counter
	toolSeconds metric.Float64Histogram
	hypotheses  metric.Int64Counter
	matches     metric.Int64Counter
	checkpoints metric.Int64Counter
	storeOps    metric.Float64Histogram
	storeErrors metric.Int64Counter
}

// NewMetrics makes cosci's instruments on a meter.
func NewMetrics(m metric.Meter) (*Metrics, error) {
	var x Metrics
	var err error
	counter := func(name, unit, desc string) metric.Int64Counter {
		if err != nil {
			return nil
		}
		var c metric.Int64Counter
		c, err = m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return c
	}
	histogram := func(name, desc string) metric.Float64Histogram {
		if err != nil {
			return nil
		}
		var h metric.Float64Histogram
		h, err = m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc))
		return h
	}
	x.turns = counter("cosci_turns", "{turn}", "Provider turns finished, by agent, provider, model and outcome (ok, stored, malformed, rate_limited, auth, request, failed, canceled).")
	x.turnSeconds = histogram("cosci_turn_duration", "Time a provider turn took on the worker, model calls and repairs included.")
	x.slotWait = histogram("cosci_turn_slot_wait", "Time a provider turn waited in the turns queue for a provider slot, from its attempt's scheduling to its start.")
	x.tokens = counter("cosci_tokens", "{token}", "Tokens spent, by provider, model and kind (prompt, completion, cached, cache_write).")
	if err == nil {
		x.cost, err = m.Float64Counter("cosci_cost_usd", metric.WithDescription("Estimated cost of the provider calls from the worker's price table, by provider and model."))
	}
	x.toolCalls = counter("cosci_tool_calls", "{call}", "Tool calls, by tool server, tool and outcome (ok, tool_error, failed).")
	x.toolSeconds = histogram("cosci_tool_call_duration", "Time a tool call took, by tool server and tool.")
	x.hypotheses = counter("cosci_hypotheses", "{hypothesis}", "Hypotheses made, by how (generated, evolved, scientist).")
	x.matches = counter("cosci_matches", "{match}", "Tournament matches judged.")
	x.checkpoints = counter("cosci_checkpoints", "{checkpoint}", "Checkpoints written, by outcome.")
	x.storeOps = histogram("cosci_store_operation_duration", "Time a session store operation took, by operation and backend.")
	x.storeErrors = counter("cosci_store_errors", "{error}", "Session store operations that failed, by operation and backend.")
	if err != nil {
		return nil, err
	}
	return &x, nil
}

// Turn is one provider turn as the metrics see it.
type Turn struct {
	Agent, Provider, Model string
	// Outcome is ok, stored (a retried turn found its earlier result), or what went wrong.
	Outcome string
	Took    time.Duration
	// Waited is how long the turn waited for a provider slot; negative when unknown.
	Waited time.Duration
	Usage  research.Usage
}

// Turn records a provider turn: its outcome and time, and what its calls spent whatever
// the outcome (a malformed answer's tokens are paid for too).
func (m *Metrics) Turn(ctx context.Context, t Turn) {
	if m == nil {
		return
	}
	pm := attribute.NewSet(attribute.String("provider", t.Provider), attribute.String("model", t.Model))
	all := attribute.NewSet(attribute.String("agent", t.Agent), attribute.String("provider", t.Provider),
		attribute.String("model", t.Model), attribute.String("outcome", t.Outcome))
	m.turns.Add(ctx, 1, metric.WithAttributeSet(all))
	if t.Outcome == "stored" {
		return // no model was called
	}
	byAgent := metric.WithAttributes(attribute.String("agent", t.Agent), attribute.String("provider", t.Provider), attribute.String("model", t.Model))
	m.turnSeconds.Record(ctx, t.Took.Seconds(), byAgent)
	if t.Waited >= 0 {
		m.slotWait.Record(ctx, t.Waited.Seconds(), metric.WithAttributes(attribute.String("provider", t.Provider)))
	}
	u := t.Usage
	for _, k := range []struct {
		kind string
		n    int
	}{{"prompt", u.PromptTokens}, {"completion", u.CompletionTokens}, {"cached", u.CachedTokens}, {"cache_write", u.CacheWriteTokens}} {
		if k.n > 0 {
			m.tokens.Add(ctx, int64(k.n), metric.WithAttributeSet(attribute.NewSet(append(pm.ToSlice(), attribute.String("kind", k.kind))...)))
		}
	}
	if u.CostUSD > 0 {
		m.cost.Add(ctx, u.CostUSD, metric.WithAttributeSet(pm))
	}
}

// ToolCall records a call to a tool server's tool.
func (m *Metrics) ToolCall(ctx context.Context, server, tool, outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.toolCalls.Add(ctx, 1, metric.WithAttributes(attribute.String("server", server), attribute.String("tool", tool), attribute.String("outcome", outcome)))
	m.toolSeconds.Record(ctx, took.Seconds(), metric.WithAttributes(attribute.String("server", server), attribute.String("tool", tool)))
}

// Hypotheses counts n hypotheses made one way: generated, evolved or scientist.
func (m *Metrics) Hypotheses(ctx context.Context, how string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.hypotheses.Add(ctx, int64(n), metric.WithAttributes(attribute.String("how", how)))
}

// Matches counts n tournament matches judged.
func (m *Metrics) Matches(ctx context.Context, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.matches.Add(ctx, int64(n))
}

// Checkpoint counts a checkpoint written, or that failed to be.
func (m *Metrics) Checkpoint(ctx context.Context, err error) {
	if m == nil {
		return
	}
	m.checkpoints.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", outcome(err))))
}

// StoreOp records a session store operation of a backend (dir, postgres).
func (m *Metrics) StoreOp(ctx context.Context, backend, op string, took time.Duration, err error) {
	if m == nil {
		return
	}
	attrs := metric.WithAttributes(attribute.String("backend", backend), attribute.String("operation", op))
	m.storeOps.Record(ctx, took.Seconds(), attrs)
	if err != nil {
		m.storeErrors.Add(ctx, 1, attrs)
	}
}

func outcome(err error) string {
	if err != nil {
		return "failed"
	}
	return "ok"
}
