package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// The MCP servers the grounded tests run: cosci's literature server (built by TestMain),
// over the library the tests ship, and a reference server nobody here wrote, installed
// from npm by `make test` (make npm-tools).
var (
	fixtureLibrary   = filepath.Join("..", "testdata", "library")
	everythingServer = filepath.Join("..", "bin", "npm", "node_modules", ".bin", "mcp-server-everything")
)

// needEverything returns the reference server's path, or fails saying how to install it.
func needEverything(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(everythingServer)
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		t.Fatalf("no reference MCP server at %s (%v): run `make npm-tools` (make test does)", everythingServer, err)
	}
	return p
}

// freeAddr is a loopback address no one listens on yet.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startLiteratureHTTP runs the literature server over streamable HTTP, a process of its
// own, and returns its MCP endpoint once it answers.
func startLiteratureHTTP(t *testing.T, library string) string {
	t.Helper()
	addr := freeAddr(t)
	logPath := filepath.Join(buildDir, safeName(t.Name())+"-literature-http.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(literatureBinary, "--library", library, "--index", t.TempDir(), "--http", addr)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		logFile.Close()
		if t.Failed() {
			dumpFile(os.Stderr, logPath)
		}
	})
	endpoint := "http://" + addr + "/mcp"
	eventually(t, 60*time.Second, "the literature server to answer over HTTP", func() (bool, error) {
		resp, err := http.Get(endpoint)
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return true, nil
	})
	// The server answers before its full texts are read (#43); the tests cite their
	// passages, so they start once its log says the full texts are indexed.
	eventually(t, 60*time.Second, "the literature server to index its full texts", func() (bool, error) {
		log, err := os.ReadFile(logPath)
		return strings.Contains(string(log), "full texts indexed"), err
	})
	return endpoint
}

