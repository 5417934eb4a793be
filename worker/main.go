// Command worker runs cosci's workflows and activities. It connects to Temporal as
// configured by the environment (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_PROFILE, or
// a temporal.toml profile), and keeps session texts in the session store that --store or
// COSCI_STORE names: a directory on this machine (the default, .data/sessions), or a
// PostgreSQL database that every worker host shares (postgres://...; the password in
// PGPASSWORD), so that any host may die and its sessions carry on elsewhere.
//
// One process runs three Temporal workers (and one per tool server, below):
//
//   - on workflows.TaskQueue ("cosci"): the ResearchSession workflows and the activities
//     that call no model and take little CPU (checkpoints, the scientist's texts);
//   - on workflows.TurnsQueue ("cosci-turns"): the provider turns, every activity that
//     calls a model (Plan, Generate, Evolve, Review, Compare, Debate, Proximity,
//     MetaReview, Overview);
//   - on workflows.ComputeQueue ("cosci-compute"): the activities that take the CPU for
//     long (the tournament's fits, the report), at most --compute-slots at once (the CPU
//     count less one), so that the cores left serve workflow tasks and queries.
//
// Metrics (--metrics-address), traces (OTEL_*), encryption (COSCI_KEYS_FILE), webhooks
// (--notify-url, and --notify-text for the reasons) and rolling upgrades (--deployment, --build-id): see docs/operating.md.
//
// The turns worker holds the provider slots, which Temporal enforces:
//
//   - --slots N (default 4) is this worker's slot count: at most N turns run at once in
//     this process (MaxConcurrentActivityExecutionSize).
//     Sessions beyond capacity do not fail: their turns wait in the task queue until a slot
//     frees, on this worker or any other polling the queue.
//   - --rps R (default 0, unlimited) caps the turns started per second on the queue
//     (TaskQueueActivitiesPerSecond). The server enforces it across all workers of the
//     queue, so it is the rate limit for the whole deployment's provider account.
//   - The worker's sticky workflow cache (worker.SetStickyWorkflowCacheSize, 10000
//     sessions by default) is the LRU of session state: a session's workflow stays in
//     memory between its tasks; the least recently used is evicted when the cache is full
//     and rebuilt by replaying its history the next time it has work.
//
// Tool servers (MCP) are named by --tools FILE (or COSCI_TOOLS): stdio commands the worker
// starts, or streamable HTTP endpoints (see internal/tools). Each server's calls have a
// task queue of their own, workflows.ToolQueue(name), which every worker with the server
// polls; the server's rate (calls per second) is that queue's TaskQueueActivitiesPerSecond,
// enforced by the Temporal server across all the workers, so a lab's sessions together
// never call a literature service faster than it allows.
//
// Provider credentials come only from this process's environment (OPENAI_API_KEY,
// OPENAI_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL; for embeddings apart from the
// chat provider, VOYAGE_API_KEY and VOYAGE_BASE_URL, COSCI_EMBEDDING_BASE_URL and
// COSCI_EMBEDDING_API_KEY); they never travel in a workflow's input or history and are
// never logged. A session names its provider and model, and its embedding provider and
// model; a turn for a provider whose key is missing fails as an auth error, and the
// session suspends until the key is set and the session resumed.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/codec"
	"github.com/cosci-dev/cosci/internal/connection"
	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/notify"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/sandbox"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/internal/tools"
	"github.com/cosci-dev/cosci/workflows"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

// credentials are the environment variables that hold each provider's key; the worker
// reports which are set, never their values.
var credentials = []struct{ provider, env string }{
	{"openai", "OPENAI_API_KEY"},
	{"anthropic", "ANTHROPIC_API_KEY"},
	{"voyage", "VOYAGE_API_KEY"},                      // embeddings only
	{"openai-compatible", "COSCI_EMBEDDING_BASE_URL"}, // embeddings only; its key is optional
}

// config is what the worker's command line and environment say.
type config struct {
	store, prices, tools, thresholds string
	metrics                          string // the /metrics address; "" serves none
	deployment, buildID              string // the Worker Deployment version; "" runs unversioned
	notify                           string // the webhook told when a session needs a person or ends
	notifyText                       bool   // the webhook is sent each event's reason, free text
	storeMigrating                   bool   // read plain and old-form store records (store.Migrating)
	webhook                          *notify.Webhook
	offline                          simulator.Offline
	slots, computeSlots              int
	rps                              float64
	sandbox                          string       // the sandbox's child binary; "" finds it (sandboxBinary)
	sandboxCaps                      sandbox.Caps // the caps of an analysis' query
	labData, labQueue                string       // the data folder sessions may import from, and its task queue
}

