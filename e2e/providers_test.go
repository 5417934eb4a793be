package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/cosci-dev/cosci/internal/provider/providertest"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// Real model providers, end to end: a worker process talks to a fake OpenAI server
// (internal/provider/providertest) over HTTP, exactly as it would to api.openai.com, with
// credentials from its environment.

// providerTurns are the activities that call a model (Proximity does not).
var providerTurns = []string{"Plan", "Generate", "Evolve", "Review", "Compare", "Debate", "MetaReview", "Overview"}

// TestSessionOnFakeOpenAI runs a whole session on the OpenAI provider: every agent's
// answer comes from the fake (providertest), each agent's calls are as many as the fake
// answered for it, the session's usage is the fake's token counts summed and priced from
// the worker's --prices file, and the key, which only the worker's environment holds,
// reaches the fake in every request and appears nowhere else: not in the Temporal
// history, not in the session store, not in the worker's log.
func TestSessionOnFakeOpenAI(t *testing.T) {
	const (
		secret = "sk-test-SECRET-123"
		model  = "fake-model"
		// USD per million tokens, from the worker's price file.
		promptPrice, cachedPrice, completionPrice = 1000.0, 100.0, 3000.0
	)
	fake := providertest.Start(t, providertest.Options{OpenAIKey: secret})
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, fmt.Appendf(nil, `{%q: {"prompt_per_mtok": %g, "cached_per_mtok": %g, "completion_per_mtok": %g}}`,
		model, promptPrice, cachedPrice, completionPrice), 0o644); err != nil {
		t.Fatal(err)
	}
	storeDir := t.TempDir()
	w := startWorkerEnv(t, storeDir, []string{"OPENAI_API_KEY=" + secret, "OPENAI_BASE_URL=" + fake.OpenAIBaseURL()},
		"--prices", prices, "--proximity-thresholds", standInThresholds(t))

	id := newSessionID(t)
	const goal = "Identify druggable mechanisms that slow tau propagation in early Alzheimer's disease"
	startSession(t, id, research.Request{
		ResearchGoal: goal,
		Config:       research.Config{Provider: "openai", Model: model, MaxHypotheses: 8, EmbeddingModel: standInEmbedder},
	})
	res := completedWith(t, id, 2*time.Minute, 8)

	// Every agent spoke through the fake, with the worker's key and the session's model.
	s := fake.Stats()
	view := mustQuery[workflows.StateView](t, id, workflows.QueryState, workflows.Page{Limit: 1})
	requests := total(s.Requests)
	t.Logf("the fake answered %d turns (%d input tokens, %d of them cached, %d output) and %d embeddings requests; agents %v; schemas %v",
		s.OpenAI.Requests, s.OpenAI.Input, s.OpenAI.CacheRead, s.OpenAI.Output, s.Embeddings.Requests, s.Agents, s.Schemas)
	for _, agent := range []string{providertest.AgentPlan, providertest.AgentHypothesis, providertest.AgentReview, providertest.AgentComparison,
		providertest.AgentMetaReview, providertest.AgentOverview} {
		if s.Agents[agent] == 0 {
			t.Errorf("the fake never answered the %s agent; it answered %v", agent, s.Agents)
		}
	}
	if s.Agents[""] != 0 {
		t.Errorf("the fake answered %d turns with no answer schema it knows", s.Agents[""])
	}
	// Each of the session's agents made its calls to the fake: as many as the fake answered
	// of the schemas that agent asks for.
	calls := map[string]int{}
	for _, a := range view.Agents {
		calls[a.Agent] = a.Usage.Requests
	}
	for _, c := range []struct{ agents, schemas []string }{
		{[]string{"supervisor"}, []string{providertest.AgentPlan}},
		{[]string{"generation", "evolution"}, []string{providertest.AgentHypothesis}},
		{[]string{"reflection"}, []string{providertest.AgentReview, providertest.AgentDeepVerification}},
		{[]string{"ranking"}, []string{providertest.AgentComparison, providertest.AgentAdvocate, providertest.AgentJudgement}},
		{[]string{"meta-review"}, []string{providertest.AgentMetaReview, providertest.AgentOverview}},
	} {
		made, answered := 0, 0
		for _, a := range c.agents {
			made += calls[a]
		}
		for _, schema := range c.schemas {
			answered += s.Agents[schema]
		}
		if made != answered || calls[c.agents[0]] == 0 {
			t.Errorf("the session's %v made %d calls; the fake answered %d of %v", c.agents, made, answered, c.schemas)
		}
	}
	if calls["proximity"] != s.Embeddings.Requests {
		t.Errorf("the session's proximity agent made %d calls; the fake answered %d embeddings requests", calls["proximity"], s.Embeddings.Requests)
	}
	if s.Keys["Bearer "+secret] != requests || requests == 0 || s.Unauthorized != 0 {
		t.Errorf("the fake saw %d requests, %d of them with \"Authorization: Bearer <the worker's key>\", %d refused; want all with the key",
			requests, s.Keys["Bearer "+secret], s.Unauthorized)
	}
	if s.Models[model] != s.OpenAI.Requests || s.Models[standInEmbedder] != s.Embeddings.Requests || s.Embeddings.Requests == 0 || len(s.Models) != 2 {
		t.Errorf("models asked for: %v; want %q in every chat request (%d) and %q in the embeddings requests (%d)",
			s.Models, model, s.OpenAI.Requests, standInEmbedder, s.Embeddings.Requests)
	}
	// The proximity agent embedded every hypothesis, each once, and kept the vectors.
	if s.Embeddings.Texts != 8 || len(s.Embeddings.PerText) != 8 {
		t.Errorf("the fake embedded %d texts (%d distinct); want the 8 hypotheses, once each", s.Embeddings.Texts, len(s.Embeddings.PerText))
	}
	for text, n := range s.Embeddings.PerText {
		if n != 1 {
			t.Errorf("the fake embedded %q %d times", research.Shorten(text, 60), n)
		}
	}
	st, err := store.Open(t.Context(), storeDir)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, 8)
	for _, e := range mustQuery[workflows.StateView](t, id, workflows.QueryState, workflows.Page{Limit: 50}).Hypotheses {
		ids = append(ids, e.ID)
	}
	if vecs, err := st.Embeddings(t.Context(), id, standInEmbedder, ids); err != nil || len(vecs) != 8 {
		t.Errorf("the store holds %d embeddings (%v); want the 8 hypotheses'", len(vecs), err)
	}
	st.Close()

	// The session's usage is the fake's usage blocks summed, priced from --prices.
	prompt := s.OpenAI.Input + s.Embeddings.Tokens
	if view.Usage.PromptTokens != prompt || view.Usage.CachedTokens != s.OpenAI.CacheRead || view.Usage.CompletionTokens != s.OpenAI.Output ||
		view.Usage.Requests != s.OpenAI.Requests+s.Embeddings.Requests || view.Usage.Batched != 0 {
		t.Errorf("the session's usage is %+v; want the fake's %d prompt tokens (%d cached) and %d completion tokens over %d requests",
			view.Usage, prompt, s.OpenAI.CacheRead, s.OpenAI.Output, s.OpenAI.Requests+s.Embeddings.Requests)
	}
	// The stand-in embedding model has no price: its tokens cost nothing. (The cached
	// tokens are 0 here: a session this small sends no prompt of the 1,024 tokens OpenAI
	// caches at least; their price is in the sum all the same.)
	wantCost := (float64(s.OpenAI.Input-s.OpenAI.CacheRead)*promptPrice + float64(s.OpenAI.CacheRead)*cachedPrice + float64(s.OpenAI.Output)*completionPrice) / 1e6
	if math.Abs(view.Usage.CostUSD-wantCost) > 1e-6*wantCost {
		t.Errorf("the session's cost is $%.6f; want $%.6f from the worker's price file", view.Usage.CostUSD, wantCost)
	}
	if res.Usage.Tokens() != prompt+s.OpenAI.Output {
		t.Errorf("the result's usage is %+v; want %d tokens", res.Usage, prompt+s.OpenAI.Output)
	}
	// The session's current run: a finished session whose run grew long closes in a run of
	// its own, which carries the search attributes, as the desk and the starter list it.
	tokens := fmt.Sprintf("WorkflowId='%s' AND %s = %d AND ExecutionStatus != 'ContinuedAsNew'", id, workflows.AttrTotalTokens, prompt+s.OpenAI.Output)
	eventually(t, 30*time.Second, "visibility to list the session by "+tokens, func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := temporalClient.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: tokens})
		return len(resp.GetExecutions()) == 1, err
	})

	// The key is nowhere but in the worker's environment and the requests to the fake.
	events := temporalHistory(t, id)
	checkHistoryFree(t, events, secret, model)
	checkFilesFree(t, storeDir, secret, goal)
	w.Stop(t)
	logText, err := os.ReadFile(w.log)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(logText, []byte(secret)) {
		t.Errorf("the worker's log %s contains the key", w.log)
	}
	if !regexp.MustCompile(`providers=\S*openai`).Match(logText) {
		t.Errorf("the worker's log does not say that it serves openai:\n%s", tail(logText, 20))
	}
}

