// Package e2e runs cosci end to end: a real Temporal dev server (bin/temporal, started by
// TestMain) and real worker processes built from ./worker, talking to each other over the
// network exactly as in production. The tests run one after another: every worker polls the
// same task queue ("cosci"), so each test stops its workers and ends its sessions before
// the next one starts.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/cosci-dev/cosci/e2e/temporalpg"
	"github.com/cosci-dev/cosci/workflows"
)

// Set up by TestMain for every test.
var (
	temporalClient   client.Client // a client of the dev server
	serverAddress    string        // the dev server's host:port
	workerBinary     string        // the worker built from ../worker
	literatureBinary string        // the literature server built from ../literature
	buildDir         string        // TestMain's scratch directory (binaries, logs)
	serverMetrics    string        // the dev server's Prometheus endpoint (its own counts of requests)
	temporalBin      string        // the Temporal CLI (../bin/temporal)
	devArgs          []string      // start-dev's flags: search attributes, dynamic config values
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	var err error
	temporalBin, err = filepath.Abs(filepath.Join("..", "bin", "temporal"))
	if err == nil {
		_, err = os.Stat(temporalBin)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: no Temporal CLI at %s (%v): run `make tools` first\n", temporalBin, err)
		return 1
	}

	buildDir, err = os.MkdirTemp("", "cosci-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(buildDir)

	workerBinary = filepath.Join(buildDir, "cosci-worker")
	if out, err := goBuild(workerBinary, "../worker"); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot build the worker: %v\n%s", err, out)
		return 1
	}
	// The sandbox's child, beside the worker where the worker looks for it: a session with
	// a table offers its turns the lab's tool, whose analyses run in it.
	if out, err := goBuild(filepath.Join(buildDir, "cosci-sandbox"), "../sandbox"); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot build the sandbox's child: %v\n%s", err, out)
		return 1
	}
	literatureBinary = filepath.Join(buildDir, "literature")
	if out, err := goBuild(literatureBinary, "../literature"); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot build the literature server: %v\n%s", err, out)
		return 1
	}

	var args []string
	for _, name := range slices.Sorted(maps.Keys(workflows.SearchAttributes)) {
		args = append(args, "--search-attribute", name+"="+workflows.SearchAttributes[name])
	}
	// A worker build being retired is drained once no pinned run uses it, as the server
	// sees in visibility: every 3 minutes by default, every second here (upgrade_test.go).
	args = append(args,
		"--dynamic-config-value", `matching.wv.VersionDrainageStatusRefreshInterval="1s"`,
		"--dynamic-config-value", `matching.wv.VersionDrainageStatusVisibilityGracePeriod="1s"`)
	// The server's metrics on a port we know: the desk's benchmark counts the queries the
	// server answered, whoever sent them.
	metricsPort, err := freeLoopbackPort()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	serverMetrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	serverLogPath := filepath.Join(buildDir, "server.log")
	serverLog, err := os.Create(serverLogPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer serverLog.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	devArgs = args
	server, err := startDevServer(ctx, filepath.Join(buildDir, "temporal-server"), "", metricsPort, serverLog)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot start the Temporal dev server: %v\n", err)
		dumpFile(os.Stderr, serverLogPath)
		return 1
	}
	temporalClient, serverAddress = server.client, server.address

	code := m.Run()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}

	temporalClient.Close()
	if err := server.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stopping the dev server:", err)
	}
	if code != 0 {
		dumpFile(os.Stderr, serverLogPath)
	}
	return code
}

// devServerEnv names the dev server the tests run on: unset, the Temporal CLI's start-dev
// (server 1.29.1 inside CLI v1.5.1); "temporal-server", bin/temporal-server (the release
// `make server-tools` builds) on a SQLite file, as BENCHMARKS.md's "The dev server" compares.
const devServerEnv = "COSCI_E2E_DEVSERVER"

// harnessServer is a running dev server and a client of it.
type harnessServer struct {
	address string
	client  client.Client
	stop    func() error
}

// startDevServer starts the dev server devServerEnv names, with devArgs (start-dev's flags;
// the dynamic config values are read from them for bin/temporal-server), its database in
// dbFile ("": in memory), its metrics on metricsPort and its output in log;
// bin/temporal-server keeps its files in dir.
func startDevServer(ctx context.Context, dir, dbFile string, metricsPort int, log *os.File) (harnessServer, error) {
	switch os.Getenv(devServerEnv) {
	case "":
		args := append(slices.Clone(devArgs), "--metrics-port", strconv.Itoa(metricsPort))
		if dbFile != "" {
			args = append(args, "--db-filename", dbFile)
		}
		server, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
			ExistingPath:  temporalBin,
			ExtraArgs:     args,
			LogLevel:      "error",
			ClientOptions: &client.Options{Logger: quietLogger()},
			Stdout:        log,
			Stderr:        log,
		})
		if err != nil {
			return harnessServer{}, err
		}
		return harnessServer{server.FrontendHostPort(), server.Client(), server.Stop}, nil
	case "temporal-server":
		if err := os.Mkdir(dir, 0o755); err != nil {
			return harnessServer{}, err
		}
		opts := temporalpg.SQLiteOptions{DBFile: dbFile, InMemory: dbFile == "", MetricsPort: metricsPort, DynamicValues: map[string]string{}}
		for i := 0; i+1 < len(devArgs); i += 2 {
			if devArgs[i] == "--dynamic-config-value" {
				name, value, _ := strings.Cut(devArgs[i+1], "=")
				opts.DynamicValues[name] = value
			}
		}
		server, err := temporalpg.StartSQLite(ctx, dir, workflows.SearchAttributes, opts)
		if err != nil {
			return harnessServer{}, err
		}
		fmt.Fprintf(log, "e2e: %s runs bin/temporal-server %s on SQLite; its log: %s/temporal-server.log\n", devServerEnv, temporalpg.ServerVersion, dir)
		c, err := client.Dial(client.Options{HostPort: server.Address(), Namespace: temporalpg.Namespace, Logger: quietLogger()})
		if err != nil {
			_ = server.Kill()
			return harnessServer{}, err
		}
		return harnessServer{server.Address(), c, server.Stop}, nil
	default:
		return harnessServer{}, fmt.Errorf("%s=%q: want unset (the CLI's start-dev) or temporal-server", devServerEnv, os.Getenv(devServerEnv))
	}
}

// freeLoopbackPort is a loopback port nobody listens on now.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// cleanups run after every test, last added first: what tests started for the whole
// package (the production server) stops there.
var cleanups []func()

// goBuild builds a package of this module (a path relative to the e2e directory).
func goBuild(out, pkg string, flags ...string) ([]byte, error) {
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", out, pkg)...)
	return cmd.CombinedOutput()
}

// quietLogger keeps the SDK's client logs to warnings and errors.
func quietLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

func dumpFile(w io.Writer, path string) {
	b, err := os.ReadFile(path)
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return
	}
	fmt.Fprintf(w, "---- %s ----\n%s\n---- end of %s ----\n", path, tail(b, 200), filepath.Base(path))
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("(%d earlier lines left out)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