// parseFlags reads the worker's flags, with the environment's defaults, and refuses
// values that cannot work.
func parseFlags(args []string, getenv func(string) string) (*config, error) {
	c := &config{}
	migrating, err := store.MigratingFromEnv(getenv)
	if err != nil {
		return c, err
	}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.BoolVar(&c.storeMigrating, "store-migrating", migrating, "with encryption, also read store records that are not sealed to their session (written before encryption was turned on, or by an earlier version); for a migration only, see docs/operating.md (env COSCI_STORE_MIGRATING)")
	fs.StringVar(&c.store, "store", envOr(getenv, "COSCI_STORE", ".data/sessions"), "session store: a directory, or a postgres:// URL with the password in PGPASSWORD (env COSCI_STORE)")
	fs.DurationVar(&c.offline.Latency, "offline-latency", 0, "simulated time per offline provider turn, e.g. 200ms")
	fs.Float64Var(&c.offline.ErrorRate, "offline-error-rate", 0, "probability that an offline turn fails transiently (retried by Temporal)")
	fs.Uint64Var(&c.offline.ErrorSeed, "offline-error-seed", 0, "seed of the offline turns' failures, to make them reproducible (0: random)")
	fs.Float64Var(&c.offline.FirstBias, "offline-first-bias", 0, "the offline judges' bias towards the hypothesis shown first, in logits (0.5: an even match is a 62% win for the first)")
	fs.Float64Var(&c.offline.Fabricate, "offline-fabricate", 0.1, "share of a grounded offline hypothesis' references made dishonest on purpose, spread over the dishonest kinds of --offline-citation-kinds, to measure the citation check")
	kinds := fs.String("offline-citation-kinds", "all", "the kinds of citation the offline simulator makes, comma-separated: all, or some of "+strings.Join(simulator.PlantKinds(), ", "))
	truth := fs.String("offline-truth", "", "a file where the offline simulator records the kind of each citation it plants, shared by workers that take over each other's turns and read by benchmarks (default: kept in memory)")
	accuracy := fs.Float64("offline-support-accuracy", 0.9, "share of citations whose support (does the quote support its claim?) a simulated deep verification or full review judges right")
	fs.IntVar(&c.slots, "slots", 4, "provider turns this worker runs at once; more wait in the task queue")
	fs.IntVar(&c.computeSlots, "compute-slots", max(1, runtime.NumCPU()-1), "CPU-heavy activities (the tournament's fits, reports) this worker runs at once; the cores left serve workflow tasks and queries")
	fs.Float64Var(&c.rps, "rps", 0, "provider turns started per second on the turns queue, across all workers (0: unlimited)")
	fs.StringVar(&c.prices, "prices", getenv("COSCI_PRICES"), "JSON price table merged over the built-in one (env COSCI_PRICES)")
	fs.StringVar(&c.tools, "tools", getenv("COSCI_TOOLS"), "YAML or JSON file of the MCP tool servers to connect to (env COSCI_TOOLS)")
	fs.StringVar(&c.metrics, "metrics-address", getenv("COSCI_METRICS_ADDRESS"), "serve Prometheus metrics on this host:port at /metrics, e.g. :9464 (env COSCI_METRICS_ADDRESS; default off)")
	fs.StringVar(&c.thresholds, "proximity-thresholds", getenv("COSCI_PROXIMITY_THRESHOLDS"), "JSON file of proximity thresholds by embedding model, {\"model\": {\"duplicate\", \"cluster\", \"theme\"}} (env COSCI_PROXIMITY_THRESHOLDS)")
	fs.StringVar(&c.notify, "notify-url", getenv("COSCI_NOTIFY_URL"), "a webhook (http or https) told when a session suspends by itself (budget, credentials, store) or ends: the session id, state and kind of event; it is logged either way (env COSCI_NOTIFY_URL)")
	notifyText, err := envBool(getenv, "COSCI_NOTIFY_TEXT")
	if err != nil {
		return c, err
	}
	fs.BoolVar(&c.notifyText, "notify-text", notifyText, "also send the webhook each event's reason, free text that may quote the scientist's terminate reason or a provider's error "+
		"(and, with the lab's keys, log it); without it the reason stays in the session, where starter status shows it (env COSCI_NOTIFY_TEXT)")
	fs.StringVar(&c.deployment, "deployment", getenv("COSCI_DEPLOYMENT"), "run as a version of this Worker Deployment, for rolling upgrades with --build-id (env COSCI_DEPLOYMENT; see docs/operating.md)")
	fs.StringVar(&c.buildID, "build-id", getenv("COSCI_BUILD_ID"), "this build's id in the Worker Deployment, e.g. a release or a commit (env COSCI_BUILD_ID)")
	fs.StringVar(&c.sandbox, "sandbox", getenv(sandbox.ChildBinary), "the analysis sandbox's child binary (make build puts it at bin/cosci-sandbox); default: cosci-sandbox beside the worker's executable, then bin/cosci-sandbox, then on PATH (env COSCI_SANDBOX)")
	fs.IntVar(&c.sandboxCaps.MemoryMB, "sandbox-memory-mb", sandbox.DefaultCaps.MemoryMB, "DuckDB's memory limit for an analysis' query, in MB (the child's address space is capped above it)")
	fs.IntVar(&c.sandboxCaps.Threads, "sandbox-threads", sandbox.DefaultCaps.Threads, "DuckDB's threads for an analysis' query")
	fs.DurationVar(&c.sandboxCaps.Timeout, "sandbox-timeout", sandbox.DefaultCaps.Timeout, "the time an analysis' query may take, loading its datasets included; the child is killed a grace after it")
	fs.StringVar(&c.labData, "lab-data", getenv("COSCI_LAB_DATA"), "a data folder whose files sessions may import as tables (starter data add --session ID --from-worker NAME): only plain names inside it, no link out of it; each is stored in the session store (env COSCI_LAB_DATA; default none)")
	fs.StringVar(&c.labQueue, "lab-data-queue", activities.LabDataQueue, "the task queue this worker serves --lab-data's files on; give each worker with its own folder its own queue")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q: the worker takes flags only", fs.Args())
	}
	switch o := &c.offline; {
	case o.ErrorRate < 0 || o.ErrorRate > 1:
		return c, fmt.Errorf("--offline-error-rate is %v; it must be between 0 and 1", o.ErrorRate)
	case o.Fabricate < 0 || o.Fabricate > 1:
		return c, fmt.Errorf("--offline-fabricate is %v; it must be between 0 and 1", o.Fabricate)
	case !(*accuracy >= 0 && *accuracy <= 1):
		return c, fmt.Errorf("--offline-support-accuracy is %v; it must be between 0 and 1", *accuracy)
	case math.IsNaN(o.FirstBias) || math.Abs(o.FirstBias) > 10:
		return c, fmt.Errorf("--offline-first-bias is %v; give logits between -10 and 10", o.FirstBias)
	case c.slots < 1:
		return c, fmt.Errorf("--slots is %d; it must be at least 1", c.slots)
	case c.computeSlots < 1:
		return c, fmt.Errorf("--compute-slots is %d; it must be at least 1", c.computeSlots)
	case c.rps < 0:
		return c, fmt.Errorf("--rps is %v; it must be 0 (unlimited) or more", c.rps)
	case c.sandboxCaps.MemoryMB < 64 || c.sandboxCaps.Threads < 1 || c.sandboxCaps.Timeout <= 0:
		return c, fmt.Errorf("--sandbox-memory-mb %d, --sandbox-threads %d, --sandbox-timeout %s: give at least 64 MB, 1 thread and a time above 0", c.sandboxCaps.MemoryMB, c.sandboxCaps.Threads, c.sandboxCaps.Timeout)
	case (c.deployment == "") != (c.buildID == ""):
		return c, errors.New("--deployment and --build-id go together: a worker is one version (a build) of one deployment, or unversioned")
	}
	if c.offline.Plant, err = simulator.ParseKinds(*kinds); err != nil {
		return c, fmt.Errorf("--offline-citation-kinds: %w", err)
	}
	c.offline.SupportError = 1 - *accuracy
	if *truth != "" {
		if c.offline.Truth, err = simulator.OpenTruth(*truth); err != nil {
			return c, fmt.Errorf("--offline-truth: %w", err)
		}
	}
	if c.notify != "" {
		if c.webhook, err = notify.NewWebhook(c.notify); err != nil {
			return c, fmt.Errorf("--notify-url: %w", err)
		}
		c.webhook.Text = c.notifyText
	}
	return c, nil
}