// TestAuthFailureSuspends: a key the provider refuses (401) fails its turn at once, with no
// retry, and suspends the session with the provider's reason. After the key is fixed in
// the worker's environment and the worker restarted, resume carries the session on to
// the end.
func TestAuthFailureSuspends(t *testing.T) {
	const (
		good  = "sk-test-GOOD-456"
		wrong = "sk-test-WRONG-789"
	)
	fake := providertest.Start(t, providertest.Options{OpenAIKey: good})
	storeDir := t.TempDir()
	bad := startWorkerEnv(t, storeDir, []string{"OPENAI_API_KEY=" + wrong, "OPENAI_BASE_URL=" + fake.OpenAIBaseURL()})

	id := newSessionID(t)
	startSession(t, id, research.Request{
		ResearchGoal: "Find metabolic vulnerabilities of glioblastoma stem cells",
		Config:       research.Config{Provider: "openai", Model: "fake-model", MaxHypotheses: 4},
	})
	var status workflows.Status
	eventually(t, 60*time.Second, "the session to suspend itself", func() (bool, error) {
		var err error
		status, err = query[workflows.Status](id, workflows.QueryStatus)
		return status.State == session.Suspended, err
	})
	t.Logf("suspended: %s", status.Reason)
	if !strings.Contains(status.Reason, "401") || !strings.Contains(status.Reason, "OPENAI_API_KEY") {
		t.Errorf("the suspension's reason %q does not mention the 401 and OPENAI_API_KEY", status.Reason)
	}
	eventually(t, 30*time.Second, "the suspended session to have no pending activities", func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d, err := temporalClient.DescribeWorkflowExecution(ctx, id, "")
		return err == nil && len(d.GetPendingActivities()) == 0, err
	})

	// No retries: one request per turn, each turn failed on its first attempt.
	events := temporalHistory(t, id)
	types := activityTypes(events)
	turns, failed := 0, 0
	for _, e := range events {
		if slices.Contains(providerTurns, e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()) {
			turns++
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() != 1 {
			t.Errorf("event %d: %s was attempted %d times; want once", e.GetEventId(), types[a.GetScheduledEventId()], a.GetAttempt())
		}
		if a := e.GetActivityTaskFailedEventAttributes(); a != nil && slices.Contains(providerTurns, types[a.GetScheduledEventId()]) {
			failed++
			if typ := a.GetFailure().GetApplicationFailureInfo().GetType(); typ != "ProviderAuth" {
				t.Errorf("event %d: %s failed with type %q; want ProviderAuth", e.GetEventId(), types[a.GetScheduledEventId()], typ)
			}
		}
	}
	s := fake.Stats()
	requests := total(s.Requests)
	t.Logf("%d provider turn(s) before the suspension, %d request(s) to the fake (%v)", turns, requests, s.Requests)
	if turns == 0 || failed != turns || requests != turns || s.Unauthorized != turns || s.Keys["Bearer "+wrong] != turns ||
		s.Requests["POST /v1/chat/completions"] != turns || s.OpenAI.Requests != 0 {
		t.Errorf("%d provider turns scheduled, %d failed; the fake saw %d requests (%v), %d refused, %d with the wrong key, answered %d; "+
			"want one refused chat request per turn, every turn failed",
			turns, failed, requests, s.Requests, s.Unauthorized, s.Keys["Bearer "+wrong], s.OpenAI.Requests)
	}
	checkHistoryFree(t, events, wrong, "fake-model")

	// Fix the key, restart the worker, resume: the session goes on to the end.
	bad.Stop(t)
	startWorkerEnv(t, storeDir, []string{"OPENAI_API_KEY=" + good, "OPENAI_BASE_URL=" + fake.OpenAIBaseURL()})
	if st, err := update(id, workflows.Resume, "resume-after-key-fix", map[string]string{}); err != nil || st.State != session.Active {
		t.Fatalf("resume: %+v, %v; want the session active", st, err)
	}
	completedWith(t, id, 2*time.Minute, 4) // after the resume
	after := fake.Stats()
	answered := after.OpenAI.Requests + after.Embeddings.Requests
	if after.OpenAI.Requests == 0 || after.Keys["Bearer "+good] != answered || total(after.Requests) != answered+turns || after.Unauthorized != turns {
		t.Errorf("after the fix the fake answered %d requests, %d with the good key, and saw %d in all, %d refused; want every new request answered, with the good key",
			answered, after.Keys["Bearer "+good], total(after.Requests), after.Unauthorized)
	}
}

