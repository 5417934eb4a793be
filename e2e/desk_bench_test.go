package e2e

// The desk's speed (issue #31, part 5), against the desk built from ../desk, one worker
// and the suite's dev server: a session page of a 2,000-hypothesis session (paged), an
// event on an open page, and what 200 open pages on 20 sessions cost Temporal, counted by
// the server itself (its QueryWorkflow requests, from its metrics).
//
// The big session is made cheaply, as a scientist's fork would make it: a checkpoint of
// 2,000 hypotheses (and their texts) is written to the store as if a session had run, and
// a real session forks from it. The worker's offline turns take an hour, so that the
// session stays as it is (active, 2,000 hypotheses) while it is measured.

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// deskHypotheses is the big session's size (issue #31: 2,000).
const deskHypotheses = 2000

// How many pages and events one iteration times (run with -benchtime 1x: one iteration
// of the watchers is a window of 30 s).
var (
	deskPages  = flag.Int("bench.desk.pages", 400, "session pages BenchmarkDesk/page asks for in an iteration")
	deskEvents = flag.Int("bench.desk.events", 40, "changes BenchmarkDesk/event times in an iteration")
)

func BenchmarkDesk(b *testing.B) {
	storeDir := b.TempDir()
	parent := newSessionID(b)
	writeBigCheckpoint(b, storeDir, parent, deskHypotheses)
	w := startWorker(b, storeDir, "--offline-latency", "1h")
	b.Cleanup(func() { w.Kill(b) }) // its turns would not end for an hour
	big := newSessionID(b)
	startSession(b, big, research.Request{ScientistID: "bench",
		Config:  research.Config{MaxHypotheses: 2 * deskHypotheses, ConvergenceRounds: research.MaxConvergenceRounds},
		Lineage: &lineage.Descriptor{Type: lineage.User, Parent: parent, Relation: lineage.Fork}})
	eventually(b, 2*time.Minute, "the fork to have the 2,000 hypotheses", func() (bool, error) {
		p, err := progressOf(big)
		return p.HypothesesGenerated >= deskHypotheses && p.State == session.Active, err
	})
	desk := startBenchDesk(b, storeDir)

	b.Run("page", func(b *testing.B) { benchPage(b, desk, big) })
	b.Run("under-load", func(b *testing.B) { benchPageUnderLoad(b, desk, big, w) })
	b.Run("event", func(b *testing.B) { benchEvent(b, desk, big) })
	b.Run("watchers", func(b *testing.B) { benchWatchers(b, desk, big) })
	// The live page needs turns that end: the hour-long worker goes, a quick one comes.
	w.Kill(b)
	b.Run("live", func(b *testing.B) { benchLive(b, desk, storeDir) })
}

// target fails the benchmark when a target is missed, and says so either way.
func target(b *testing.B, ok bool, what string) string {
	if !ok {
		b.Errorf("target missed: %s", what)
	}
	return met(ok)
}

