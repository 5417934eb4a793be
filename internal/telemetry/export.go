package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// SecondsBuckets are the histogram buckets, in seconds, of every duration: the SDK's (as
// Temporal's published Go SDK dashboards read them, *_seconds_bucket) and cosci's. They
// span a millisecond store read to a ten-minute model turn.
var SecondsBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// Exporter serves a worker's metrics for Prometheus: the Temporal SDK's (through the
// meter SDKMeter returns) and cosci's own (Metrics), with the Go runtime's and the
// process's, on /metrics.
type Exporter struct {
	provider *sdkmetric.MeterProvider
	registry *prometheus.Registry
	metrics  *Metrics
	server   *http.Server
	listener net.Listener
}

// NewExporter makes the meter provider and its Prometheus registry.
func NewExporter() (*Exporter, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, fmt.Errorf("cannot make the Prometheus exporter: %w", err)
	}
	seconds := sdkmetric.NewView(sdkmetric.Instrument{Unit: "s"},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: SecondsBuckets}})
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithView(seconds))
	m, err := NewMetrics(mp.Meter("cosci"))
	if err != nil {
		return nil, err
	}
	return &Exporter{provider: mp, registry: reg, metrics: m}, nil
}

// SDKMeter is the meter for the Temporal SDK's metrics handler.
func (e *Exporter) SDKMeter() metric.Meter { return e.provider.Meter("temporal-sdk-go") }

// Metrics are cosci's instruments on this exporter.
func (e *Exporter) Metrics() *Metrics { return e.metrics }

// Handler serves the metrics in Prometheus's text format.
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{})
}

// Listen serves /metrics on addr (host:port; ":9464" for every interface) until Close.
// It returns once the address is bound, so a port already in use is an error here.
func (e *Exporter) Listen(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot serve metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.Handler())
	e.listener = l
	e.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	// Serve returns only when closed, or when the bound listener fails; then the scrapes
	// fail, which is what Prometheus alerts on.
	go e.server.Serve(l)
	return nil
}

// Addr is the address /metrics is served on, once Listen succeeded.
func (e *Exporter) Addr() string {
	if e.listener == nil {
		return ""
	}
	return e.listener.Addr().String()
}

// ObserveSessions reports the number of sessions in each state (cosci_sessions{state}),
// asking count at most once per every (each scrape would otherwise query visibility).
// Every worker reports the whole deployment's count: take max() across workers.
func (e *Exporter) ObserveSessions(states []string, every time.Duration, count func(ctx context.Context, state string) (int64, error)) error {
	g, err := e.provider.Meter("cosci").Int64ObservableGauge("cosci_sessions", metric.WithUnit("{session}"),
		metric.WithDescription("Research sessions in each state, as Temporal's visibility counts them (the same on every worker: take max)."))
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var last time.Time
	var counts map[string]int64 // nil until visibility first answered
	refresh := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		fresh := map[string]int64{}
		for _, s := range states {
			n, err := count(ctx, s)
			if err != nil {
				return err
			}
			fresh[s] = n
		}
		counts, last = fresh, time.Now()
		return nil
	}
	_, err = e.provider.Meter("cosci").RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		mu.Lock()
		defer mu.Unlock()
		var err error
		if time.Since(last) >= every {
			err = refresh(ctx) // on failure the last counts stand; the error reaches the exporter
		}
		if counts != nil {
			for _, s := range states {
				o.ObserveInt64(g, counts[s], metric.WithAttributes(attribute.String("state", s)))
			}
		}
		return err
	}, g)
	return err
}

// Close stops serving and flushes nothing more.
func (e *Exporter) Close(ctx context.Context) error {
	var errs []error
	if e.server != nil {
		errs = append(errs, e.server.Shutdown(ctx))
	}
	errs = append(errs, e.provider.Shutdown(ctx))
	return errors.Join(errs...)
}
