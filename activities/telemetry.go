package activities

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/telemetry"
	"github.com/cosci-dev/cosci/internal/tools"
)

// observeTurn starts a span for a provider turn, a child of the activity's when the
// worker traces, and returns the context to call the model in and what ends the turn:
// the span, and the turn's line in the metrics (outcome, time, slot wait, what its calls
// spent whatever the outcome). stored is a turn that found its earlier result.
func (a *Activities) observeTurn(ctx context.Context, t Turn, agent string) (context.Context, func(err error, spent research.Usage, stored bool)) {
	prov, model := provider.ModelName(t.Provider, t.Model)
	ctx, span := tracer(ctx).Start(ctx, "turn "+agent, trace.WithAttributes(
		attribute.String("cosci.agent", agent), attribute.String("cosci.provider", prov),
		attribute.String("cosci.model", model), attribute.Int("cosci.round", t.Round)))
	began, waited := time.Now(), slotWait(ctx)
	return ctx, func(err error, spent research.Usage, stored bool) {
		o := outcome(providerError(err)) // classified as the workflow will see it
		if stored {
			o = "stored"
		}
		span.SetAttributes(attribute.String("cosci.outcome", o),
			attribute.Int("cosci.prompt_tokens", spent.PromptTokens), attribute.Int("cosci.completion_tokens", spent.CompletionTokens),
			attribute.Int("cosci.cached_tokens", spent.CachedTokens), attribute.Float64("cosci.cost_usd", spent.CostUSD))
		if err != nil {
			span.SetStatus(codes.Error, o)
		}
		span.End()
		a.Metrics.Turn(ctx, telemetry.Turn{Agent: agent, Provider: prov, Model: model, Outcome: o,
			Took: time.Since(began), Waited: waited, Usage: spent})
	}
}

// observeTool starts a span for a tool call and returns what ends it: the span, and the
// call's line in the metrics. A tool name the workers do not know (a model may make one
// up) is counted as "unknown", so that no label takes a model's words.
func (a *Activities) observeTool(ctx context.Context, name string) (context.Context, func(tools.Outcome, error)) {
	ctx, span := tracer(ctx).Start(ctx, "tool "+name)
	began := time.Now()
	return ctx, func(out tools.Outcome, err error) {
		o := "ok"
		switch {
		case err != nil:
			o = "failed"
			span.SetStatus(codes.Error, err.Error())
		case out.IsError:
			o = "tool_error"
		}
		span.SetAttributes(attribute.String("cosci.outcome", o))
		span.End()
		server, tool, bad := research.SplitTool(name)
		var unknown *tools.UnknownError
		if bad != nil || errors.As(err, &unknown) {
			server, tool = "unknown", "unknown"
		}
		a.Metrics.ToolCall(ctx, server, tool, o, time.Since(began))
	}
}

// tracer is the tracer of the span the context carries: the activity's, when the worker's
// Temporal client traces (the OpenTelemetry interceptor), and otherwise one that records
// nothing.
func tracer(ctx context.Context) trace.Tracer {
	return trace.SpanFromContext(ctx).TracerProvider().Tracer("cosci")
}

// slotWait is how long this activity waited in its queue for a worker slot: from its
// scheduling to its start, known for a first attempt only (a retry's scheduling time is
// not given to the worker); -1 when unknown.
func slotWait(ctx context.Context) time.Duration {
	if !activity.IsActivity(ctx) {
		return -1
	}
	info := activity.GetInfo(ctx)
	if info.Attempt != 1 || info.ScheduledTime.IsZero() || info.StartedTime.Before(info.ScheduledTime) {
		return -1
	}
	return info.StartedTime.Sub(info.ScheduledTime)
}

// outcome names how a turn ended, by the kinds the workflow tells apart.
func outcome(err error) string {
	var app *temporal.ApplicationError
	var canceled *temporal.CanceledError
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, context.Canceled) || errors.As(err, &canceled):
		return "canceled"
	case errors.As(err, &app):
		switch app.Type() {
		case ErrMalformedAnswer:
			return "malformed"
		case ErrProviderAuth:
			return "auth"
		case ErrProviderRateLimit:
			return "rate_limited"
		case ErrProviderRequest:
			return "request"
		case ErrStoreUnavailable, ErrStoreDamaged:
			return "store"
		}
	}
	return "failed"
}