// writeBigCheckpoint writes what a session of n hypotheses leaves in the store: each
// hypothesis, and a checkpoint ranking them.
func writeBigCheckpoint(b *testing.B, storeDir, id string, n int) {
	ctx := context.Background()
	st, err := store.Open(ctx, storeDir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	snap := session.Snapshot{SessionID: id, Seq: 1, Time: session.Stamp(time.Now()), State: session.Suspended,
		ScientistID: "bench", Goal: benchGoal, StartedAt: session.Stamp(time.Now().Add(-time.Hour)),
		Config:   research.Config{MaxHypotheses: n, ReviewTypes: []string{"initial"}},
		Progress: session.Progress{HypothesesGenerated: n, Checkpoints: 1, State: session.Suspended}}
	for i := range n {
		h := research.Hypothesis{ID: fmt.Sprintf("h-%04d", i+1), Title: fmt.Sprintf("Hypothesis %d: a mechanism of the goal, one of many", i+1),
			Statement: strings.Repeat("A statement of typical length. ", 20), Rationale: strings.Repeat("A rationale of typical length. ", 40),
			Predictions: []string{"one prediction", "another prediction"}, Origin: "generation", Goal: benchGoal}
		if err := st.PutHypothesis(ctx, id, h); err != nil {
			b.Fatal(err)
		}
		snap.Hypotheses = append(snap.Hypotheses, session.Entry{ID: h.ID, Title: h.Title, Origin: "generation", Round: i / 10,
			Elo: 1200 + float64(n-i), Wins: i % 7, Losses: i % 5, Reviews: 1, Score: 6.5})
	}
	if _, err := st.PutCheckpoint(ctx, snap, nil); err != nil {
		b.Fatal(err)
	}
}

// benchDesk is a desk started for a benchmark, behind a pretend authenticating proxy: each
// request carries an admin's headers, believed from loopback.
type benchDesk struct {
	url    string
	client *http.Client
	email  string // who the pretend proxy says signs in; "" for bench@lab.example
}

// as is the desk as another admin sees it: the desk lets one person open at most
// maxStreams live pages, so many pages are many people's.
func (d benchDesk) as(email string) benchDesk {
	d.email = email
	return d
}

func startBenchDesk(b *testing.B, storeDir string) benchDesk {
	deskBin := buildDir + "/desk"
	if out, err := goBuild(deskBin, "../desk"); err != nil {
		b.Fatalf("cannot build the desk: %v\n%s", err, out)
	}
	port := freePort(b)
	startWorkerBinary(b, deskBin, serverAddress, "", storeDir, []string{"COSCI_DESK_KEY=" + strings.Repeat("5e", 32)},
		"--auth", "proxy", "--trusted-proxy", "127.0.0.1", "--admin-group", "admins", "--listen", fmt.Sprintf("127.0.0.1:%d", port))
	d := benchDesk{url: fmt.Sprintf("http://127.0.0.1:%d", port),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 300}}}
	eventually(b, 30*time.Second, "the desk to answer", func() (bool, error) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil, nil
	})
	return d
}

func (d benchDesk) get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Forwarded-Email", cmp.Or(d.email, "bench@lab.example"))
	req.Header.Set("X-Forwarded-Groups", "admins")
	return d.client.Do(req)
}

// benchPage asks for the session page, a page of the ranking at a time (25 of 2,000),
// walking through the whole ranking; each answer must show its page of hypotheses.
func benchPage(b *testing.B, d benchDesk, id string) {
	before := settledServerQueries(b)
	var lat []time.Duration
	var failed []string
	for i := range b.N * *deskPages {
		offset := (i * 25 * 7) % deskHypotheses // every page of the 80, in a scattered order
		t := time.Now()
		resp, err := d.get(context.Background(), fmt.Sprintf("/s/%s?offset=%d", id, offset))
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(t))
		if err != nil || resp.StatusCode != http.StatusOK {
			// A page that fails counts, with its time, and the run goes on: how often it
			// happens is part of the figure.
			failed = append(failed, fmt.Sprintf("offset %d after %s: %s %v %s", offset, lat[len(lat)-1].Round(time.Millisecond), resp.Status, err, errorLine(body)))
			continue
		}
		if want := fmt.Sprintf("/h/h-%04d", offset+1); !strings.Contains(string(body), want) {
			b.Fatalf("the page at offset %d does not link %s:\n%.3000s", offset, want, body)
		}
	}
	queries := settledServerQueries(b) - before
	logWorkflowTasks(b, id)
	// Where a page's time goes: its query, asked directly, and the smallest query for
	// comparison (not timed by the benchmark, not counted above).
	var status, page []time.Duration
	for i := range 50 {
		for _, q := range []struct {
			into *[]time.Duration
			run  func() error
		}{
			{&status, func() error { _, err := query[workflows.Status](id, workflows.QueryStatus); return err }},
			{&page, func() error {
				_, err := query[workflows.PageView](id, workflows.QueryPage, workflows.PageRequest{
					Ranking: workflows.Page{Offset: (i * 25 * 7) % deskHypotheses, Limit: 25}, Conversation: workflows.Page{Limit: workflows.MaxPageLimit}})
				return err
			}},
		} {
			t := time.Now()
			if err := q.run(); err != nil {
				b.Logf("a direct query failed after %s: %v", time.Since(t).Round(time.Millisecond), err)
			}
			*q.into = append(*q.into, time.Since(t))
		}
	}
	b.Logf("the page's query asked directly, 50 times: p50 %s p95 %s; the status query: p50 %s p95 %s",
		median(page), percentile(page, 0.95), median(status), percentile(status, 0.95))
	b.ReportMetric(ms(median(lat)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.95)), "p95-ms")
	b.ReportMetric(ms(percentile(lat, 1)), "max-ms")
	b.ReportMetric(queries/float64(len(lat)), "queries/page")
	b.ReportMetric(float64(len(failed)), "failed")
	if len(failed) > 0 {
		b.Logf("%d of %d pages failed: %v", len(failed), len(lat), failed)
	}
	b.Logf("%d pages of a %d-hypothesis session: p50 %s, p95 %s (target 150 ms: %s), slowest %s; %.0f Temporal queries, %.2f a page",
		len(lat), deskHypotheses, median(lat), percentile(lat, 0.95), target(b, percentile(lat, 0.95) <= 150*time.Millisecond, "a page at p95 within 150 ms"),
		percentile(lat, 1), queries, queries/float64(len(lat)))
	if len(failed) > 0 {
		b.Errorf("%d pages failed", len(failed))
	}
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// sse is one open page's event stream: each event's data, with when it arrived.
type sse struct {
	events chan sseEvent
	cancel context.CancelFunc
}

