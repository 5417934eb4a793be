package temporalpg_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/cosci-dev/cosci/e2e/temporalpg"
	"github.com/cosci-dev/cosci/workflows"
)

// TestSQLiteServer starts the server on a SQLite file with cosci's search attributes, runs a
// workflow with an activity to completion, stops the server and starts another on the same
// file, which still has the workflow and the search attributes: what `make server`'s
// .data/temporal.db keeps across runs.
func TestSQLiteServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	db := filepath.Join(t.TempDir(), "temporal.db")
	start := func() *temporalpg.Server {
		began := time.Now()
		srv, err := temporalpg.StartSQLite(ctx, t.TempDir(), workflows.SearchAttributes, temporalpg.SQLiteOptions{DBFile: db})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("StartSQLite took %s (server at %s)", time.Since(began).Round(time.Millisecond), srv.Address())
		t.Cleanup(func() {
			if err := srv.Stop(); err != nil {
				t.Error(err)
			}
			if t.Failed() {
				t.Logf("server log, last part:\n%s", tail(srv.Log(), 6000))
			}
		})
		return srv
	}
	dial := func(srv *temporalpg.Server) client.Client {
		c, err := client.DialContext(ctx, client.Options{HostPort: srv.Address(), Namespace: temporalpg.Namespace, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	first := start()
	c := dial(first)
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterActivity(hello)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "greet-sqlite", TaskQueue: taskQueue}, greetWorkflow, Greeting{Name: "sqlite"})
	if err != nil {
		t.Fatal(err)
	}
	expectResult(ctx, t, run, "hello, sqlite")
	w.Stop()
	c.Close()
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}

	second := start()
	c = dial(second)
	defer c.Close()
	if _, err := c.DescribeWorkflowExecution(ctx, "greet-sqlite", run.GetRunID()); err != nil {
		t.Errorf("the workflow run before the restart: %v", err)
	}
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: temporalpg.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	for name := range workflows.SearchAttributes {
		if _, ok := resp.GetCustomAttributes()[name]; !ok {
			t.Errorf("search attribute %s is not registered after the restart", name)
		}
	}
}
