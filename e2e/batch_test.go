package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/provider/providertest"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// batchDelay is how long the fake provider takes over a batch, on its clock. That clock
// stands still until the worker has been killed (leapClock), so the session's first batch
// is still running when the status commands and the kill happen, however slow the
// machine. After that it leaps: the session checks a batch at once, then 10 s, 25 s,
// 47 s... later (AwaitBatch's retry policy), so eight batches of 20 s would add over three
// minutes to the test.
const batchDelay = 20 * time.Second

// TestBatchKillWorker: a session that sends its calls through the provider's batch API
// survives a worker killed (SIGKILL) while it waits for a batch: a new worker takes the
// wait over, and the session completes with its hypotheses, every batch submitted once at
// the provider, every request answered in one batch only, every turn completed once in
// Temporal and every batched answer read by the turn that asked it. While the batch
// waits, starter status and progress say so.
func TestBatchKillWorker(t *testing.T) {
	const maxHypotheses = 6
	clock := newLeapClock(batchDelay)
	var (
		mu       sync.Mutex
		answered = map[string]int{} // the output tokens of each batched answer, by batch id and custom id
	)
	fake := providertest.Start(t, providertest.Options{
		BatchDelay: batchDelay, Clock: clock, Seed: 21,
		// Each batched answer says it took a number of output tokens of its own, for the
		// test to find in the turn that read it. (The text would not do: a turn's record
		// keeps a summary of the answer, which for a match is only its winner.)
		Answer: func(turn providertest.Turn) providertest.Reply {
			rep := turn.Default
			if turn.BatchID == "" {
				return rep
			}
			mu.Lock()
			defer mu.Unlock()
			rep.OutputTokens = 100_000 + len(answered)
			answered[batchMark(turn.BatchID, turn.CustomID)] = rep.OutputTokens
			return rep
		},
	})
	storeDir := t.TempDir()
	env := []string{"OPENAI_API_KEY=" + fake.OpenAIKey(), "OPENAI_BASE_URL=" + fake.OpenAIBaseURL()}
	flags := []string{"--proximity-thresholds", standInThresholds(t)}
	first := startWorkerEnv(t, storeDir, env, flags...)

	bin := starter(t)
	id := newSessionID(t)
	if r := runStarter(t, bin, serverAddress, "start", "--id", id, "--goal", "Find why some bacteria tolerate antibiotics without resistance genes",
		"--provider", "openai", "--model", "gpt-6-sol", "--embedding-model", standInEmbedder, "--batch",
		"--max-hypotheses", strconv.Itoa(maxHypotheses)); r.code != 0 {
		t.Fatalf("starter start exited %d", r.code)
	}
	t.Cleanup(func() { terminateIfRunning(t, id) })

	// The session waits for its first batch, which the worker has checked once (the wait
	// is between two checks, as it is nearly all the time): the status commands say so.
	var (
		waiting   *session.BatchWait
		checkedBy string
	)
	eventually(t, 60*time.Second, "the session to wait for a batch its worker has checked", func() (bool, error) {
		p, err := progressOf(id)
		if err != nil || p.Batch == nil {
			return false, err
		}
		waiting = p.Batch
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d, err := temporalClient.DescribeWorkflowExecution(ctx, id, "")
		for _, pa := range d.GetPendingActivities() {
			if pa.GetActivityType().GetName() == "AwaitBatch" && pa.GetLastFailure().GetApplicationFailureInfo().GetType() == activities.ErrBatchPending {
				checkedBy = pa.GetLastWorkerIdentity()
				return true, nil
			}
		}
		return false, err
	})
	if want := fmt.Sprintf("%d@", first.cmd.Process.Pid); !strings.HasPrefix(checkedBy, want) {
		t.Errorf("the batch was first checked by worker %q; want the first worker (pid %d)", checkedBy, first.cmd.Process.Pid)
	}
	t.Logf("the session waits for %s %s: %d %s", waiting.Name, waiting.ID, waiting.Requests, waiting.What)
	says := regexp.MustCompile(`waiting for\s+a batch of (\d+) (\w+) \((\S+)\)`)
	for _, cmd := range []string{"status", "progress"} {
		r := runStarter(t, bin, serverAddress, cmd, id)
		m := says.FindStringSubmatch(r.stdout)
		if r.code != 0 || m == nil || m[1] != strconv.Itoa(waiting.Requests) || m[2] != waiting.What || m[3] != waiting.ID {
			t.Errorf("starter %s exited %d saying %q; want \"waiting for a batch of %d %s (%s)\"", cmd, r.code, r.stdout, waiting.Requests, waiting.What, waiting.ID)
		}
	}

	// Kill the worker mid-batch and start another on the same store.
	first.Kill(t)
	if st := fake.Stats(); st.Batches["openai/completed"] != 0 {
		t.Fatalf("the batch ended before the worker was killed (batches %v), on a clock that stood still", st.Batches)
	}
	t.Logf("killed %s while batch %s ran", first.name, waiting.ID)
	second := startWorkerEnv(t, storeDir, env, flags...)
	// From now on the fake's time leaps ahead at each look: the batch ends when the new
	// worker next checks it, and every later batch when it is first checked, so that the
	// session does not wait 25 s for each of its eight or so batches.
	clock.start()

	completedWith(t, id, 3*time.Minute, maxHypotheses)
	if stored := storedHypotheses(t, storeDir, id); len(stored) != maxHypotheses {
		t.Errorf("the store holds %d hypotheses; want %d", len(stored), maxHypotheses)
	}

	st, err := store.Open(t.Context(), storeDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// What the Temporal history says of the batches and turns.
	type turnRun struct {
		activity  string
		completed int
	}
	var (
		names    []string // the batches submitted, by name
		batchIDs = map[string]string{}
		turns    = map[string]*turnRun{}
		awaited  *historypb.ActivityTaskStartedEventAttributes // the last attempt of the wait for the batch the worker was killed in
	)
	for _, events := range sessionHistories(t, id) {
		inputs := map[int64]activities.BatchInput{}
		awaits := map[int64]string{} // AwaitBatch's scheduled events, by batch name
		turnOf := map[int64]string{}
		for _, e := range events {
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
				var in struct {
					TurnID string `json:"turn_id"`
				}
				var ref activities.BatchRef
				switch {
				case a.GetActivityType().GetName() == "AwaitBatch":
					decodeInput(t, e, &ref)
					awaits[e.GetEventId()] = ref.Name
				case a.GetActivityType().GetName() == "SubmitBatch":
					var bi activities.BatchInput
					decodeInput(t, e, &bi)
					inputs[e.GetEventId()] = bi
				case decodeInputOK(e, &in) && in.TurnID != "":
					turnOf[e.GetEventId()] = in.TurnID
					if turns[in.TurnID] == nil {
						turns[in.TurnID] = &turnRun{activity: a.GetActivityType().GetName()}
					}
				}
			}
			if a := e.GetActivityTaskStartedEventAttributes(); a != nil && awaits[a.GetScheduledEventId()] == waiting.Name {
				awaited = a
			}
			if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
				if bi, ok := inputs[a.GetScheduledEventId()]; ok {
					var out activities.BatchSubmitted
					if err := converter.GetDefaultDataConverter().FromPayloads(a.GetResult(), &out); err != nil {
						t.Fatal(err)
					}
					if out.ID != "" {
						names = append(names, bi.Name)
						batchIDs[bi.Name] = out.ID
					}
				}
				if turn := turnOf[a.GetScheduledEventId()]; turn != "" {
					turns[turn].completed++
				}
			}
		}
	}
	// The wait for the batch began on the killed worker and ended on the new one: it
	// checked the batch more than once, the last time from the new worker.
	if want := fmt.Sprintf("%d@", second.cmd.Process.Pid); awaited == nil || awaited.GetAttempt() < 2 || !strings.HasPrefix(awaited.GetIdentity(), want) {
		t.Errorf("the wait for batch %s ended in attempt %d on worker %q; want a later attempt than the first, on the new worker (pid %d)",
			waiting.Name, awaited.GetAttempt(), awaited.GetIdentity(), second.cmd.Process.Pid)
	}

	// Every batch the session submitted was submitted once at the provider.
	submitted := 0
	for _, e := range sessionEvents(t, storeDir, id) {
		if e.Kind == session.EventNote && strings.HasPrefix(e.Detail, "submitted ") && strings.Contains(e.Detail, " as batch ") {
			submitted++
		}
	}
	stats := fake.Stats()
	t.Logf("%d batches submitted (%v); the provider has %v, %d requests answered in batches, %d ordinary",
		submitted, names, stats.Batches, stats.OpenAIBatch.Requests, stats.OpenAI.Requests)
	if submitted == 0 || len(names) != submitted || stats.Batches["openai/completed"] != submitted || len(stats.Batches) != 1 {
		t.Errorf("the session notes %d batches submitted and its history %d; the provider has %v; want the same, all completed", submitted, len(names), stats.Batches)
	}

	// Each request was answered in one batch, and its answer went to the turn that asked.
	mu.Lock()
	defer mu.Unlock()
	inBatches := map[string]string{} // turn id -> the batch that carried it
	requests := 0
	for _, name := range names {
		b, found, err := st.Batch(t.Context(), id, name)
		if err != nil || !found {
			t.Fatalf("batch %s: found %v, %v", name, found, err)
		}
		if b.ID != batchIDs[name] {
			t.Errorf("the store holds batch %s as %s; the history as %s", name, b.ID, batchIDs[name])
		}
		for _, r := range b.Requests {
			requests++
			if other, dup := inBatches[r.TurnID]; dup {
				t.Errorf("turn %s was in batch %s and in batch %s", r.TurnID, other, name)
			}
			inBatches[r.TurnID] = name
			tokens, ok := answered[batchMark(b.ID, r.CustomID)]
			if !ok {
				t.Errorf("the provider never answered request %s of batch %s (turn %s)", r.CustomID, b.ID, r.TurnID)
				continue
			}
			turn, found, err := st.Turn(t.Context(), id, r.TurnID)
			if err != nil || !found {
				t.Errorf("turn %s of batch %s: found %v, %v", r.TurnID, name, found, err)
				continue
			}
			if turn.Usage.CompletionTokens != tokens || turn.Usage.Batched != 1 {
				t.Errorf("turn %s read an answer of %d output tokens (batched %d); the provider's answer to request %s of batch %s had %d",
					r.TurnID, turn.Usage.CompletionTokens, turn.Usage.Batched, r.CustomID, b.ID, tokens)
			}
		}
	}
	if len(answered) != requests || stats.OpenAIBatch.Requests != requests {
		t.Errorf("the provider answered %d requests in batches (%d distinct); the session's batches hold %d", stats.OpenAIBatch.Requests, len(answered), requests)
	}
	view := mustQuery[workflows.StateView](t, id, workflows.QueryState, workflows.Page{Limit: 1})
	if view.Usage.Batched != requests {
		t.Errorf("the session counts %d requests answered from batches; the provider answered %d", view.Usage.Batched, requests)
	}
	if ordinary := view.Usage.Requests - view.Usage.Batched - stats.Embeddings.Requests; ordinary != stats.OpenAI.Requests {
		t.Errorf("the session made %d ordinary calls; the provider answered %d", ordinary, stats.OpenAI.Requests)
	}

	// Every turn completed once in Temporal, the batched ones too.
	for turn, r := range turns {
		if r.completed > 1 {
			t.Errorf("turn %s (%s) completed %d times", turn, r.activity, r.completed)
		}
	}
	for turn, name := range inBatches {
		if r := turns[turn]; r == nil || r.completed != 1 {
			t.Errorf("turn %s of batch %s did not complete once: %+v", turn, name, r)
		}
	}
}

// batchMark names a request of a batch.
func batchMark(batchID, customID string) string { return batchID + "/" + customID }

// leapClock is the fake provider's clock: it stands still until start, so that no batch
// ends while the test has yet to kill the worker (a real clock ended the first batch
// whenever the machine was slow enough), then it leaps ahead by leap at each reading, so
// that a batch (of that delay) submitted before has ended when it is next looked at, and
// one submitted after when it is first looked at.
type leapClock struct {
	leap     time.Duration
	mu       sync.Mutex
	leaping  bool
	standing time.Time // the time until start
	ahead    time.Duration
}

func newLeapClock(leap time.Duration) *leapClock {
	return &leapClock{leap: leap, standing: time.Now()}
}

func (c *leapClock) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.leaping = true
}

func (c *leapClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.leaping {
		return c.standing
	}
	c.ahead += c.leap
	return time.Now().Add(c.ahead)
}
