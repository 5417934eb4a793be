package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/research"
)

// scrape records one of everything cosci counts and returns what /metrics serves.
func scrape(t *testing.T) string {
	t.Helper()
	e, err := NewExporter()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	ctx := context.Background()
	m := e.Metrics()
	m.Turn(ctx, Turn{Agent: "generation", Provider: "openai", Model: "gpt-6-luna", Outcome: "ok", Took: 3 * time.Second, Waited: 40 * time.Millisecond,
		Usage: research.Usage{PromptTokens: 1200, CompletionTokens: 300, CachedTokens: 1024, CacheWriteTokens: 0, CostUSD: 0.002}})
	m.Turn(ctx, Turn{Agent: "ranking", Provider: "offline", Model: "offline", Outcome: "stored", Waited: -1})
	m.ToolCall(ctx, "literature", "search", "ok", 80*time.Millisecond)
	m.Hypotheses(ctx, "generated", 2)
	m.Matches(ctx, 5)
	m.Checkpoint(ctx, nil)
	m.StoreOp(ctx, "postgres", "commit", 3*time.Millisecond, errors.New("connection refused"))
	if err := e.ObserveSessions([]string{"active", "suspended"}, time.Minute, func(_ context.Context, state string) (int64, error) {
		return map[string]int64{"active": 3, "suspended": 1}[state], nil
	}); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// TestMetrics: cosci's metrics come out under the names and labels the dashboard and
// docs/operating.md use, durations in seconds with buckets from 1 ms to 10 min, and a
// turn found stored counts as a turn but spends nothing and takes no time.
func TestMetrics(t *testing.T) {
	text := scrape(t)
	for _, want := range []string{
		`cosci_turns_total{agent="generation",model="gpt-6-luna",outcome="ok",provider="openai"} 1`,
		`cosci_turns_total{agent="ranking",model="offline",outcome="stored",provider="offline"} 1`,
		`cosci_turn_duration_seconds_bucket{agent="generation",model="gpt-6-luna",provider="openai",le="5"} 1`,
		`cosci_turn_duration_seconds_count{agent="generation",model="gpt-6-luna",provider="openai"} 1`,
		`cosci_turn_slot_wait_seconds_bucket{provider="openai",le="0.05"} 1`,
		`cosci_tokens_total{kind="cached",model="gpt-6-luna",provider="openai"} 1024`,
		`cosci_tokens_total{kind="completion",model="gpt-6-luna",provider="openai"} 300`,
		`cosci_cost_usd_total{model="gpt-6-luna",provider="openai"} 0.002`,
		`cosci_tool_calls_total{outcome="ok",server="literature",tool="search"} 1`,
		`cosci_tool_call_duration_seconds_count{server="literature",tool="search"} 1`,
		`cosci_hypotheses_total{how="generated"} 2`,
		`cosci_matches_total 5`,
		`cosci_checkpoints_total{outcome="ok"} 1`,
		`cosci_store_operation_duration_seconds_bucket{backend="postgres",operation="commit",le="0.005"} 1`,
		`cosci_store_errors_total{backend="postgres",operation="commit"} 1`,
		`cosci_sessions{state="active"} 3`,
		`cosci_sessions{state="suspended"} 1`,
		`le="600"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, unwanted := range []string{`cosci_turn_duration_seconds_count{agent="ranking"`, `kind="cache_write"`, `provider="offline",le=`} {
		if strings.Contains(text, unwanted) {
			t.Errorf("/metrics has %s", unwanted)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}

// TestDashboard: every cosci metric the Grafana dashboard queries is one the worker
// exports, so a renamed metric cannot leave a panel empty; the SDK's names are checked
// against a real worker in e2e (TestMetricsAndTraces).
func TestDashboard(t *testing.T) {
	text := scrape(t)
	names := DashboardMetrics(t, "../../deploy/grafana/dashboards/cosci.json")
	cosci := 0
	for _, name := range names {
		if !strings.HasPrefix(name, "cosci_") {
			continue
		}
		cosci++
		if !regexp.MustCompile(`(?m)^` + name + `[{ ]`).MatchString(text) {
			t.Errorf("the dashboard queries %s, which the worker does not export", name)
		}
	}
	if cosci < 10 {
		t.Errorf("the dashboard queries %d of cosci's metrics; want them all", cosci)
	}
}

// DashboardMetrics lists the metric names a Grafana dashboard's queries read.
func DashboardMetrics(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var names []string
	metric := regexp.MustCompile(`\b(cosci|temporal)_[A-Za-z_]+`)
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, n := range metric.FindAllString(tg.Expr, -1) {
				if !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	return names
}

// TestSessionsKeepTheirLastCount: when visibility does not answer, the sessions gauge
// keeps the last counts it had, rather than vanishing from the scrape; before its first
// answer there is no count to show.
func TestSessionsKeepTheirLastCount(t *testing.T) {
	e, err := NewExporter()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	down := true
	if err := e.ObserveSessions([]string{"active"}, 0, func(context.Context, string) (int64, error) {
		if down {
			return 0, errors.New("visibility is down")
		}
		return 7, nil
	}); err != nil {
		t.Fatal(err)
	}
	scrape := func() string {
		rec := httptest.NewRecorder()
		e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	if text := scrape(); strings.Contains(text, "cosci_sessions{") {
		t.Error("a count before visibility ever answered")
	}
	down = false
	if text := scrape(); !strings.Contains(text, `cosci_sessions{state="active"} 7`) {
		t.Error("no count once visibility answered")
	}
	down = true
	if text := scrape(); !strings.Contains(text, `cosci_sessions{state="active"} 7`) {
		t.Error("the count vanished when visibility failed")
	}
}
