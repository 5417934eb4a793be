package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdkotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/telemetry"
	"github.com/cosci-dev/cosci/workflows"
)

// observability is what the worker exports: metrics on --metrics-address (the SDK's
// through the official OpenTelemetry metrics handler, and cosci's own), and traces when
// the OTEL_* environment names an exporter. Either may be off.
type observability struct {
	exporter *telemetry.Exporter
	tracing  *telemetry.Tracing
	logger   *slog.Logger
}

func observe(cfg *config, logger *slog.Logger) (*observability, error) {
	o := &observability{logger: logger}
	if cfg.metrics != "" {
		exp, err := telemetry.NewExporter()
		if err != nil {
			return nil, err
		}
		if err := exp.Listen(cfg.metrics); err != nil {
			return nil, fmt.Errorf("--metrics-address: %w", err)
		}
		o.exporter = exp
	}
	tr, err := telemetry.NewTracing(context.Background(), os.Getenv, "cosci-worker")
	if err != nil {
		o.close()
		return nil, err
	}
	o.tracing = tr
	return o, nil
}

// client sets the Temporal client's metrics handler and tracing interceptor.
func (o *observability) client(opts *client.Options) {
	if o.exporter != nil {
		opts.MetricsHandler = sdkotel.NewMetricsHandler(sdkotel.MetricsHandlerOptions{
			Meter: o.exporter.SDKMeter(),
			// The SDK's default is to panic; a metric that cannot be made is not worth a worker.
			OnError: func(err error) { o.logger.Warn("an SDK metric cannot be recorded", "error", err) },
		})
	}
	if o.tracing != nil {
		tracer, err := sdkotel.NewTracingInterceptor(sdkotel.TracerOptions{
			Tracer:            o.tracing.Tracer(),
			TextMapPropagator: propagation.TraceContext{},
		})
		if err != nil {
			o.logger.Warn("traces are off: the tracing interceptor cannot be made", "error", err)
			return
		}
		opts.Interceptors = append(opts.Interceptors, interceptor.ClientInterceptor(tracer))
	}
}

// sessions has the metrics count the deployment's sessions by state, from Temporal's
// visibility (the SessionStatus search attribute), at most twice a minute.
func (o *observability) sessions(c client.Client) error {
	if o.exporter == nil {
		return nil
	}
	states := make([]string, len(session.States))
	for i, s := range session.States {
		states[i] = string(s)
	}
	return o.exporter.ObserveSessions(states, 30*time.Second, func(ctx context.Context, state string) (int64, error) {
		n, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowType = '%s' AND %s = '%s'", workflows.WorkflowType, workflows.AttrSessionStatus, state),
		})
		return n.GetCount(), err
	})
}

func (o *observability) metrics() *telemetry.Metrics {
	if o.exporter == nil {
		return nil
	}
	return o.exporter.Metrics()
}

func (o *observability) address() string {
	if o.exporter == nil {
		return "off"
	}
	return "http://" + o.exporter.Addr() + "/metrics"
}

func (o *observability) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if o.exporter != nil {
		o.exporter.Close(ctx)
	}
	if o.tracing != nil {
		o.tracing.Close(ctx)
	}
}
