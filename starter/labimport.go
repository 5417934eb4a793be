package main

// `starter data add --from-worker NAME`: a table from the data folder of a worker started
// with --lab-data (issue #46). The worker reads and stores it (activities.ImportLabData);
// the starter then announces it to the session as it does a FILE of its own.

import (
	"context"
	"errors"
	"fmt"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// takeTable stores the table in the session: the FILE here, or --from-worker's file,
// which the worker with that data folder stores (importFromWorker).
func takeTable(ctx context.Context, f labFlags) (workflows.DatasetRequest, store.DatasetRecord, error) {
	if f.fromWorker != "" {
		return importFromWorker(ctx, f)
	}
	st, err := openStore(ctx)
	if err != nil {
		return workflows.DatasetRequest{}, store.DatasetRecord{}, err
	}
	defer st.Close()
	return storeTable(ctx, st, f)
}

// importFromWorker has the worker serving --lab-data-queue store its data folder's file in
// the session (activities.ImportLabData), and waits for its record.
func importFromWorker(ctx context.Context, f labFlags) (workflows.DatasetRequest, store.DatasetRecord, error) {
	var rec store.DatasetRecord
	err := withTemporal(nil, func(c client.Client, _ string) error {
		in := activities.ImportLabDataInput{SessionID: f.session, Name: f.fromWorker, MaxBytes: int64(f.maxMB) << 20, Queue: f.labQueue}
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: fmt.Sprintf("lab-data-%s-%d", f.session, time.Now().UnixNano()), TaskQueue: workflows.TaskQueue, WorkflowExecutionTimeout: 15 * time.Minute,
		}, activities.ImportLabDataWorkflow, in)
		if err == nil {
			err = run.Get(ctx, &rec)
		}
		var app *temporal.ApplicationError
		var timeout *temporal.TimeoutError
		switch {
		case errors.As(err, &app) && app.Type() == activities.ErrLabDataRefused:
			return &exitError{1, app.Message()}
		case errors.As(err, &timeout) && timeout.TimeoutType() == enums.TIMEOUT_TYPE_SCHEDULE_TO_START:
			return &exitError{1, fmt.Sprintf("no worker with a data folder (--lab-data) took the import on queue %s within %s", f.labQueue, activities.LabDataWait)}
		}
		return err
	})
	return datasetRequest(f.table, rec), rec, err
}
