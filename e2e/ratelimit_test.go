package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// recordingLibrary is a literature server over HTTP, in the test process, that notes when
// each call arrived and from which client session (one per worker).
type recordingLibrary struct {
	mu    sync.Mutex
	at    []time.Time
	peers map[string]int // MCP session id -> calls
}

type libQuery struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
}

type libHit struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
}

type libResults struct {
	Results []libHit `json:"results"`
}

type libID struct {
	ID string `json:"id"`
}

type libRecord struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Abstract string `json:"abstract"`
}

func (l *recordingLibrary) note(req *mcp.CallToolRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at = append(l.at, time.Now())
	l.peers[req.Session.ID()]++
}

func (l *recordingLibrary) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "recording-library", Version: "test"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "search", Description: "Search the library"}, func(_ context.Context, req *mcp.CallToolRequest, q libQuery) (*mcp.CallToolResult, libResults, error) {
		l.note(req)
		return nil, libResults{Results: []libHit{
			{ID: "10.5555/cosci.rate.001", Title: "Microglia carry tau", Snippet: "Microglia carry tau between synapses."},
			{ID: "10.5555/cosci.rate.002", Title: "LRP1 and tau uptake", Snippet: "LRP1 controls the uptake of tau by neurons."},
		}}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fetch", Description: "Fetch a reference"}, func(_ context.Context, req *mcp.CallToolRequest, in libID) (*mcp.CallToolResult, libRecord, error) {
		l.note(req)
		return nil, libRecord{ID: in.ID, Title: "A reference", Abstract: "Microglia carry tau between synapses. LRP1 controls the uptake of tau by neurons."}, nil
	})
	return s
}

// TestToolRateLimitAcrossWorkers: a tool server's rate holds across every worker. Two
// workers make the calls of three grounded sessions to one server configured at 3 calls
// a second; the Temporal server, which holds the server's task queue, spaces them out.
func TestToolRateLimitAcrossWorkers(t *testing.T) {
	const rate = 3.0
	lib := &recordingLibrary{peers: map[string]int{}}
	srv := lib.server()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	cfg := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "servers:\n  - name: ratelib\n    url: %s\n    rate: %g\n", ts.URL, rate), 0o644); err != nil {
		t.Fatal(err)
	}
	storeDir := t.TempDir()
	for range 2 {
		startWorker(t, storeDir, "--tools", cfg, "--offline-latency", "20ms", "--slots", "8")
	}
	var ids []string
	for range 3 {
		id := newSessionID(t)
		startSession(t, id, research.Request{
			ResearchGoal: "Identify druggable mechanisms that slow tau protein propagation",
			Config: research.Config{MaxHypotheses: 8, ReviewTypes: []string{"full"}, Tools: []string{"ratelib.search", "ratelib.fetch"},
				ToolCallsPerTurn: 2},
		})
		ids = append(ids, id)
	}
	for _, id := range ids {
		res, err := result(id, 4*time.Minute)
		if err != nil || res.State != session.Completed {
			t.Fatalf("session %s: %+v, %v", id, res, err)
		}
	}
	lib.mu.Lock()
	at := slices.Clone(lib.at)
	peers := len(lib.peers)
	lib.mu.Unlock()
	if len(at) < 30 {
		t.Fatalf("only %d calls: too few to measure a rate", len(at))
	}
	if peers < 2 {
		t.Errorf("the calls came from %d worker(s); want both", peers)
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	// Over the whole run the server saw no more than the rate allows, give or take the
	// limiter's first burst; and no second of it held more than twice the rate.
	span := at[len(at)-1].Sub(at[0]).Seconds()
	if got := float64(len(at)-1) / span; got > rate*1.15 {
		t.Errorf("%d calls in %.1fs: %.2f a second, over the server's rate of %g", len(at), span, got, rate)
	}
	worst := 0
	for i := range at {
		j := i
		for j < len(at) && at[j].Sub(at[i]) < time.Second {
			j++
		}
		worst = max(worst, j-i)
	}
	if float64(worst) > 2*rate {
		t.Errorf("%d calls within one second; the rate is %g", worst, rate)
	}
	t.Logf("%d calls from %d workers in %.1fs (%.2f/s, at most %d in any second); the server's rate is %g/s",
		len(at), peers, span, float64(len(at)-1)/span, worst, rate)
}