// childrenOf are the processes whose parent is pid (Linux's /proc).
func childrenOf(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// commandOf is a process' command line.
func commandOf(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// modelStep is a step of a tool-using turn, as the history shows it.
type modelStep struct {
	activity  string
	turn      string
	step      int
	scheduled int64
}

// modelSteps finds the steps of tool-using turns in a run's history, by scheduled event.
func modelSteps(events []*historypb.HistoryEvent) map[int64]modelStep {
	steps := map[int64]modelStep{}
	for _, e := range events {
		a := e.GetActivityTaskScheduledEventAttributes()
		if a == nil {
			continue
		}
		var in struct {
			TurnID string          `json:"turn_id"`
			Loop   activities.Loop `json:"loop"`
		}
		switch name := a.GetActivityType().GetName(); name {
		case "Generate", "Review", "Evolve":
			if decodeInputOK(e, &in) && in.Loop.Step > 0 {
				steps[e.GetEventId()] = modelStep{activity: name, turn: in.TurnID, step: in.Loop.Step, scheduled: e.GetEventId()}
			}
		}
	}
	return steps
}

// TestGroundedEndToEnd: a session grounded in the in-box literature server (over stdio,
// started by the worker, and over HTTP, a process of its own) and in the npm reference
// server. Its generation and reviews call them, each call an activity on its server's
// queue. The worker is killed while a model step that follows a tool call runs: the new
// worker takes that step up again and never repeats the steps that completed. The stdio
// literature server is then killed mid-session: the next call starts it again. The
// session completes, its hypotheses cite the library with the library's details, and the
// report lists them.
func TestGroundedEndToEnd(t *testing.T) {
	everything := needEverything(t)
	library, err := filepath.Abs(fixtureLibrary)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := startLiteratureHTTP(t, library)
	cfg := filepath.Join(t.TempDir(), "tools.yaml")
	os.WriteFile(cfg, fmt.Appendf(nil, `servers:
  - name: literature
    command: [%q, --library, %q, --index, %q]
    rate: 50
    timeout: 20s
  - name: library
    url: %s
  - name: everything
    command: [%q]
`, literatureBinary, library, t.TempDir(), endpoint, everything), 0o644)
	storeDir := t.TempDir()
	// Both workers record what the simulator planted in one file, apart from the store: the
	// second judges the support of citations the first planted by it.
	truthFile := filepath.Join(t.TempDir(), "planted.jsonl")
	flags := []string{"--tools", cfg, "--offline-latency", "400ms", "--offline-fabricate", "0.2", "--offline-truth", truthFile}
	first := startWorker(t, storeDir, flags...)

	id := newSessionID(t)
	startSession(t, id, research.Request{
		ResearchGoal: "Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease",
		Config: research.Config{MaxHypotheses: 10, ReviewTypes: []string{"initial", "full"}, Seed: 5,
			Tools: []string{"literature.search", "literature.fetch", "library.search", "everything.echo"}},
	})

	// Kill the worker while a model step that follows a tool call runs. (A running
	// activity's Started event is written only when it ends: ask which are running.)
	var inFlight modelStep
	eventuallyEvery(t, 3*time.Minute, 20*time.Millisecond, "a model step after a tool call to be running", func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d, err := temporalClient.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return false, err
		}
		running := map[string]bool{}
		for _, pa := range d.GetPendingActivities() {
			if pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
				running[pa.GetActivityId()] = true
			}
		}
		if len(running) == 0 {
			return false, nil
		}
		events := runHistory(t, id, "")
		steps := modelSteps(events)
		for _, e := range events {
			a := e.GetActivityTaskScheduledEventAttributes()
			if a == nil || !running[a.GetActivityId()] {
				continue
			}
			if st, ok := steps[e.GetEventId()]; ok && st.step >= 2 {
				inFlight = st
				return true, nil
			}
		}
		return false, nil
	})
	first.Kill(t)
	t.Logf("killed %s while %s step %d of %s ran", first.name, inFlight.activity, inFlight.step, inFlight.turn)
	second := startWorker(t, storeDir, flags...)

	// Then the literature server the new worker started dies mid-session, once the worker
	// has connected to it (its log says so). A server killed as soon as its process
	// appears dies during the handshake: that first connection fails, the retry is the
	// worker's only connection, and there is no dead connection to come back from.
	eventually(t, 2*time.Minute, "the new worker to connect to its literature server", func() (bool, error) {
		return literatureConnections(t, second) >= 1, nil
	})
	var killed int
	for _, pid := range childrenOf(second.cmd.Process.Pid) {
		if strings.Contains(commandOf(pid), "--library") {
			killed = pid
		}
	}
	if killed == 0 {
		t.Fatalf("%s logged its connection to the literature server, but runs no literature server", second.name)
	}
	if err := syscall.Kill(killed, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Events after this one are of the session after the kill.
	// (The session's runs so far, the last the one the kill fell in: a finished session
	// whose last run grew long closes in a run of its own.)
	runsAtKill := sessionHistories(t, id)
	atKill := runsAtKill[len(runsAtKill)-1]
	killRun, lastBeforeKill := len(runsAtKill)-1, atKill[len(atKill)-1].GetEventId()
	t.Logf("killed the literature server (pid %d) of %s", killed, second.name)

	res, err := result(id, 5*time.Minute)
	if err != nil || res.State != session.Completed || res.Hypotheses != 10 {
		t.Fatalf("result %+v, %v", res, err)
	}

	// Every step of a tool-using turn completed once; the one in flight at the kill too,
	// and none of the steps before it ran again.
	completed := map[string]int{}
	scheduled := map[string]int{}
	calls := map[string]int{} // task queue -> completed calls
	literatureAfterKill := 0  // literature calls scheduled after its server was killed
	var summaries []string
	for run, events := range sessionHistories(t, id) { // event ids start again in each run
		steps := modelSteps(events)
		queues := map[int64]string{}
		for _, e := range events {
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "CallTool" {
				queues[e.GetEventId()] = a.GetTaskQueue().GetName()
				var s string
				_ = decodePayload(e.GetUserMetadata().GetSummary(), &s)
				summaries = append(summaries, s)
				after := run > killRun || run == killRun && e.GetEventId() > lastBeforeKill
				if after && a.GetTaskQueue().GetName() == workflows.ToolQueue("literature") {
					literatureAfterKill++
				}
			}
			if st, ok := steps[e.GetEventId()]; ok {
				scheduled[fmt.Sprintf("%s#%d", st.turn, st.step)]++
			}
			if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
				if st, ok := steps[a.GetScheduledEventId()]; ok {
					completed[fmt.Sprintf("%s#%d", st.turn, st.step)]++
				}
				if q, ok := queues[a.GetScheduledEventId()]; ok {
					calls[q]++
				}
			}
		}
	}
	for k, n := range scheduled {
		if n != 1 || completed[k] != 1 {
			t.Errorf("step %s was scheduled %d times and completed %d times; want once each", k, n, completed[k])
		}
	}
	if key := fmt.Sprintf("%s#%d", inFlight.turn, inFlight.step); completed[key] != 1 {
		t.Errorf("the step in flight at the kill, %s, completed %d times", key, completed[key])
	}
	for _, q := range []string{workflows.ToolQueue("literature"), workflows.ToolQueue("library"), workflows.ToolQueue("everything")} {
		if calls[q] == 0 {
			t.Errorf("no call completed on %s: %v", q, calls)
		}
	}
	var searchSummary bool
	for _, s := range summaries {
		searchSummary = searchSummary || strings.HasPrefix(s, "search literature: ")
	}
	if !searchSummary {
		t.Errorf("no call's summary reads \"search literature: ...\": %v", summaries)
	}

	// The hypotheses cite the library, with its details, some at a page of its full texts;
	// the report lists them, and shows the page beside the quote.
	truth, err := simulator.OpenTruth(truthFile)
	if err != nil {
		t.Fatal(err)
	}
	grounded, atPage := 0, 0
	for hid, h := range storedHypotheses(t, storeDir, id) {
		for _, r := range h.References {
			kind, known := truth.Hypothesis(h, r)
			if !known {
				t.Errorf("%s cites %s, of which the simulator's truth has no record", hid, r.ID)
			}
			if r.Source != "" && simulator.Honest(kind) {
				grounded++
				if r.Title == "" || r.Year == 0 {
					t.Errorf("%s cites %s without the library's details: %+v", hid, r.ID, r)
				}
				if r.Passage != "" && r.Page > 0 {
					atPage++
					if !strings.HasPrefix(r.Passage, r.ID+"#p") || r.Section == "" || r.File == "" {
						t.Errorf("%s cites %s at a passage without its place: %+v", hid, r.ID, r)
					}
				}
			}
		}
	}
	if grounded == 0 {
		t.Fatal("no hypothesis cites the library")
	}
	if atPage == 0 {
		t.Error("no hypothesis cites a passage of the library's full texts with its page")
	}
	st, err := store.Open(context.Background(), storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	report, err := st.Report(context.Background(), id)
	if err != nil || !strings.Contains(string(report), "10.5555/cosci.") {
		t.Errorf("the report does not list the references (%v)", err)
	}
	if atPage > 0 && !regexp.MustCompile(`\n  > .* — \[p\. \d+, [A-Z][a-z]+\]\(https://doi\.org/10\.5555/cosci\.`).Match(report) {
		t.Error("the report shows no quote with its page and section beside it")
	}
	// The literature server the second worker started was started again after it died.
	if n := literatureConnections(t, second); n < 2 {
		t.Errorf("the second worker connected to the literature server %d times; want again after it was killed (%d literature calls were scheduled after the kill)", n, literatureAfterKill)
	}
	t.Logf("%d citations of the library; calls by server: %v; %d literature calls after its server was killed", grounded, calls, literatureAfterKill)
}

// literatureConnections is how many times a worker has connected to its literature server,
// as its log says.
func literatureConnections(t *testing.T, w *workerProc) int {
	t.Helper()
	log, err := os.ReadFile(w.log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(log), `msg="connected to a tool server" tool_server=literature`)
}
