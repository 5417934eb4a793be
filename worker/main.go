// Command worker runs cosci's workflows and activities. It connects to Temporal as
// configured by the environment (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_PROFILE, or
// a temporal.toml profile), and keeps session texts in a store on local disk.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/connection"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	storeDir := flag.String("store", envOr("COSCI_STORE", ".data/sessions"), "session store directory (env COSCI_STORE)")
	latency := flag.Duration("offline-latency", 0, "simulated time per offline provider turn, e.g. 200ms")
	errorRate := flag.Float64("offline-error-rate", 0, "probability that an offline turn fails transiently (retried by Temporal)")
	flag.Parse()
	if *errorRate < 0 || *errorRate > 1 {
		return fmt.Errorf("--offline-error-rate is %v; it must be between 0 and 1", *errorRate)
	}

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	st, err := store.Open(*storeDir)
	if err != nil {
		return fmt.Errorf("cannot open the session store: %w", err)
	}
	c, err := connection.Dial(logger)
	if err != nil {
		return err
	}
	defer c.Close()

	w := worker.New(c, workflows.TaskQueue, worker.Options{})
	w.RegisterWorkflow(workflows.ResearchSession)
	w.RegisterActivity(&activities.Activities{
		Store:     st,
		Models:    map[string]activities.Model{"offline": &provider.Offline{Latency: *latency, ErrorRate: *errorRate}},
		Heartbeat: 2 * time.Second,
	})
	logger.Info("worker started", "task_queue", workflows.TaskQueue, "store", st.Root())
	return w.Run(worker.InterruptCh())
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