// TestSlots: a worker with --slots 2 runs at most two provider turns at once, however
// many sessions want one; the others wait in the task queue, and every session completes.
func TestSlots(t *testing.T) {
	const (
		key      = "sk-test-SLOTS"
		slots    = 2
		sessions = 20
	)
	fake := providertest.Start(t, providertest.Options{OpenAIKey: key, Latency: slotsDelay})
	startWorkerEnv(t, t.TempDir(), []string{"OPENAI_API_KEY=" + key, "OPENAI_BASE_URL=" + fake.OpenAIBaseURL()}, "--slots", fmt.Sprint(slots))

	began := time.Now()
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = newSessionID(t)
		startSession(t, ids[i], research.Request{
			ResearchGoal: fmt.Sprintf("Explain antibiotic tolerance in persister cells, angle %d", i),
			Config:       research.Config{Provider: "openai", Model: "fake-model", MaxHypotheses: 4, ReviewTypes: []string{research.ReviewInitial}},
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, sessions)
	results := make([]workflows.Result, sessions)
	for i, id := range ids {
		wg.Go(func() { results[i], errs[i] = result(id, 3*time.Minute) })
	}
	wg.Wait()
	took := time.Since(began)
	for i := range ids {
		if errs[i] != nil {
			t.Errorf("session %d: %v", i, errs[i])
			continue
		}
		if results[i].State != session.Completed || results[i].Hypotheses != 4 {
			t.Errorf("session %d: state %q, %d hypotheses (%s); want completed with 4", i, results[i].State, results[i].Hypotheses, results[i].StopReason)
		}
		// Waiting for a slot is not failing: no turn failed or was retried.
		for _, a := range mustQuery[workflows.StateView](t, ids[i], workflows.QueryState, workflows.Page{Limit: 1}).Agents {
			if a.Failed > 0 {
				t.Errorf("session %d: %d %s turn(s) failed", i, a.Failed, a.Agent)
			}
		}
	}
	s := fake.Stats()
	t.Logf("%d sessions, %d turns of %s each through %d slots in %s; at most %d requests in flight",
		sessions, s.OpenAI.Requests, slotsDelay, slots, took.Round(time.Millisecond), s.MaxInFlight)
	if s.MaxInFlight > slots {
		t.Errorf("the fake saw %d requests at once; want at most --slots %d", s.MaxInFlight, slots)
	}
	if s.MaxInFlight < slots {
		t.Errorf("the fake never saw more than %d request at once; want the %d slots used", s.MaxInFlight, slots)
	}
}

// slotsDelay is how long the fake holds each answer in TestSlots: long enough that turns
// queue for the slots (20 sessions want turns at once), short enough that their ~420
// turns through 2 slots take well under a minute (at 300 ms they take 75 s).
const slotsDelay = 100 * time.Millisecond

// standInEmbedder is the embedding model a session names for the fake provider's
// embeddings, which are simulator.Embed's stand-in vectors.
const standInEmbedder = "cosci-stand-in"

// standInThresholds writes the stand-in embedding's proximity thresholds, as TestCalibrate
// finds them (BENCHMARKS.md), for a worker's --proximity-thresholds: with the thresholds
// of a real model the fake's hypotheses might pass for near-duplicates.
func standInThresholds(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "proximity.json")
	if err := os.WriteFile(path, fmt.Appendf(nil, `{%q: {"duplicate": 0.58, "cluster": 0.33, "theme": 0.3}}`, standInEmbedder), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// total is the sum of a counter's values.
func total(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

// checkHistoryFree fails the test if secret appears in any event of a workflow history:
// in its JSON form (protojson, what `temporal workflow show --output json` prints) or in
// its wire form, where payloads are raw bytes rather than base64. present must appear in
// the wire form (it is in the session's input), to show that the search looks into the
// payloads.
func checkHistoryFree(t *testing.T, events []*historypb.HistoryEvent, secret, present string) {
	t.Helper()
	if len(events) == 0 {
		t.Fatal("the history is empty")
	}
	seen := false
	for _, e := range events {
		js, err := protojson.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		wire, err := proto.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(js, []byte(secret)) || bytes.Contains(wire, []byte(secret)) {
			t.Errorf("history event %d (%s) contains the key: %s", e.GetEventId(), e.GetEventType(), js)
		}
		seen = seen || bytes.Contains(wire, []byte(present))
	}
	if !seen {
		t.Errorf("no history event contains %q; the search for the key cannot be trusted", present)
	}
}

// checkFilesFree fails the test if secret appears in any file under dir, as it is or
// decompressed: the store compresses turns, checkpoints and the pieces of prompts, where a
// scan of the bytes on disk would find nothing whatever they held. present (the session's
// goal, in its prompts and checkpoints) must be found in a compressed file, or the scan
// proves nothing.
func checkFilesFree(t *testing.T, dir, secret, present string) {
	t.Helper()
	files, compressed, seen := 0, 0, false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b, err := store.Plain(raw)
		if err != nil {
			t.Errorf("store file %s: %v", path, err)
			return nil
		}
		files++
		if bytes.Contains(raw, []byte(secret)) || bytes.Contains(b, []byte(secret)) {
			t.Errorf("store file %s contains the key", path)
		}
		if !bytes.Equal(b, raw) {
			compressed++
			seen = seen || bytes.Contains(b, []byte(present))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 || compressed == 0 || !seen {
		t.Errorf("the store %s holds %d files, %d of them compressed, %q found in one of those %v: the search for the key cannot be trusted", dir, files, compressed, present, seen)
	}
}
