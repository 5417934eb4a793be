package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is the tracer provider the standard OpenTelemetry environment configures, or
// nil when it asks for none.
type Tracing struct {
	provider *sdktrace.TracerProvider
}

// NewTracing reads OTEL_TRACES_EXPORTER (otlp, console, none) and the variables of the
// exporter it names (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL...), and
// OTEL_SERVICE_NAME (default service, e.g. cosci-worker) and OTEL_RESOURCE_ATTRIBUTES for
// the resource. Unlike the OpenTelemetry default (otlp), no exporter set means no traces:
// a worker started without a collector sends nothing anywhere.
func NewTracing(ctx context.Context, getenv func(string) string, service string) (*Tracing, error) {
	switch v := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); v {
	case "", "none":
		return nil, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	return &Tracing{sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))}, nil
}

// Tracer is the tracer for the Temporal SDK's tracing interceptor.
func (t *Tracing) Tracer() trace.Tracer { return t.provider.Tracer("temporal-sdk-go") }

// Close sends the spans still buffered.
func (t *Tracing) Close(ctx context.Context) error { return t.provider.Shutdown(ctx) }
