package temporalpg_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/e2e/temporalpg"
	"github.com/cosci-dev/cosci/internal/pgtest"
	"github.com/cosci-dev/cosci/workflows"
)

const taskQueue = "temporalpg-test"

// Greeting is the test's workflow input: whom to greet, and whether to wait for a "go"
// signal first (to have a workflow open while the server dies).
type Greeting struct {
	Name string
	Wait bool
}

func greetWorkflow(ctx workflow.Context, in Greeting) (string, error) {
	if in.Wait {
		workflow.GetSignalChannel(ctx, "go").Receive(ctx, nil)
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, hello, in.Name).Get(ctx, &out)
	return out, err
}

func hello(_ context.Context, name string) (string, error) { return "hello, " + name, nil }

// TestServer starts Temporal on a private PostgreSQL with cosci's search attributes, runs a
// workflow with an activity to completion, finds it by its search attributes, kills the
// server with a workflow open, restarts it, and finishes that workflow and a new one.
func TestServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()

	pgDir, err := os.MkdirTemp("", "cosci-temporalpg-") // not t.TempDir: the postgres user must reach it
	if err != nil {
		t.Fatal(err)
	}
	pg, err := pgtest.Start(pgDir)
	if err != nil {
		os.RemoveAll(pgDir)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pg.Close(); err != nil {
			t.Error(err)
		}
	})

	began := time.Now()
	srv, err := temporalpg.Start(ctx, t.TempDir(), pg, workflows.SearchAttributes)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("temporalpg.Start took %s (server at %s)", time.Since(began).Round(time.Millisecond), srv.Address())
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("server log, last part:\n%s", tail(srv.Log(), 6000))
		}
	})

	c, err := client.DialContext(ctx, client.Options{HostPort: srv.Address(), Namespace: temporalpg.Namespace, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// Every search attribute is registered in the namespace, with its type.
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: temporalpg.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range workflows.SearchAttributes {
		want, err := enumspb.IndexedValueTypeFromString(typ)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := resp.GetCustomAttributes()[name]; !ok || got != want {
			t.Errorf("search attribute %s: registered %v, as %v; want %v", name, ok, got, want)
		}
	}

	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterActivity(hello)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	workerRuns := true
	defer func() {
		if workerRuns {
			w.Stop()
		}
	}()

	// A workflow with an activity runs to completion, and visibility finds it by its search
	// attributes (a Keyword and an Int).
	status := temporal.NewSearchAttributeKeyKeyword(workflows.AttrSessionStatus)
	count := temporal.NewSearchAttributeKeyInt64(workflows.AttrHypothesisCount)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    "greet-first",
		TaskQueue:             taskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(status.ValueSet("tested"), count.ValueSet(3)),
	}, greetWorkflow, Greeting{Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	expectResult(ctx, t, run, "hello, first")
	query := fmt.Sprintf("%s = 'tested' AND %s = 3", workflows.AttrSessionStatus, workflows.AttrHypothesisCount)
	eventually(ctx, t, "visibility to list greet-first by "+query, func() error {
		list, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: temporalpg.Namespace, Query: query})
		if err != nil {
			return err
		}
		for _, e := range list.GetExecutions() {
			if e.GetExecution().GetWorkflowId() == "greet-first" {
				return nil
			}
		}
		return fmt.Errorf("%d executions, not greet-first", len(list.GetExecutions()))
	})

	// A workflow is open (waiting for a signal) when the server dies; after a restart on
	// the same databases it takes the signal and completes, and new workflows run.
	open, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "greet-across-crash", TaskQueue: taskQueue},
		greetWorkflow, Greeting{Name: "survivor", Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "greet-across-crash to wait for its signal", func() error {
		d, err := c.DescribeWorkflowExecution(ctx, open.GetID(), open.GetRunID())
		if err != nil {
			return err
		}
		if d.GetWorkflowExecutionInfo().GetHistoryLength() < 4 { // started, task scheduled, started, completed
			return fmt.Errorf("history length %d", d.GetWorkflowExecutionInfo().GetHistoryLength())
		}
		return nil
	})
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	began = time.Now()
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("Restart after Kill took %s", time.Since(began).Round(time.Millisecond))
	if err := c.SignalWorkflow(ctx, open.GetID(), open.GetRunID(), "go", nil); err != nil {
		t.Fatal(err)
	}
	expectResult(ctx, t, open, "hello, survivor")
	after, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "greet-after-restart", TaskQueue: taskQueue},
		greetWorkflow, Greeting{Name: "again"})
	if err != nil {
		t.Fatal(err)
	}
	expectResult(ctx, t, after, "hello, again")

	// Another server on the same databases (a replacement host, with a config of its own)
	// takes over: the databases, schemas, namespace and search attributes are reused.
	w.Stop() // while its server runs: a worker stops slowly when its server is gone
	workerRuns = false
	began = time.Now()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Stop took %s", time.Since(began).Round(time.Millisecond))
	began = time.Now()
	next, err := temporalpg.Start(ctx, t.TempDir(), pg, workflows.SearchAttributes)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Start on the same databases took %s", time.Since(began).Round(time.Millisecond))
	defer next.Stop()
	c2, err := client.DialContext(ctx, client.Options{HostPort: next.Address(), Namespace: temporalpg.Namespace, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	began = time.Now()
	expectResult(ctx, t, c2.GetWorkflow(ctx, after.GetID(), after.GetRunID()), "hello, again")
	t.Logf("the result took %s", time.Since(began).Round(time.Millisecond))

	// SQL visibility has room for three custom Ints per namespace, and cosci uses all three:
	// a fourth is refused, and Start says so at once.
	if err := next.Stop(); err != nil {
		t.Fatal(err)
	}
	_, err = temporalpg.Start(ctx, t.TempDir(), pg, map[string]string{"FourthInt": "Int"})
	if err == nil || !strings.Contains(err.Error(), "FourthInt") || !strings.Contains(err.Error(), "more than 3 search attribute of type Int") {
		t.Errorf("Start with a fourth Int: %v; want the server's refusal", err)
	} else {
		t.Logf("a fourth Int: %.300s", err)
	}
}

// TestStartOutsideModule: without the module (so without bin/), Start says what to build.
func TestStartOutsideModule(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := temporalpg.Start(t.Context(), t.TempDir(), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "make server-tools") {
		t.Errorf("Start outside the module: %v; want an error naming `make server-tools`", err)
	}
}

// TestStartRejectsUnknownType: a search attribute type the server does not know is an error
// before anything starts.
func TestStartRejectsUnknownType(t *testing.T) {
	_, err := temporalpg.Start(t.Context(), t.TempDir(), nil, map[string]string{"Score": "Float"})
	if err == nil || !strings.Contains(err.Error(), `"Float"`) {
		t.Errorf("Start with type Float: %v", err)
	}
}

func expectResult(ctx context.Context, t *testing.T, run client.WorkflowRun, want string) {
	t.Helper()
	var got string
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("workflow %s: %v", run.GetID(), err)
	}
	if got != want {
		t.Errorf("workflow %s returned %q, want %q", run.GetID(), got, want)
	}
}

func eventually(ctx context.Context, t *testing.T, what string, check func() error) {
	t.Helper()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func quietLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