func run() error {
	cfg, err := parseFlags(os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}

	// The lab's keys, if its research is encrypted: a key file that is named but unusable
	// stops the worker here, before it reads or writes anything.
	keys, err := keyring.FromEnv(os.Getenv)
	if err != nil {
		return err
	}

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	prices, err := loadPrices(cfg.prices)
	if err != nil {
		return err
	}
	st, err := store.Open(context.Background(), cfg.store)
	if err != nil {
		// A keyword/value connection string given as --store is taken for a directory, whose
		// errors name it: its password is masked like a URL's.
		return fmt.Errorf("cannot open the session store: %s", store.Redact(err.Error()))
	}
	defer st.Close()
	st.Encrypt(keys)
	st.Migrating(cfg.storeMigrating)
	registry := &provider.Registry{
		Offline: &cfg.offline,
		Env:     os.Getenv,
		Prices:  prices,
	}
	acts := &activities.Activities{
		Store:      st,
		Providers:  registry,
		AliveEvery: 2 * time.Second,
	}
	acts.Sandbox, acts.SandboxCaps = sandbox.Runner{Binary: sandboxBinary(cfg.sandbox, os.Executable, fileExists)}, cfg.sandboxCaps
	acts.Webhook = cfg.webhook
	acts.Encrypted, acts.NotifyText = keys != nil, cfg.notifyText
	if cfg.thresholds != "" {
		if acts.Thresholds, err = loadThresholds(cfg.thresholds); err != nil {
			return err
		}
	}
	var servers []tools.Server
	if cfg.tools != "" {
		tc, err := tools.Load(cfg.tools, os.Getenv)
		if err != nil {
			return err
		}
		box := tools.Open(tc, os.Getenv, logger)
		defer box.Close()
		acts.Tools = box
		servers = tc.Servers
	}

	obs, err := observe(cfg, logger)
	if err != nil {
		return err
	}
	defer obs.close()
	acts.Metrics = obs.metrics()
	observeStore(cfg, obs, st)

	c, err := connection.Dial(logger, obs.client, codec.ClientOptions(keys))
	if err != nil {
		return err
	}
	defer c.Close()
	if err := obs.sessions(c); err != nil {
		return err
	}
	acts.Sessions = c // to find the most recent foreground session
	ensureSearchAttributes(logger, c)

	ws := &workerSet{
		c:          c,
		classify:   []interceptor.WorkerInterceptor{activities.Classifier()},
		deployment: cfg.deploymentOptions(),
	}
	defer ws.stop()
	sessions, names, err := ws.startAll(cfg, acts, servers)
	if err == nil {
		err = ws.startLabData(cfg, st)
	}
	if err != nil {
		return err
	}

	logger.Info("worker started",
		"task_queue", workflows.TaskQueue, "turns_queue", workflows.TurnsQueue,
		"slots", cfg.slots, "compute_slots", cfg.computeSlots, "rps", rpsText(cfg.rps), "store", store.Redact(st.Location()),
		"providers", strings.Join(configured(os.Getenv), ","), "prices", len(prices), "tool_servers", strings.Join(names, ","),
		"notify", cfg.notifyState(), "metrics", obs.address(), "traces", obs.tracing != nil, "encryption", encryptionText(keys), "store_migrating", cfg.storeMigrating, "deployment", cfg.versionText())
	return sessions.Run(worker.InterruptCh())
}