type sseEvent struct {
	data string
	at   time.Time
}

func openStream(b *testing.B, d benchDesk, id string) *sse {
	s, err := tryStream(d, "/s/"+id+"/events")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.cancel)
	return s
}

// tryStream opens a page's event stream at path.
func tryStream(d benchDesk, path string) (*sse, error) {
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := d.get(ctx, path)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("GET %s: %s %s", path, resp.Status, errorLine(body))
	}
	s := &sse{events: make(chan sseEvent, 64), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20) // a part of the page may be long
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				select {
				case s.events <- sseEvent{data, time.Now()}:
				default: // a reader that does not keep up (the watchers' count) misses events
				}
			}
		}
	}()
	return s, nil
}

// next waits for an event whose line starts with prefix.
func (s *sse) next(b *testing.B, prefix string, timeout time.Duration) sseEvent {
	e, err := s.await(prefix, timeout)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// await is next for any goroutine: it returns an error rather than ending the benchmark.
func (s *sse) await(prefix string, timeout time.Duration) (sseEvent, error) {
	deadline := time.After(timeout)
	for {
		select {
		case e, ok := <-s.events:
			if !ok {
				return e, errors.New("the event stream ended")
			}
			if strings.HasPrefix(e.data, prefix) {
				return e, nil
			}
		case <-deadline:
			return sseEvent{}, fmt.Errorf("no event %q within %s", prefix, timeout)
		}
	}
}

// benchEvent suspends and resumes the session in turn, with a page open on it, and times
// each change from the update sent (an upper bound of when the state changed: the update
// returns once the session has changed) to the event that carries it.
func benchEvent(b *testing.B, d benchDesk, id string) {
	s := openStream(b, d, id)
	s.next(b, string(session.Active), 30*time.Second)
	var sent, done []time.Duration
	n := b.N * *deskEvents
	for i := range n {
		name, want := workflows.Suspend, session.Suspended
		if i%2 == 1 {
			name, want = workflows.Resume, session.Active
		}
		// The change comes at any moment of the watcher's second, as a scientist's would: a
		// benchmark that changed the session as soon as it saw the last event would always
		// change it just after a query, and always wait a whole second.
		time.Sleep(rand.N(time.Second))
		var arg any = map[string]string{"reason": "benchmark"}
		if name == workflows.Resume {
			arg = map[string]string{}
		}
		t0 := time.Now()
		if _, err := update(id, name, newSessionID(b), arg); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		t1 := time.Now()
		e := s.next(b, string(want)+" ", 30*time.Second)
		sent = append(sent, e.at.Sub(t0))
		done = append(done, e.at.Sub(t1))
	}
	if n%2 == 1 { // leave it active
		if _, err := update(id, workflows.Resume, newSessionID(b), map[string]string{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(ms(median(sent)), "p50-ms")
	b.ReportMetric(ms(percentile(sent, 0.95)), "p95-ms")
	b.ReportMetric(ms(percentile(sent, 1)), "max-ms")
	b.ReportMetric(ms(median(done)), "p50-after-update-ms")
	b.Logf("%d changes: update sent to event p50 %s, p95 %s, slowest %s (target 2 s: %s); update returned to event p50 %s, p95 %s",
		len(sent), median(sent), percentile(sent, 0.95), percentile(sent, 1), target(b, percentile(sent, 1) <= 2*time.Second, "every change on an open page within 2 s"),
		median(done), percentile(done, 0.95))
}

// watchSessions is how many sessions the watchers' benchmark watches, and pagesEach how
// many open pages each has (issue #31: 200 pages on 20 sessions).
const (
	watchSessions = 20
	pagesEach     = 10
	watchWindow   = 30 * time.Second
)

// benchWatchers opens 200 pages' event streams on 20 sessions (the big one and 19 small
// ones, waiting for their first turn), and counts the queries the server answers in a
// window while they are all open: the desk's one watcher a session asks at most once a
// second, whatever the number of pages.
func benchWatchers(b *testing.B, d benchDesk, big string) {
	ids := []string{big}
	for len(ids) < watchSessions {
		id := newSessionID(b)
		startSession(b, id, research.Request{ResearchGoal: benchGoal, ScientistID: "bench", Config: research.Config{MaxHypotheses: 12}})
		ids = append(ids, id)
	}
	t0 := time.Now()
	for _, id := range ids {
		eventually(b, 2*time.Minute, "the session "+id+" to be active", func() (bool, error) {
			st, err := query[workflows.Status](id, workflows.QueryStatus)
			return err == nil && st.State == session.Active, err
		})
	}
	b.Logf("%d sessions active after %s", len(ids), time.Since(t0).Round(time.Millisecond))
	for b.Loop() {
		var streams []*sse
		refused := 0
		for _, id := range ids {
			for range pagesEach {
				// A browser's EventSource opens the stream again when it fails: so does
				// this page, up to three times, and the failures are counted.
				var s *sse
				for try := 0; s == nil; try++ {
					var err error
					if s, err = tryStream(d.as(fmt.Sprintf("viewer-%d@lab.example", len(streams))), "/s/"+id+"/events"); err != nil {
						refused++
						if try == 2 {
							b.Fatalf("the events of %s: %v", id, err)
						}
					}
				}
				b.Cleanup(s.cancel)
				streams = append(streams, s)
			}
		}
		errs := make(chan error, len(streams))
		for _, s := range streams {
			go func() { _, err := s.await("", 60*time.Second); errs <- err }()
		}
		for range streams {
			if err := <-errs; err != nil {
				b.Fatalf("an open page got no first event: %v", err)
			}
		}
		// The opening's queries (an access check a stream) are counted before the window.
		time.Sleep(metricsFlush)
		before, counts := serverQueries(b), serverQueryCounts(b)
		t := time.Now()
		time.Sleep(watchWindow) // the window the server's count covers, not a synchronisation
		queries := serverQueries(b) - before
		var moved []string
		for name, n := range serverQueryCounts(b) {
			if d := n - counts[name]; d != 0 {
				moved = append(moved, fmt.Sprintf("%s +%.0f", name, d))
			}
		}
		slices.Sort(moved)
		b.Logf("the server's QueryWorkflow series in the window: %v", moved)
		window := time.Since(t)
		for _, s := range streams {
			s.cancel()
		}
		perSession := queries / float64(len(ids)) / window.Seconds()
		b.ReportMetric(float64(len(streams)), "pages")
		b.ReportMetric(float64(refused), "streams-refused")
		b.ReportMetric(queries, "queries")
		b.ReportMetric(perSession, "queries/session/s")
		b.Logf("%d open pages on %d sessions for %s: %.0f Temporal queries, %.3f a session a second (target at most 1, give or take one tick of the window's edges: %s; and at least %.1f, or a watcher has stopped watching: %s)",
			len(streams), len(ids), window.Round(time.Millisecond), queries, perSession,
			target(b, queries <= float64(len(ids))*(window.Seconds()+1), "at most one query a session a second"),
			minWatched, target(b, perSession >= minWatched, "every watched session read at least every other second"))
	}
}

// minWatched is the fewest queries a session a second its watcher may ask while pages are
// open on it: it reads once a second, and each reading takes a while.
const minWatched = 0.5

// Live updates: a grounded session on a quick worker, whose literature fetches wait for
// the scientist, with a page open on it (its stream with the live parts).
var liveRounds = flag.Int("bench.desk.live", 10, "questions and waiting calls BenchmarkDesk/live times")

// benchLive times what an open page gets as it happens: a tool call that starts waiting
// (from the moment the session recorded it, its Since, to the part that shows it), and
// the session's answer to a question (from the ask update's return, when the answer is
// kept, to the part that shows it). Target: 2 s.
func benchLive(b *testing.B, d benchDesk, storeDir string) {
	library, err := filepath.Abs(fixtureLibrary)
	if err != nil {
		b.Fatal(err)
	}
	tools := filepath.Join(b.TempDir(), "tools.yaml")
	if err := os.WriteFile(tools, fmt.Appendf(nil, "servers:\n  - name: literature\n    command: [%q, --library, %q, --index, %q]\n",
		literatureBinary, library, b.TempDir()), 0o644); err != nil {
		b.Fatal(err)
	}
	startWorker(b, storeDir, "--offline-latency", "100ms", "--tools", tools)
	var calls, answers []time.Duration
	for b.Loop() {
		id := newSessionID(b)
		startSession(b, id, research.Request{ResearchGoal: benchGoal, ScientistID: "bench", Config: research.Config{MaxHypotheses: 40,
			Tools: []string{"literature.search", "literature.fetch"}, ApproveTools: []string{"literature.fetch"}}})
		b.Cleanup(func() { terminateIfRunning(b, id) })
		s := openParts(b, d, id, "waiting,turns")
		seen := map[string]bool{}
		for len(calls) < *liveRounds {
			e := s.next(b, `{"html":`, 2*time.Minute)
			var p struct{ ID, HTML string }
			if err := json.Unmarshal([]byte(e.data), &p); err != nil || p.ID != "waiting" {
				continue
			}
			st, err := query[workflows.Status](id, workflows.QueryStatus)
			if err != nil {
				b.Fatal(err)
			}
			for _, w := range st.Waiting {
				if seen[w.ID] || !strings.Contains(p.HTML, ">"+w.ID+": ") {
					continue
				}
				seen[w.ID] = true
				since, err := time.Parse(time.RFC3339Nano, w.Since)
				if err != nil {
					b.Fatal(err)
				}
				calls = append(calls, e.at.Sub(since))
				if _, err := update(id, workflows.AnswerTool, newSessionID(b), map[string]string{"call": w.ID, "decision": "approve"}); err != nil {
					b.Logf("approving %s: %v", w.ID, err)
				}
			}
		}
		for i := range *liveRounds {
			var ans workflows.AskAnswer
			if err := updateInto(id, workflows.Ask, newSessionID(b), workflows.AskRequest{Text: fmt.Sprintf("Which hypothesis leads now (%d)?", i), By: "bench"}, &ans); err != nil {
				b.Fatal(err)
			}
			kept := time.Now()
			for {
				e := s.next(b, `{"html":`, time.Minute)
				var p struct{ ID, HTML string }
				if json.Unmarshal([]byte(e.data), &p) == nil && p.ID == "turns" && strings.Contains(p.HTML, `id="`+ans.Answer.ID+`"`) {
					answers = append(answers, e.at.Sub(kept))
					break
				}
			}
		}
	}
	b.ReportMetric(ms(median(calls)), "call-p50-ms")
	b.ReportMetric(ms(percentile(calls, 1)), "call-max-ms")
	b.ReportMetric(ms(median(answers)), "answer-p50-ms")
	b.ReportMetric(ms(percentile(answers, 1)), "answer-max-ms")
	b.Logf("%d waiting calls on an open page, from the session's record of them: p50 %s, slowest %s; %d answers, from the ask's return: p50 %s, slowest %s (target 2 s: %s)",
		len(calls), median(calls), percentile(calls, 1), len(answers), median(answers), percentile(answers, 1),
		target(b, percentile(calls, 1) <= 2*time.Second && percentile(answers, 1) <= 2*time.Second, "an answer or a waiting call on an open page within 2 s"))
}

// openParts opens a page's event stream with its live parts.
func openParts(b *testing.B, d benchDesk, id, parts string) *sse {
	s, err := tryStream(d, "/s/"+id+"/events?parts="+parts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.cancel)
	return s
}

// queryRequests matches the server's counts of requests by service and operation: a query
// counts once at the frontend, and again at history and matching, which pass it on.
var queryRequests = regexp.MustCompile(`(?m)^service_requests(?:_total)?\{([^}]*)\} ([0-9.e+]+)$`)

// serverMetricsText is the dev server's metrics page, as Prometheus scrapes it.
func serverMetricsText(b *testing.B) []byte {
	b.Helper()
	return []byte(scrape(b, serverMetrics).text)
}

// metricsFlush is how long the dev server may take to count a request in its metrics:
// they are reported every second (tally), so a count read right after a burst of queries
// may not have them yet.
const metricsFlush = 1500 * time.Millisecond

// settledServerQueries is serverQueries once the count has stopped moving: read when no
// query is being asked, it counts every query asked before.
func settledServerQueries(b *testing.B) float64 {
	n := serverQueries(b)
	for range 20 {
		time.Sleep(metricsFlush)
		m := serverQueries(b)
		if m == n {
			return n
		}
		n = m
	}
	b.Fatalf("the server's query count kept moving for %s", 20*metricsFlush)
	return n
}

// serverQueries is how many QueryWorkflow requests the dev server's frontend has answered:
// the queries its clients sent.
func serverQueries(b *testing.B) float64 {
	text := serverMetricsText(b)
	total, found := 0.0, false
	for _, m := range queryRequests.FindAllStringSubmatch(string(text), -1) {
		if strings.Contains(m[1], `operation="QueryWorkflow"`) && strings.Contains(m[1], `service_name="frontend"`) {
			n, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				b.Fatal(err)
			}
			total, found = total+n, true
		}
	}
	if !found && strings.Contains(string(text), "QueryWorkflow") {
		b.Fatalf("the server's metrics count QueryWorkflow under a name this benchmark does not read")
	}
	return total
}

// logWorkflowTasks logs the session's slowest workflow tasks (started to completed, from
// the server's event times): a query waits for the workflow task in progress.
func logWorkflowTasks(b *testing.B, id string) {
	events := runHistory(b, id, "")
	started := map[int64]time.Time{}
	var took []time.Duration
	var slow []string
	for _, e := range events {
		switch {
		case e.GetWorkflowTaskStartedEventAttributes() != nil:
			started[e.GetEventId()] = e.GetEventTime().AsTime()
		case e.GetWorkflowTaskCompletedEventAttributes() != nil:
			a := e.GetWorkflowTaskCompletedEventAttributes()
			d := e.GetEventTime().AsTime().Sub(started[a.GetStartedEventId()])
			took = append(took, d)
			if d > time.Second {
				slow = append(slow, fmt.Sprintf("%s at %s", d.Round(time.Millisecond), e.GetEventTime().AsTime().Format("15:04:05.000")))
			}
		}
	}
	b.Logf("session %s: %d events, %d workflow tasks, p50 %s, slowest %s; over 1 s: %v", id, len(events), len(took), median(took), percentile(took, 1), slow)
}

var errorMessage = regexp.MustCompile(`<p class="error" id="message">([^<]*)</p>`)

// errorLine is the message of the desk's error page.
func errorLine(body []byte) string {
	if m := errorMessage.FindSubmatch(body); m != nil {
		return string(m[1])
	}
	return ""
}

// serverQueryCounts is every series of the server's metrics about QueryWorkflow (requests,
// errors, by service), by its name and labels.
func serverQueryCounts(b *testing.B) map[string]float64 {
	text := serverMetricsText(b)
	out := map[string]float64{}
	for _, line := range strings.Split(string(text), "\n") {
		if !strings.Contains(line, `operation="QueryWorkflow"`) || strings.HasPrefix(line, "#") || strings.Contains(line, "_bucket{") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if n, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = n
		}
	}
	return out
}
