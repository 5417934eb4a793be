package main

import (
	"fmt"
	"os"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/store"
)

// startLabData serves the data folder (--lab-data) on its queue, when one is given: the
// activity that imports one of its files into a session (activities.LabData). It runs
// one import at a time: each holds a table in memory, up to the dataset cap.
func (ws *workerSet) startLabData(cfg *config, st *store.Store) error {
	if cfg.labData == "" {
		return nil
	}
	if info, err := os.Stat(cfg.labData); err != nil || !info.IsDir() {
		return fmt.Errorf("--lab-data %q is not a directory this worker can read", cfg.labData)
	}
	w := ws.newWorker(cfg.labQueue, worker.Options{MaxConcurrentActivityExecutionSize: 1})
	l := &activities.LabData{Dir: cfg.labData, Store: st}
	w.RegisterActivityWithOptions(l.Import, activity.RegisterOptions{Name: activities.ImportLabDataActivity})
	return ws.start("data folder's worker on "+cfg.labQueue, w)
}