// observeStore times the store's operations into the metrics, when they are exported.
func observeStore(cfg *config, obs *observability, st *store.Store) {
	if obs.exporter == nil {
		return
	}
	backend := "dir"
	if store.IsDatabase(cfg.store) {
		backend = "postgres"
	}
	m := obs.metrics()
	st.Observe(func(ctx context.Context, op string, took time.Duration, err error) {
		m.StoreOp(ctx, backend, op, took, err)
	})
}

// configured names the providers this worker can serve: offline always, and each real
// provider whose key is in the environment. It reads the keys only to test them for "".
func configured(env func(string) string) []string {
	names := []string{"offline"}
	for _, c := range credentials {
		if env(c.env) != "" {
			names = append(names, c.provider)
		}
	}
	return names
}

// loadPrices is the built-in price table with the file's entries, if any, over it.
func loadPrices(path string) (provider.Prices, error) {
	prices := provider.DefaultPrices()
	if path == "" {
		return prices, nil
	}
	extra, err := provider.LoadPrices(path)
	if err != nil {
		return nil, fmt.Errorf("--prices: %w", err)
	}
	maps.Copy(prices, extra)
	return prices, nil
}

// loadThresholds reads proximity thresholds by embedding model: those a lab calibrated
// for its model (see BENCHMARKS.md, "Proximity").
func loadThresholds(path string) (map[string]proximity.Measure, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--proximity-thresholds: %w", err)
	}
	var m map[string]proximity.Measure
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("--proximity-thresholds %s: %v; write {\"model\": {\"duplicate\": 0.9, \"cluster\": 0.75, \"theme\": 0.55}}", path, err)
	}
	for model, t := range m {
		for _, v := range []float64{t.Duplicate, t.Cluster, t.Theme} {
			if v <= 0 || v > 1 {
				return nil, fmt.Errorf("--proximity-thresholds %s: model %s: every threshold is a similarity above 0, at most 1", path, model)
			}
		}
	}
	return m, nil
}

