package converse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// The conversation's client is tested against a real Temporal dev server (bin/temporal, as
// the end-to-end tests use it) and a worker in this process with cosci's workflows and
// activities (the offline model, a store in a temporary directory): what tells an ended
// session apart is the server's words for a closed workflow and the workflow's own for a
// session that ended while its run is open, and only the real ones can show that the
// client still knows them.

var (
	temporalClient client.Client
	// lastLog holds back the Log activity of the sessions it names: a session logs its
	// last events after it has completed, so its run stays open, ended, while they wait.
	lastLog = gates{held: map[string]chan struct{}{}}
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	bin, err := filepath.Abs(filepath.Join("..", "..", "bin", "temporal"))
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "converse: no Temporal CLI at %s (%v): run `make tools` first\n", bin, err)
		return 1
	}
	var args []string
	for _, name := range slices.Sorted(maps.Keys(workflows.SearchAttributes)) {
		args = append(args, "--search-attribute", name+"="+workflows.SearchAttributes[name])
	}
	dir, err := os.MkdirTemp("", "converse-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "converse:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	serverLog, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "converse:", err)
		return 1
	}
	defer serverLog.Close()
	quiet := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	server, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: bin, ExtraArgs: args, LogLevel: "error", ClientOptions: &client.Options{Logger: quiet},
		Stdout: serverLog, Stderr: serverLog,
	})
	if err != nil {
		out, _ := os.ReadFile(serverLog.Name())
		fmt.Fprintf(os.Stderr, "converse: cannot start the Temporal dev server: %v\n%s", err, out)
		return 1
	}
	defer server.Stop()
	temporalClient = server.Client()

	st, err := store.Open(ctx, filepath.Join(dir, "sessions"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "converse:", err)
		return 1
	}
	acts := &activities.Activities{Store: st, Models: map[string]activities.Model{"offline": &simulator.Offline{}}}
	// The worker's three queues, as worker/main.go runs them.
	for _, queue := range []string{workflows.TaskQueue, workflows.TurnsQueue, workflows.ComputeQueue} {
		w := worker.New(temporalClient, queue, worker.Options{Interceptors: []interceptor.WorkerInterceptor{activities.Classifier()}})
		w.RegisterActivity(acts)
		if queue == workflows.TaskQueue {
			workflows.Register(w)
			w.RegisterActivityWithOptions(func(ctx context.Context, in activities.LogInput) error {
				if err := lastLog.wait(ctx, in.SessionID); err != nil {
					return err
				}
				return acts.Log(ctx, in)
			}, activity.RegisterOptions{Name: "Log", DisableAlreadyRegisteredCheck: true})
		}
		if err := w.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "converse: cannot start a worker:", err)
			return 1
		}
		defer w.Stop()
	}
	return m.Run()
}

// gates holds back what runs for a session until the test opens its gate.
type gates struct {
	mu   sync.Mutex
	held map[string]chan struct{}
}

func (g *gates) hold(id string) (open func()) {
	ch := make(chan struct{})
	g.mu.Lock()
	g.held[id] = ch
	g.mu.Unlock()
	return sync.OnceFunc(func() { close(ch) })
}

