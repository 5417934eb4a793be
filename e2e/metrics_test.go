package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/cosci-dev/cosci/internal/research"
)

// TestMetricsAndTraces runs a session on a worker that serves /metrics and exports its
// traces over OTLP to a collector of the test's, scrapes it twice during the
// session and sees the turn counters move, with the SDK's metrics beside cosci's, durations
// in seconds, and no session id or goal in any label. The traces put each model turn under
// the activity that ran it, in the trace of the workflow that scheduled it.
func TestMetricsAndTraces(t *testing.T) {
	const goal = "Find why some bacteria tolerate antibiotics without resistance genes"
	spans := &collector{}
	otlp := httptest.NewServer(spans)
	defer otlp.Close()
	w := startWorkerEnv(t, t.TempDir(), []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + otlp.URL, "OTEL_BSP_SCHEDULE_DELAY=200"},
		"--offline-latency", "100ms", "--metrics-address", "127.0.0.1:0")
	url := metricsURL(t, w)

	id := newSessionID(t)
	startSession(t, id, research.Request{ResearchGoal: goal, Config: research.Config{MaxHypotheses: 16, ReviewTypes: []string{research.ReviewInitial}}})
	eventually(t, 60*time.Second, "two hypotheses", func() (bool, error) {
		p, err := progressOf(id)
		return p.HypothesesGenerated >= 2, err
	})
	first := scrape(t, url)
	eventually(t, 60*time.Second, "eight hypotheses", func() (bool, error) {
		p, err := progressOf(id)
		return p.HypothesesGenerated >= 8, err
	})
	second := scrape(t, url)

	turns := func(s scraped) float64 { return s.sum("cosci_turns_total", "agent", "generation", "outcome", "ok") }
	if a, b := turns(first), turns(second); a < 2 || b <= a {
		t.Errorf("generation turns: %v, then %v; want at least 2, then more", a, b)
	}
	for _, name := range []string{
		"cosci_turn_duration_seconds", "cosci_turn_slot_wait_seconds", "cosci_store_operation_duration_seconds",
		"temporal_activity_execution_latency_seconds", "temporal_workflow_task_execution_latency_seconds",
	} {
		if h := second.histogram(name); h == nil {
			t.Errorf("no histogram %s", name)
		} else if b := h.GetBucket(); len(b) != 19 || b[0].GetUpperBound() != 0.001 || b[17].GetUpperBound() != 600 {
			t.Errorf("%s has buckets %v; want 1 ms to 600 s, in seconds, and +Inf", name, b)
		}
	}
	if second.sum("cosci_tokens_total", "provider", "offline", "kind", "prompt") <= 0 {
		t.Error("no prompt tokens counted")
	}
	if n := second.sum("cosci_hypotheses_total"); n < 8 {
		t.Errorf("hypotheses made: %v; want at least the 8 the session had", n)
	}
	if second.sum("temporal_request", "operation", "RespondActivityTaskCompleted") <= 0 {
		t.Error("no SDK request counted (temporal_request, as Temporal's Go SDK dashboard reads it)")
	}
	if second.sum("cosci_store_operation_duration_seconds", "backend", "dir", "operation", "put") <= 0 {
		t.Error("no store put timed")
	}
	if active := second.sum("cosci_sessions", "state", "active"); active < 1 {
		t.Errorf("cosci_sessions{state=active} = %v; want at least this session", active)
	}
	// The dashboard's SDK panels read metrics a real worker exports (cosci's own are
	// checked in internal/telemetry); a failure counter appears with the first failure.
	dashboard, err := os.ReadFile("../deploy/grafana/dashboards/cosci.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`temporal_[a-z_]+`).FindAllString(string(dashboard), -1) {
		base := strings.TrimSuffix(name, "_bucket")
		if second.families[base] == nil && !strings.HasSuffix(name, "_failure") {
			t.Errorf("the dashboard reads %s, which the worker does not export", name)
		}
	}
	for _, leak := range []string{id, "bacteria"} {
		if strings.Contains(second.text, leak) {
			t.Errorf("the metrics carry %q", leak)
		}
	}
	terminateIfRunning(t, id)
	w.Stop(t) // which sends the spans still buffered
	spans.check(t)
}

var metricsLine = regexp.MustCompile(`metrics=(http://\S+/metrics)`)

// metricsURL is where the worker says it serves its metrics.
func metricsURL(t *testing.T, w *workerProc) string {
	var url string
	eventually(t, 30*time.Second, "the worker to say where its metrics are", func() (bool, error) {
		b, err := os.ReadFile(w.log)
		if m := metricsLine.FindSubmatch(b); m != nil {
			url = string(m[1])
		}
		return url != "", err
	})
	return url
}

type scraped struct {
	families map[string]*dto.MetricFamily
	text     string
}

func scrape(t testing.TB, url string) scraped {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("the metrics do not parse: %v", err)
	}
	return scraped{families, string(b)}
}

// sum adds up the series of a counter, gauge or histogram (its count) whose labels match
// the name-value pairs.
func (s scraped) sum(name string, labels ...string) float64 {
	f := s.families[name]
	if f == nil {
		return 0
	}
	total := 0.0
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

func (s scraped) histogram(name string) *dto.Histogram {
	if f := s.families[name]; f != nil && len(f.GetMetric()) > 0 {
		return f.GetMetric()[0].GetHistogram()
	}
	return nil
}

// collector is an OpenTelemetry collector as far as OTLP over HTTP goes: it keeps the
// spans a worker exports.
type collector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &req)
	}
	if err != nil || r.URL.Path != "/v1/traces" {
		http.Error(w, fmt.Sprintf("%s: %v", r.URL.Path, err), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			c.spans = append(c.spans, ss.GetSpans()...)
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// check checks that every model turn's span is a child of the activity that ran it,
// and that its trace holds the workflow's span that scheduled the activity.
func (c *collector) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	byID := map[string]*tracepb.Span{}
	names := map[string]int{}
	for _, s := range c.spans {
		byID[string(s.GetSpanId())] = s
		names[strings.SplitN(s.GetName(), ":", 2)[0]]++
	}
	turns := 0
	for _, s := range c.spans {
		if !strings.HasPrefix(s.GetName(), "turn ") {
			continue
		}
		turns++
		run := byID[string(s.GetParentSpanId())]
		if run == nil || !strings.HasPrefix(run.GetName(), "RunActivity:") {
			t.Fatalf("span %q is not under its activity's RunActivity span (parent %v)", s.GetName(), run)
		}
		start := byID[string(run.GetParentSpanId())]
		if start == nil || !strings.HasPrefix(start.GetName(), "StartActivity:") || string(start.GetTraceId()) != string(s.GetTraceId()) {
			t.Fatalf("activity span %q is not under the workflow's StartActivity span (parent %v)", run.GetName(), start)
		}
	}
	if turns == 0 {
		t.Fatalf("no turn spans among %d spans (%v)", len(c.spans), names)
	}
	t.Logf("%d spans, %d of them turns: %v", len(c.spans), turns, names)
}