// deploymentOptions makes every worker of this process one version of the Worker
// Deployment, when one is named: the sessions worker, the turns worker and the tool
// servers' workers, so that a session's activities run on its own build. Each workflow
// type says how it moves between versions (workflows.Versioning).
func (c *config) deploymentOptions() worker.DeploymentOptions {
	if c.deployment == "" {
		return worker.DeploymentOptions{}
	}
	return worker.DeploymentOptions{
		UseVersioning: true,
		Version:       worker.WorkerDeploymentVersion{DeploymentName: c.deployment, BuildID: c.buildID},
	}
}

func (c *config) versionText() string {
	if c.deployment == "" {
		return "unversioned"
	}
	return c.deployment + ":" + c.buildID
}

// encryptionText says which key seals, never a key.
func encryptionText(k *keyring.Keyring) string {
	if k == nil {
		return "off"
	}
	return "sealing with key " + k.Current() + ", opening " + strings.Join(k.IDs(), ",")
}

func rpsText(rps float64) string {
	if rps == 0 {
		return "unlimited"
	}
	return fmt.Sprint(rps)
}

// notifyState says where the worker sends word of its sessions and how much: the
// webhook's host (never its path, the secret of many webhooks) and whether reasons go.
func (c *config) notifyState() string {
	switch {
	case c.webhook == nil:
		return "log only"
	case c.notifyText:
		return notify.Redact(c.notify) + " with reasons (--notify-text)"
	}
	return notify.Redact(c.notify) + " with ids and states, reasons withheld"
}

// envBool reads a true-or-false variable; unset is false, a value strconv.ParseBool cannot
// read an error that names it.
func envBool(getenv func(string) string, key string) (bool, error) {
	v := strings.TrimSpace(getenv(key))
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s is %q: give true or false (or 1 or 0)", key, v)
	}
	return b, nil
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

// sandboxBinary is the sandbox's child binary the worker runs: the one given (--sandbox
// or COSCI_SANDBOX), else cosci-sandbox beside the worker's executable (make build and
// the image put both in one directory), else bin/cosci-sandbox (go run ./worker from a
// checkout after make build), else "": sandbox.Runner then looks on PATH, and an
// analysis fails with sandbox.ErrNoChild, which says to build it.
func sandboxBinary(given string, executable func() (string, error), exists func(string) bool) string {
	if given != "" {
		return given
	}
	if exe, err := executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "cosci-sandbox"); exists(p) {
			return p
		}
	}
	if p := filepath.Join("bin", "cosci-sandbox"); exists(p) {
		return p
	}
	return ""
}

func fileExists(p string) bool {
	info, err := os.Stat(p)
	return err == nil && !info.IsDir()
}