func (g *gates) wait(ctx context.Context, id string) error {
	g.mu.Lock()
	ch := g.held[id]
	g.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestEnded: which errors mean the session has ended. The server's and the workflow's own
// words are checked against the real ones in TestAskAfterTheEnd; here, their shapes and
// the errors that look like them but are not.
func TestEnded(t *testing.T) {
	for _, tt := range []struct {
		name  string
		err   error
		ended bool
	}{
		{"no error", nil, false},
		{"an update to a closed workflow", serviceerror.NewNotFound("workflow execution already completed"), true},
		{"the same, wrapped", fmt.Errorf("ask tau-1: %w", serviceerror.NewNotFound("workflow execution already completed")), true},
		{"a session that never was", serviceerror.NewNotFound("workflow not found for ID: tau-9"), false},
		{"an ended session's run refusing a question", temporal.NewNonRetryableApplicationError(workflows.EndedAskRefusal, "CommandRejected", nil), true},
		{"another refusal of a question", temporal.NewNonRetryableApplicationError("ask: the message is empty", "CommandRejected", nil), false},
		{"a proposal refused as ended, in an answer's text", temporal.NewNonRetryableApplicationError("confirm m-0002.1: "+activities.EndedReason, "CommandRejected", nil), false},
		{"the ended words outside a workflow's error", errors.New(workflows.EndedAskRefusal), false},
		{"a server that is down", serviceerror.NewUnavailable("connection refused"), false},
	} {
		if got := Ended(tt.err); got != tt.ended {
			t.Errorf("%s: Ended(%v) = %v; want %v", tt.name, tt.err, got, tt.ended)
		}
	}
}

// TestAskAfterTheEnd talks with a session as it ends, through a real server: while its run
// is still open (its last events held back), and once its workflow has closed. Each
// question is answered from the final state by the EndedConversation workflow, in one
// conversation; a confirmation is refused with ErrEnded; a session that never was is not
// taken for an ended one.
func TestAskAfterTheEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	id := fmt.Sprintf("converse-%d", time.Now().UnixNano())
	open := lastLog.hold(id)
	defer open()
	run, err := temporalClient.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue}, workflows.WorkflowType,
		research.Request{ResearchGoal: "Find druggable mechanisms that slow tau propagation", ScientistID: "ada", Config: research.Config{MaxHypotheses: 4, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	c := Client{C: temporalClient}

	// The session has completed, and its run waits for its last events to be logged.
	for {
		v, err := temporalClient.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
		var st workflows.Status
		if err == nil {
			err = v.Get(&st)
		}
		if err != nil {
			t.Fatalf("status of %s: %v", id, err)
		}
		if st.State == session.Completed {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("session %s did not complete: %s", id, st.State)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if _, err := update[workflows.AskAnswer](ctx, temporalClient, id, workflows.Ask, "", workflows.AskRequest{Text: "What is the best hypothesis?"}); !Ended(err) {
		t.Fatalf("a question to the ended session's open run: %v; want a refusal Ended knows", err)
	}
	ask := func(when, text string, wantQuestion string) workflows.AskAnswer {
		t.Helper()
		ans, err := c.Ask(ctx, id, workflows.AskRequest{Text: text, By: "grace"})
		if err != nil {
			t.Fatalf("ask %s: %v", when, err)
		}
		if ans.Question.ID != wantQuestion || !strings.Contains(ans.Answer.Text, "has ended") {
			t.Fatalf("ask %s: question %s, answer %q; want question %s answered from the final state", when, ans.Question.ID, ans.Answer.Text, wantQuestion)
		}
		return ans
	}
	ask("while the ended session's run is open", "What is the best hypothesis?", "m-0001")

	open()
	var res workflows.Result
	if err := run.Get(ctx, &res); err != nil || res.State != session.Completed {
		t.Fatalf("session %s: %+v, %v", id, res, err)
	}
	ans := ask("once the session's workflow has closed", "Please focus on astrocytes.", "m-0003")
	if len(ans.Answer.Proposals) != 1 || ans.Answer.Proposals[0].Status != session.ProposalRefused {
		t.Fatalf("the ended session's proposals: %+v; want one, refused", ans.Answer.Proposals)
	}
	if _, err := c.Confirm(ctx, id, workflows.ConfirmRequest{Proposal: ans.Answer.Proposals[0].ID, By: "grace"}); !errors.Is(err, ErrEnded) {
		t.Errorf("confirm on the closed session: %v; want ErrEnded", err)
	}
	// Both questions went to the one workflow that answers the ended session.
	if _, err := temporalClient.DescribeWorkflowExecution(ctx, workflows.EndedConversationID(id), ""); err != nil {
		t.Errorf("the ended session's conversation workflow: %v", err)
	}

	never := id + "-never"
	if _, err := c.Ask(ctx, never, workflows.AskRequest{Text: "Hello?"}); err == nil || Ended(err) {
		t.Errorf("ask a session that never was: %v; want an error that is not Ended", err)
	}
	var notFound *serviceerror.NotFound
	if _, err := temporalClient.DescribeWorkflowExecution(ctx, workflows.EndedConversationID(never), ""); !errors.As(err, &notFound) {
		t.Errorf("a session that never was got a conversation workflow (describe: %v)", err)
	}
}
